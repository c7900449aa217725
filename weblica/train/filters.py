"""Step filters applied before turns become training samples.

The repeated-action filter (WebGym): a step whose screenshot after acting is byte-identical to the one the
agent acted on changed nothing visible — a click on dead space, a scroll at the page end, a retyped value.
WebGym drops such steps from the update even inside successful trajectories, so the policy is not taught to
repeat no-ops. Screenshots are content-addressed (`screenshot_sha256`), so "same screenshot" is "same sha".
"""
from __future__ import annotations

from typing import Sequence

from weblica.env.episode import StepRecord, Trajectory

TERMINAL_ACTIONS = frozenset({"done", "stop"})


def is_terminal(step: StepRecord) -> bool:
    return any(a.get("name") in TERMINAL_ACTIONS for a in step.actions)


def unchanged_screens(traj: Trajectory) -> list[bool]:
    """For each step, whether its resulting screenshot equals the one observed before it (the start
    screenshot for step 0). A missing sha on either side is not evidence of a no-op: it reads as changed."""
    out = []
    before = traj.start_screenshot_sha256
    for step in traj.steps:
        after = step.screenshot_sha256
        out.append(bool(before) and bool(after) and before == after)
        before = after
    return out


def changed_step_indices(traj: Trajectory, keep_terminal: bool = True) -> list[int]:
    """Indices of the steps the repeated-action filter keeps. The answering step (`done`) never changes
    the screen yet is the point of a successful episode, so it is kept unless `keep_terminal` is False."""
    return [i for i, (step, same) in enumerate(zip(traj.steps, unchanged_screens(traj)))
            if not same or (keep_terminal and is_terminal(step))]


def filter_repeated_steps(steps: Sequence[StepRecord], traj: Trajectory, keep_terminal: bool = True) -> list[StepRecord]:
    """`steps` (the trajectory's own, or per-turn items aligned with them) minus the dropped ones."""
    keep = set(changed_step_indices(traj, keep_terminal))
    return [s for i, s in enumerate(steps) if i in keep]
