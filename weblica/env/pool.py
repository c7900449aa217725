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
                  on_result: Callable[[int, R], None] | None = None,
                  completion_threshold: float | None = None, grace_s: float = 0.0) -> list[R | None]:
        """Run `fn(env, job)` for every job, at most `size` at once; results in job order.

        With `completion_threshold` (a fraction of the jobs), once that many are done the stragglers get
        `grace_s` more seconds and are then cancelled (WebGym: a few slow sites must not stall a batch);
        their results are None.
        """
        jobs = list(jobs)
        results: list[Any] = [None] * len(jobs)
        queue: asyncio.Queue[int] = asyncio.Queue()
        for i in range(len(jobs)):
            queue.put_nowait(i)
        finished = 0
        enough = asyncio.Event()
        needed = len(jobs) if completion_threshold is None else max(1, int(completion_threshold * len(jobs) + 0.999999))

        async def worker(env: WebEnv) -> None:
            while True:
                try:
                    i = queue.get_nowait()
                except asyncio.QueueEmpty:
                    return
                results[i] = await fn(env, jobs[i])
                nonlocal finished
                finished += 1
                if finished >= needed:
                    enough.set()
                if on_result is not None:
                    on_result(i, results[i])

        await self.host.ensure()
        workers = [asyncio.ensure_future(worker(env)) for env in self.envs[: max(1, min(self.size, len(jobs)))]]
        all_done = asyncio.ensure_future(asyncio.gather(*workers))
        if completion_threshold is None or not jobs:
            await all_done
            return results
        waiter = asyncio.ensure_future(enough.wait())
        await asyncio.wait([all_done, waiter], return_when=asyncio.FIRST_COMPLETED)
        waiter.cancel()
        if not all_done.done():
            try:
                await asyncio.wait_for(asyncio.shield(all_done), grace_s)
            except asyncio.TimeoutError:
                for w in workers:
                    w.cancel()
                await asyncio.gather(*workers, return_exceptions=True)
                for env in self.envs:  # a cancelled episode leaves its context open
                    await env.close_episode()
        return results

    async def close(self) -> None:
        for env in self.envs:
            await env.close()
        await self.host.close()

    async def __aenter__(self) -> "EnvPool":
        return self

    async def __aexit__(self, *exc: Any) -> None:
        await self.close()
