"""The browser and server plumbing of validation episodes: a reusable validation page with its
listeners, and the synth backend over one kept-alive connection pool."""
from __future__ import annotations

import asyncio
from contextlib import asynccontextmanager
from typing import Any, AsyncIterator
from urllib.parse import urlsplit

import httpx

from weblica.serve.backend import REQUEST_TIMEOUT_S, SynthBackend
from weblica.serve.server import SiteServer
from weblica.synth.playback import RequestTracker
from weblica.synth.quick_typing import QuickTyping


class ValidationTab:
    """A validation page, reused from episode to episode: a new page costs the browser a renderer and
    ~0.3 s of CPU, a navigation in an open one about half of that. Listeners are set once; `errors`
    is swapped per episode and `origins` records where the page has been. Its `typist` (quick typing)
    keeps one CDP session for the page's life: a session per compiled run cost two round trips more."""

    def __init__(self, page: Any) -> None:
        self.page = page
        self.tracker = RequestTracker(page)
        self.errors: list[str] = []
        self.origins: set[str] = set()
        self.loads = 0
        self.typist = QuickTyping(page)
        page.on("load", self._loaded)
        page.on("console", lambda m: self.errors.append(m.text) if m.type == "error" else None)
        page.on("pageerror", lambda e: self.errors.append(str(e)))
        page.on("framenavigated", lambda f: self.origins.add(origin_of(f.url)) if f == page.main_frame else None)
        page.on("popup", lambda p: asyncio.ensure_future(p.close()))  # a random click's new window

    def _loaded(self, _page: Any) -> None:
        self.loads += 1


def origin_of(url: str) -> str:
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}"


async def close_page(page: Any) -> None:
    try:
        await page.close()
    except Exception:  # a crashed or already closed page: the episode's own error says what happened
        pass


class KeptAliveBackend(SynthBackend):
    """The synth backend over one kept-alive HTTP connection pool: validation resets an episode and
    reads its state a few hundred times a site, and a client per call (SynthBackend's, made for
    callers on several event loops) costs a client and a TCP connection each time. Same requests,
    same headers, same retries; used from the validator's one event loop and closed with it."""

    def __init__(self, server: SiteServer) -> None:
        super().__init__(server)
        self._client_kept: httpx.AsyncClient | None = None

    @asynccontextmanager
    async def _client(self) -> AsyncIterator[httpx.AsyncClient]:
        if self._client_kept is None:
            self._client_kept = httpx.AsyncClient(base_url=self.url, timeout=REQUEST_TIMEOUT_S, trust_env=False)
        yield self._client_kept

    async def aclose(self) -> None:
        if self._client_kept is not None:
            await self._client_kept.aclose()
            self._client_kept = None


