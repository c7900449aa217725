"""What GRPO and its held-out evaluation share: an episode's outcome as the ranks pool it, and the horizon
an iteration plays to."""

from __future__ import annotations

from dataclasses import dataclass

from weblica.env.episode import Trajectory
from weblica.train.config import GRPOConfig


def horizon_for(config: GRPOConfig, iteration: int) -> int:
    """The episode horizon at an iteration: the last schedule entry that has started, else max_steps."""
    horizon = config.max_steps
    for start, steps in sorted(config.horizon_schedule):
        if iteration >= start:
            horizon = steps
    return horizon


@dataclass(frozen=True)
class Outcome:
    """What the ranks pool of an episode: enough to form groups and to log metrics."""

    task_id: str
    reward: float
    success: bool
    removed: bool
    termination_reason: str | None
    steps: int

    @classmethod
    def of(cls, traj: Trajectory) -> "Outcome":
        return cls(traj.task_id, traj.reward, traj.success, traj.removed, traj.termination_reason, len(traj.steps))
