"""verl integration: an agent loop, registered as `weblica_agent`, that plays one weblica episode.

Written against verl 0.9.1 (PyPI; `verl/experimental/agent_loop/agent_loop.py`,
`verl/trainer/ppo/v1/agent_loop_tq.py`, `verl/trainer/ppo/v1/utils.py`) and its default V1 trainer
(`trainer.use_v1=True`). What that version expects, and what this loop does about it:
- `AgentLoopBase.__init__(trainer_config: DictConfigWrap, server_manager, tokenizer, processor, dataset_cls,
  data_config: DictConfigWrap, hf_model_type, **kwargs)`, instantiated by hydra for every sample; `run`
  gets the dataset row's fields (`raw_prompt`, `extra_info`, `index`, and in V1 `uid`, `session_id`);
- `run` may return a list of `AgentLoopOutput`s: the V1 trainer computes GRPO advantages from each
  session's last output and broadcasts them to the others. So each assistant turn is one output (its own
  prompt with the last `keep_images` screenshots, its response with mask 1), as in weblica's own trainer;
- `AgentLoopOutput` is a pydantic model whose `metrics: AgentLoopMetrics` is required;
- images go under `multi_modal_data["images"]` (verl re-runs the processor on them for `pixel_values`);
- a reward set by the loop must come with `extra_fields["reward_extra_info"]` (V1 copies it to the
  session's other outputs);
- an episode removed for an environment failure returns `[]`: V1 leaves the session out of its group, so
  it neither trains nor shifts the group's mean (a reward 0 would);
- dataset rows need `prompt` (a message list: the RLHF dataset turns it into the `raw_prompt` that verl's
  post-processing reads) beside `extra_info.task`; `write_dataset` writes them
  (`python -m weblica.integrations.verl TASKS.jsonl TASKS.parquet`).

Launch command: `train/README.md`. The agent-loop file (`train/verl/weblica_agent.yaml`) names
`weblica.integrations.verl.WeblicaAgentLoop`.
"""
from __future__ import annotations

import json
import time
import uuid
from dataclasses import dataclass, field
from typing import Any

from weblica.env.task import Task

try:  # verl 0.9.1; an isolated test environment has it (.ci/setup), the training cluster does
    from verl.experimental.agent_loop.agent_loop import AgentLoopBase, AgentLoopMetrics, AgentLoopOutput, register
    HAVE_VERL = True
except ImportError:  # the same contract, so the loop can be used and tested without verl
    HAVE_VERL = False

    class AgentLoopBase:  # type: ignore[no-redef]
        """The constructor contract of verl 0.9.1's AgentLoopBase."""

        def __init__(self, trainer_config: Any, server_manager: Any, tokenizer: Any, processor: Any,
                     dataset_cls: Any = None, data_config: Any = None, hf_model_type: str | None = None,
                     **kwargs: Any) -> None:
            self.config = trainer_config.config
            self.server_manager = server_manager
            self.tokenizer = tokenizer
            self.processor = processor

    @dataclass
    class AgentLoopMetrics:  # type: ignore[no-redef]
        generate_sequences: float = 0.0
        tool_calls: float = 0.0
        compute_score: float = 0.0
        num_preempted: int = -1

    @dataclass(kw_only=True)
    class AgentLoopOutput:  # type: ignore[no-redef]
        prompt_ids: list[int]
        response_ids: list[int]
        response_mask: list[int]
        response_logprobs: list[float] | None = None
        multi_modal_data: dict[str, Any] | None = None
        reward_score: float | None = None
        num_turns: int = 0
        metrics: AgentLoopMetrics  # required, as in verl
        extra_fields: dict[str, Any] = field(default_factory=dict)

    REGISTRY: dict[str, dict[str, str]] = {}

    def register(agent_name: str) -> Any:
        def decorator(cls: Any) -> Any:
            REGISTRY[agent_name] = {"_target_": f"{cls.__module__}.{cls.__qualname__}"}
            return cls
        return decorator


class VerlDataError(ValueError):
    """A verl dataset row without a weblica task where this loop reads it."""


def task_from_row(kwargs: dict[str, Any]) -> Task:
    extra = kwargs.get("extra_info") or {}
    raw = extra.get("task") if isinstance(extra, dict) else None
    if raw is None:
        raise VerlDataError("verl row has no extra_info.task: write the parquet with "
                            "weblica.integrations.verl.dataset_rows (columns prompt, agent_name, extra_info)")
    return Task.from_dict(json.loads(raw) if isinstance(raw, str) else raw)


def dataset_rows(tasks: list[Task]) -> list[dict[str, Any]]:
    """Rows for verl's RLHF dataset (`data.train_files`, parquet): `prompt` becomes `raw_prompt`, which verl
    requires of every row; the task travels as JSON so parquet stores it as one string."""
    return [{"data_source": "weblica", "agent_name": "weblica_agent",
             "prompt": [{"role": "user", "content": task.instruction}],
             "reward_model": {"style": "rule", "ground_truth": ""},
             "extra_info": {"index": i, "task": json.dumps(task.to_dict())}} for i, task in enumerate(tasks)]


def _frame_from_config(config: Any) -> Any:
    """The coordinate convention of the model verl trains (Qwen3-VL's 0-1000 grid when unknown)."""
    from weblica.policy.coords import frame_for_model_type

    model_type = None
    try:
        from transformers import AutoConfig

        model_type = AutoConfig.from_pretrained(config.actor_rollout_ref.model.path).model_type
    except Exception:  # no model path in this config (tests) or an unreadable one: the default family
        pass
    return frame_for_model_type(model_type)


@register("weblica_agent")
class WeblicaAgentLoop(AgentLoopBase):
    """`env_factory` (a keyword argument, or the class attribute) returns a started WebEnv for a task; the
    default opens one with the task source's backend. `keep_images`: screenshots kept in each turn's prompt."""

    env_factory: Any = None
    keep_images: int = 1

    def __init__(self, *args: Any, env_factory: Any = None, image_processor: Any = None, frame: Any = None,
                 keep_images: int | None = None, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.env_factory = env_factory or type(self).env_factory
        self.image_processor = image_processor or getattr(self.processor, "image_processor", None)
        self.frame = frame
        self.keep_images = keep_images or type(self).keep_images

    async def _open_env(self, task: Task) -> tuple[Any, Any]:
        if self.env_factory is not None:
            return await self.env_factory(task), None
        from weblica.env.browser_env import WebEnv
        from weblica.env.sources import open_backends

        ctx = open_backends([task])
        backends = await ctx.__aenter__()
        return WebEnv(backends=backends), ctx

    async def run(self, sampling_params: dict[str, Any], **kwargs: Any) -> list[AgentLoopOutput]:
        from weblica.integrations.token_engine import TokenEngineBackend, play_episode, server_manager_engine
        from weblica.policy.backends.base import SamplingOptions
        from weblica.rollout import episode_seed

        task = task_from_row(kwargs)
        frame = self.frame or _frame_from_config(self.config)
        # V1 runs rollout.n sessions of a row; each gets its own environment seed
        repeat = int(kwargs.get("session_id", 0) or 0)
        seed = episode_seed(int(kwargs.get("index", 0) or 0), task, repeat)
        engine = server_manager_engine(self.server_manager, uuid.uuid4().hex, sampling_params)
        engine_s = 0.0

        async def timed_engine(prompt: Any, sampling: Any, turn_seed: int) -> Any:
            nonlocal engine_s
            start = time.perf_counter()
            try:
                return await engine(prompt, sampling, turn_seed)
            finally:
                engine_s += time.perf_counter() - start

        backend = TokenEngineBackend(timed_engine, self.tokenizer, self.image_processor, frame,
                                     SamplingOptions(temperature=float(sampling_params.get("temperature", 1.0))),
                                     name="verl")
        started = time.perf_counter()
        env, ctx = await self._open_env(task)
        try:
            played = await play_episode(env, task, backend, seed, repeat, self.keep_images)
        finally:
            await env.close()
            if ctx is not None:
                await ctx.__aexit__(None, None, None)
        if played.removed or not played.turns:
            return []  # V1 drops the session from its group: no update, no share of the group's statistics
        traj = played.trajectory
        metrics = AgentLoopMetrics(generate_sequences=engine_s,
                                   tool_calls=max(0.0, time.perf_counter() - started - engine_s))
        reward_info = {"success": float(traj.success), "turns": float(len(played.turns))}
        outputs = []
        for turn in played.turns:
            images = turn.prompt.images if turn.prompt is not None and turn.prompt.images else None
            outputs.append(AgentLoopOutput(
                prompt_ids=turn.prompt_ids, response_ids=turn.response_ids,
                response_mask=[1] * len(turn.response_ids),
                response_logprobs=list(turn.record.logprobs) if turn.record.logprobs else None,
                multi_modal_data={"images": list(images)} if images else None,
                reward_score=played.reward, num_turns=2 * len(played.turns), metrics=metrics,
                extra_fields={"reward_extra_info": dict(reward_info), "termination_reason": traj.termination_reason,
                              "reward_source": played.reward_reason, "episode_id": traj.episode_id,
                              "turn": turn.record.step, "task_id": task.id}))
        return outputs


def write_dataset(tasks: list[Task], path: str) -> int:
    """Write `dataset_rows(tasks)` as the parquet file verl's `data.train_files` reads; returns the row count."""
    import pandas as pd

    pd.DataFrame(dataset_rows(tasks)).to_parquet(path)
    return len(tasks)


if __name__ == "__main__":  # python -m weblica.integrations.verl TASKS.jsonl OUT.parquet
    import sys

    from weblica.env.task import load_tasks

    if len(sys.argv) != 3:
        sys.exit("usage: python -m weblica.integrations.verl TASKS.jsonl TASKS.parquet")
    print(f"wrote {write_dataset(load_tasks(sys.argv[1]), sys.argv[2])} rows to {sys.argv[2]}")
