"""slime integration: a custom generate function, a reward function and a dynamic-sampling filter.

Launch (one 8-GPU node; slime's own flags elided):

    python train.py ... \\
        --custom-generate-function-path weblica.integrations.slime.generate \\
        --custom-rm-path weblica.integrations.slime.reward_func \\
        --dynamic-sampling-filter-path weblica.integrations.slime.dynamic_filter \\
        --prompt-data tasks_as_prompts.jsonl --input-key task --n-samples-per-prompt 8

Each prompt's `task` is a weblica task object (JSON). `generate` plays one episode in a weblica
environment with slime's SGLang router as the policy engine and returns one Sample per assistant turn;
the turns share their episode's reward (multi-turn GRPO with per-turn samples). slime calls these
functions by path, so the environments live in a per-process runtime created on first use; configure it
with WEBLICA_PARALLEL (envs per process, default 4) and WEBLICA_KEEP_IMAGES (default 1).
"""
from __future__ import annotations

import asyncio
import copy
import json
import os
from dataclasses import dataclass, field
from enum import Enum
from typing import Any

from weblica.env.task import Task

try:  # pragma: no cover - slime is a GPU-cluster install
    from slime.utils.types import Sample
except ImportError:
    @dataclass
    class Sample:  # type: ignore[no-redef]
        """The fields of slime.utils.types.Sample that weblica reads and writes."""

        class Status(Enum):
            PENDING = "pending"
            COMPLETED = "completed"
            TRUNCATED = "truncated"
            ABORTED = "aborted"

        group_index: int | None = None
        index: int | None = None
        prompt: Any = ""
        tokens: list[int] = field(default_factory=list)
        response: str = ""
        response_length: int = 0
        label: Any = None
        reward: Any = None
        loss_mask: list[int] | None = None
        rollout_log_probs: list[float] | None = None
        status: Any = None
        metadata: dict = field(default_factory=dict)
        remove_sample: bool = False

        def __post_init__(self) -> None:
            if self.status is None:
                self.status = Sample.Status.PENDING


class _Runtime:
    """Per-process environments and tokenizer, created on first use (slime imports functions by path)."""

    def __init__(self, tokenizer_path: str, engine_url: str) -> None:
        from weblica.browser.session import BrowserHost
        from weblica.policy.backends.hf import _frame_for, load_image_processor
        from transformers import AutoConfig, AutoTokenizer

        self.tokenizer = AutoTokenizer.from_pretrained(tokenizer_path)
        self.image_processor = load_image_processor(tokenizer_path)
        self.frame = _frame_for(AutoConfig.from_pretrained(tokenizer_path), self.image_processor)
        self.engine_url = engine_url
        self.host = BrowserHost()
        self.slots = asyncio.Semaphore(int(os.environ.get("WEBLICA_PARALLEL", "4")))
        self.keep_images = int(os.environ.get("WEBLICA_KEEP_IMAGES", "1"))
        self.backends: dict[str, Any] = {}

    async def backends_for(self, task: Task) -> dict[str, Any]:
        from weblica.env.sources import SOURCE_MODULES
        from weblica.env.backend import DirectBackend, LiveBackend

        kind = task.source.kind
        if kind not in self.backends:
            if kind in ("local", "live"):
                self.backends[kind] = DirectBackend() if kind == "local" else LiveBackend()
            else:
                import importlib

                backend = importlib.import_module(SOURCE_MODULES[kind]).create_backend([task])
                if hasattr(backend, "start"):
                    await backend.start()
                self.backends[kind] = backend
        return self.backends


_RUNTIMES: dict[tuple[str, str, int], _Runtime] = {}


def runtime(tokenizer_path: str, engine_url: str) -> _Runtime:
    # Playwright's connection belongs to the event loop that started it: one runtime per loop
    key = (tokenizer_path, engine_url, id(asyncio.get_running_loop()))
    if key not in _RUNTIMES:
        _RUNTIMES[key] = _Runtime(tokenizer_path, engine_url)
    return _RUNTIMES[key]


def task_of(sample: Any) -> Task:
    raw = sample.metadata.get("task") if isinstance(sample.metadata, dict) and "task" in sample.metadata \
        else sample.prompt
    if isinstance(raw, str):
        raw = json.loads(raw)
    return Task.from_dict(raw)


def _engine_url(args: Any) -> str:
    return getattr(args, "weblica_engine_url", None) or \
        f"http://{args.sglang_router_ip}:{args.sglang_router_port}"


async def generate(args: Any, sample: Any, sampling_params: dict[str, Any]) -> list[Any]:
    """Play one episode of the sample's task; one Sample per assistant turn, sharing the episode reward."""
    from weblica.env.browser_env import WebEnv
    from weblica.integrations.token_engine import TokenEngineBackend, sglang_engine
    from weblica.policy.backends.base import SamplingOptions
    from weblica.policy.model_policy import ModelPolicy
    from weblica.rollout import episode_seed, run_episode

    rt = runtime(args.hf_checkpoint, _engine_url(args))
    task = task_of(sample)
    sampling = SamplingOptions(temperature=float(sampling_params.get("temperature", 1.0)),
                               top_p=float(sampling_params.get("top_p", 1.0)),
                               top_k=max(0, int(sampling_params.get("top_k", 0) or 0)),  # -1 means off
                               max_new_tokens=int(sampling_params.get("max_new_tokens", 1024)))
    backend = TokenEngineBackend(sglang_engine(rt.engine_url), rt.tokenizer, rt.image_processor, rt.frame,
                                 sampling, name="slime")
    seed = episode_seed(getattr(args, "seed", 0), task, int(sample.index or 0))
    async with rt.slots:
        env = WebEnv(backends=await rt.backends_for(task), host=rt.host)
        try:
            traj = await run_episode(env, task, ModelPolicy(backend, keep_images=rt.keep_images), seed,
                                     repeat=int(sample.index or 0))
        finally:
            await env.close()
    from weblica.policy.reward import compute_reward

    result = await compute_reward(traj, task)
    result.apply(traj)
    reward = result.reward
    status = (Sample.Status.ABORTED if traj.removed else
              Sample.Status.TRUNCATED if traj.termination_reason in ("max_steps", "format_error")
              else Sample.Status.COMPLETED)
    turns = []
    for record in traj.steps:
        if not record.token_ids:
            continue
        turn = copy.copy(sample)
        turn.metadata = {**(sample.metadata or {}), "episode_id": traj.episode_id, "turn": record.step,
                         "termination_reason": traj.termination_reason, "removed": traj.removed,
                         "episode_reward": reward, "success": traj.success}
        turn.tokens = list(record.prompt_token_ids or []) + list(record.token_ids)
        turn.response = record.response
        turn.response_length = len(record.token_ids)
        turn.loss_mask = [1] * len(record.token_ids)
        turn.rollout_log_probs = list(record.logprobs or [])
        turn.reward = reward
        turn.status = status
        if traj.removed:  # an environment failure: no signal either way
            turn.remove_sample = True
        turns.append(turn)
    if not turns:  # the episode never reached the model (start page failed): keep slime's count right
        sample.status, sample.reward, sample.remove_sample = Sample.Status.ABORTED, 0.0, True
        sample.metadata = {**(sample.metadata or {}), "termination_reason": traj.termination_reason,
                           "removed": True, "error": traj.error}
        return [sample]
    return turns


async def reward_func(args: Any, sample: Any, **kwargs: Any) -> float:
    """The episode's reward, computed by the environment's checks when the agent called done."""
    return float(sample.metadata.get("episode_reward", sample.reward or 0.0))


def dynamic_filter(args: Any, samples: list[Any], **kwargs: Any) -> bool:
    """Keep a group only if its episodes' rewards differ (all-equal groups carry no GRPO signal)."""
    from weblica.train.algorithms import is_informative

    episodes = {}
    for s in samples:
        if not s.metadata.get("removed"):
            episodes[s.metadata.get("episode_id", id(s))] = float(s.metadata.get("episode_reward", s.reward or 0.0))
    return is_informative(list(episodes.values()))
