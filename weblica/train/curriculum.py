"""Difficulty-mix task sampling (WebGym §difficulty-aware training).

Tasks fall into bands by difficulty: an integer difficulty (WebGym: the number of rubric facts) is `easy`
up to `bands[0]`, `medium` up to `bands[1]`, `hard` beyond; the labels easy/medium/hard are taken as they
are. A mix chooses which tasks an iteration trains on:

| mix | draws |
|---|---|
| `uniform` | any task, uniformly (WebGym's best overall: 38.2% before horizon control) |
| `easy`, `medium`, `hard` | only that band (easy-only was the most stable of the single-band runs) |
| `weighted` | a band by `weights` (renormalised over bands that still have tasks), then a task in it |

Sampling takes the caller's `random.Random`, so the trainer keeps deriving one per (seed, iteration,
round) and two runs with one seed draw the same tasks. Within one call no task is drawn twice.
"""
from __future__ import annotations

import random
from typing import Any, Mapping, Sequence

from weblica.env.task import Task

BANDS = ("easy", "medium", "hard")
MIXES = ("uniform", "weighted") + BANDS
DEFAULT_BANDS = (3, 6)


def task_difficulty(task: Task) -> int | str | None:
    """The task's difficulty: its `difficulty` field, else the fact count of a fact-group rubric."""
    value = task.difficulty
    if isinstance(value, str) and value.strip().lstrip("-").isdigit():
        return int(value)
    if value is not None:
        return value
    from weblica.scoring.fact_groups import fact_groups

    try:
        groups = fact_groups(task)
    except ValueError:
        return None
    return sum(len(g.facts) for g in groups) if groups else None


def difficulty_band(task: Task, bands: Sequence[int] = DEFAULT_BANDS) -> str | None:
    """easy / medium / hard, or None for a task of unknown difficulty."""
    value = task_difficulty(task)
    if isinstance(value, str):
        label = value.strip().lower()
        return label if label in BANDS else None
    if value is None:
        return None
    easy_max, medium_max = bands
    return "easy" if value <= easy_max else "medium" if value <= medium_max else "hard"


class DifficultySampler:
    """Draws training tasks under a difficulty mix; raises ValueError at construction on a mix that can
    never draw (an empty band, weights on unknown bands), so a bad recipe fails before any rollout."""

    def __init__(self, tasks: Sequence[Task], mix: str = "uniform", weights: Mapping[str, float] | None = None,
                 bands: Sequence[int] = DEFAULT_BANDS) -> None:
        if mix not in MIXES:
            raise ValueError(f"unknown difficulty mix '{mix}'; use one of {', '.join(MIXES)}")
        if len(bands) != 2 or bands[0] > bands[1]:
            raise ValueError(f"difficulty bands are [easy_max, medium_max] with easy_max <= medium_max, not {list(bands)}")
        self.tasks = list(tasks)
        self.mix = mix
        self.by_band: dict[str, list[Task]] = {b: [] for b in BANDS}
        for task in self.tasks:
            band = difficulty_band(task, bands)
            if band is not None:
                self.by_band[band].append(task)
        self.weights = {b: float(w) for b, w in (weights or {}).items()}
        if mix in BANDS and not self.by_band[mix]:
            raise ValueError(f"difficulty mix '{mix}' but no task is {mix} (bands {list(bands)}): "
                             f"counts {self.counts()}")
        if mix == "weighted":
            unknown = sorted(set(self.weights) - set(BANDS))
            if unknown or not self.weights:
                raise ValueError(f"weighted mix needs weights over {', '.join(BANDS)}; got {dict(self.weights)}")
            if any(w < 0 for w in self.weights.values()):
                raise ValueError("difficulty weights must be >= 0")
            if not any(self.weights.get(b, 0) > 0 and self.by_band[b] for b in BANDS):
                raise ValueError(f"no band with a positive weight has tasks: counts {self.counts()}")

    def counts(self) -> dict[str, int]:
        return {b: len(ts) for b, ts in self.by_band.items()}

    def sample(self, n: int, rng: random.Random) -> list[Task]:
        """Up to `n` distinct tasks."""
        if self.mix == "uniform":
            return rng.sample(self.tasks, min(n, len(self.tasks)))
        if self.mix in BANDS:
            pool = self.by_band[self.mix]
            return rng.sample(pool, min(n, len(pool)))
        remaining = {b: list(ts) for b, ts in self.by_band.items()}
        out: list[Task] = []
        while len(out) < n:
            live = [b for b in BANDS if remaining[b] and self.weights.get(b, 0.0) > 0]
            if not live:
                break
            band = rng.choices(live, weights=[self.weights[b] for b in live])[0]
            out.append(remaining[band].pop(rng.randrange(len(remaining[band]))))
        return out

    def describe(self) -> dict[str, Any]:
        return {"mix": self.mix, "counts": self.counts(), **({"weights": self.weights} if self.weights else {})}
