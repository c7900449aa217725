"""N environments in parallel on one event loop: one Chromium, one context per episode.

Workers never wait for each other (WebGym's lesson): each takes the next job as soon as its episode
ends. A browser crash ends the episodes running in it as `browser_crash`; the next reset relaunches.
"""
from __future__ import annotations

import asyncio
from typing import Any, Awaitable, Callable, Iterable, TypeVar

from weblica.browser.session import BrowserHost
from weblica.env.backend import SiteBackend
from weblica.env.browser_env import EnvConfig, WebEnv

J = TypeVar("J")
R = TypeVar("R")


class EnvPool:
    def __init__(self, size: int, config: EnvConfig | None = None,
                 backends: dict[str, SiteBackend] | None = None) -> None:
        if size < 1:
            raise ValueError("an env pool needs at least one environment")
        self.config = config or EnvConfig()
        self.host = BrowserHost(self.config.browser)
        self.envs = [WebEnv(self.config, backends, host=self.host) for _ in range(size)]

    @property
    def size(self) -> int:
        return len(self.envs)

    async def map(self, jobs: Iterable[J], fn: Callable[[WebEnv, J], Awaitable[R]],
                  on_result: Callable[[int, R], None] | None = None) -> list[R]:
        """Run `fn(env, job)` for every job, at most `size` at once; results in job order."""
        jobs = list(jobs)
        results: list[Any] = [None] * len(jobs)
        queue: asyncio.Queue[int] = asyncio.Queue()
        for i in range(len(jobs)):
            queue.put_nowait(i)

        async def worker(env: WebEnv) -> None:
            while True:
                try:
                    i = queue.get_nowait()
                except asyncio.QueueEmpty:
                    return
                results[i] = await fn(env, jobs[i])
                if on_result is not None:
                    on_result(i, results[i])

        await self.host.ensure()
        await asyncio.gather(*(worker(env) for env in self.envs[: max(1, min(self.size, len(jobs)))]))
        return results

    async def close(self) -> None:
        for env in self.envs:
            await env.close()
        await self.host.close()

    async def __aenter__(self) -> "EnvPool":
        return self

    async def __aexit__(self, *exc: Any) -> None:
        await self.close()
