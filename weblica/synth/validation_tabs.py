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
from weblica.synth.page_session import PageSession
from weblica.synth.playback import RequestTracker
from weblica.synth.quick_typing import QuickTyping


class ValidationTab:
    """A validation page, reused from episode to episode of its slot (weblica.synth.validate): a new
    page costs the browser a renderer and ~0.3 s of CPU, a navigation in an open one about half of
    that. Listeners are set once; `errors` is swapped per episode, `origins` records where its main
    frame has been and `frame_origins` where any of its documents came from (whose storage the slot
    clears). Its one CDP session (`session`, weblica.synth.page_session) serves settle's questions,
    quick typing and the clock log, kept for the page's life: a session per caller or per compiled
    run cost round trips more. Its requests in flight are counted by the site server, per episode
    (the tracker's `counted_by`, set by the validator for each episode: weblica/serve/inflight.py)."""

    def __init__(self, page: Any) -> None:
        self.page = page
        self.session = PageSession(page)
        # the requests in flight: the site server's count for the tab's episode, set per episode
        self.tracker = RequestTracker(page, self.session, counted_by=lambda: 0)
        self.typist = QuickTyping(page, self.session)
        self.errors: list[str] = []
        self.origins: set[str] = set()
        self.frame_origins: set[str] = set()
        self.documents: list[str] = []  # the URL of each document loaded this episode, in order: its page loads
        page.on("load", self._loaded)
        page.on("console", lambda m: self.errors.append(m.text) if m.type == "error" else None)
        page.on("pageerror", lambda e: self.errors.append(str(e)))
        page.on("framenavigated", self._navigated)
        page.on("popup", lambda p: asyncio.ensure_future(p.close()))  # a random click's new window

    def _loaded(self, _page: Any) -> None:
        self.documents.append(self.page.url)

    def _navigated(self, frame: Any) -> None:
        origin = origin_of(frame.url)
        self.frame_origins.add(origin)
        if frame == self.page.main_frame:
            self.origins.add(origin)

    async def close(self) -> None:
        await self.session.close()
        await close_page(self.page)


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


