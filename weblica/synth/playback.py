"""Playing env-level actions in a page and waiting for it to settle: what the plan compiler
(weblica.synth.player) and validation's baseline runs share.

`perform` runs one action with the env's own gestures (the action table, weblica.env.actions), so an
oracle is played exactly as the env will replay it; `settle` waits until the page is idle, from network events and
the site runtime's own status, with as few round trips into the page as it can, and runs the page's
fake clock (Playwright's, which validation installs as the env does) by the virtual time an env step
lets pass after the action, so timers fire at the same action as in the env.
"""
from __future__ import annotations

import asyncio
from contextvars import ContextVar
from typing import Any, Callable

from weblica.env import gestures
from weblica.env.actions import Action, gesture_for
from weblica.env.actions import virtual_ms as virtual_ms
# STEP_VIRTUAL_MS and virtual_ms are the env's, named here for validation's callers
from weblica.env.clock import CLOCK_RUN_CAUGHT, QUIET_POLL_S, step_chunks
from weblica.env.clock import STEP_VIRTUAL_MS as STEP_VIRTUAL_MS
from weblica.env.tabs import probe_script
from weblica.synth.page_session import PageSession
from weblica.synth.quick_typing import QuickTyping


class RequestTracker:
    """Follows a page's in-flight requests and whether a document is loading, without a round trip into
    the page (those are slow on a busy machine), so `settle` asks the page only once those are done;
    and asks `settle`'s in-page questions (`ask`) over the page's one CDP session
    (weblica.synth.page_session), which also keeps the page's clock log.

    By default both come from Playwright's request events. With `counted_by` (validation, whose every
    request passes through the site server: weblica/serve/inflight.py) the requests in flight are that
    count and the loading documents come from the session's Page events, so no subresource costs a
    protocol message; `counted_by` may be replaced per episode."""

    def __init__(self, page: Any, session: PageSession | None = None,
                 counted_by: Callable[[], int] | None = None) -> None:
        self._seen = 0  # requests in flight, from Playwright's events (without `counted_by`)
        self._navigating = False  # a main-frame navigation's request seen and its load not yet
        self._page = page
        self.session = session if session is not None else PageSession(page)
        self.counted_by = counted_by
        if counted_by is None:
            page.on("request", self._start)
            page.on("requestfinished", self._stop)
            page.on("requestfailed", self._failed)
        else:
            self.session.follow_loading()
        page.on("load", self._loaded)

    @property
    def inflight(self) -> int:
        return self._seen if self.counted_by is None else self.counted_by()

    @property
    def loading(self) -> bool:
        return self._navigating or self.session.loading

    def _is_main_navigation(self, request: Any) -> bool:
        try:
            return request.is_navigation_request() and request.frame == self._page.main_frame
        except Exception:
            return False

    def _start(self, request: Any) -> None:
        self._seen += 1
        if self._is_main_navigation(request):
            self._navigating = True

    def _stop(self, _request: Any) -> None:
        self._seen = max(0, self._seen - 1)

    def _failed(self, request: Any) -> None:
        self._stop(request)
        if self._is_main_navigation(request):
            self._navigating = False

    def _loaded(self, _page: Any) -> None:
        self._navigating = False

    async def ask(self, js: str, arg: Any) -> Any:
        """page.evaluate(js, arg) over the page's CDP session (PageSession.evaluate)."""
        return await self.session.evaluate(js, arg)


# Real time in a page whose clock is Playwright's fake one: settling waits for real work to finish
# (requests, the runtime's status), which virtual time never moves; the clock's own saved builtins are
# the real timers, and a page without the fake clock has its own.
_REAL = "(globalThis.__pwClock ? globalThis.__pwClock.builtins : globalThis)"

_IDLE_JS = f"""async ([quiet, step, chunks, logged]) => {{
  // the site runtime's own view (its state calls and redirects), asked `quiet` times `step` ms apart
  // after each chunk of virtual time this runs on the page's fake clock; the first `logged` chunks are
  // in the clock log. A chunk that calls a timer runs only first in a question and logged, and ends the
  // question: a document the timer loads starts past it (the log), and the requests its callback sends
  // are for Python to wait out before the next chunk. A chunk that calls none runs none of the page's
  // code, so it runs unlogged (Python logs it after, before the next action) and straight after the one
  // before. {{quiet: idle at the end, ran: chunks run, due: the next chunk calls timers (log it first)}}
  // the page and its same-origin frames (an embedded payment widget posts and navigates in its own
  // window, and its request may not have reached the server's count yet when the page is asked)
  const quietIn = (w) => {{ const s = (w.WEBLICA || {{}}).status || {{busy: 0, leaving: false}};
    return w.document.readyState === 'complete' && s.busy === 0 && !s.leaving; }};
  const idle = () => {{
    if (!quietIn(window)) return false;
    for (let i = 0; i < window.frames.length; i++) {{
      let w = null;
      try {{ w = window.frames[i]; if (!w.document) continue; }} catch (e) {{ continue; }}  // another origin's
      if (!quietIn(w)) return false;
    }}
    return true;
  }};
  const clock = globalThis.__pwClock, c = clock && clock.controller;
  // unknown (so: yes) where this Playwright's clock does not show its timers
  const calls = (ms) => !!c && (typeof c._firstTimer !== 'function' || !c._now || typeof c._now.ticks !== 'number'
    || c._firstTimer(Math.ceil(c._now.ticks + ms)) !== null);
  const real = {_REAL};
  const polls = async () => {{
    for (let i = 1; i < quiet; i++) {{
      await new Promise((r) => real.setTimeout(r, step));
      if (!idle()) return false;
    }}
    return true;
  }};
  if (!idle()) return {{quiet: false, ran: 0, due: false}};
  if (chunks.length === 0) return {{quiet: await polls(), ran: 0, due: false}};
  let ran = 0;
  while (ran < chunks.length) {{
    const timers = calls(chunks[ran]);
    if (timers && (ran > 0 || logged === 0)) return {{quiet: true, ran, due: true}};
    if (c) await c.runFor(chunks[ran]).catch(() => {{}});  // a timer's throw is the page's
    ran += 1;
    if (!idle() || !(await polls())) return {{quiet: false, ran, due: false}};
    if (timers) break;
  }}
  return {{quiet: true, ran, due: false}};
}}"""
_RUN_CLOCK_JS = CLOCK_RUN_CAUGHT


# settle asks the page QUIET_POLLS times, IDLE_POLL_S apart: the env's own quiet poll (weblica.env.clock), so
# validation calls a page quiet when the env would. It waited 20 ms before: validation was 3% dearer in
# CPU and 12% slower on the clock, with the same decisions (4 sites, paired runs)
IDLE_POLL_S, QUIET_POLLS = QUIET_POLL_S, 2


def _idle_now(tracker: RequestTracker) -> bool:
    return tracker.inflight == 0 and not tracker.loading


async def settle(page: Any, tracker: RequestTracker, timeout: float = 5.0, quiet_polls: int = QUIET_POLLS,
                 advance_ms: int = 0) -> None:
    """Wait until the page is idle: no document loading and no request in flight (from events), and,
    asked inside the page, no state call or redirect of the site's own runtime pending, `quiet_polls`
    times 20 ms apart. The in-page question closes the gap between a click and its request's event;
    asking it in one round trip (the page waits between its polls) keeps the browser's load down.
    `advance_ms` runs the page's fake clock (validation's, as the env's) as an env step does: in two
    chunks, each once the page is idle, so what timers see never depends on real speed."""
    await settle_then(page, tracker, None, None, timeout, quiet_polls, advance_ms)


async def settle_then(page: Any, tracker: RequestTracker, js: str | None, arg: Any, timeout: float = 5.0,
                      quiet_polls: int = QUIET_POLLS, advance_ms: int = 0) -> tuple[bool, Any]:
    """`settle`, and with `js` (a page function of one argument) that function run in the page in the
    round trip of the last idle question, the moment the page is idle: (True, its value); (False,
    None) when the page did not settle in time or `js` itself failed (then the caller asks as usual).

    The chunks go to the page in as few questions as the env's order allows (see _IDLE_JS): after most
    actions no timer is due in the step, and both chunks run in one question with one log entry after,
    where each cost a question and an entry before it."""
    loop = asyncio.get_running_loop()
    deadline, step = loop.time() + timeout, IDLE_POLL_S
    chunks = [c for c in step_chunks(advance_ms) if c > 0]  # the env's split (weblica.env.clock)
    logged = 0  # the leading chunks already in the page's clock log
    while loop.time() < deadline:
        if _idle_now(tracker):
            found = None
            try:
                script = _IDLE_JS if js is None else _once_idle(js)
                found = await tracker.ask(script, [quiet_polls, step * 1000, chunks, logged, arg])
            except Exception:  # the document is being replaced by a navigation: its successor replays
                del chunks[:logged]  # the logged chunks, as the env's successor document does; the rest
                logged = 0  # called no timer (nothing of the old document's to follow) and run there
            if found is not None:
                ran = found["ran"]
                if ran > logged:  # run unlogged (they called no timer): logged now, before the next action
                    tracker.session.log_clock(sum(chunks[logged:ran]))
                elif ran < logged:  # the page was busy: the logged chunk waits, and so does its entry
                    await tracker.session.unlog_last()
                del chunks[:ran]
                logged = 0
                if found["due"]:  # the next chunk calls timers: in the log before it runs
                    await tracker.session.log_clock_in_place(chunks[0])
                    logged = 1
                if "error" in found:  # `js` failed: settle alone, the caller asks again
                    js = None
                if found["quiet"] and _idle_now(tracker):
                    if not chunks:
                        return js is not None and "value" in found, found.get("value")
                    continue  # straight on to the next chunk
        await asyncio.sleep(step)
    if chunks:  # never idle in time: the env's clock moves on at its deadline too
        if len(chunks) > logged:
            await tracker.session.log_clock_in_place(sum(chunks[logged:]))
        try:
            await page.evaluate(_RUN_CLOCK_JS, sum(chunks))
        except Exception:
            pass
    return False, None


def is_navigating(exc: Exception) -> bool:
    return "context was destroyed" in str(exc) or "navigat" in str(exc).lower()


def _once_idle(js: str) -> str:
    """`js` (a function of one argument) run in the page right after settle's in-page idle question
    says every chunk ran and the page is quiet, in the same round trip: {quiet, ran, due, value}, or
    `error` for a `js` that threw (the question's own answer stands: its chunks ran)."""
    return (f"async ([quiet, step, chunks, logged, arg]) => {{ const idle = await ({_IDLE_JS})([quiet, step, chunks, logged]);"
            f" if (!idle.quiet || idle.ran < chunks.length) return idle;"
            f" try {{ return {{...idle, value: await ({js})(arg)}}; }} catch (e) {{ return {{...idle, error: String(e)}}; }} }}")


class _LooksViaSession:
    """The page as a gesture and the scroll helpers see it, with their in-page questions (`evaluate`)
    sent over the page's CDP session (PageSession.evaluate: half the CPU of Playwright's); its mouse,
    keyboard and the rest are the page's own."""

    def __init__(self, page: Any, session: PageSession) -> None:
        self._page, self._session = page, session
        self.mouse, self.keyboard = page.mouse, page.keyboard

    async def evaluate(self, js: str, arg: Any = None) -> Any:
        return await self._session.evaluate(js, arg)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._page, name)


# the actions performed in the current episode, where someone keeps them (weblica.synth.validate's
# `episodes_played`: the bench replays validation's own actions bare, bench/synth_replay.py)
performed: ContextVar[list[Action] | None] = ContextVar("performed", default=None)


async def perform(page: Any, action: Action, typist: QuickTyping | None = None,
                  session: PageSession | None = None) -> str | None:
    """Execute one action with the env's gestures (weblica.env.gestures); returns the answer for `done`,
    else None. A `wait` is only virtual time, which the settle after it advances (`virtual_ms`). With
    `typist` a write's text goes through it (weblica.synth.quick_typing: at once where that cannot end
    otherwise than typing it key by key). The gestures' in-page questions go over `session` (else the
    typist's), where there is one."""
    kept = performed.get()
    if kept is not None:
        kept.append(action)
    a = action.args
    gesture = gesture_for(action)
    session = session if session is not None else typist.session if typist is not None else None
    looks = _LooksViaSession(page, session) if session is not None else page
    if gesture is not None:
        wheel = action.name == "scroll" and a.get("x") is not None
        if wheel:
            before = await _wheel_offset(looks, a["x"], a["y"])
        await gestures.perform(looks, gesture, typist.type if typist is not None else None)
        if wheel:
            await gestures.wheel_landed(lambda: _wheel_offset(looks, a["x"], a["y"]), before)
        if action.name == "scroll":
            await _next_frame(looks)
    elif action.name == "done":
        return a.get("answer", "")
    return None


async def play(page: Any, tracker: RequestTracker, actions: list[Action], keep_going: bool = False,
               follow_tabs: bool = False) -> str | None:
    """Perform the actions in order, settling after each; returns the `done` answer (None without one).
    With `keep_going` an action that raises is skipped (a random click may close or navigate away).
    With `follow_tabs` (an oracle replayed) a tab the page opens becomes the one acted in and
    `switch_tab` moves between the tabs in the order they opened, as in the env."""
    answer = None
    tabs, trackers = [page], {page: tracker}
    for action in actions:
        try:
            result = await perform(page, action, session=tracker.session)
            answer = result if action.name == "done" else answer
            await settle(page, tracker, advance_ms=virtual_ms(action))
            if not follow_tabs:
                continue
            if action.name == "switch_tab" and 0 <= int(action.args.get("index", -1)) < len(tabs):
                page = tabs[int(action.args["index"])]
                await page.bring_to_front()
            opened = [p for p in page.context.pages if p not in tabs and not p.is_closed()]
            for new in opened:
                await new.wait_for_load_state("load")
                tabs.append(new)
                trackers[new] = RequestTracker(new)
                page = new
            tracker = trackers[page]
        except Exception:
            if not keep_going:
                raise
    return answer


# Two animation frames, or half a second at most (a page that renders no frames must not hang the run).
_FRAME_JS = f"""() => new Promise((done) => {{
  const real = {_REAL};  // real frames: the page's own (fake-clock) ones wait for virtual time
  real.setTimeout(done, 500);
  real.requestAnimationFrame(() => real.requestAnimationFrame(() => done()));
}})"""


async def _next_frame(page: Any) -> None:
    """Let the page render after a scroll: scroll events and IntersectionObservers (infinite lists, lazy
    rows) run in the rendering steps, which nothing else here waits for, while the env renders a frame
    (its screenshot) after every step. Without this the next look can come before the page reacted,
    and on a loaded machine a run of scrolls can pass the end of an infinite list before it grows."""
    try:
        await page.evaluate(_FRAME_JS)
    except Exception:  # the document is being replaced by a navigation
        pass


async def _wheel_offset(page: Any, x: float, y: float) -> list[float] | None:
    """The offset of what a wheel at (x, y) scrolls (the scrollable element under it, else the window),
    read with the env's probe; None while the document is being replaced."""
    try:
        state = await page.evaluate(probe_script(), {"x": x, "y": y})
    except Exception:
        return None
    return state["elementScroll"] if state.get("elementScroll") is not None else state["scroll"]
