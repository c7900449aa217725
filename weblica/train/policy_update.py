"""The GRPO policy update over turn samples, apart from rollouts, so it runs wherever a model does (the
trainer's loop, `bench/gpu_check.py` on a GPU without a browser).

`ppo_epochs` passes in a seeded order; each mini-batch is one optimizer step on the clipped token-mean
surrogate, every sample weighted by its share of the mini-batch's response tokens. The rollout
log-probs are the old policy; an optional frozen reference model adds the KL term. Split over
data-parallel ranks (`Shards`), the mini-batches and token means are those of the whole batch.
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

    def layout(self, samples: Sequence[TurnSample]) -> list[tuple[int, int, int]]:
        """(rank, index among that rank's samples, response tokens) of every sample of the batch."""
        lengths = self.world.gather([len(s.response_ids) for s in samples])
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
    """One iteration's update; returns the mean over mini-batch steps of the logged loss terms. With
    `shards`, `samples` are this rank's part of the batch and every rank must call it."""
    world = shards.world if shards is not None else World()
    layout = shards.layout(samples) if shards is not None else [(0, i, len(s.response_ids)) for i, s in enumerate(samples)]
    if not layout:
        return {"loss": 0.0, "clip_fraction": 0.0, "grad_norm": 0.0}
    # a sharded model's passes are collective: a rank short of samples runs weight-0 passes on a filler
    filler = broadcast_filler(world, samples, layout) if is_sharded(model) else None
    with varying_length_attention():
        return _update(model, optimizer, samples, layout, world, config, iteration, device, reference, banned,
                       filler)


def _update(model: Any, optimizer: Any, samples: Sequence[TurnSample], layout: list[tuple[int, int, int]],
            world: World, cfg: GRPOConfig, iteration: int, device: str, reference: Any,
            banned: Sequence[int], filler: TurnSample | None) -> dict[str, float]:
    import torch

    model.train()
    # the loss terms logged: their token-mean values per mini-batch; KL and entropy only when they are on
    logged = ["loss", "clip_fraction"] + ["kl"] * bool(cfg.kl_coef) + ["entropy"] * bool(cfg.entropy_coef)
    rows: list[dict[str, float]] = []
    for epoch in range(cfg.ppo_epochs):
        order = torch.randperm(len(layout), generator=torch.Generator().manual_seed(
            derive_seed(cfg.seed, iteration, epoch, "order"))).tolist()
        size = max(1, -(-len(layout) // cfg.mini_batches))
        for start in range(0, len(layout), size):
            chosen = [layout[i] for i in order[start:start + size]]
            tokens = sum(n for _, _, n in chosen)
            mini = [samples[i] for rank, i, _ in chosen if rank == world.rank]
            held = Counter(rank for rank, _, _ in chosen)
            passes = passes_needed([held[r] for r in range(world.size)], cfg.micro_batch_size) \
                if filler is not None else 0
            optimizer.zero_grad(set_to_none=True)
            row = dict.fromkeys(logged, 0.0)
            for micro, real in micro_batches(mini, cfg.micro_batch_size, passes, filler):
                scores = batch_logprobs(model, micro, device, cfg.temperature, with_entropy=bool(cfg.entropy_coef),
                                        banned=banned)
                ref = None
                if reference is not None:
                    with torch.no_grad():
                        ref = batch_logprobs(reference, micro, device, cfg.temperature, banned=banned).logprobs
                loss, stats = clipped_policy_loss(
                    scores.logprobs, _aligned([s.old_logprobs for s in micro], scores.mask),
                    torch.tensor([[s.advantage] for s in micro], device=scores.mask.device), scores.mask,
                    cfg.clip_low, cfg.clip_high, ref, cfg.kl_coef, scores.entropy, cfg.entropy_coef)
                weight = stats.tokens / tokens if real else 0.0  # token-mean over the mini-batch
                (loss * weight).backward()
                for key in logged:
                    row[key] += getattr(stats, key) * weight
            if filler is None:  # FSDP reduce-scatters (sums) the gradients during the backward
                world.sum_gradients(model.parameters())
            row = dict(zip(logged, world.sum_floats([row[key] for key in logged])))
            row["grad_norm"] = norm_value(torch.nn.utils.clip_grad_norm_(model.parameters(), cfg.max_grad_norm))
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
