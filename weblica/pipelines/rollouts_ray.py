"""Rollouts scaled out with Ray: env workers are actors (each an EnvPool with its own Chromium), on
any machine of the cluster. The driver hands out tasks one at a time, so a slow site never holds back
the others, and writes the run directory exactly as a local run does (same order, same bytes).

`weblica run --ray auto|ADDRESS [--ray-workers N]`; needs the `ray` extra.
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from weblica.env.episode import Trajectory
from weblica.env.task import Task
from weblica.pipelines.ray_actors import dispatch, init_ray
from weblica.rollout import RunSummary, ScreenshotStore, episode_seed, summarize


class _CollectedScreens(ScreenshotStore):
    """Screenshots kept in memory, to travel back to the driver (no shared filesystem needed)."""

    def __init__(self) -> None:
        super().__init__(None)
        self.images: dict[str, bytes] = {}

    def save(self, obs: Any) -> str:
        self.images.setdefault(obs.screenshot_sha256, obs.screenshot)
        return obs.screenshot_sha256


class EnvWorker:
    """A Ray actor body: plays episodes in its own environments and returns their trajectories and
    the screenshots they produced."""

    def __init__(self, policy_spec: str, run_seed: int, parallel: int = 1, allow_private: bool = False) -> None:
        self.policy_spec = policy_spec
        self.run_seed = run_seed
        self.parallel = parallel
        self.allow_private = allow_private

    async def play(self, task_dicts: list[dict[str, Any]], repeats: list[int]) -> list[tuple[dict, dict[str, bytes]]]:
        # an async method makes this an asyncio actor: Ray runs it on the actor's event loop
        return await self._play([Task.from_dict(d) for d in task_dicts], repeats)

    async def _play(self, tasks: list[Task], repeats: list[int]) -> list[tuple[dict, dict[str, bytes]]]:
        from weblica.env.pool import EnvPool
        from weblica.env.sources import open_backends
        from weblica.policy.factory import make_policy_factory
        from weblica.rollout import run_episode

        factory = make_policy_factory(self.policy_spec, self.run_seed)
        async with open_backends(tasks, allow_private=self.allow_private) as backends:
            async with EnvPool(self.parallel, backends=backends) as pool:
                async def job(env: Any, item: tuple[Task, int]) -> tuple[dict, dict[str, bytes]]:
                    task, repeat = item
                    screens = _CollectedScreens()
                    traj = await run_episode(env, task, factory(), episode_seed(self.run_seed, task, repeat),
                                             screens, repeat)
                    return traj.to_dict(), screens.images

                return await pool.map(list(zip(tasks, repeats)), job)


def run_tasks_ray(tasks: list[Task], policy_spec: str, out: str | Path, *, address: str = "auto",
                  workers: int = 2, parallel_per_worker: int = 1, seed: int = 0, repeats: int = 1,
                  ray_init_kwargs: dict[str, Any] | None = None, allow_private: bool = False
                  ) -> tuple[list[Trajectory], RunSummary]:
    """Play every task on Ray actors; write `out` like `run_tasks` does. `allow_private`: as `weblica run
    --allow-private`."""
    ray = init_ray(address, ray_init_kwargs)
    actor_cls = ray.remote(num_cpus=0.5)(EnvWorker)
    actors = [actor_cls.remote(policy_spec, seed, parallel_per_worker, allow_private) for _ in range(max(1, workers))]
    jobs = [(task, r) for task in tasks for r in range(repeats)]
    results: list[Any] = [None] * len(jobs)
    try:
        for index, result, error in dispatch(actors, jobs,
                                             lambda actor, job: actor.play.remote([job[0].to_dict()], [job[1]])):
            if error is not None:
                raise error
            results[index] = result[0]
    finally:
        for actor in actors:
            ray.kill(actor)
    out_dir = Path(out)
    (out_dir / "screens").mkdir(parents=True, exist_ok=True)
    trajectories = []
    with (out_dir / "episodes.jsonl").open("w", encoding="utf-8") as f:
        for traj_dict, images in results:
            for sha, png in images.items():
                path = out_dir / "screens" / f"{sha}.png"
                if not path.exists():
                    path.write_bytes(png)
            trajectories.append(Trajectory.from_dict(traj_dict))
            f.write(json.dumps(traj_dict, sort_keys=True, ensure_ascii=False) + "\n")
    summary = summarize(trajectories)
    (out_dir / "summary.json").write_text(json.dumps(summary.to_dict(), indent=2, sort_keys=True) + "\n")
    return trajectories, summary
