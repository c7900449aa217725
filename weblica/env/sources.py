"""Backends for the task sources a run needs, started before the run and stopped after it.

Each source kind other than local/live lives in its own package, which exposes
`create_backend(tasks: list[Task]) -> SiteBackend`; a backend may have async `start()`/`stop()`.
"""
from __future__ import annotations

import importlib
from contextlib import asynccontextmanager
from typing import AsyncIterator

from weblica.env.backend import DirectBackend, LiveBackend, SiteBackend
from weblica.env.task import Task

SOURCE_MODULES = {"synth": "weblica.synth.backend", "cache": "weblica.cache.backend"}


class UnknownSource(ValueError):
    pass


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
