"""The math of the policy update, free of models and environments, so it can be checked by hand.

- group-relative advantages over the trajectories of one task (GRPO, Dr. GRPO, filtered BC);
- the clipped surrogate with asymmetric clipping (DAPO's clip-higher: 0.2 / 0.28), dual clip for negative
  advantages and a bounded log-ratio, token-mean or sequence-mean;
- truncated importance sampling and the sampler/trainer mismatch terms;
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


AGGREGATIONS = ("token_mean", "sequence_mean")


@dataclass
class LossStats:
    loss: float
    clip_fraction: float
    tokens: int
    mean_ratio: float
    kl: float = 0.0
    entropy: float = 0.0
    dual_clip_fraction: float = 0.0  # tokens with A < 0 whose loss the dual clip bounded
    rows: int = 0                    # sequences with at least one token in the loss


def aggregate(values: Any, mask: Any, aggregation: str = "token_mean") -> Any:
    """token_mean: the mean over every masked token of the batch (long responses weigh by their length);
    sequence_mean: each sequence's token mean, then the mean over sequences that have tokens."""
    if aggregation not in AGGREGATIONS:
        raise ValueError(f"unknown loss aggregation '{aggregation}'; use one of {', '.join(AGGREGATIONS)}")
    if aggregation == "token_mean":
        return (values * mask).sum() / mask.sum().clamp(min=1.0)
    per_row = mask.sum(-1)
    row_means = (values * mask).sum(-1) / per_row.clamp(min=1.0)
    return row_means.sum() / (per_row > 0).sum().clamp(min=1)


def clipped_policy_loss(logprobs: Any, old_logprobs: Any, advantages: Any, mask: Any, clip_low: float = 0.2,
                        clip_high: float = 0.28, ref_logprobs: Any = None, kl_coef: float = 0.0,
                        entropy: Any = None, entropy_coef: float = 0.0, *, clip_ratio_c: float = 3.0,
                        log_ratio_clamp: float = 20.0, weights: Any = None,
                        aggregation: str = "token_mean") -> tuple[Any, LossStats]:
    """PPO surrogate with asymmetric clipping, dual clip and a bounded log-ratio.

    All tensors have shape [batch, tokens]; `advantages` broadcasts per sequence ([batch, 1] or
    [batch, tokens]); `mask` is 1 on tokens that carry loss. Per token the loss is
    max(-A r, -A clip(r, 1 - clip_low, 1 + clip_high)), and for A < 0 at most -A * clip_ratio_c (dual clip,
    Ye et al. 2020; verl's `clip_ratio_c`, 3.0): with A < 0 the clipped surrogate alone grows with r without
    bound, and a token the trainer finds far likelier than the sampler did (r = e^10 after a bad sync)
    would dominate the batch. The log-ratio is clamped to +-`log_ratio_clamp` before exp (verl: 20) so no
    ratio overflows. `weights` (detached, e.g. truncated importance sampling) multiply each token's loss.
    `aggregation`: token_mean or sequence_mean (`aggregate`). An optional k3 KL term against
    `ref_logprobs` and an entropy bonus are off by default.
    """
    import torch

    mask = mask.to(logprobs.dtype)
    tokens = mask.sum().clamp(min=1.0)
    log_ratio = torch.clamp(logprobs - old_logprobs, -log_ratio_clamp, log_ratio_clamp) * mask
    ratio = torch.exp(log_ratio)
    unclipped = -advantages * ratio
    clipped = -advantages * torch.clamp(ratio, 1.0 - clip_low, 1.0 + clip_high)
    per_token = torch.maximum(unclipped, clipped)
    dual = torch.zeros_like(per_token, dtype=torch.bool)
    if clip_ratio_c:
        bound = -advantages * clip_ratio_c
        negative = (advantages < 0).expand_as(per_token)
        dual = negative & (per_token > bound)
        per_token = torch.where(negative, torch.minimum(per_token, bound), per_token)
    if weights is not None:
        per_token = per_token * weights.detach()
    loss = aggregate(per_token, mask, aggregation)
    kl_value = torch.zeros((), dtype=logprobs.dtype, device=logprobs.device)
    if ref_logprobs is not None and kl_coef:
        delta = (ref_logprobs - logprobs) * mask
        kl_value = aggregate(torch.exp(delta) - delta - 1.0, mask, aggregation)  # k3: unbiased, always >= 0
        loss = loss + kl_coef * kl_value
    entropy_value = torch.zeros((), dtype=logprobs.dtype, device=logprobs.device)
    if entropy is not None and entropy_coef:
        entropy_value = aggregate(entropy, mask, aggregation)
        loss = loss - entropy_coef * entropy_value
    with torch.no_grad():
        was_clipped = (clipped > unclipped).to(logprobs.dtype) * mask
        stats = LossStats(loss=float(loss.detach()), clip_fraction=float(was_clipped.sum() / tokens),
                          tokens=int(mask.sum()), mean_ratio=float((ratio * mask).sum() / tokens),
                          kl=float(kl_value), entropy=float(entropy_value),
                          dual_clip_fraction=float((dual.to(mask.dtype) * mask).sum() / tokens),
                          rows=int((mask.sum(-1) > 0).sum()))
    return loss, stats


def truncated_is_weights(trainer_logprobs: Any, rollout_logprobs: Any, cap: float) -> Any:
    """Truncated importance sampling (Yao et al. 2025, verl's rollout correction): per token
    min(pi_trainer / pi_rollout, cap), detached. The sampler (vLLM, bf16) and the trainer disagree a little
    on every token; the weight corrects the gradient for sampling from the wrong policy, and the cap keeps
    one token the sampler found unlikely from dominating."""
    import torch

    with torch.no_grad():
        return torch.exp(torch.clamp(trainer_logprobs - rollout_logprobs, max=math.log(cap)))


def mismatch_terms(trainer_logprobs: Any, rollout_logprobs: Any, mask: Any) -> tuple[float, float, float, int]:
    """(sum |d|, max |d|, sum k3, tokens) over masked tokens, d = log pi_trainer - log pi_rollout: the k3
    estimate r - 1 - log r (r = e^d) of KL(rollout || trainer) on the rollout's own samples."""
    import torch

    with torch.no_grad():
        mask = mask.to(torch.bool)
        d = (trainer_logprobs.float() - rollout_logprobs.float())[mask]
        if not d.numel():
            return 0.0, 0.0, 0.0, 0
        d = torch.nan_to_num(d, nan=0.0, posinf=1e4, neginf=-1e4)
        k3 = torch.expm1(d.clamp(max=50.0)) - d
        return float(d.abs().sum()), float(d.abs().max()), float(k3.sum()), int(d.numel())


def masked_token_nll(logprobs: Any, mask: Any) -> Any:
    """Behaviour-cloning loss: mean negative log-likelihood over the masked (assistant) tokens."""
    mask = mask.to(logprobs.dtype)
    return -(logprobs * mask).sum() / mask.sum().clamp(min=1.0)
