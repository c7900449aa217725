"""Compiling a task's abstract plan into env-level actions, played live in a page (weblica.synth.playback).

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
from weblica.env.popups import OPEN_POPUPS_JS, dismissal_thought, in_the_way
from weblica.synth.playback import RequestTracker, is_navigating, perform, play, settle, settle_then, virtual_ms
from weblica.synth.quick_typing import QuickTyping

__all__ = ["Compiler", "PlanError", "RequestTracker", "perform", "play", "settle", "settle_then"]


class PlanError(RuntimeError):
    """A plan step could not be carried out on the rendered page (missing, hidden or covered element)."""


# A selector may reach into an iframe or a web component: segments joined by " >>> ", each but the last
# naming an <iframe> (the search goes on in its document) or a shadow host (in its open shadow root). The
# box is in the top viewport's pixels (a frame's offset added), where the env's click lands; a deep
# selector's hit test follows the point into the frame or shadow root as the browser's own hit test does.
_BOX_JS = """([sel, text]) => {
  const parts = sel.split(' >>> '), deep = parts.length > 1;
  let root = document, dx = 0, dy = 0;
  for (const part of parts.slice(0, -1)) {
    const host = root.querySelector(part);
    if (!host) return null;
    if (host.tagName === 'IFRAME') {
      const f = host.getBoundingClientRect();
      dx += f.left + host.clientLeft; dy += f.top + host.clientTop;
      root = host.contentDocument;
    } else root = host.shadowRoot;
    if (!root) return null;
  }
  const deepHit = (x, y) => {
    let h = document.elementFromPoint(x, y), ox = 0, oy = 0;
    for (let i = 0; i < 8 && h; i++) {
      if (h.tagName === 'IFRAME' && h.contentDocument) {
        const f = h.getBoundingClientRect();
        ox += f.left + h.clientLeft; oy += f.top + h.clientTop;
        h = h.contentDocument.elementFromPoint(x - ox, y - oy);
      } else if (h.shadowRoot) {
        const inner = h.shadowRoot.elementFromPoint(x - ox, y - oy);
        if (!inner || inner === h) break;
        h = inner;
      } else break;
    }
    return h;
  };
  const all = Array.from(root.querySelectorAll(parts[parts.length - 1]));
  // displayed = laid out; a lazily revealed row is laid out (visibility: hidden) before it is shown
  const visible = (el) => { const r = el.getBoundingClientRect(); return r.width > 0 && r.height > 0; };
  const el = all.find((e) => (!text || e.textContent.trim().toLowerCase().includes(text.toLowerCase())) && visible(e));
  if (!el) return null;
  const b = el.getBoundingClientRect();
  const r = {left: b.left + dx, top: b.top + dy, width: b.width, height: b.height, bottom: b.bottom + dy};
  const header = document.querySelector('body.sticky .site-header');
  const top = header && !header.contains(el) ? Math.max(0, header.getBoundingClientRect().bottom) : 0;
  let hit = null;
  // whole pixels, as the click will be made (Compiler.emit rounds): a popup whose edge is at y=468.9 covers
  // y=468 once snapped, though not the 468.4 a fractional test would ask about
  const cx = Math.round(Math.min(r.left + r.width / 2, r.left + 40 + Math.min(r.width, 200) / 2));
  const cy = Math.round(r.top + r.height / 2);
  if (cy >= 0 && cy < innerHeight && cx >= 0 && cx < innerWidth) {
    const h = deep ? deepHit(cx, cy) : document.elementFromPoint(cx, cy);
    hit = !!h && (h === el || el.contains(h) || (h.tagName === 'LABEL' && h.control === el)
      // a point on text slotted into the element (light DOM shown through its <slot>) hits the host, and
      // the click's composed path passes the element
      || (deep && el.getRootNode().host === h));
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

# one round trip for the common case of `reach`: the element's box and the open pop-ups (weblica/env/popups.py)
_POPUPS_AND_BOX_JS = f"""([sel, text]) => ({{box: ({_BOX_JS})([sel, text]), popups: ({OPEN_POPUPS_JS})()}})"""


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
    # Settling runs the page's clock the virtual time the env lets pass after that action.
    unsettled: bool = False
    unsettled_ms: int = 0
    # types a write's text at once where that cannot end otherwise (weblica.synth.quick_typing): for
    # validation's oracle and "do everything" runs, whose actions are recorded the same either way;
    # None types key by key
    typist: QuickTyping | None = None
    # the episode's tabs in the order they opened (the env's tab indices) and each one's tracker and
    # typist: a step that opens a tab moves the plan into it, as the env makes a new tab the active one
    tabs: list[Any] = field(default_factory=list)
    _views: dict[Any, tuple[RequestTracker, QuickTyping | None]] = field(default_factory=dict)

    async def emit(self, name: str, thought: str, **args: Any) -> None:
        for key in ("x", "y", "x1", "y1", "x2", "y2"):
            if key in args:
                limit = VIEWPORT_WIDTH if key.startswith("x") else VIEWPORT_HEIGHT
                args[key] = float(min(max(round(args[key]), 0), limit - 1))
        action = Action(name, args)
        self.actions.append(action)
        self.thoughts.append(thought)
        await self.settled()
        result = await perform(self.page, action, self.typist)
        if name == "done":
            self.answer = result
        self.unsettled, self.unsettled_ms = True, virtual_ms(action)

    async def settled(self) -> None:
        """Settle the page after the last action, if that is still to do."""
        if self.unsettled:
            self.unsettled = False
            await settle(self.page, self.tracker, advance_ms=self.unsettled_ms)

    async def eval(self, js: str, arg: Any = None) -> Any:
        """page.evaluate once the last action settled (asked in settle's last round trip), waiting out
        a navigation in progress instead of failing."""
        if self.unsettled:
            self.unsettled = False
            looked, value = await settle_then(self.page, self.tracker, js, arg, advance_ms=self.unsettled_ms)
            if looked:
                return value
        for attempt in range(3):
            try:  # over the page's CDP session (PageSession.evaluate): half the CPU of page.evaluate
                return await self.tracker.ask(js, arg)
            except Exception as exc:
                if not is_navigating(exc) or attempt == 2:
                    raise
                await settle(self.page, self.tracker)

    async def box(self, sel: str, text: str | None = None) -> dict[str, Any] | None:
        return await self.eval(_BOX_JS, [sel, text])

    async def dismissed_box(self, sel: str, text: str | None = None) -> dict[str, Any] | None:
        """Dismiss the open distractors in the way (a blocking one, or one over the element; up to four),
        then measure the element's box; one round trip per look. A non-blocking one elsewhere stays."""
        for _ in range(4):
            found = await self.eval(_POPUPS_AND_BOX_JS, [sel, text])
            box = found["box"]
            how = in_the_way(found["popups"], (box["x"], box["y"]) if box and not box["hit"] else None)
            if how is None:
                return box
            await self.dismiss(how)
        return await self.box(sel, text)

    async def dismiss(self, how: dict[str, Any]) -> None:
        """One distractor dismissed as a person would: its close control, Escape, or a click beside it."""
        what = dismissal_thought(how["kind"], how.get("label", ""), how.get("key"), bool(how.get("outside")))
        if how.get("key"):
            await self.emit("press_keys", what, keys=[how["key"]])
        else:
            await self.emit("click", what, x=how["x"], y=how["y"])

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
        """One write that clicks the field, types and (with `enter`) submits: the gestures of a click, a
        write and an Enter in one step, as a person types into a field they point at."""
        b = await self.reach(sel)
        typed = json.dumps(text, ensure_ascii=False)
        await self.emit("write", f"Type {typed} into {_named(b)}" + (" and press Enter." if enter else "."),
                        text=text, x=b["x"], y=b["y"], **({"enter": True} if enter else {}))

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
        """Native date input (en-US segments mm/dd/yyyy): one write that clicks the month segment and types
        the digits."""
        b = await self.reach(sel)
        y, m, d = value.split("-")
        await self.emit("write", f"Type the date {value} into {_named(b)} as month, day, year, from its month.",
                        text=f"{m}{d}{y}", x=b["left"] + 14, y=b["y"])

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

    def _use(self, page: Any) -> None:
        """Make `page` the one the next steps look at and act in."""
        if not self.tabs:
            self.tabs.append(self.page)
        self._views[self.page] = (self.tracker, self.typist)
        if page not in self.tabs:
            self.tabs.append(page)
        if page not in self._views:  # a tab the site opened: its own tracker, its text typed key by key
            self._views[page] = (RequestTracker(page), None)
        self.page = page
        self.tracker, self.typist = self._views[page]

    async def op_open_tab(self, sel: str, text: str | None = None) -> None:
        """Click a link or button that opens a new tab (target=_blank, window.open); the steps after it
        act in that tab, which the env makes the active one."""
        await self.settled()
        async with self.page.context.expect_page(timeout=15_000) as opened:
            await self.op_click(sel, text)
        page = await opened.value
        await page.wait_for_load_state("load")
        self._use(page)

    async def op_switch_tab(self, index: int) -> None:
        """Go back to (or on to) the tab of that 0-based index, in the order the tabs opened."""
        if not self.tabs:
            self.tabs.append(self.page)
        if not 0 <= index < len(self.tabs):
            raise PlanError(f"there is no tab {index} (the episode has {len(self.tabs)})")
        await self.emit("switch_tab", f"Switch to tab {index + 1}.", index=index)
        self._use(self.tabs[index])
        await self.page.bring_to_front()

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
