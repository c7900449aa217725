"""Backends for the task sources a run needs, started before the run (or on first use) and stopped after it.

Each source kind other than local/live lives in its own package, which exposes
`create_backend(tasks: list[Task]) -> SiteBackend`; a backend may have async `start()`/`stop()`.
`open_backends` starts one backend per kind for a known task list (`weblica run`); `SourceBackends` is
for tasks that arrive one at a time (an env, the env server): each task gets the backend of its own
source, created and started on first use, reused after, stopped with its owner.
"""
from __future__ import annotations

import asyncio
import importlib
from contextlib import asynccontextmanager
from typing import Any, AsyncIterator

from weblica.env.backend import DirectBackend, LiveBackend, NetworkConfig, SiteBackend
from weblica.env.task import Task

SOURCE_MODULES = {"synth": "weblica.synth.backend", "cache": "weblica.cache.backend"}


class UnknownSource(ValueError):
    pass


class SourceUnavailable(ValueError):
    """A task's bundle or recording could not be opened (not there, malformed)."""


@asynccontextmanager
async def open_backends(tasks: list[Task], allow_private: bool = False) -> AsyncIterator[dict[str, SiteBackend]]:
    """The backends for every source kind among `tasks`, running for the duration of the block.
    `allow_private` lets local and live tasks reach link-local and private addresses."""
    live = LiveBackend(allow_private)
    backends: dict[str, SiteBackend] = {"local": DirectBackend(allow_private), "live": live}
    started = []
    try:
        for kind in sorted({t.source.kind for t in tasks} - set(backends)):
            if kind not in SOURCE_MODULES:
                raise UnknownSource(f"unknown task source '{kind}'; use one of "
                                    f"{', '.join(sorted(set(SOURCE_MODULES) | set(backends)))}")
            module = importlib.import_module(SOURCE_MODULES[kind])
            backend = module.create_backend([t for t in tasks if t.source.kind == kind])
            if hasattr(backend, "start"):
                await backend.start()
            started.append(backend)
            backends[kind] = backend
        yield backends
    finally:
        for backend in reversed(started):
            if hasattr(backend, "stop"):
                await backend.stop()
        await live.stop()  # its gateway, if a live episode started one


def source_key(task: Task) -> str:
    """Which backend instance serves `task` among those of its kind. A synth backend serves the bundles it
    was started with, so each bundle gets its own; one cache backend serves every recording through one
    replay proxy (mitmproxy runs one engine per process) and opens each recording on first use."""
    if task.source.kind == "synth":
        from weblica.synth.backend import find_bundle

        return str(find_bundle(task))
    return ""


class SourceBackends:
    """A SiteBackend for one source kind that hands each task to the backend of its own source."""

    def __init__(self, kind: str) -> None:
        if kind not in SOURCE_MODULES:
            raise UnknownSource(f"unknown task source '{kind}'; use one of "
                                f"{', '.join(sorted(set(SOURCE_MODULES) | {'local', 'live'}))}")
        self.kind = kind
        self.by_source: dict[str, Any] = {}
        self._lock: asyncio.Lock | None = None

    async def prepare(self, task: Task) -> Any:
        """The started backend for `task`'s source; SourceUnavailable when it cannot be opened. Opening
        (reading a bundle, indexing a recording) runs off the event loop: other episodes keep going."""
        if self._lock is None:
            self._lock = asyncio.Lock()
        async with self._lock:  # two first resets on one source start one backend
            try:
                key = source_key(task)
                backend = self.by_source.get(key)
                if backend is None:
                    module = importlib.import_module(SOURCE_MODULES[self.kind])
                    backend = await asyncio.to_thread(module.create_backend, [task])
                    if hasattr(backend, "start"):
                        await backend.start()
                    self.by_source[key] = backend
                opener = getattr(backend, "source", None)  # a backend that opens its sources lazily
                if callable(opener) and task.source.recording:
                    await asyncio.to_thread(opener, task.source.recording)
            except (ValueError, OSError, KeyError, RuntimeError) as exc:  # not there, malformed, unreadable
                raise SourceUnavailable(f"task {task.id}: its {self.kind} source cannot be opened: {exc}") from None
            return backend

    async def begin(self, task: Task, episode_id: str, seed: int) -> NetworkConfig:
        return await (await self.prepare(task)).begin(task, episode_id, seed)

    async def state(self, task: Task, episode_id: str) -> dict[str, Any] | None:
        return await (await self.prepare(task)).state(task, episode_id)

    async def end(self, task: Task, episode_id: str) -> None:
        backend = self.by_source.get(source_key(task))
        if backend is not None:
            await backend.end(task, episode_id)

    async def stop(self) -> None:
        backends, self.by_source = list(self.by_source.values()), {}
        for backend in reversed(backends):
            if hasattr(backend, "stop"):
                await backend.stop()


def lazy_backends() -> dict[str, SourceBackends]:
    """A SourceBackends for every source kind with a package (synth, cache)."""
    return {kind: SourceBackends(kind) for kind in SOURCE_MODULES}
