"""slime's contract with a custom generate function, rewritten from its sources (slime is not on PyPI).

Followed: THUDM/slime at commit 624b824a898ab0ec1fcb4d373004c7f3852bf515 (2026-08-21):
- `slime/utils/types.py`: `Sample` (fields below, `Status` with FAILED);
- `slime/utils/data.py` `Dataset.__init__`: the prompt is `data[--input-key]`; with a processor (any VL
  checkpoint) it must be a message list;
- `slime/rollout/sglang_rollout.py` `generate_and_rm` / `generate_and_rm_group` / `generate_rollout_async`:
  a custom generate function may return `list[Sample]`; the reward model runs only on samples whose
  `reward` is None; a group then is `list[list[Sample]]` and is handed whole to the dynamic filter;
- `slime/rollout/filter_hub/base_types.py`: `DynamicFilterOutput`, `call_dynamic_filter` (a bare bool is
  accepted);
- `slime/observability/rollout_data_utils.py` `validate_rollout_id_annotated`: samples that one rollout
  fanned out into must all carry the same, non-None `rollout_id`;
- `slime/ray/rollout.py` `_post_process_rewards` (GRPO normalization, replaced by
  `--custom-reward-post-process-path`) and `_convert_samples_to_train_data` (loss-mask checks,
  `remove_sample`, `multimodal_train_inputs`).
Only the behaviour weblica depends on is reproduced, in this project's own words.
"""
from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from enum import Enum
from typing import Any, Callable


@dataclass
class Sample:
    group_index: int | None = None
    index: int | None = None
    rollout_id: int | None = None
    prompt: str | list[dict[str, str]] = ""
    tokens: list[int] = field(default_factory=list)
    multimodal_inputs: dict[str, Any] | None = None
    multimodal_train_inputs: dict[str, Any] | None = None
    response: str = ""
    response_length: int = 0
    label: str | None = None
    reward: float | dict[str, Any] | None = None
    loss_mask: list[int] | None = None
    rollout_log_probs: list[float] | None = None
    remove_sample: bool = False

    class Status(Enum):
        PENDING = "pending"
        COMPLETED = "completed"
        TRUNCATED = "truncated"
        ABORTED = "aborted"
        FAILED = "failed"

    status: Status = Status.PENDING
    metadata: dict = field(default_factory=dict)
    session_id: str | None = None

    def get_reward_value(self, args: Any) -> float:
        return self.reward if not getattr(args, "reward_key", None) else self.reward[args.reward_key]


@dataclass
class DynamicFilterOutput:
    keep: bool
    reason: str | None = None
    keep_when_insufficient: bool = False


def call_dynamic_filter(fn: Callable[..., Any] | None, args: Any, group: list) -> DynamicFilterOutput:
    if fn is None:
        return DynamicFilterOutput(keep=True)
    out = fn(args, group)
    return out if isinstance(out, DynamicFilterOutput) else DynamicFilterOutput(keep=out)


def dataset_sample(row: dict, input_key: str, metadata_key: str, processor_loaded: bool) -> Sample:
    """One prompt row as slime's Dataset reads it (no --apply-chat-template, no --multimodal-keys)."""
    prompt = row.get(input_key)
    if processor_loaded:  # slime loads a processor for every VL checkpoint
        assert isinstance(prompt, list), f"prompt must be a list when processor is not None, got {type(prompt)} instead"
    return Sample(prompt=prompt, metadata=row.get(metadata_key) or {})


async def generate_and_rm(args: Any, sample: Sample, sampling_params: dict, generate: Callable,
                          rm: Callable | None) -> Sample | list[Sample]:
    out = await generate(args, sample, sampling_params)
    samples = out if isinstance(out, list) else [out]
    if any(s.status == Sample.Status.ABORTED for s in samples):
        return out
    for s in samples:
        if s.reward is None:
            s.reward = await rm(args, s)
    return out


def validate_rollout_id_annotated(node: Any, depth: int = 0) -> None:
    if isinstance(node, Sample):
        return
    assert isinstance(node, list), f"unexpected rollout output node type: {type(node).__name__}"
    if node and isinstance(node[0], Sample):
        if depth >= 2 and len(node) > 1:
            ids = [s.rollout_id for s in node]
            assert None not in ids, f"Compact rollout returned {len(node)} samples but rollout_id is unset"
            assert len(set(ids)) == 1, f"Sibling samples from one compact rollout must share rollout_id; got {ids}"
        return
    for item in node:
        validate_rollout_id_annotated(item, depth + 1)


def flatten(data: list) -> list[Sample]:
    while data and isinstance(data[0], list):
        data = list(itertools.chain.from_iterable(data))
    return data


def default_post_process_rewards(args: Any, samples: list[Sample]) -> tuple[list[float], list[float]]:
    """slime's GRPO normalization without a custom post-process: rows of n_samples_per_prompt only when the
    sample count is exactly rollout_batch_size * n_samples_per_prompt, else one row (the whole batch)."""
    import torch

    raw = [s.get_reward_value(args) for s in samples]
    rewards = torch.tensor(raw, dtype=torch.float)
    if rewards.shape[-1] == args.n_samples_per_prompt * args.rollout_batch_size:
        rewards = rewards.reshape(-1, args.n_samples_per_prompt)
    else:
        rewards = rewards.view(-1, rewards.shape[-1])
    rewards = rewards - rewards.mean(dim=-1, keepdim=True)
    if getattr(args, "grpo_std_normalization", True):
        rewards = rewards / (rewards.std(dim=-1, keepdim=True) + 1e-6)
    return raw, rewards.flatten().tolist()


def convert_samples_to_train_data(args: Any, samples: list[Sample],
                                  post_process: Callable | None = None) -> dict[str, list]:
    raw, rewards = (post_process or default_post_process_rewards)(args, samples)
    assert len(raw) == len(samples) and len(rewards) == len(samples)
    loss_masks = []
    for s in samples:
        if s.loss_mask is None:
            s.loss_mask = [1] * s.response_length
        assert len(s.loss_mask) == s.response_length, \
            f"loss mask length {len(s.loss_mask)} != response length {s.response_length}"
        if s.remove_sample:
            s.loss_mask = [0] * s.response_length
        loss_masks.append(s.loss_mask)
    data = {"tokens": [s.tokens for s in samples], "response_lengths": [s.response_length for s in samples],
            "rewards": rewards, "raw_reward": raw, "loss_masks": loss_masks,
            "rollout_ids": [s.rollout_id for s in samples]}
    if samples[0].rollout_log_probs is not None:
        data["rollout_log_probs"] = [s.rollout_log_probs for s in samples]
        for s in samples:
            assert len(s.rollout_log_probs) == s.response_length
    if any(s.multimodal_train_inputs is not None for s in samples):
        data["multimodal_train_inputs"] = [s.multimodal_train_inputs for s in samples]
    return data
