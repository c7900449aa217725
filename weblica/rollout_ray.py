"""Rollouts scaled out with Ray: env workers are actors (each an EnvPool with its own Chromium), on
any machine of the cluster. The driver hands out tasks one at a time, so a slow site never holds back
the others, and writes the run directory exactly as a local run does (same order, same bytes).

`weblica run --ray auto|ADDRESS [--ray-workers N]`; needs the `ray` extra.
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Callable, Iterator

from weblica.env.episode import Trajectory
from weblica.env.task import Task
from weblica.rollout import RunSummary, episode_seed, summarize


class EnvWorker:
    """A Ray actor body: plays episodes in its own environments and returns their trajectories and
    the screenshots they produced (so no shared filesystem is needed)."""

    def __init__(self, policy_spec: str, run_seed: int, parallel: int = 1, allow_private: bool = False) -> None:
        self.policy_spec = policy_spec
        self.run_seed = run_seed
        self.parallel = parallel
        self.allow_private = allow_private

    async def play(self, task_dicts: list[dict[str, Any]], repeats: list[int]) -> list[tuple[dict, dict[str, bytes]]]:
        # an async method makes this an asyncio actor: Ray runs it on the actor's event loop
        return await self._play([Task.from_dict(d) for d in task_dicts], repeats)

    async def _play(self, tasks: list[Task], repeats: list[int]) -> list[tuple[dict, dict[str, bytes]]]:
        from weblica.commands.run import policy_factory
        from weblica.env.pool import EnvPool
        from weblica.env.sources import open_backends
        from weblica.rollout import ScreenshotStore, run_episode

        factory = policy_factory(self.policy_spec, self.run_seed)

        class Collect(ScreenshotStore):
            def __init__(self) -> None:
                super().__init__(None)
                self.images: dict[str, bytes] = {}

            def save(self, obs: Any) -> str:
                self.images.setdefault(obs.screenshot_sha256, obs.screenshot)
                return obs.screenshot_sha256

        async with open_backends(tasks, allow_private=self.allow_private) as backends:
            async with EnvPool(self.parallel, backends=backends) as pool:
                async def job(env: Any, item: tuple[Task, int]) -> tuple[dict, dict[str, bytes]]:
                    task, repeat = item
                    screens = Collect()
                    traj = await run_episode(env, task, factory(), episode_seed(self.run_seed, task, repeat),
                                             screens, repeat)
                    return traj.to_dict(), screens.images

                return await pool.map(list(zip(tasks, repeats)), job)


def dispatch(actors: list[Any], jobs: list[Any], submit: Callable[[Any, Any], Any],
             respawn: Callable[[], Any] | None = None) -> Iterator[tuple[int, Any, BaseException | None]]:
    """Hand `jobs` to free actors one at a time (`submit(actor, job)` returns the call's object ref), so a
    slow job never holds back the others; yields (job index, result, error) as each call finishes. An
    actor that died is replaced by `respawn()` when given (its job reports the error)."""
    import ray

    pending: dict[Any, tuple[int, Any]] = {}
    free = list(actors)
    next_job = 0
    while next_job < len(jobs) or pending:
        while free and next_job < len(jobs):
            actor = free.pop()
            pending[submit(actor, jobs[next_job])] = (next_job, actor)
            next_job += 1
        done, _ = ray.wait(list(pending), num_returns=1)
        index, actor = pending.pop(done[0])
        try:
            result, error = ray.get(done[0]), None
        except ray.exceptions.RayActorError as exc:   # the worker process died (a crash, out of memory)
            result, error = None, exc
            if respawn is not None:
                actor = respawn()
        except ray.exceptions.RayTaskError as exc:
            result, error = None, exc
        free.append(actor)
        yield index, result, error


def run_tasks_ray(tasks: list[Task], policy_spec: str, out: str | Path, *, address: str = "auto",
                  workers: int = 2, parallel_per_worker: int = 1, seed: int = 0, repeats: int = 1,
                  ray_init_kwargs: dict[str, Any] | None = None, allow_private: bool = False
                  ) -> tuple[list[Trajectory], RunSummary]:
    """Play every task on Ray actors; write `out` like `run_tasks` does. `allow_private`: as `weblica run
    --allow-private`."""
    try:
        import ray
    except ImportError:
        raise RuntimeError("Ray is not installed: pip install 'weblica[ray]'") from None
    if not ray.is_initialized():
        ray.init(address=None if address == "local" else address, **(ray_init_kwargs or {}))
    actor_cls = ray.remote(num_cpus=0.5)(EnvWorker)
    actors = [actor_cls.remote(policy_spec, seed, parallel_per_worker, allow_private) for _ in range(max(1, workers))]
    jobs = [(task, r) for task in tasks for r in range(repeats)]
    results: list[Any] = [None] * len(jobs)
    for index, result, error in dispatch(actors, jobs, lambda actor, job: actor.play.remote([job[0].to_dict()], [job[1]])):
        if error is not None:
            raise error
        results[index] = result[0]
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
    for actor in actors:
        ray.kill(actor)
    return trajectories, summary
