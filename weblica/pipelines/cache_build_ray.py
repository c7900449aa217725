"""`weblica cache build --ray ADDRESS`: the tasks of a cache build spread over a Ray cluster.

Each build worker is a Ray actor (a process of its own: one mitmproxy per process, one task at a time)
that builds a task in a scratch directory of its machine, exactly as a local build does, and returns
the task's outcome with the recording directory's files. The driver writes those files to
`OUT/recordings/<task>/` and the outcome to `OUT/results/`, so a Ray build is resumable like a local one
and its `tasks.jsonl` names recordings under OUT.

Where the rows go:
- with `--store URL --bodies DIR` (a database and a body directory every worker and every later replay
  reaches, e.g. PostgreSQL and a shared filesystem), the exchanges are written there as they are
  recorded, and only the small files travel back (screens, actions, rules, the `store.json` pointer);
- without, each recording's SQLite file and bodies travel back with it (no shared storage needed).
"""
from __future__ import annotations

import os
import shutil
import tempfile
from dataclasses import asdict
from pathlib import Path
from typing import Any, Callable

from weblica.cache.build import BuildOptions, build_in_worker, failed_worker_result, task_slug
from weblica.env.task import Task
from weblica.pipelines.ray_actors import dispatch, init_ray


class BuildWorker:
    """A Ray actor body: builds one task at a time in a scratch directory of its own machine."""

    def build(self, task_data: dict[str, Any], options: dict[str, Any]) -> tuple[dict[str, Any], dict[str, bytes], str]:
        scratch = Path(tempfile.mkdtemp(prefix="weblica-build-")).resolve()
        try:
            result = build_in_worker(task_data, options, str(scratch))
            recording = scratch / "recordings" / task_slug(task_data["id"])
            files = {str(p.relative_to(recording)): p.read_bytes()
                     for p in sorted(recording.rglob("*")) if p.is_file()} if recording.is_dir() else {}
            return result, files, str(scratch)
        finally:
            shutil.rmtree(scratch, ignore_errors=True)


def build_on_ray(todo: list[Task], options: BuildOptions, out: Path, address: str, workers: int,
                 advance: Callable[[dict[str, Any]], None], ray_init_kwargs: dict[str, Any] | None = None) -> None:
    """Build every task of `todo` on Ray actors; `advance` gets each outcome (paths under `out`) as it lands."""
    ray = init_ray(address, ray_init_kwargs)
    actor_cls = ray.remote(num_cpus=1)(BuildWorker)   # a browser and a proxy: a CPU each
    actors = [actor_cls.remote() for _ in range(max(1, min(workers, len(todo))))]
    target = out.resolve()
    try:
        for index, returned, error in dispatch(actors, todo, lambda actor, task: actor.build.remote(
                task.to_dict(), asdict(options)), respawn=actor_cls.remote):
            task = todo[index]
            if error is not None:
                advance(failed_worker_result(task, error))
                continue
            result, files, scratch = returned
            install_recording(target / "recordings" / task_slug(task.id), files)
            advance(relocate(result, scratch, str(target)))
    finally:
        for actor in actors:
            ray.kill(actor)


def install_recording(directory: Path, files: dict[str, bytes]) -> None:
    """Write a recording's files (relative path -> bytes) as `directory`, replacing what was there."""
    directory.parent.mkdir(parents=True, exist_ok=True)
    building = Path(tempfile.mkdtemp(prefix=f".{directory.name}.", dir=directory.parent))
    for name, data in files.items():
        path = (building / name).resolve()
        if building.resolve() not in path.parents:   # a worker's reply names only files inside the recording
            shutil.rmtree(building, ignore_errors=True)
            raise ValueError(f"a build worker sent a file outside its recording: {name!r}")
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
    shutil.rmtree(directory, ignore_errors=True)
    os.replace(building, directory)


def relocate(value: Any, old: str, new: str) -> Any:
    """`value` (a JSON-like outcome) with every path under `old` (the worker's scratch) moved under `new`."""
    if isinstance(value, str):
        return new + value[len(old):] if value == old or value.startswith(old + os.sep) else value
    if isinstance(value, dict):
        return {k: relocate(v, old, new) for k, v in value.items()}
    if isinstance(value, list):
        return [relocate(v, old, new) for v in value]
    return value
