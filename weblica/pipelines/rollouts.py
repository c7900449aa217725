"""Rollouts of a policy over a task list: the job behind `weblica run`.

Opens the backends the tasks' sources need (synth site server, cache replay proxy, live gateway), plays
every task `repeats` times in a pool of environments (weblica.rollout) or on Ray actors
(weblica.pipelines.rollouts_ray), and writes the run directory.
"""
from __future__ import annotations

import asyncio
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from weblica.env.episode import Trajectory
from weblica.env.task import Task
from weblica.rollout import RunSummary


@dataclass
class Rollouts:
    """What a rollout run did: its trajectories, their summary, and how many episodes a resume kept."""

    trajectories: list[Trajectory]
    summary: RunSummary
    kept: int = 0

    @property
    def nothing_to_do(self) -> bool:
        """A resume that found every episode already played."""
        return self.kept > 0 and self.kept >= len(self.trajectories)

    def to_dict(self, resume: bool = False) -> dict[str, Any]:
        data = self.summary.to_dict()
        if resume:
            data["kept_episodes"] = self.kept
            data["nothing_to_do"] = self.nothing_to_do
        return data


def resumable_episodes(out: str | Path) -> int:
    """How many finished episodes a resume of `out` keeps (whole lines of its log, cut-offs excepted)."""
    from weblica.run_log import CUT_OFF, EPISODES, read_whole_lines

    return sum(t.error != CUT_OFF for t in read_whole_lines(Path(out) / EPISODES)[0])


def run_rollouts(tasks: list[Task], policy: str, out: str | Path, *, parallel: int = 1, seed: int = 0,
                 repeats: int = 1, allow_private: bool = False, resume: bool = False, progress: bool = False,
                 ray_address: str | None = None, ray_workers: int = 2) -> Rollouts:
    """Play `policy` (a spec: oracle, random, hf:DIR, openai:URL, ...) on every task and write `out`.
    With `ray_address` the episodes run on `ray_workers` Ray actors, `parallel` environments each."""
    from weblica.policy.factory import make_policy_factory

    factory = make_policy_factory(policy, seed, tasks=tasks)  # a bad spec fails before any browser starts
    if ray_address:
        if resume:
            raise ValueError("resuming does not work with Ray yet: run without Ray to resume")
        from weblica.pipelines.rollouts_ray import run_tasks_ray

        trajectories, summary = run_tasks_ray(tasks, policy, out, address=ray_address, workers=ray_workers,
                                              parallel_per_worker=parallel, seed=seed, repeats=repeats,
                                              allow_private=allow_private)
        return Rollouts(trajectories, summary)
    kept = resumable_episodes(out) if resume else 0

    async def go() -> tuple[list[Trajectory], RunSummary]:
        from weblica.env.sources import open_backends
        from weblica.rollout import run_tasks

        async with open_backends(tasks, allow_private=allow_private) as backends:
            return await run_tasks(tasks, factory, out, parallel=parallel, seed=seed, repeats=repeats,
                                   backends=backends, progress=progress, resume=resume,
                                   identity={"policy": policy})

    trajectories, summary = asyncio.run(go())
    return Rollouts(trajectories, summary, kept)
