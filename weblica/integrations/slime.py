"""slime integration: a custom generate function, a reward post-process and a dynamic-sampling filter.

Written against THUDM/slime at commit 624b824a (2026-08-21); the contract it follows is spelled out in
`tests/framework_contracts/slime_types.py` and the launch command in `train/README.md`. In short:
- prompts: slime loads a processor for VL checkpoints and then requires each prompt to be a message list,
  so a row is `{"prompt": [{"role": "user", "content": <instruction>}], "metadata": {"task": <task>}}`
  read with `--input-key prompt` (the default `--metadata-key metadata`); `write_prompt_data` writes
  the file (`python -m weblica.integrations.slime TASKS.jsonl PROMPTS.jsonl`);
- `generate` plays one episode in a weblica environment with slime's SGLang router as the policy engine
  and returns one Sample per assistant turn (slime accepts `list[Sample]`); the turns share the episode's
  `rollout_id` (slime's loss counts a rollout once, and its validation rejects siblings without it),
  their reward, and carry `multimodal_train_inputs` (pixel_values, image_grid_thw of the screenshots
  in that turn's prompt), so the image-pad tokens train with their pixels;
- a group then reaches the dynamic filter as `list[list[Sample]]` (one list per episode);
- slime normalizes rewards in rows of `n_samples_per_prompt` only when every prompt gave exactly that many
  samples, so with per-turn samples it would normalize over the whole batch: `reward_post_process`
  (`--custom-reward-post-process-path`) normalizes per group over episodes, leaving removed episodes
  (environment failures, `remove_sample`) out of the statistics and at advantage 0.
slime calls these functions by path, so the environments live in a per-process runtime created on first
use; configure it with WEBLICA_PARALLEL (envs per process, default 4) and WEBLICA_KEEP_IMAGES (default 1).
"""
from __future__ import annotations

import asyncio
import copy
import json
import os
from collections import defaultdict
from typing import Any

from weblica.env.task import Task


class SlimeDataError(ValueError):
    """A slime sample that does not carry a weblica task where this adapter reads it."""


class _Runtime:
    """Per-process environments and tokenizer, created on first use (slime imports functions by path)."""

    def __init__(self, tokenizer_path: str, engine_url: str) -> None:
        from weblica.browser.session import BrowserHost
        from weblica.policy.backends.hf import frame_for, load_image_processor
        from transformers import AutoConfig, AutoTokenizer

        self.tokenizer = AutoTokenizer.from_pretrained(tokenizer_path)
        self.image_processor = load_image_processor(tokenizer_path)
        self.frame = frame_for(AutoConfig.from_pretrained(tokenizer_path), self.image_processor)
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
    """The weblica task of a slime sample: `metadata["task"]` (a task object or its JSON)."""
    metadata = sample.metadata if isinstance(sample.metadata, dict) else {}
    raw = metadata.get("task")
    if raw is None:
        raise SlimeDataError(f"slime sample {sample.index} has no metadata['task']: write the prompt file with "
                             f"`python -m weblica.integrations.slime TASKS.jsonl PROMPTS.jsonl` and launch with "
                             f"--input-key prompt --metadata-key metadata")
    if isinstance(raw, str):
        raw = json.loads(raw)
    return Task.from_dict(raw)


def prompt_row(task: Task) -> dict[str, Any]:
    """One line of slime's --prompt-data for `task`: a message-list prompt (what slime requires once it has
    loaded a VL processor) and the task itself under metadata."""
    return {"prompt": [{"role": "user", "content": task.instruction}], "metadata": {"task": task.to_dict()}}


def _engine_url(args: Any) -> str:
    return getattr(args, "weblica_engine_url", None) or \
        f"http://{args.sglang_router_ip}:{args.sglang_router_port}"


def _status(sample: Any, name: str) -> Any:
    # slime's own Sample.Status, whichever Sample class the caller uses
    return getattr(type(sample).Status, name)


async def generate(args: Any, sample: Any, sampling_params: dict[str, Any]) -> list[Any]:
    """Play one episode of the sample's task; one Sample per assistant turn, sharing the episode's reward and
    rollout_id."""
    from weblica.env.browser_env import WebEnv
    from weblica.integrations.token_engine import TokenEngineBackend, play_episode, sglang_engine
    from weblica.policy.backends.base import SamplingOptions
    from weblica.rollout import episode_seed

    task = task_of(sample)
    rt = runtime(args.hf_checkpoint, _engine_url(args))
    sampling = SamplingOptions(temperature=float(sampling_params.get("temperature", 1.0)),
                               top_p=float(sampling_params.get("top_p", 1.0)),
                               top_k=max(0, int(sampling_params.get("top_k", 0) or 0)),  # -1 means off
                               max_new_tokens=int(sampling_params.get("max_new_tokens", 1024)))
    backend = TokenEngineBackend(sglang_engine(rt.engine_url), rt.tokenizer, rt.image_processor, rt.frame,
                                 sampling, name="slime")
    # repeats of one prompt differ by index; the group index keeps two prompts of one task apart too
    repeat = int(sample.index or 0)
    seed = episode_seed(getattr(args, "seed", 0), task, repeat)
    async with rt.slots:
        env = WebEnv(backends=await rt.backends_for(task), host=rt.host)
        try:
            played = await play_episode(env, task, backend, seed, repeat, rt.keep_images)
        finally:
            await env.close()
    traj = played.trajectory
    rollout_id = sample.rollout_id if getattr(sample, "rollout_id", None) is not None else sample.index
    status = (_status(sample, "FAILED") if played.removed else
              _status(sample, "TRUNCATED") if traj.termination_reason in ("max_steps", "format_error")
              else _status(sample, "COMPLETED"))
    meta = {**(sample.metadata or {}), "episode_id": traj.episode_id, "termination_reason": traj.termination_reason,
            "removed": played.removed, "reward_source": played.reward_reason, "episode_reward": played.reward,
            "success": traj.success, "turns": len(played.turns)}
    out = []
    for turn in played.turns:
        s = copy.copy(sample)
        s.metadata = {**meta, "turn": turn.record.step}
        s.rollout_id = rollout_id
        s.tokens = turn.prompt_ids + turn.response_ids
        s.response = turn.record.response
        s.response_length = len(turn.response_ids)
        s.loss_mask = [1] * s.response_length
        s.rollout_log_probs = list(turn.record.logprobs or [])
        if len(s.rollout_log_probs) != s.response_length:
            raise ValueError(f"the engine returned {len(s.rollout_log_probs)} log-probs for {s.response_length} "
                             f"tokens; launch SGLang with log-probs returned (return_logprob)")
        s.multimodal_train_inputs = turn.multimodal_train_inputs()
        s.reward = played.reward
        s.status = status
        s.remove_sample = played.removed  # an environment failure: no signal either way
        out.append(s)
    if not out:
        # the episode never reached the model (its start page failed): one placeholder that trains nothing,
        # so the group keeps its size; two tokens so that the trainer's slicing has a response to cut
        pad = rt.tokenizer.pad_token_id if rt.tokenizer.pad_token_id is not None else 0
        sample.tokens, sample.response, sample.response_length = [pad, pad], "", 1
        sample.loss_mask, sample.rollout_log_probs = [0], [0.0]
        sample.rollout_id, sample.multimodal_train_inputs = rollout_id, None
        sample.status, sample.reward, sample.remove_sample = _status(sample, "FAILED"), 0.0, True
        sample.metadata = {**meta, "removed": True, "error": traj.error}
        out.append(sample)
    return out


async def reward_func(args: Any, sample: Any, **kwargs: Any) -> float:
    """The episode's reward (for `--custom-rm-path`; `generate` already sets it, so slime only calls this
    where something reset the reward, e.g. evaluation paths)."""
    return float(sample.metadata.get("episode_reward", sample.reward or 0.0))


def _episodes(group: list[Any]) -> list[list[Any]]:
    """A slime group as episodes: `list[list[Sample]]` from a fan-out generate, or bare Samples."""
    return [member if isinstance(member, list) else [member] for member in group]


def _episode_reward(turns: list[Any]) -> tuple[float, bool]:
    first = turns[0]
    removed = bool(first.remove_sample or (first.metadata or {}).get("removed"))
    reward = first.reward if not isinstance(first.reward, dict) else first.reward.get("reward", 0.0)
    return float((first.metadata or {}).get("episode_reward", reward or 0.0)), removed


def dynamic_filter(args: Any, samples: list[Any], **kwargs: Any) -> bool:
    """Keep a group only if its (non-removed) episodes' rewards differ: all-equal groups carry no GRPO signal.
    `samples` is the group as slime passes it: one `list[Sample]` per episode."""
    from weblica.train.algorithms import is_informative

    rewards = [r for r, removed in map(_episode_reward, _episodes(samples)) if not removed]
    return is_informative(rewards)


def reward_post_process(args: Any, samples: list[Any]) -> tuple[list[float], list[float]]:
    """`--custom-reward-post-process-path`: GRPO advantages per group (`group_index`) over its episodes
    (`rollout_id`), each turn getting its episode's value. Removed episodes take no part in the mean and
    std and get 0. Honours --disable-rewards-normalization and --disable-grpo-std-normalization."""
    import statistics

    per_episode: dict[Any, tuple[float, bool]] = {}
    groups: dict[Any, list[Any]] = defaultdict(list)
    for s in samples:
        key = s.rollout_id if s.rollout_id is not None else s.index
        if key not in per_episode:
            per_episode[key] = _episode_reward([s])
            groups[s.group_index].append(key)
    raw = [per_episode[s.rollout_id if s.rollout_id is not None else s.index][0] for s in samples]
    if not getattr(args, "rewards_normalization", True):
        return raw, list(raw)
    advantage: dict[Any, float] = {}
    for keys in groups.values():
        kept = [per_episode[k][0] for k in keys if not per_episode[k][1]]
        mean = statistics.fmean(kept) if kept else 0.0
        std = statistics.stdev(kept) if len(kept) > 1 else 0.0
        for k in keys:
            reward, removed = per_episode[k]
            value = 0.0 if removed else reward - mean
            if getattr(args, "grpo_std_normalization", True):
                value /= std + 1e-6
            advantage[k] = value
    return raw, [advantage[s.rollout_id if s.rollout_id is not None else s.index] for s in samples]


def write_prompt_data(tasks: list[Task], path: str) -> int:
    """Write slime's --prompt-data (JSONL, one `prompt_row` per task); returns the row count."""
    with open(path, "w", encoding="utf-8") as f:
        for task in tasks:
            f.write(json.dumps(prompt_row(task), ensure_ascii=False) + "\n")
    return len(tasks)


if __name__ == "__main__":  # python -m weblica.integrations.slime TASKS.jsonl OUT.jsonl
    import sys

    from weblica.env.task import load_tasks

    if len(sys.argv) != 3:
        sys.exit("usage: python -m weblica.integrations.slime TASKS.jsonl PROMPTS.jsonl")
    print(f"wrote {write_prompt_data(load_tasks(sys.argv[1]), sys.argv[2])} prompts to {sys.argv[2]}")
