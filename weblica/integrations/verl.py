"""verl integration: an agent loop, registered as `weblica_agent`, that plays one weblica episode.

verl trains one sequence per sample: prompt ids, then a response in which the model's tokens have mask 1
and the environment's (each new observation turn) mask 0. That needs a context that only ever grows, so
this loop keeps every turn verbatim, screenshots included, instead of the default last-k window.

Launch (one 8-GPU node; verl's own options elided):

    python -m verl.trainer.main_ppo ... \\
        actor_rollout_ref.rollout.mode=async actor_rollout_ref.rollout.multi_turn.enable=true \\
        actor_rollout_ref.rollout.agent.agent_loop_config_path=weblica_agent.yaml \\
        data.train_files=tasks.parquet   # one row per task: agent_name=weblica_agent, extra_info.task=<task JSON>

with weblica_agent.yaml holding `- name: weblica_agent` and
`_target_: weblica.integrations.verl.WeblicaAgentLoop`.
"""
from __future__ import annotations

import io
import json
import uuid
from typing import Any

from weblica.env.task import Task

try:  # pragma: no cover - verl is a GPU-cluster install
    from verl.experimental.agent_loop.agent_loop import AgentLoopBase, AgentLoopOutput, register
except ImportError:
    from dataclasses import dataclass, field

    class AgentLoopBase:  # type: ignore[no-redef]
        """The constructor contract of verl's AgentLoopBase."""

        def __init__(self, trainer_config: Any, server_manager: Any, tokenizer: Any, processor: Any = None,
                     **kwargs: Any) -> None:
            self.config = trainer_config
            self.server_manager = server_manager
            self.tokenizer = tokenizer
            self.processor = processor

    @dataclass
    class AgentLoopOutput:  # type: ignore[no-redef]
        prompt_ids: list[int]
        response_ids: list[int]
        response_mask: list[int]
        response_logprobs: list[float] | None = None
        multi_modal_data: dict = field(default_factory=dict)
        reward_score: float | None = None
        num_turns: int = 0
        metrics: dict = field(default_factory=dict)
        extra_fields: dict = field(default_factory=dict)

    def register(name: str) -> Any:
        def wrap(cls: Any) -> Any:
            REGISTRY[name] = cls
            return cls
        return wrap

REGISTRY: dict[str, Any] = {}


def _task_from(kwargs: dict[str, Any]) -> Task:
    raw = kwargs.get("task") or (kwargs.get("extra_info") or {}).get("task") or kwargs.get("raw_prompt")
    if isinstance(raw, str):
        raw = json.loads(raw)
    return Task.from_dict(raw)


def _frame_from_config(config: Any) -> Any:
    """The coordinate convention of the model verl trains (Qwen3-VL's 0-1000 grid when unknown)."""
    from weblica.policy.coords import frame_for_model_type

    model_type = None
    try:
        from transformers import AutoConfig

        model_type = AutoConfig.from_pretrained(config.actor_rollout_ref.model.path).model_type
    except Exception:  # no verl config here (tests) or an unreadable path: fall back to the default family
        pass
    return frame_for_model_type(model_type)


@register("weblica_agent")
class WeblicaAgentLoop(AgentLoopBase):
    """`env_factory` (a keyword argument, or the class attribute) returns a started WebEnv for a task; the
    default opens one with the task source's backend."""

    env_factory: Any = None

    def __init__(self, *args: Any, env_factory: Any = None, image_processor: Any = None, frame: Any = None,
                 **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.env_factory = env_factory or type(self).env_factory
        self.image_processor = image_processor or getattr(self.processor, "image_processor", None)
        self.frame = frame

    async def _open_env(self, task: Task) -> tuple[Any, Any]:
        if self.env_factory is not None:
            return await self.env_factory(task), None
        from weblica.env.browser_env import WebEnv
        from weblica.env.sources import open_backends

        ctx = open_backends([task])
        backends = await ctx.__aenter__()
        return WebEnv(backends=backends), ctx

    async def run(self, sampling_params: dict[str, Any], **kwargs: Any) -> AgentLoopOutput:
        from PIL import Image

        from weblica.policy.backends.hf import encode_qwen_prompt
        from weblica.policy.context import ContextBuilder, Message, Part, check_response, observation_text
        from weblica.rollout import episode_seed

        task = _task_from(kwargs)
        frame = self.frame or _frame_from_config(self.config)
        seed = episode_seed(int(kwargs.get("seed", 0)), task, int(kwargs.get("index", 0)))
        env, ctx = await self._open_env(task)
        request_id = uuid.uuid4().hex
        images: list[bytes] = []
        prompt_ids: list[int] = []
        response_ids: list[int] = []
        mask: list[int] = []
        logprobs: list[float] = []
        turns = 0
        reward = 0.0
        try:
            obs = await env.reset(task, seed)
            images.append(obs.screenshot)
            messages = ContextBuilder(frame, keep_images=1).build(task, [], obs)
            while True:
                encoded = encode_qwen_prompt(messages, self.tokenizer, self.image_processor)
                if not prompt_ids:
                    prompt_ids = list(encoded.input_ids)
                else:  # the observation turn the environment added since the last response: mask 0
                    added = encoded.input_ids[len(prompt_ids) + len(response_ids):]
                    response_ids += added
                    mask += [0] * len(added)
                    logprobs += [0.0] * len(added)
                output = await self.server_manager.generate(
                    request_id=request_id, prompt_ids=list(encoded.input_ids), sampling_params=sampling_params,
                    image_data=[Image.open(io.BytesIO(png)).convert("RGB") for png in images])
                ids = list(getattr(output, "token_ids", output))
                lps = list(getattr(output, "log_probs", None) or [0.0] * len(ids))
                response_ids += ids
                mask += [1] * len(ids)
                logprobs += lps
                turns += 1
                text = self.tokenizer.decode(ids, skip_special_tokens=False).removesuffix("<|im_end|>")
                check = check_response(text, frame)
                obs, step_reward, terminated, truncated, info = await env.step(check.actions if check.ok else text)
                messages.append(Message("assistant", [Part("text", text)], ids))
                if terminated or truncated:
                    termination = info["termination_reason"]
                    reward = -1.0 if termination == "format_error" else step_reward  # the shared format gate
                    break
                images.append(obs.screenshot)
                messages.append(Message("user", [Part("text", observation_text(
                    turns, obs.url, obs.tabs, obs.active_tab, obs.feedback, True)), Part("image", image=obs.screenshot)]))
        finally:
            await env.close()
            if ctx is not None:
                await ctx.__aexit__(None, None, None)
        return AgentLoopOutput(
            prompt_ids=prompt_ids, response_ids=response_ids, response_mask=mask, response_logprobs=logprobs,
            multi_modal_data={"image": [Image.open(io.BytesIO(p)).convert("RGB") for p in images]},
            reward_score=reward, num_turns=turns,
            extra_fields={"termination_reason": termination, "removed": info.get("env_failure", False),
                          "task_id": task.id})
