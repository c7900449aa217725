"""Held-out evaluation during GRPO: every `eval_every` iterations (and after the last) the current weights
play `eval_tasks` (tasks of sites training never saw, e.g. `weblica synth --split val`), greedy by default,
and the success rate lands in the iteration's metrics line as `eval` (`eval/success` in TensorBoard).

The episodes use the rollout backend as it stands after the weight sync, with the evaluation's sampling
options swapped in for their duration, and the same seed at every evaluation, so two evaluations differ
only by the weights. Under several ranks each plays its share of the tasks and the outcomes are pooled.
"""
from __future__ import annotations

import asyncio
import statistics
from contextlib import contextmanager
from dataclasses import replace
from typing import Any, Iterator

from weblica.policy.backends.base import SamplingOptions
from weblica.train.algorithms import derive_seed
from weblica.train.outcomes import Outcome, horizon_for


def due(config: Any, iteration: int) -> bool:
    """Whether the held-out set is played after `iteration`: every eval_every-th, and the last."""
    if not config.eval_every or not config.eval_tasks:
        return False
    return (iteration + 1) % config.eval_every == 0 or iteration + 1 == config.iterations


@contextmanager
def sampling_of(backend: Any, options: SamplingOptions) -> Iterator[None]:
    """The backend samples with `options` inside the block (no training rollout runs meanwhile)."""
    before = backend.sampling
    backend.sampling = options
    try:
        yield
    finally:
        backend.sampling = before


def evaluate(trainer: Any, iteration: int) -> dict[str, Any]:
    """Play the held-out tasks with the current weights; every rank calls it. Returns success (over
    episodes the environment did not remove), mean reward, episodes and removed ones."""
    cfg, world = trainer.config, trainer.world
    horizon = horizon_for(cfg, iteration)
    tasks = [replace(t, max_steps=horizon) for t in trainer.eval_tasks] if horizon else list(trainer.eval_tasks)
    mine = world.share(tasks)
    run_dir = trainer.out / "eval" / f"iter-{iteration:04d}"
    if world.distributed:
        run_dir = run_dir / f"rank-{world.rank}"
    options = SamplingOptions(temperature=cfg.eval_temperature, top_p=1.0, max_new_tokens=cfg.max_new_tokens)
    with sampling_of(trainer.backend, options):
        trajs, _ = trainer._rollout(mine, derive_seed(cfg.seed, "eval"), run_dir, repeats=cfg.eval_repeats) \
            if mine else ([], {})
    asyncio.run(trainer._score(trajs, run_dir))
    outcomes = [o for part in world.gather([Outcome.of(t) for t in trajs]) for o in part]
    valid = [o for o in outcomes if not o.removed]
    return {"success": round(sum(o.success for o in valid) / len(valid), 6) if valid else 0.0,
            "reward": round(statistics.fmean(o.reward for o in valid), 6) if valid else 0.0,
            "episodes": len(outcomes), "removed": len(outcomes) - len(valid)}
