"""A synchronous face for WebEnv: its own event loop in a background thread."""
from __future__ import annotations

import asyncio
import threading
from typing import Any, Coroutine, TypeVar

from weblica.env.backend import SiteBackend
from weblica.env.browser_env import EnvConfig, WebEnv
from weblica.env.observation import Observation
from weblica.env.task import Task

T = TypeVar("T")


class SyncWebEnv:
    """Same contract as WebEnv, blocking: `reset`, `step`, `close`. Usable from code without asyncio
    (gymnasium loops, notebooks)."""

    def __init__(self, config: EnvConfig | None = None, backends: dict[str, SiteBackend] | None = None) -> None:
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, name="weblica-env", daemon=True)
        self._thread.start()
        self.env = WebEnv(config, backends)
        self._closed = False

    def _call(self, coro: Coroutine[Any, Any, T]) -> T:
        if self._closed:
            coro.close()
            raise RuntimeError("the env is closed")
        return asyncio.run_coroutine_threadsafe(coro, self._loop).result()

    def reset(self, task: Task, seed: int = 0) -> Observation:
        return self._call(self.env.reset(task, seed))

    @property
    def task(self) -> Task | None:
        """The task the current episode plays (for a task with instances, its seed's member)."""
        return self.env.task

    def step(self, actions: Any) -> tuple[Observation, float, bool, bool, dict[str, Any]]:
        return self._call(self.env.step(actions))

    def state(self) -> dict[str, Any] | None:
        return self._call(self.env.state())

    def close(self) -> None:
        if self._closed:
            return
        self._call(self.env.close())
        self._closed = True
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(timeout=10)
        self._loop.close()

    def __enter__(self) -> "SyncWebEnv":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()
