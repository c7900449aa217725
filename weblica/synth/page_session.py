"""One CDP session per validation page: what settle's idle questions (weblica.synth.playback), quick
typing's listener check (weblica.synth.quick_typing) and the page's clock log share.

A raw `Runtime.evaluate` costs about half the CPU of Playwright's `page.evaluate`, and a session per
caller cost a round trip to open and one to close each. The session is opened at first use, opened
again after its target went away (the log below is registered again on the new one), and detached on
`forget` (a page reused for a new episode) or `close`.

The clock log: the env registers every advance of a page's fake clock as an init script
(weblica.env.tabs.TabSet._advance_clock), so a document loaded later in the episode replays the log
and starts at the episode's virtual time so far, not at the epoch. Validation registers the same
advances on this session (`Page.addScriptToEvaluateOnNewDocument`), as settle runs them
(weblica.synth.playback): an advance that calls no timer runs no page code, so its entry is sent
after it, without waiting for the answer (it goes out before whatever the next action sends, so it is
in place before a document that action loads); one that calls timers is logged before it runs and
waited for (`log_clock_in_place`): a timer may load a document at once. Scripts a session added go
with the session, so `forget` ends the log in one message where removing each entry would cost one a
step.
"""
from __future__ import annotations

import asyncio
import json
from typing import Any

from weblica.env.clock import clock_log_script


def _gone(exc: BaseException) -> bool:
    """The session's target (the page or its renderer) went away: a new session is needed."""
    text = str(exc).lower()
    return "closed" in text or "detached" in text or "no target" in text


class PageSession:
    """A page's CDP session, opened lazily and kept for the page's life (see the module doc)."""

    def __init__(self, page: Any) -> None:
        self.page = page
        self._session: Any = None
        self._opening: asyncio.Future[Any] | None = None
        self._logged: list[int] = []  # this episode's clock advances, as registered (virtual ms each)
        self._page_enabled = False  # Page.enable sent on this session (init scripts need it)
        self._pending: set[asyncio.Future[Any]] = set()
        self._last: asyncio.Future[Any] | None = None  # the last registration's answer (`unlog_last`)
        self._follows_loading = False  # `follow_loading`: Page events asked for on every session opened
        self._loading_frames: set[str] = set()  # frames that started loading a document and have not stopped

    async def _open(self) -> Any:
        if self._session is not None:
            return self._session
        if self._opening is None:  # one attach however many callers wait for it
            self._opening = asyncio.ensure_future(self.page.context.new_cdp_session(self.page))
        opening = self._opening
        try:
            session = await opening
        finally:
            if self._opening is opening:
                self._opening = None
        if self._session is None:
            self._session, self._page_enabled = session, False
            self._loading_frames = set()
            if self._follows_loading:
                self._listen(session)
                await session.send("Page.enable")
                self._page_enabled = True
            for ms in self._logged:  # a new session after the old one's target went: the log again
                self._last = self._register(ms)
        return self._session

    def follow_loading(self) -> None:
        """Follow which of the page's frames are loading a document (`loading`), from the Page domain's
        events on this session: a few small messages a navigation, where Playwright's request events
        cost five a subresource. Followed from the session's opening on (the first question asked in an
        episode, after its start page loaded)."""
        self._follows_loading = True

    @property
    def loading(self) -> bool:
        """A frame of the page has started loading a document and not stopped (`follow_loading`)."""
        return bool(self._loading_frames)

    def _listen(self, session: Any) -> None:
        frames = self._loading_frames
        session.on("Page.frameStartedLoading", lambda event: frames.add(event.get("frameId")))
        session.on("Page.frameStoppedLoading", lambda event: frames.discard(event.get("frameId")))
        session.on("Page.frameDetached", lambda event: frames.discard(event.get("frameId")))

    async def send(self, method: str, params: dict[str, Any] | None = None, retry: bool = False) -> Any:
        """One CDP command on the page's session. A session whose target went away is dropped (the next
        command opens a new one); with `retry` (a command that may run twice) it is sent once more."""
        for attempt in range(2 if retry else 1):
            session = await self._open()
            try:
                return await session.send(method, params or {})
            except Exception as exc:
                if not _gone(exc):
                    raise
                if self._session is session:
                    self._session = None
                if attempt == (1 if retry else 0):
                    raise
        raise AssertionError("unreachable")

    async def evaluate(self, js: str, arg: Any) -> Any:
        """page.evaluate(js, arg) for a page function of one JSON argument with a JSON value, sent as one
        Runtime.evaluate in the page's main world: about half the CPU of Playwright's evaluate, which
        wraps every call in its own serializer. Raises as page.evaluate would where the page is
        navigating (the protocol's error says so) or the function throws; nothing is asked twice."""
        found = await self.send("Runtime.evaluate", {"expression": f"({js})({json.dumps(arg)})",
                                                     "returnByValue": True, "awaitPromise": True})
        if "exceptionDetails" in found:
            details = found["exceptionDetails"]
            raise RuntimeError(f"Page.evaluate: {details.get('exception', {}).get('description') or details.get('text')}")
        return found.get("result", {}).get("value")

    def log_clock(self, ms: int) -> None:
        """Log an advance of the page's fake clock as the env does (see the module doc for when); not
        awaited. Needs an open session: settle asks over it first."""
        if ms <= 0:
            return
        self._logged.append(int(ms))
        self._last = self._register(int(ms)) if self._session is not None else None

    async def log_clock_in_place(self, ms: int) -> None:
        """`log_clock`, waiting until the entry is in place: for an advance about to call timers, one of
        which may load a document at once (a registration still on its way loses that race)."""
        self.log_clock(ms)
        last = self._last
        if last is not None:
            try:
                await last
            except Exception:  # the session went with its page: its successor registers the log again
                pass

    async def unlog_last(self) -> None:
        """Take back the last `log_clock` (its advance did not run: the page was busy when asked)."""
        if not self._logged:
            return
        self._logged.pop()
        last, self._last = self._last, None
        if last is None:
            return
        try:
            entry = await last
            await self.send("Page.removeScriptToEvaluateOnNewDocument", {"identifier": entry["identifier"]})
        except Exception:  # the session went with its page: its log with it
            pass

    def _register(self, ms: int) -> asyncio.Future[Any]:
        session = self._session
        sends = [] if self._page_enabled else [session.send("Page.enable")]
        self._page_enabled = True
        sends.append(session.send("Page.addScriptToEvaluateOnNewDocument", {"source": clock_log_script(ms)}))
        futures = [asyncio.ensure_future(send) for send in sends]
        for sent in futures:
            self._pending.add(sent)
            sent.add_done_callback(self._settled)
        return futures[-1]

    def _settled(self, sent: asyncio.Future[Any]) -> None:
        self._pending.discard(sent)
        if not sent.cancelled():
            sent.exception()  # a closed page's registration: nothing to log into any more

    @property
    def logged_ms(self) -> int:
        """The virtual time this episode's clock log holds (what a new document starts at, past the epoch)."""
        return sum(self._logged)

    async def forget(self) -> None:
        """End the episode's clock log and its evaluated objects: detach (the next use opens afresh)."""
        self._logged, self._last = [], None
        await self.close()

    async def close(self) -> None:
        if self._pending:
            await asyncio.gather(*list(self._pending), return_exceptions=True)
        session, self._session = self._session, None
        self._loading_frames = set()
        if session is not None:
            try:
                await session.detach()
            except Exception:  # the page is gone, and its session with it
                pass
