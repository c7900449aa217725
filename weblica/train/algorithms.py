"""The math of the policy update, free of models and environments, so it can be checked by hand.

- group-relative advantages over the trajectories of one task (GRPO, Dr. GRPO, filtered BC);
- the token-mean clipped surrogate with asymmetric clipping (DAPO's clip-higher: 0.2 / 0.28);
- dynamic sampling: groups whose rewards are all equal carry no signal and are dropped.
"""
from __future__ import annotations

import hashlib
import math
from dataclasses import dataclass
from typing import Any, Sequence

ESTIMATORS = ("grpo", "dr_grpo", "filtered_bc")


def derive_seed(*parts: Any) -> int:
    """A 32-bit seed from a run seed and names (iteration, round, purpose): stable across processes."""
    return int.from_bytes(hashlib.sha256("\0".join(map(str, parts)).encode()).digest()[:4], "big")


def group_advantages(rewards: Sequence[float], estimator: str = "grpo", eps: float = 1e-6) -> list[float]:
    """Advantages of one group's trajectories (removed ones already left out).

    grpo: (r - mean) / (std + eps), population std; dr_grpo: r - mean (no std normalisation, Dr. GRPO);
    filtered_bc: 1 for successful trajectories (r > 0), else 0 (REINFORCE on successes only, WebGym).
    """
    if estimator not in ESTIMATORS:
        raise ValueError(f"unknown advantage estimator '{estimator}'; use one of {', '.join(ESTIMATORS)}")
    n = len(rewards)
    if n == 0:
        return []
    if estimator == "filtered_bc":
        return [1.0 if r > 0 else 0.0 for r in rewards]
    mean = sum(rewards) / n
    if estimator == "dr_grpo":
        return [r - mean for r in rewards]
    std = math.sqrt(sum((r - mean) ** 2 for r in rewards) / n)
    return [(r - mean) / (std + eps) for r in rewards]


def is_informative(rewards: Sequence[float], estimator: str = "grpo") -> bool:
    """Whether a group can teach anything: rewards not all equal (for filtered BC: any success)."""
    if not rewards:
        return False
    if estimator == "filtered_bc":
        return any(r > 0 for r in rewards)
    return max(rewards) - min(rewards) > 1e-9


@dataclass
class LossStats:
    loss: float
    clip_fraction: float
    tokens: int
    mean_ratio: float
    kl: float = 0.0
    entropy: float = 0.0


def clipped_policy_loss(logprobs: Any, old_logprobs: Any, advantages: Any, mask: Any, clip_low: float = 0.2,
                        clip_high: float = 0.28, ref_logprobs: Any = None, kl_coef: float = 0.0,
                        entropy: Any = None, entropy_coef: float = 0.0) -> tuple[Any, LossStats]:
    """Token-mean PPO surrogate with asymmetric clipping.

    All tensors have shape [batch, tokens]; `advantages` broadcasts per sequence ([batch, 1] or
    [batch, tokens]); `mask` is 1 on tokens the policy generated. The mean is over every masked token of
    the batch (token-mean), so long responses weigh by their length. An optional k3 KL term against
    `ref_logprobs` and an entropy bonus are off by default.
    """
    import torch

    mask = mask.to(logprobs.dtype)
    tokens = mask.sum().clamp(min=1.0)
    log_ratio = (logprobs - old_logprobs) * mask
    ratio = torch.exp(log_ratio)
    unclipped = ratio * advantages
    clipped = torch.clamp(ratio, 1.0 - clip_low, 1.0 + clip_high) * advantages
    surrogate = torch.minimum(unclipped, clipped)
    loss = -(surrogate * mask).sum() / tokens
    kl_value = torch.zeros((), dtype=logprobs.dtype, device=logprobs.device)
    if ref_logprobs is not None and kl_coef:
        delta = (ref_logprobs - logprobs) * mask
        kl_value = ((torch.exp(delta) - delta - 1.0) * mask).sum() / tokens  # k3: unbiased, always >= 0
        loss = loss + kl_coef * kl_value
    entropy_value = torch.zeros((), dtype=logprobs.dtype, device=logprobs.device)
    if entropy is not None and entropy_coef:
        entropy_value = (entropy * mask).sum() / tokens
        loss = loss - entropy_coef * entropy_value
    with torch.no_grad():
        was_clipped = ((unclipped != clipped) & (clipped < unclipped)).to(logprobs.dtype) * mask
        stats = LossStats(loss=float(loss.detach()), clip_fraction=float(was_clipped.sum() / tokens),
                          tokens=int(mask.sum()), mean_ratio=float((ratio * mask).sum() / tokens),
                          kl=float(kl_value), entropy=float(entropy_value))
    return loss, stats


def masked_token_nll(logprobs: Any, mask: Any) -> Any:
    """Behaviour-cloning loss: mean negative log-likelihood over the masked (assistant) tokens."""
    mask = mask.to(logprobs.dtype)
    return -(logprobs * mask).sum() / mask.sum().clamp(min=1.0)
