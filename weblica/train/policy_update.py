"""The GRPO policy update over turn samples, apart from rollouts, so it runs wherever a model does (the
trainer's loop, `bench/gpu_check.py` on a GPU without a browser).

First a no-grad pass of the trainer over the batch measures how far its log-probs are from the rollout's
(the mismatch, logged every iteration) and, with truncated importance sampling, becomes the PPO ratio's
old policy. Then `ppo_epochs` passes in a seeded order; each mini-batch is one optimizer step on the
clipped surrogate (dual clip, bounded log-ratio), every sample weighted by its share of the mini-batch's
loss tokens (token_mean) or turns (sequence_mean). Without TIS the rollout log-probs are the old policy.
Turns cut at max_new_tokens carry no loss (`mask_truncated`). An optional frozen reference model adds the
KL term. Split over data-parallel ranks (`Shards`), the mini-batches and means are those of the whole batch.
"""
from __future__ import annotations

import statistics
from collections import Counter
from dataclasses import dataclass
from typing import Any, Sequence

from weblica.policy.backends.hf import varying_length_attention
from weblica.train.algorithms import clipped_policy_loss, derive_seed
from weblica.train.config import GRPOConfig
from weblica.train.distributed import World
from weblica.train.fsdp import broadcast_filler, is_sharded, micro_batches, norm_value, passes_needed
from weblica.train.samples import TurnSample, batch_logprobs, left_aligned


@dataclass(frozen=True)
class Shards:
    """A batch spread over data-parallel ranks: `owners[k]` is the rank holding the k-th sample of the
    whole batch, in the order one process would hold them; each rank passes its own samples in that
    order."""

    world: World
    owners: list[int]

    def layout(self, samples: Sequence[TurnSample], tokens: Sequence[int] | None = None) -> list[tuple[int, int, int]]:
        """(rank, index among that rank's samples, loss tokens) of every sample of the batch; `tokens` are
        this rank's samples' loss tokens (default: their response lengths)."""
        lengths = self.world.gather(list(tokens) if tokens is not None else [len(s.response_ids) for s in samples])
        seen: Counter[int] = Counter()
        out = []
        for rank in self.owners:
            if seen[rank] >= len(lengths[rank]):
                raise ValueError(f"the batch layout gives rank {rank} more samples than it holds")
            out.append((rank, seen[rank], lengths[rank][seen[rank]]))
            seen[rank] += 1
        if any(seen[rank] != len(held) for rank, held in enumerate(lengths)):
            raise ValueError("the batch layout leaves samples of a rank out")
        return out


def ppo_update(model: Any, optimizer: Any, samples: Sequence[TurnSample], config: GRPOConfig, iteration: int,
               device: str, reference: Any = None, banned: Sequence[int] = (),
               shards: Shards | None = None) -> dict[str, float]:
    """One iteration's update; returns the mean over mini-batch steps of the logged loss terms and the
    sampler/trainer mismatch of the batch before the update. With `shards`, `samples` are this rank's
    part of the batch and every rank must call it."""
    world = shards.world if shards is not None else World()
    weights = [loss_tokens(s, config) for s in samples]
    layout = shards.layout(samples, weights) if shards is not None else \
        [(0, i, n) for i, n in enumerate(weights)]
    if not layout:
        return {"loss": 0.0, "clip_fraction": 0.0, "grad_norm": 0.0}
    # a sharded model's passes are collective: a rank short of samples runs weight-0 passes on a filler
    filler = broadcast_filler(world, samples, layout) if is_sharded(model) else None
    with varying_length_attention():
        trainer_logprobs, mismatch = _before_update(model, samples, layout, world, config, device, banned, filler)
        stats = _update(model, optimizer, samples, layout, world, config, iteration, device, reference, banned,
                        filler, trainer_logprobs)
    return {**stats, **mismatch}


def loss_tokens(sample: TurnSample, config: GRPOConfig) -> int:
    """The response tokens of a sample that carry loss: none for a turn cut at max_new_tokens when
    `mask_truncated` is on (overlong filtering), else all."""
    return 0 if config.mask_truncated and sample.truncated else len(sample.response_ids)


def _rank_passes(layout: Sequence[tuple[int, int, int]], world: World, micro: int, sharded: bool) -> int:
    held = Counter(rank for rank, _, _ in layout)
    return passes_needed([held[r] for r in range(world.size)], micro) if sharded else 0


def _before_update(model: Any, samples: Sequence[TurnSample], layout: list[tuple[int, int, int]], world: World,
                   cfg: GRPOConfig, device: str, banned: Sequence[int],
                   filler: TurnSample | None) -> tuple[list[Any], dict[str, float]]:
    """A no-grad pass of the trainer over this rank's samples before any step: its log-probs against the
    rollout's (the mismatch a sync bug, bf16 or a different kernel leaves: mean and max |d|, k3 KL) and,
    with truncated importance sampling, the old policy of the PPO ratio."""
    import torch

    from weblica.train.algorithms import mismatch_terms

    model.eval()
    mine = list(samples)
    out: list[Any] = []
    abs_sum = k3_sum = 0.0
    worst, count = 0.0, 0
    passes = _rank_passes(layout, world, cfg.micro_batch_size, filler is not None)
    with torch.no_grad():
        for micro, real in micro_batches(mine, cfg.micro_batch_size, passes, filler):
            scores = batch_logprobs(model, micro, device, cfg.temperature, banned=banned)
            if not real:
                continue
            rollout = _aligned([s.old_logprobs for s in micro], scores.mask)
            a, m, k, n = mismatch_terms(scores.logprobs, rollout, scores.mask)
            abs_sum, k3_sum, worst, count = abs_sum + a, k3_sum + k, max(worst, m), count + n
            for row, sample in enumerate(micro):
                n_tokens = len(sample.response_ids)
                out.append(scores.logprobs[row, scores.logprobs.shape[1] - n_tokens:].detach())
    abs_sum, k3_sum, count = world.sum_floats([abs_sum, k3_sum, float(count)])
    worst = max(world.gather(worst))
    tokens = max(count, 1.0)
    return out, {"mismatch_mean": round(abs_sum / tokens, 6), "mismatch_max": round(worst, 6),
                 "mismatch_k3": round(k3_sum / tokens, 6)}


def _update(model: Any, optimizer: Any, samples: Sequence[TurnSample], layout: list[tuple[int, int, int]],
            world: World, cfg: GRPOConfig, iteration: int, device: str, reference: Any,
            banned: Sequence[int], filler: TurnSample | None, trainer_logprobs: Sequence[Any]) -> dict[str, float]:
    import torch

    from weblica.train.algorithms import truncated_is_weights

    model.train()
    # the loss terms logged: their mean values per mini-batch; KL and entropy only when they are on
    logged = ["loss", "clip_fraction", "dual_clip_fraction"] + ["kl"] * bool(cfg.kl_coef) + \
        ["entropy"] * bool(cfg.entropy_coef)
    sequence_mean = cfg.loss_aggregation == "sequence_mean"
    index = {id(s): i for i, s in enumerate(samples)}
    rows: list[dict[str, float]] = []
    for epoch in range(cfg.ppo_epochs):
        order = torch.randperm(len(layout), generator=torch.Generator().manual_seed(
            derive_seed(cfg.seed, iteration, epoch, "order"))).tolist()
        size = max(1, -(-len(layout) // cfg.mini_batches))
        for start in range(0, len(layout), size):
            chosen = [layout[i] for i in order[start:start + size]]
            # what the mini-batch's loss is a mean over: its loss tokens, or its turns that have any
            total = sum(1 for _, _, n in chosen if n) if sequence_mean else sum(n for _, _, n in chosen)
            mini = [samples[i] for rank, i, _ in chosen if rank == world.rank]
            passes = _rank_passes(chosen, world, cfg.micro_batch_size, filler is not None)
            optimizer.zero_grad(set_to_none=True)
            row = dict.fromkeys(logged, 0.0)
            for micro, real in micro_batches(mini, cfg.micro_batch_size, passes, filler):
                scores = batch_logprobs(model, micro, device, cfg.temperature, with_entropy=bool(cfg.entropy_coef),
                                        banned=banned)
                ref = None
                if reference is not None:
                    with torch.no_grad():
                        ref = batch_logprobs(reference, micro, device, cfg.temperature, banned=banned).logprobs
                keep = torch.tensor([[float(loss_tokens(s, cfg) > 0)] for s in micro], device=scores.mask.device)
                mask = scores.mask * keep
                rollout = _aligned([s.old_logprobs for s in micro], scores.mask)
                old, weights = rollout, None
                if cfg.tis_cap and real:
                    old = _aligned_tensors([trainer_logprobs[index[id(s)]] for s in micro], scores.mask)
                    weights = truncated_is_weights(old, rollout, cfg.tis_cap)
                loss, stats = clipped_policy_loss(
                    scores.logprobs, old, torch.tensor([[s.advantage] for s in micro], device=scores.mask.device),
                    mask, cfg.clip_low, cfg.clip_high, ref, cfg.kl_coef, scores.entropy, cfg.entropy_coef,
                    clip_ratio_c=cfg.clip_ratio_c, log_ratio_clamp=cfg.log_ratio_clamp, weights=weights,
                    aggregation=cfg.loss_aggregation)
                share = stats.rows if sequence_mean else stats.tokens
                weight = share / total if real and total else 0.0  # this micro-batch's part of the mean
                (loss * weight).backward()
                for key in logged:
                    row[key] += getattr(stats, key) * weight
            if filler is None:  # FSDP reduce-scatters (sums) the gradients during the backward
                world.sum_gradients(model.parameters())
            row = dict(zip(logged, world.sum_floats([row[key] for key in logged])))
            row["grad_norm"] = norm_value(torch.nn.utils.clip_grad_norm_(model.parameters(), cfg.max_grad_norm))
            if total:  # a mini-batch of overlong turns only has nothing to learn: no step (AdamW would move)
                optimizer.step()
            rows.append(row)
    model.eval()
    return {key: round(statistics.fmean(row[key] for row in rows), 6) for key in rows[0]}


def _aligned(rows: Sequence[Sequence[float]], mask: Any) -> Any:
    """Per-sample values laid out like `mask` ([batch, longest], each row's values in its last columns)."""
    for i, values in enumerate(rows):
        if len(values or ()) != int(mask[i].sum()):
            raise ValueError(f"a sample has {len(values or ())} rollout log-probs for {int(mask[i].sum())} response "
                             "tokens: GRPO needs a rollout backend that returns log-probs (hf, vllm)")
    return left_aligned(rows, mask.dtype)[0].to(mask.device)


def _aligned_tensors(rows: Sequence[Any], mask: Any) -> Any:
    """Like `_aligned`, for rows that are already tensors (the trainer's own log-probs)."""
    import torch

    out = torch.zeros(mask.shape, dtype=mask.dtype, device=mask.device)
    for i, values in enumerate(rows):
        if len(values):
            out[i, mask.shape[1] - len(values):] = values.to(mask.device, mask.dtype)
    return out
