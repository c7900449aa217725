"""The browser side of one episode: its context, its tabs, settling and screenshots.

What a page may do to the browser is bounded here (`EpisodeLimits`): tabs beyond `max_tabs` are closed as
they open; a tab whose main frame navigates more than `max_navigations` times within one action (a
reload or redirect loop) is stopped on about:blank; a `blob:` or `data:` document (a tab's or a frame's)
is removed as soon as it commits. Each becomes a note for the agent's feedback (`take_notes`).
"""
from __future__ import annotations

import asyncio
import base64
import logging
import time
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

from weblica.env.clock import CLOCK_RUN, QUIET_POLL_S, STEP_VIRTUAL_MS, clock_log_script, step_chunks
from weblica.env.observation import Tab

log = logging.getLogger(__name__)


@lru_cache(maxsize=1)
def probe_script() -> str:
    return (Path(__file__).parent / "probe.js").read_text(encoding="utf-8")


def _refused_frame(frame: Any) -> bool:
    """A frame with no document of its own: Chromium refused what it was to load (an <iframe src=
    "file:…"> on a web page leaves it with no URL at all), or it is on a URL no web page loads. Its
    clock needs no running: a document it gets later replays the clock's log."""
    return frame.url.split(":", 1)[0].lower() not in ("http", "https", "about", "data", "blob")


class BrowserCrashed(RuntimeError):
    """Chromium or the page's renderer died during the episode."""

    def __init__(self, message: str, page_url: str | None = None) -> None:
        super().__init__(message)
        self.page_url = page_url  # the page whose renderer died (None: the browser itself, or unknown)


# documents no page may hold, top-level or in a frame: they are built by the page's own script, outside
# every check a URL gets (the navigation policy, the gateway)
NON_HTTP_DOCUMENTS = ("blob:", "data:")

# Each window.open makes Chromium build a tab that Playwright attaches to before the opener's script goes
# on: 500 of them in one click held a step past its 60 s limit, whether or not the tabs are closed after.
# So a document's own window.open returns null (as a popup blocker does) once it has opened the cap's
# worth; the tab cap itself (closing what still gets through) holds for the context.
_POPUP_BUDGET_JS = """(() => {
  const open = window.open;
  let left = %d;
  window.open = function (...args) {
    if (left <= 0) return null;
    left -= 1;
    return open.apply(this, args);
  };
})();"""


@dataclass
class EpisodeLimits:
    max_tabs: int = 20              # open tabs of one episode; more are closed as they open
    max_navigations: int = 20       # main-frame navigations of a tab within one action (a loop past it is cut)


@dataclass
class SettleOptions:
    # virtual milliseconds each step advances the page clock, in two chunks with a quiet wait after each
    # (weblica.env.clock: validation's playback lets the same time pass)
    step_virtual_ms: int = STEP_VIRTUAL_MS
    quiet_poll_s: float = QUIET_POLL_S
    # a page that never goes quiet (long polling, streaming) is cut off after this many real seconds
    max_settle_s: float = 5.0
    # a WebSocket owes the page a frame after it opens and after the page sent one: settle waits for
    # that frame (or the socket's close) at most this many real seconds (a frame the server never
    # answers, a heartbeat, costs a step no more)
    socket_reply_s: float = 1.0
    # frames of one burst (three ticks sent at once) leave the server back to back but arrive as
    # separate events: after a frame that pays a debt, settle waits this long for the rest of its burst
    socket_burst_s: float = 0.1
    navigation_timeout_s: float = 15.0


class TabSet:
    """The tabs of one episode's context. New pages (popups, target=_blank) join the list and become active."""

    def __init__(self, context: Any, settle: SettleOptions | None = None, limits: EpisodeLimits | None = None) -> None:
        self.context = context
        self.settle_options = settle or SettleOptions()
        self.limits = limits or EpisodeLimits()
        self.pages: list[Any] = []
        self.popups_closed = 0       # tabs closed for the tab cap (this episode)
        self.loops_cut = 0
        self.documents_removed = 0
        self.crashed_url: str | None = None
        self._notes: list[str] = []
        self._policing: set[asyncio.Task[Any]] = set()
        self._navigations_in_action: dict[Any, int] = {}
        self.active = 0
        self.crashed: str | None = None
        self._inflight: set[Any] = set()
        # a WebSocket -> (frames it owes, until when settle waits for them, until when a burst may go on)
        self._sockets_owed: dict[Any, tuple[int, float, float]] = {}
        self._opened: list[Any] = []
        self.navigations = 0  # main-frame navigations so far; settle waits for a load only after one
        self._titles: dict[Any, str] = {}
        self._cdp: dict[Any, Any] = {}
        context.on("page", self._on_page)
        context.on("request", self._request_started)
        context.on("requestfinished", self._request_ended)
        context.on("requestfailed", self._request_ended)

    def _request_started(self, request: Any) -> None:
        # an event stream never finishes: waiting for it would cost every step the whole settle deadline
        if request.resource_type != "eventsource":
            self._inflight.add(request)

    def _request_ended(self, request: Any) -> None:
        self._inflight.discard(request)

    def _police(self, coro: Any) -> None:
        task = asyncio.ensure_future(coro)
        self._policing.add(task)
        task.add_done_callback(self._policing.discard)

    def _on_page(self, page: Any) -> None:
        if page in self.pages:
            return
        if len(self.pages) >= self.limits.max_tabs:
            # the page's own window.open / target=_blank past the cap: closed before it does anything more
            self.popups_closed += 1
            self._note(f"pop-ups past the tab cap were closed (an episode keeps at most {self.limits.max_tabs} tabs)")
            self._police(self._close_quietly(page))
            return
        page.on("crash", lambda _: self._mark_crash("the page's renderer crashed", page))
        page.on("framenavigated", self._on_navigated)
        page.on("websocket", self._on_socket)
        self.pages.append(page)
        self._opened.append(page)

    def _on_socket(self, socket: Any) -> None:
        # Frames are not requests: without this, settle would not wait for a socket's handshake or for
        # the answer to what the page sent, and whether they land on the screenshot would depend on
        # the machine's load (a ticker's first frames missed the screen live on a loaded machine).
        # Debts are counted, not flagged: a page that sends on open is owed the greeting and the answer,
        # and the greeting must not pay for both (the answer then raced the screenshot under load)
        def owed(_: Any = None) -> None:
            count, _until, burst = self._sockets_owed.get(socket, (0, 0.0, 0.0))
            self._sockets_owed[socket] = (count + 1, time.monotonic() + self.settle_options.socket_reply_s, burst)

        def paid(_: Any = None) -> None:
            count, until, _burst = self._sockets_owed.get(socket, (0, 0.0, 0.0))
            if not count:   # an unasked frame (a price feed's next tick) changes nothing: it holds no step
                return
            # a frame that pays a debt opens a window for the rest of its burst
            self._sockets_owed[socket] = (count - 1, until, time.monotonic() + self.settle_options.socket_burst_s)

        def closed(_: Any = None) -> None:
            self._sockets_owed.pop(socket, None)
        owed()
        socket.on("framesent", owed)
        socket.on("framereceived", paid)
        socket.on("close", closed)
        socket.on("socketerror", closed)

    def _busy(self) -> bool:
        """A request in flight, a socket owed a frame within its wait, or a socket inside a burst."""
        if self._inflight:
            return True
        now = time.monotonic()
        done = [s for s, (count, until, burst) in self._sockets_owed.items()
                if burst <= now and (count == 0 or until <= now)]
        for socket in done:
            del self._sockets_owed[socket]
        return bool(self._sockets_owed)

    def _on_navigated(self, frame: Any) -> None:
        if frame.url.startswith(NON_HTTP_DOCUMENTS):
            self._police(self._remove_document(frame))
        if frame.parent_frame is None:
            self.navigations += 1
            page = frame.page
            count = self._navigations_in_action.get(page, 0) + 1
            self._navigations_in_action[page] = count
            if count == self.limits.max_navigations + 1:
                self.loops_cut += 1
                self._note(f"a tab navigated more than {self.limits.max_navigations} times in one action (a reload "
                           "or redirect loop); it was stopped on about:blank")
                self._police(self._stop_loop(page))

    def _note(self, note: str) -> None:
        if note not in self._notes:
            self._notes.append(note)

    async def install(self) -> "TabSet":
        """Add the popup budget to every document of the context (before its first page)."""
        await self.context.add_init_script(script=_POPUP_BUDGET_JS % int(self.limits.max_tabs))
        return self

    def take_notes(self) -> list[str]:
        """What the limits did since the last call, one line each."""
        notes, self._notes = self._notes, []
        return notes

    def begin_action(self) -> None:
        """A new action starts: the loop bound counts navigations from here."""
        self._navigations_in_action.clear()

    async def _close_quietly(self, page: Any) -> None:
        try:
            await page.close()
        except Exception:  # already closed with its context
            pass

    async def _stop_loop(self, page: Any) -> None:
        try:
            await page.goto("about:blank", timeout=self.settle_options.navigation_timeout_s * 1000)
        except Exception:  # closed, or the loop's own navigation raced it: the next count cuts it again
            pass

    async def _remove_document(self, frame: Any) -> None:
        """A blob:/data: document goes: a frame's element is removed from its parent, a tab goes to
        about:blank (tabs are never closed under the agent's feet)."""
        url = frame.url[:60]
        try:
            if frame.parent_frame is not None:
                element = await frame.frame_element()
                await element.evaluate("e => e.remove()")
            else:
                await frame.goto("about:blank", timeout=self.settle_options.navigation_timeout_s * 1000)
        except Exception:  # detached or closed meanwhile: gone either way
            pass
        self.documents_removed += 1
        self._note(f"a {url.split(':', 1)[0]}: document ({url}…) was removed: only http(s) pages are shown")

    async def enforce(self) -> None:
        """Finish what the limits started (closing tabs, removing documents) and sweep for a blob:/data:
        document an event did not name, so none is left when the step's observation is taken."""
        for page in list(self.pages):
            try:
                frames = page.frames
            except Exception:
                continue
            for frame in frames:
                if frame.url.startswith(NON_HTTP_DOCUMENTS):
                    self._police(self._remove_document(frame))
        for _ in range(5):  # a page that answers each removal with a new document gets no endless loop
            if not self._policing:
                break
            await asyncio.gather(*list(self._policing), return_exceptions=True)
        self.prune_closed()
        if self.active >= len(self.pages):
            self.active = max(0, len(self.pages) - 1)

    def _mark_crash(self, why: str, page: Any = None) -> None:
        if self.crashed is None and page is not None:
            try:
                self.crashed_url = page.url
            except Exception:
                self.crashed_url = None
        self.crashed = self.crashed or why

    def take_opened(self) -> list[Any]:
        """Pages opened since the last call (by the agent's action or by the site)."""
        opened, self._opened = self._opened, []
        return opened

    @property
    def page(self) -> Any:
        if not self.pages:
            raise BrowserCrashed("the episode has no open tab")
        return self.pages[self.active]

    async def open_first(self) -> Any:
        page = await self.context.new_page()
        self._on_page(page)
        self.take_opened()
        self.active = 0
        return page

    def forget(self, page: Any) -> None:
        self._cdp.pop(page, None)
        if page in self.pages:
            index = self.pages.index(page)
            self.pages.remove(page)
            if self.active >= index and self.active > 0:
                self.active -= 1

    def prune_closed(self) -> None:
        for page in [p for p in self.pages if p.is_closed()]:
            self.forget(page)

    async def _run_probe(self, args: dict[str, Any]) -> dict[str, Any] | None:
        """probe.js in the active page; None while the page is navigating (no document to probe)."""
        try:
            return await self.page.evaluate(probe_script(), args)
        except Exception as exc:
            self._raise_if_crashed(exc)
            return None

    async def probe(self, x: float | None = None, y: float | None = None) -> dict[str, Any]:
        state = await self._run_probe({"x": x, "y": y} if x is not None else {})
        # a page in the middle of navigating has no document to probe; that is not an error
        return state if state is not None else {"focused": None, "at": None, "scroll": [0, 0], "mutations": 0,
                                                "title": ""}

    def _raise_if_crashed(self, exc: BaseException) -> None:
        text = str(exc)
        if self.crashed or "crash" in text.lower() or "Target page, context or browser has been closed" in text \
                or "Browser has been closed" in text or "Connection closed" in text:
            raise BrowserCrashed(self.crashed or text.splitlines()[0], self.crashed_url) from exc

    async def _wait_quiet(self, deadline: float, advance_ms: int = 0) -> dict[str, Any] | None:
        """Advance virtual time by `advance_ms`, then wait until no request is in flight, no socket is
        owed a frame and the DOM stopped changing, or the deadline passes; returns the page state read
        by the last (quiet) check, if any."""
        opts = self.settle_options
        if advance_ms:
            # answers already on their way land before the timers run, so a script that batches what
            # arrived before a timer (a module loader) sees the same arrivals however slow the network
            # or the machine. One round trip to the page first: the page announces a request it
            # started before it answers, so what the last action started is in _inflight by then.
            await self._round_trip()
            if self._busy():
                await self._wait_quiet(deadline)
            state = await self._advance_clock(advance_ms)
            if state is not None and state["quiet"] and not self._busy():
                return state
        while time.monotonic() < deadline:
            if self.crashed:
                raise BrowserCrashed(self.crashed, self.crashed_url)
            if self._busy():
                await asyncio.sleep(opts.quiet_poll_s)
                continue
            # the page state read across two real task turns, with `quiet`: no DOM mutation meanwhile
            state = await self._run_probe({"quiet": True})
            if state is not None and state["quiet"] and not self._busy():
                return state
            await asyncio.sleep(opts.quiet_poll_s)
        return None

    async def _round_trip(self) -> None:
        try:
            await self.page.evaluate("0")
        except Exception as exc:  # navigating: no document to ask; its requests are announced anyway
            self._raise_if_crashed(exc)

    async def _advance_clock(self, ms: int) -> dict[str, Any] | None:
        """Playwright's `clock.run_for(ms)`, with the active frame's share folded into a quiet probe.

        run_for registers a log init script (documents created later replay it, so they start at the
        current virtual time) and then runs the clock in every frame of every tab. We register the same
        log entry, run the other frames' clocks the same way, and advance the active frame's clock in
        the probe's own call: one page round trip per advance instead of two. Returns that probe's
        state, or None when the active frame could not be probed (navigating) or has no Playwright clock."""
        try:
            await self.context.add_init_script(script=clock_log_script(ms))
            # a frame Chromium refused to load (a web page's <iframe src="file:…">) never gets a document,
            # and evaluating in it would wait forever; tabs closed for the tab cap are not run either
            others = [frame for page in self.pages for frame in page.frames
                      if frame is not self.page.main_frame and not _refused_frame(frame)]
            results = await asyncio.gather(self._run_probe({"quiet": True, "advance": int(ms)}),
                                           *(self._advance_frame(frame, ms) for frame in others))
        except Exception as exc:
            self._raise_if_crashed(exc)
            raise
        state = results[0]
        if state is not None and not state.get("advanced"):  # a page without the clock (error page)
            await self._advance_frame(self.page.main_frame, ms)
            return None
        # None: the document went away mid-call; its successor replays the log entry registered above
        return state

    async def _advance_frame(self, frame: Any, ms: int) -> None:
        """Run one frame's clock; a frame navigating or detached meanwhile is skipped, as run_for does
        (its next document replays the log)."""
        try:
            await frame.evaluate(CLOCK_RUN, int(ms))
        except Exception as exc:
            self._raise_if_crashed(exc)

    async def settle(self, virtual_ms: int | None = None, since_navigations: int | None = None) -> dict[str, Any] | None:
        """Let the page finish what the last action started. Virtual time advances by a fixed amount,
        so what timers see never depends on how long the real waiting took. `since_navigations` is the
        navigation count before the action: without a navigation since, there is no load to wait for.
        Returns the settled page's state (as `probe()` reads it) when the last check saw it quiet."""
        opts = self.settle_options
        total = opts.step_virtual_ms if virtual_ms is None else virtual_ms
        deadline = time.monotonic() + opts.max_settle_s
        state = None
        for chunk in step_chunks(total):
            if since_navigations is None or self.navigations != since_navigations:
                try:
                    await self.page.wait_for_load_state("load",
                                                        timeout=max(1.0, deadline - time.monotonic()) * 1000)
                except Exception as exc:
                    self._raise_if_crashed(exc)
            state = await self._wait_quiet(deadline, advance_ms=chunk)
            if self.crashed:
                raise BrowserCrashed(self.crashed, self.crashed_url)
        await self.enforce()
        return state

    # Right after a cross-process navigation (another site, a Chromium error page) the new renderer
    # may not have produced a frame yet and Chromium answers "Unable to capture screenshot"; the frame
    # comes within milliseconds to a second, so capturing is retried on this real-time backoff (it only
    # waits for the frame: what the frame shows does not depend on how long we waited).
    _CAPTURE_RETRY_S = (0.02, 0.05, 0.1, 0.2, 0.4, 0.8, 1.6)

    async def screenshot(self) -> bytes:
        """The active tab's viewport as PNG. Straight from CDP with Chromium's fast PNG encoder: about a
        third quicker than Playwright's screenshot (which also waits on fonts and re-styles the caret,
        both already fixed by the determinism layer); the bytes are as deterministic, if larger."""
        page = self.page
        delays = list(self._CAPTURE_RETRY_S)
        reattached = False
        while True:
            try:
                session = self._cdp.get(page)
                if session is None:
                    session = self._cdp[page] = await self.context.new_cdp_session(page)
                shot = await session.send("Page.captureScreenshot", {"format": "png", "optimizeForSpeed": True})
                return base64.b64decode(shot["data"])
            except Exception as exc:
                if page.is_closed() or self.crashed:
                    self._raise_if_crashed(exc)
                    raise
                log.debug("screenshot attempt failed (retrying): %s", str(exc).splitlines()[0])
                if "Unable to capture screenshot" not in str(exc) and not reattached:
                    # the navigation detached the session from the old renderer: attach to the new one
                    self._cdp.pop(page, None)
                    reattached = True
                    continue
                if not delays:
                    self._raise_if_crashed(exc)
                    raise RuntimeError(f"no frame to capture after {sum(self._CAPTURE_RETRY_S):.1f} s: "
                                       f"{str(exc).splitlines()[0]}") from exc
                self._cdp.pop(page, None)
                reattached = False
                await asyncio.sleep(delays.pop(0))

    async def cdp_session(self, page: Any) -> Any:
        """The page's CDP session (screenshots use it too)."""
        session = self._cdp.get(page)
        if session is None:
            session = self._cdp[page] = await self.context.new_cdp_session(page)
        return session

    def note_title(self, title: str) -> None:
        """The active page's title, as a probe just read it (saves a round trip per observation)."""
        self._titles[self.page] = title

    async def tabs(self) -> list[Tab]:
        out = []
        noted, self._titles = self._titles, {}
        for i, page in enumerate(self.pages):
            title = noted.get(page) if i == self.active else None
            if title is None:
                try:
                    title = await page.title()
                except Exception as exc:
                    self._raise_if_crashed(exc)
                    title = ""
            out.append(Tab(i, page.url, title))
        return out
