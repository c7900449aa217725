"""Playing env-level actions in a page, and compiling a task's abstract plan into them.

A plan names elements (CSS selectors), never pixels. The compiler runs it live at 1280x720: for every
step it measures the element's box, scrolls it into view with `scroll` actions, dismisses a distractor
that covers it, and emits the pixel-level action the env would receive; each action is performed
before the next box is measured, so the oracle is exactly what was played.
"""
from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass, field
from typing import Any

from weblica.env.actions import VIEWPORT_HEIGHT, VIEWPORT_WIDTH, Action
from weblica.env import gestures
from weblica.env.tabs import probe_script


class PlanError(RuntimeError):
    """A plan step could not be carried out on the rendered page (missing, hidden or covered element)."""


class RequestTracker:
    """Follows a page's in-flight requests and whether a document is loading, from events alone, so
    `settle` needs no round trip into the page (those are slow on a busy machine)."""

    def __init__(self, page: Any) -> None:
        self.inflight = 0
        self.loading = False
        self._page = page
        page.on("request", self._start)
        page.on("requestfinished", self._stop)
        page.on("requestfailed", self._failed)
        page.on("load", self._loaded)

    def _is_main_navigation(self, request: Any) -> bool:
        try:
            return request.is_navigation_request() and request.frame == self._page.main_frame
        except Exception:
            return False

    def _start(self, request: Any) -> None:
        self.inflight += 1
        if self._is_main_navigation(request):
            self.loading = True

    def _stop(self, _request: Any) -> None:
        self.inflight = max(0, self.inflight - 1)

    def _failed(self, request: Any) -> None:
        self._stop(request)
        if self._is_main_navigation(request):
            self.loading = False

    def _loaded(self, _page: Any) -> None:
        self.loading = False


_IDLE_JS = """async ([quiet, step]) => {
  // the site runtime's own view: its state calls and redirects; asked `quiet` times, `step` ms apart
  const idle = () => { const s = (window.WEBLICA || {}).status || {busy: 0, leaving: false};
    return document.readyState === 'complete' && s.busy === 0 && !s.leaving; };
  for (let i = 0; i < quiet; i++) {
    if (!idle()) return false;
    if (i + 1 < quiet) await new Promise((r) => setTimeout(r, step));
  }
  return true;
}"""


IDLE_POLL_S, QUIET_POLLS = 0.02, 2  # settle asks the page QUIET_POLLS times, IDLE_POLL_S apart


def _idle_now(tracker: RequestTracker) -> bool:
    return tracker.inflight == 0 and not tracker.loading


async def settle(page: Any, tracker: RequestTracker, timeout: float = 5.0, quiet_polls: int = QUIET_POLLS) -> None:
    """Wait until the page is idle: no document loading and no request in flight (from events), and,
    asked inside the page, no state call or redirect of the site's own runtime pending, `quiet_polls`
    times 20 ms apart. The in-page question closes the gap between a click and its request's event;
    asking it in one round trip (the page waits between its polls) keeps the browser's load down.
    The validation context runs a real clock, so the page's timers fire."""
    await settle_then(page, tracker, None, None, timeout, quiet_polls)


async def settle_then(page: Any, tracker: RequestTracker, js: str | None, arg: Any, timeout: float = 5.0,
                      quiet_polls: int = QUIET_POLLS) -> tuple[bool, Any]:
    """`settle`, and with `js` (a page function of one argument) that function run in the page in the
    round trip of the last idle question, the moment the page is idle: (True, its value); (False,
    None) when the page did not settle in time or `js` itself failed (then the caller asks as usual)."""
    loop = asyncio.get_running_loop()
    deadline, step = loop.time() + timeout, IDLE_POLL_S
    while loop.time() < deadline:
        if _idle_now(tracker):
            value = None
            try:
                if js is None:
                    ready = bool(await page.evaluate(_IDLE_JS, [quiet_polls, step * 1000]))
                else:
                    found = await page.evaluate(_once_idle(js), [quiet_polls, step * 1000, arg])
                    ready, value = bool(found["ready"]), found.get("value")
            except Exception as exc:  # the document is being replaced by a navigation
                ready = False
                if js is not None and not _navigating(exc):  # `js` failed: settle alone, the caller asks again
                    js = None
            if ready and _idle_now(tracker):
                return js is not None, value
        await asyncio.sleep(step)
    return False, None


def _navigating(exc: Exception) -> bool:
    return "context was destroyed" in str(exc) or "navigat" in str(exc).lower()


def _once_idle(js: str) -> str:
    """`js` (a function of one argument) run in the page right after settle's in-page idle question
    says yes, in the same round trip: {ready, value}."""
    return (f"async ([quiet, step, arg]) => (await ({_IDLE_JS})([quiet, step]))"
            f" ? {{ready: true, value: await ({js})(arg)}} : {{ready: false}}")


async def perform(page: Any, action: Action) -> str | None:
    """Execute one action with the env's gestures (weblica.env.gestures); returns the answer for `done`,
    else None. Only `wait` differs: this context runs a real clock, so it sleeps briefly."""
    a = action.args
    gesture = gestures.for_action(action)
    if gesture is not None:
        wheel = action.name == "scroll" and a.get("x") is not None
        if wheel:
            before = await _wheel_offset(page, a["x"], a["y"])
        await gestures.perform(page, gesture)
        if wheel:
            await gestures.wheel_landed(lambda: _wheel_offset(page, a["x"], a["y"]), before)
        if action.name == "scroll":
            await _next_frame(page)
    elif action.name == "goto_url":
        await page.goto(a["url"], wait_until="load")
    elif action.name in ("go_back", "go_forward"):
        await (page.go_back if action.name == "go_back" else page.go_forward)(wait_until="load")
    elif action.name == "wait":
        await asyncio.sleep(min(a.get("seconds", 1.0), 0.2))
    elif action.name == "done":
        return a.get("answer", "")
    return None


async def play(page: Any, tracker: RequestTracker, actions: list[Action], keep_going: bool = False) -> str | None:
    """Perform the actions in order, settling after each; returns the `done` answer (None without one).
    With `keep_going` an action that raises is skipped (a random click may close or navigate away)."""
    answer = None
    for action in actions:
        try:
            result = await perform(page, action)
            answer = result if action.name == "done" else answer
            await settle(page, tracker)
        except Exception:
            if not keep_going:
                raise
    return answer


# Two animation frames, or half a second at most (a page that renders no frames must not hang the run).
_FRAME_JS = """() => new Promise((done) => {
  setTimeout(done, 500);
  requestAnimationFrame(() => requestAnimationFrame(() => done()));
})"""


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


_BOX_JS = """([sel, text]) => {
  const all = Array.from(document.querySelectorAll(sel));
  // displayed = laid out; a lazily revealed row is laid out (visibility: hidden) before it is shown
  const visible = (el) => { const r = el.getBoundingClientRect(); return r.width > 0 && r.height > 0; };
  const el = all.find((e) => (!text || e.textContent.trim().toLowerCase().includes(text.toLowerCase())) && visible(e));
  if (!el) return null;
  const r = el.getBoundingClientRect();
  const header = document.querySelector('body.sticky .site-header');
  const top = header && !header.contains(el) ? Math.max(0, header.getBoundingClientRect().bottom) : 0;
  let hit = null;
  const cx = Math.min(r.left + r.width / 2, r.left + 40 + Math.min(r.width, 200) / 2);
  const cy = r.top + r.height / 2;
  if (cy >= 0 && cy < innerHeight && cx >= 0 && cx < innerWidth) {
    const h = document.elementFromPoint(cx, cy);
    hit = !!h && (h === el || el.contains(h) || (h.tagName === 'LABEL' && h.control === el));
  }
  // what a person would call it: its label, else the first line of its text, without glyphs (a caret)
  const named = el.getAttribute('aria-label') || (el.labels && el.labels[0] && el.labels[0].innerText)
    || el.getAttribute('placeholder') || el.getAttribute('title');
  const line = (named || el.innerText || el.value || '').split('\\n').map((t) => t.trim()).find((t) => t) || '';
  const label = line.replace(/\\p{So}/gu, '').replace(/\\s+/g, ' ').trim().slice(0, 60);
  return {x: cx, y: cy, top: r.top, bottom: r.bottom, left: r.left, width: r.width, height: r.height,
          header: top, hit, tag: el.tagName, type: el.type || '', label,
          canScroll: document.scrollingElement.scrollHeight > innerHeight + scrollY + 1};
}"""

_DISTRACTOR_JS = """() => {
  // the close button of an open distractor that is really on top (a promo modal covers a cookie bar)
  for (const d of document.querySelectorAll('[data-distractor]')) {
    if (d.hidden) continue;
    for (const btn of d.querySelectorAll('[data-close]')) {
      const b = btn.getBoundingClientRect();
      const x = b.left + b.width / 2, y = b.top + b.height / 2;
      const hit = document.elementFromPoint(x, y);
      if (hit && (hit === btn || btn.contains(hit))) return {x, y};
    }
  }
  return null;
}"""

# one round trip for the common case of `reach`: an open distractor to dismiss first, else the box
_DISTRACTOR_OR_BOX_JS = f"""([sel, text]) => {{
  const distractor = ({_DISTRACTOR_JS})();
  return distractor ? {{distractor}} : {{box: ({_BOX_JS})([sel, text])}};
}}"""


def _named(box: dict[str, Any]) -> str:
    """An element as a thought names it: its label in quotes, else its kind."""
    if box.get("label"):
        return json.dumps(box["label"], ensure_ascii=False)
    kind = {"INPUT": "field", "TEXTAREA": "text box", "SELECT": "list", "A": "link", "BUTTON": "button"}
    return f"the {kind.get(box.get('tag', ''), 'element')}"


@dataclass
class Compiler:
    """Runs a plan on a live page and records the actions it took."""

    page: Any
    tracker: RequestTracker
    actions: list[Action] = field(default_factory=list)
    thoughts: list[str] = field(default_factory=list)  # one per action: what it does, naming the element
    answer: str | None = None
    # An action was performed and the page not yet settled: the next look into the page settles it in
    # its own round trip (`eval`), anything else first calls `settled` (a round trip fewer per step).
    unsettled: bool = False

    async def emit(self, name: str, thought: str, **args: Any) -> None:
        for key in ("x", "y", "x1", "y1", "x2", "y2"):
            if key in args:
                limit = VIEWPORT_WIDTH if key.startswith("x") else VIEWPORT_HEIGHT
                args[key] = float(min(max(round(args[key]), 0), limit - 1))
        action = Action(name, args)
        self.actions.append(action)
        self.thoughts.append(thought)
        await self.settled()
        result = await perform(self.page, action)
        if name == "done":
            self.answer = result
        self.unsettled = True

    async def settled(self) -> None:
        """Settle the page after the last action, if that is still to do."""
        if self.unsettled:
            self.unsettled = False
            await settle(self.page, self.tracker)

    async def eval(self, js: str, arg: Any = None) -> Any:
        """page.evaluate once the last action settled (asked in settle's last round trip), waiting out
        a navigation in progress instead of failing."""
        if self.unsettled:
            self.unsettled = False
            looked, value = await settle_then(self.page, self.tracker, js, arg)
            if looked:
                return value
        for attempt in range(3):
            try:
                return await self.page.evaluate(js, arg)
            except Exception as exc:
                if not _navigating(exc) or attempt == 2:
                    raise
                await settle(self.page, self.tracker)

    async def box(self, sel: str, text: str | None = None) -> dict[str, Any] | None:
        return await self.eval(_BOX_JS, [sel, text])

    async def dismissed_box(self, sel: str, text: str | None = None) -> dict[str, Any] | None:
        """Dismiss the open distractors that are really on top (up to four), then measure the element's
        box; one round trip per look."""
        for _ in range(4):
            found = await self.eval(_DISTRACTOR_OR_BOX_JS, [sel, text])
            if "distractor" not in found:
                return found["box"]
            await self.emit("click", "Close the pop-up that covers the page.", x=found["distractor"]["x"],
                            y=found["distractor"]["y"])
        return await self.box(sel, text)

    async def reach(self, sel: str, text: str | None = None) -> dict[str, Any]:
        """Scroll until the element is visible, in the viewport, below a sticky header and unobstructed."""
        for _ in range(16):
            b = await self.dismissed_box(sel, text)
            for _ in range(10):  # content rendered after a fetch may be a moment late
                if b is not None:
                    break
                await asyncio.sleep(0.05)
                b = await self.box(sel, text)
            if b is None:
                raise PlanError(f"no visible element matches {sel!r}" + (f" with text {text!r}" if text else ""))
            low, high = b["header"] + 8, VIEWPORT_HEIGHT - 8
            in_view = low <= b["y"] <= high
            if in_view and b["hit"]:
                return b
            if in_view:  # covered (a fixed bar, an open popup): move it to the middle of the viewport
                delta = b["y"] - VIEWPORT_HEIGHT / 2
                delta = delta if abs(delta) > 40 else 160.0
            else:  # put it a third of the way down the area below the header
                delta = b["y"] - (b["header"] + (VIEWPORT_HEIGHT - b["header"]) / 3)
            direction = "down" if delta > 0 else "up"
            amount = max(0.05, round(abs(delta) / VIEWPORT_HEIGHT, 2))
            await self.emit("scroll", f"Scroll {direction} to bring {_named(b)} into view.", direction=direction,
                            amount=amount)
        raise PlanError(f"could not bring {sel!r} into view")

    async def run(self, plan: list[dict[str, Any]]) -> list[Action]:
        for step in plan:
            await getattr(self, "op_" + step["op"].replace("-", "_"))(**{k: v for k, v in step.items() if k != "op"})
        await self.settled()
        return self.actions

    # ---- plan operations ----------------------------------------------------------------------------
    async def op_click(self, sel: str, text: str | None = None, clicks: int = 1) -> None:
        b = await self.reach(sel, text)
        verb = "Click" if clicks == 1 else "Double-click" if clicks == 2 else f"Click {clicks} times on"
        await self.emit("click", f"{verb} {_named(b)}.", x=b["x"], y=b["y"],
                        **({"clicks": clicks} if clicks != 1 else {}))

    async def op_hover(self, sel: str, text: str | None = None) -> None:
        b = await self.reach(sel, text)
        await self.emit("hover", f"Hover over {_named(b)}.", x=b["x"], y=b["y"])

    async def op_fill(self, sel: str, text: str, enter: bool = False) -> None:
        await self.op_click(sel)
        await self.emit("write", f"Type {json.dumps(text, ensure_ascii=False)}.", text=text)
        if enter:
            await self.emit("press_keys", "Press Enter to submit.", keys=["Enter"])

    async def op_keys(self, keys: list[str]) -> None:
        await self.emit("press_keys", f"Press {' then '.join(keys)}.", keys=list(keys))

    async def op_select(self, sel: str, value: str) -> None:
        """A native <select> is driven by keyboard (its popup is not part of the page); a custom one by clicks."""
        b = await self.reach(sel)
        if b["tag"] == "SELECT":
            await self.settled()
            current, target = await self.page.eval_on_selector(
                sel, "(e, v) => [e.selectedIndex, Array.from(e.options).findIndex(o => o.value === v)]", value)
            if target < 0:
                raise PlanError(f"{sel} has no option {value!r}")
            await self.emit("click", f"Open {_named(b)}.", x=b["x"], y=b["y"])
            key = "ArrowDown" if target >= current else "ArrowUp"
            await self.emit("press_keys", f"Choose {json.dumps(value, ensure_ascii=False)} with the arrow keys.",
                            keys=[key] * abs(target - current) + ["Enter"])
        else:
            await self.op_click(f"{sel} [data-cs-trigger]")
            await self.op_click(f"{sel} [role=option][data-value=\"{value}\"]")

    async def op_range(self, sel: str, value: float) -> None:
        """A slider: click its thumb to focus it (the click lands on the current value), then arrow keys
        for the remaining steps. Works for native range inputs and the custom [data-slider] widget."""
        read = """e => { const i = e.matches('input') ? e : e.querySelector('input');
            const d = e.dataset; return [Number(i.min || d.min), Number(i.max || d.max),
            Number(i.step || d.step) || 1, Number(i.value), e.matches('input')]; }"""
        await self.settled()
        lo, hi, step, current, native = await self.page.eval_on_selector(sel, read)
        if native:
            b = await self.reach(sel)
            thumb = 16
            x = b["left"] + thumb / 2 + (current - lo) / (hi - lo) * (b["width"] - thumb)
            await self.emit("click", f"Click the slider {_named(b)} to focus it.", x=x, y=b["y"])
        else:
            await self.op_click(f"{sel} .cs-thumb")
        await self.settled()
        now = (await self.page.eval_on_selector(sel, read))[3]
        n = round(abs(value - now) / step)
        if n:
            await self.emit("press_keys", f"Move the slider to {value:g} with the arrow keys.",
                            keys=["ArrowRight" if value > now else "ArrowLeft"] * n)

    async def op_calendar(self, sel: str, value: str) -> None:
        """Custom date picker: open it, page months until the day is shown, click the day."""
        await self.op_click(f"{sel} [data-dp-open]")
        await self.settled()
        current = await self.page.eval_on_selector(sel, "e => e.dataset.month")
        forward = value[:7] >= current
        await self.op_click_until(f"{sel} [data-dp-{'next' if forward else 'prev'}]", f"{sel} [data-date='{value}']")
        await self.op_click(f"{sel} [data-date='{value}']")

    async def op_date(self, sel: str, value: str) -> None:
        """Native date input (en-US segments mm/dd/yyyy): click the month segment, type the digits."""
        b = await self.reach(sel)
        await self.emit("click", f"Click the month of the date field {_named(b)}.", x=b["left"] + 14, y=b["y"])
        y, m, d = value.split("-")
        await self.emit("write", f"Type the date {value} as month, day, year.", text=f"{m}{d}{y}")

    async def op_drag(self, sel: str, to: str, where: str = "before") -> None:
        a = await self.reach(sel)
        b = await self.box(to)
        if b is None or not (b["header"] <= b["top"] and b["bottom"] <= VIEWPORT_HEIGHT):
            raise PlanError(f"drag target {to!r} is not in view together with {sel!r}")
        y2 = b["top"] + b["height"] * (0.25 if where == "before" else 0.75)
        await self.emit("drag", f"Drag {_named(a)} {where} {_named(b)}.", x1=a["x"], y1=a["y"], x2=a["x"], y2=y2)

    async def op_click_until(self, sel: str, until: str, limit: int = 24) -> None:
        for _ in range(limit):
            if await self.box(until) is not None:
                return
            await self.op_click(sel)
        raise PlanError(f"{until!r} did not appear after clicking {sel!r} {limit} times")

    async def op_reach(self, sel: str, text: str | None = None) -> None:
        await self.reach(sel, text)

    async def op_scroll_until(self, sel: str, limit: int = 30) -> None:
        """Scroll down until an element exists and is visible (infinite lists, lazy rows)."""
        for _ in range(limit):
            if await self.box(sel) is not None:
                return
            await self.emit("scroll", "Scroll down for more.", direction="down", amount=0.8)
        raise PlanError(f"{sel!r} did not appear while scrolling")

    async def op_done(self, answer: str) -> None:
        said = f"The answer is {json.dumps(answer, ensure_ascii=False)}." if answer else "The task is complete."
        await self.emit("done", said, answer=answer)

    async def op_goto(self, url: str) -> None:
        await self.emit("goto_url", f"Go to {url}.", url=url)

    async def op_fill_all(self, form: str = "form[data-api]", skip: list[str] = ()) -> None:
        """Maximal negatives: put a value into every field of the form that the plan leaves alone (type
        into empty and number fields, tick checkboxes, pick another option, step steppers, move sliders
        to their end), with the same gestures as any other step."""
        fields = await self.eval(_FIELDS_JS, [form, list(skip)])
        for f in fields or []:
            kind, sel = f["kind"], f["sel"]
            try:
                if kind in _FILLER:
                    await self.op_fill(sel, _FILLER[kind])
                elif kind == "number":
                    await self.op_fill(sel, str(f["value"]))
                elif kind in ("checkbox", "radio"):
                    await self.op_click(sel)
                elif kind == "select":
                    await self.op_select(sel, f["value"])
                elif kind == "stepper":
                    await self.op_click(f"{sel} [data-step-up]")
                elif kind == "range":
                    await self.op_range(sel, f["value"])
            except PlanError:  # a field that cannot be reached is left as it is
                continue


_FILLER = {"text": "Extra", "email": "extra@example.org", "tel": "+1 555 0100", "password": "extra-pass-123",
           "textarea": "Extra text."}

# the fields of a form, by control, with the value fill_all gives each (skipping the names in `skip`)
_FIELDS_JS = """([formSel, skip]) => {
  const form = document.querySelector(formSel);
  if (!form) return [];
  const out = [], seen = new Set(skip);
  const shown = (el) => { const r = el.getBoundingClientRect(); return r.width > 0 && r.height > 0; };
  for (const el of form.querySelectorAll('[name]')) {
    const name = el.name || el.getAttribute('name');
    if (!name || seen.has(name)) continue;
    const box = el.closest('[data-custom-select],[data-stepper],[data-slider],[data-datepicker],.autocomplete,[data-ac]');
    if (box && (box.matches('[data-datepicker]') || box.matches('.autocomplete,[data-ac]') || !box.id)) { seen.add(name); continue; }
    if (box) {
      seen.add(name);
      if (box.matches('[data-custom-select]')) {
        const opts = Array.from(box.querySelectorAll('[role=option][data-value]')).map((o) => o.dataset.value)
          .filter((v) => v && v !== el.value);
        if (opts.length) out.push({kind: 'select', sel: '#' + box.id, value: opts[opts.length - 1]});
      } else if (box.matches('[data-stepper]')) out.push({kind: 'stepper', sel: '#' + box.id});
      else out.push({kind: 'range', sel: '#' + box.id, value: Number(box.dataset.max)});
      continue;
    }
    if (el.type === 'hidden' || !el.id || el.disabled || !shown(el)) continue;
    seen.add(name);
    if (el.type === 'checkbox') { if (!el.checked) out.push({kind: 'checkbox', sel: '#' + el.id}); continue; }
    if (el.type === 'radio') {
      const group = Array.from(form.querySelectorAll(`input[type=radio][name="${name}"]`)).filter((r) => !r.checked && r.id);
      if (group.length) out.push({kind: 'radio', sel: '#' + group[group.length - 1].id});
      continue;
    }
    if (el.tagName === 'SELECT') {
      const opts = Array.from(el.options).map((o) => o.value).filter((v) => v && v !== el.value);
      if (opts.length) out.push({kind: 'select', sel: '#' + el.id, value: opts[opts.length - 1]});
      continue;
    }
    if (el.type === 'range') { out.push({kind: 'range', sel: '#' + el.id, value: Number(el.max)}); continue; }
    if (el.type === 'number') {
      const hi = el.max ? Number(el.max) : 99, lo = el.min ? Number(el.min) : 0, now = Number(el.value || lo);
      out.push({kind: 'number', sel: '#' + el.id, value: now + 3 <= hi ? now + 3 : lo}); continue;
    }
    if (el.value) continue;
    const kind = el.tagName === 'TEXTAREA' ? 'textarea' : (['email', 'tel', 'password'].includes(el.type) ? el.type : 'text');
    out.push({kind, sel: '#' + el.id});
  }
  return out;
}"""
