"""The env's entry point for synth tasks: `create_backend(tasks)` finds their bundles and serves them.

A task names its site (`source.site`) and bundle (`source.bundle`: a bundle folder, or the site id to
look up). Bundles are looked up in $WEBLICA_SITES (os.pathsep-separated folders), then `./sites`,
then the repository's `sites/`.
"""
from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from weblica.env.backend import NetworkConfig
from weblica.env.task import Task
from weblica.serve.backend import SynthBackend
from weblica.serve.server import SiteServer


class BundleNotFound(FileNotFoundError):
    pass


def search_dirs() -> list[Path]:
    extra = [Path(p) for p in os.environ.get("WEBLICA_SITES", "").split(os.pathsep) if p]
    return extra + [Path.cwd() / "sites", Path(__file__).resolve().parents[2] / "sites"]


def find_bundle(task: Task) -> Path:
    """The bundle folder of a synth task; the error names where it looked and how to point elsewhere."""
    ref = task.source.bundle or task.source.site or ""
    direct = Path(ref)
    if ref and (direct / "site.json").exists():
        return direct.resolve()
    name = direct.name or (task.source.site or "")
    for folder in search_dirs():
        if (folder / name / "site.json").exists():
            return (folder / name).resolve()
    raise BundleNotFound(f"site bundle '{name}' of task {task.id} not found in "
                         f"{', '.join(str(d) for d in search_dirs())}: set WEBLICA_SITES to the folder holding it")


class ServedSynthBackend:
    """A SynthBackend over its own SiteServer, started and stopped with the run."""

    def __init__(self, bundles: list[Path]) -> None:
        self.bundles = bundles
        self.server: SiteServer | None = None
        self._backend: SynthBackend | None = None

    async def start(self) -> None:
        self.server = SiteServer(self.bundles).start()
        self._backend = SynthBackend(self.server)

    async def stop(self) -> None:
        if self.server is not None:
            self.server.close()
            self.server = None

    def _require(self) -> SynthBackend:
        if self._backend is None:
            raise RuntimeError("the synth backend is not started: call `await backend.start()` first")
        return self._backend

    async def begin(self, task: Task, episode_id: str, seed: int) -> NetworkConfig:
        return await self._require().begin(task, episode_id, seed)

    async def state(self, task: Task, episode_id: str) -> dict[str, Any] | None:
        return await self._require().state(task, episode_id)

    async def end(self, task: Task, episode_id: str) -> None:
        return await self._require().end(task, episode_id)


def create_backend(tasks: list[Task]) -> ServedSynthBackend:
    bundles = sorted({find_bundle(t) for t in tasks})
    return ServedSynthBackend(bundles)
