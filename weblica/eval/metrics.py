"""Evaluation metrics over trajectories: success, pass@k, breakdowns, steps and termination reasons.

Two success figures sit side by side. The *official* one counts every episode, an environment failure
as a failure (what a benchmark reports). The *abort-excluded* one leaves out episodes the environment
ended (`Trajectory.removed`: crashes, timeouts, unreachable sites), so an agent is not blamed for them.
"""
from __future__ import annotations

from collections import Counter, defaultdict
from dataclasses import asdict, dataclass, field
from math import comb
from typing import Any, Iterable, Sequence

from weblica.env.episode import Trajectory
from weblica.env.task import Task

BREAKDOWNS = ("skill", "category", "difficulty")
UNKNOWN = "unknown"


def pass_at_k(n: int, c: int, k: int) -> float:
    """The unbiased pass@k estimator (Chen et al., 2021): 1 - C(n-c, k) / C(n, k).

    The probability that at least one of k samples drawn without replacement from n attempts, c of
    them correct, is correct. Needs n >= k; exact integer binomials, so no float blow-up for large n."""
    if not 0 <= c <= n:
        raise ValueError(f"need 0 <= c <= n, got n={n}, c={c}")
    if k < 1 or n < k:
        raise ValueError(f"pass@{k} needs at least {k} samples per task, got {n}")
    if n - c < k:  # every draw of k holds a success
        return 1.0
    return 1.0 - comb(n - c, k) / comb(n, k)


@dataclass
class TaskOutcome:
    """One task's episodes: n attempts, c successes, and how many the environment aborted."""

    task_id: str
    n: int = 0
    c: int = 0
    aborted: int = 0
    steps: list[int] = field(default_factory=list)
    skill: str = UNKNOWN
    category: str = UNKNOWN
    difficulty: str = UNKNOWN

    @property
    def n_valid(self) -> int:
        return self.n - self.aborted


@dataclass
class Metrics:
    """The figures for one set of episodes (the whole run, or one skill / category / difficulty)."""

    episodes: int
    tasks: int
    successes: int
    aborted: int
    success_rate: float                      # official: aborted episodes count as failures
    abort_excluded_success_rate: float | None  # None when every episode was aborted
    pass_at_k: dict[str, float | None]       # "1", "5": mean over tasks with >= k episodes
    pass_at_k_abort_excluded: dict[str, float | None]
    mean_steps: float
    mean_steps_success: float | None
    termination_reasons: dict[str, int]

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def _mean(values: Sequence[float]) -> float | None:
    return round(sum(values) / len(values), 6) if values else None


def _pass_at_k_over(outcomes: Iterable[TaskOutcome], k: int, abort_excluded: bool) -> float | None:
    """Mean pass@k over the tasks with enough episodes; None when no task has k of them."""
    values = []
    for o in outcomes:
        n = o.n_valid if abort_excluded else o.n
        if n >= k:
            values.append(pass_at_k(n, o.c, k))  # successes are never aborted, so c <= n_valid
    return _mean(values)


def _metrics(trajectories: list[Trajectory], outcomes: list[TaskOutcome], ks: Sequence[int]) -> Metrics:
    n = len(trajectories)
    successes = sum(t.success for t in trajectories)
    aborted = sum(t.removed for t in trajectories)
    valid = n - aborted
    steps = [len(t.steps) for t in trajectories]
    return Metrics(
        episodes=n, tasks=len(outcomes), successes=successes, aborted=aborted,
        success_rate=round(successes / n, 6) if n else 0.0,
        abort_excluded_success_rate=round(successes / valid, 6) if valid else None,
        pass_at_k={str(k): _pass_at_k_over(outcomes, k, False) for k in ks},
        pass_at_k_abort_excluded={str(k): _pass_at_k_over(outcomes, k, True) for k in ks},
        mean_steps=_mean(steps) or 0.0,
        mean_steps_success=_mean([len(t.steps) for t in trajectories if t.success]),
        termination_reasons=dict(sorted(Counter(t.termination_reason or UNKNOWN for t in trajectories).items())),
    )


def task_outcomes(trajectories: list[Trajectory], tasks: Iterable[Task] = ()) -> list[TaskOutcome]:
    """Per-task tallies in first-seen order, labelled with the task's skill, category and difficulty."""
    by_id = {t.id: t for t in tasks}
    outcomes: dict[str, TaskOutcome] = {}
    for traj in trajectories:
        o = outcomes.get(traj.task_id)
        if o is None:
            task = by_id.get(traj.task_id)
            labels = {key: str(getattr(task, key)) if task is not None and getattr(task, key) is not None
                      else str(traj.metadata.get(key, UNKNOWN)) for key in BREAKDOWNS}
            o = outcomes[traj.task_id] = TaskOutcome(traj.task_id, **labels)
        o.n += 1
        o.c += bool(traj.success)
        o.aborted += bool(traj.removed) and not traj.success
        o.steps.append(len(traj.steps))
    return list(outcomes.values())


@dataclass
class EvalMetrics:
    overall: Metrics
    breakdowns: dict[str, dict[str, Metrics]]  # "skill" -> {"forms": Metrics, ...}
    per_task: list[TaskOutcome]
    ks: list[int]

    def to_dict(self) -> dict[str, Any]:
        return {
            "overall": self.overall.to_dict(),
            "breakdowns": {name: {value: m.to_dict() for value, m in groups.items()}
                           for name, groups in self.breakdowns.items()},
            "per_task": [{"task_id": o.task_id, "n": o.n, "c": o.c, "aborted": o.aborted,
                          "success_rate": round(o.c / o.n, 6) if o.n else 0.0,
                          "mean_steps": _mean(o.steps), "skill": o.skill, "category": o.category,
                          "difficulty": o.difficulty} for o in self.per_task],
            "ks": self.ks,
        }


def compute_metrics(trajectories: list[Trajectory], tasks: Iterable[Task] = (),
                    ks: Sequence[int] = (1,)) -> EvalMetrics:
    """Every figure of an evaluation: overall, per skill / category / difficulty, and per task."""
    ks = sorted({int(k) for k in ks} | {1})
    outcomes = task_outcomes(trajectories, tasks)
    label_of = {o.task_id: o for o in outcomes}
    breakdowns: dict[str, dict[str, Metrics]] = {}
    for key in BREAKDOWNS:
        groups: dict[str, list[Trajectory]] = defaultdict(list)
        for traj in trajectories:
            groups[getattr(label_of[traj.task_id], key)].append(traj)
        if set(groups) == {UNKNOWN}:  # nothing is labelled this way: no breakdown to show
            continue
        breakdowns[key] = {
            value: _metrics(group, [o for o in outcomes if getattr(o, key) == value], ks)
            for value, group in sorted(groups.items())
        }
    return EvalMetrics(_metrics(trajectories, outcomes, ks), breakdowns, outcomes, ks)
