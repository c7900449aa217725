"""Paired comparison of two policies on the same tasks over several training seeds.

Both policies played every task once per seed (`a[seed][task]`, `b[seed][task]`: success or not), so
each (seed, task) gives a paired difference in {-1, 0, 1}. Reported:

- the mean difference (success-rate points) and a 95% percentile interval from a two-level bootstrap:
  seeds resampled with replacement, then tasks, so both the seed-to-seed spread of training and the
  choice of tasks widen the interval (with one seed only the tasks vary);
- an exact two-sided sign test over the discordant pairs (one solved, the other not).

Pure Python, seeded: the same inputs give the same interval.
"""
from __future__ import annotations

import random
from dataclasses import asdict, dataclass
from math import comb
from typing import Any, Sequence


@dataclass(frozen=True)
class PairedComparison:
    seeds: int
    tasks: int
    success_a: float      # mean over seeds and tasks
    success_b: float
    difference: float     # success_a - success_b
    low: float            # the bootstrap interval of the difference
    high: float
    confidence: float
    wins: int             # (seed, task) pairs a solved and b did not
    losses: int           # b solved and a did not
    ties: int
    sign_p: float         # exact two-sided sign test over wins + losses
    per_seed: list[float]  # the difference in each seed

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def sign_test(wins: int, losses: int) -> float:
    """Exact two-sided p-value of `wins` against `losses` under no difference (each discordant pair a
    fair coin); 1.0 when there is no discordant pair."""
    if wins < 0 or losses < 0:
        raise ValueError(f"counts must be >= 0, got {wins} and {losses}")
    n = wins + losses
    if n == 0:
        return 1.0
    tail = sum(comb(n, i) for i in range(min(wins, losses) + 1)) / 2 ** n
    return min(1.0, 2 * tail)


def _differences(a: Sequence[Sequence[bool]], b: Sequence[Sequence[bool]]) -> list[list[int]]:
    if len(a) != len(b) or not a:
        raise ValueError(f"need the same seeds on both sides, at least one (got {len(a)} and {len(b)})")
    tasks = len(a[0])
    if tasks == 0 or any(len(row) != tasks for row in list(a) + list(b)):
        raise ValueError("every seed must hold the same tasks, at least one, on both sides")
    return [[int(bool(x)) - int(bool(y)) for x, y in zip(ra, rb)] for ra, rb in zip(a, b)]


def bootstrap_interval(diffs: Sequence[Sequence[int]], resamples: int = 4000, confidence: float = 0.95,
                       seed: int = 0) -> tuple[float, float]:
    """Percentile interval of the mean of a [seeds][tasks] table: each resample draws seeds with
    replacement, then tasks with replacement (one task draw shared by the drawn seeds, which keeps the
    pairing of a task across seeds)."""
    if not 0 < confidence < 1:
        raise ValueError(f"confidence must be in (0, 1), got {confidence}")
    rng = random.Random(seed)
    n_seeds, n_tasks = len(diffs), len(diffs[0])
    means = []
    for _ in range(resamples):
        seeds = [rng.randrange(n_seeds) for _ in range(n_seeds)]
        tasks = [rng.randrange(n_tasks) for _ in range(n_tasks)]
        total = sum(diffs[s][t] for s in seeds for t in tasks)
        means.append(total / (n_seeds * n_tasks))
    means.sort()
    tail = (1 - confidence) / 2
    low = means[min(len(means) - 1, int(tail * len(means)))]
    high = means[max(0, min(len(means) - 1, int((1 - tail) * len(means)) - 1))]
    return low, high


def compare(a: Sequence[Sequence[bool]], b: Sequence[Sequence[bool]], resamples: int = 4000,
            confidence: float = 0.95, seed: int = 0) -> PairedComparison:
    """Policy a against policy b on the same tasks in each seed (`a[seed][task]`, same task order)."""
    diffs = _differences(a, b)
    flat = [d for row in diffs for d in row]
    wins, losses = flat.count(1), flat.count(-1)
    low, high = bootstrap_interval(diffs, resamples, confidence, seed)
    cells = len(flat)
    return PairedComparison(
        seeds=len(diffs), tasks=len(diffs[0]),
        success_a=round(sum(bool(x) for row in a for x in row) / cells, 6),
        success_b=round(sum(bool(x) for row in b for x in row) / cells, 6),
        difference=round(sum(flat) / cells, 6), low=round(low, 6), high=round(high, 6), confidence=confidence,
        wins=wins, losses=losses, ties=cells - wins - losses, sign_p=round(sign_test(wins, losses), 6),
        per_seed=[round(sum(row) / len(row), 6) for row in diffs])


def solved_table(solved_ids: Sequence[Sequence[str] | set[str]], task_ids: Sequence[str]) -> list[list[bool]]:
    """[seed][task] successes from each seed's solved task ids, in `task_ids` order."""
    return [[task in set(ids) for task in task_ids] for ids in solved_ids]
