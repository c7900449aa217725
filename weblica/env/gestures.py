"""The gestures behind the actions: what a click, a write, a scroll or a navigation does to a page.

One definition for everyone who acts on a page: the action table (weblica.env.actions.ACTIONS) names each
action's gesture; the env's executor wraps it in before/after probes to describe its effect, the synth
oracle player runs it bare while compiling and validating a task's oracle, and the BrowserGym adapter runs
it on a sync page. So an oracle is validated with exactly the gestures the env will replay it with.
"""
from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import Any, Awaitable, Callable, Generator

from weblica.browser.launcher import VIEWPORT

VIEWPORT_WIDTH, VIEWPORT_HEIGHT = VIEWPORT["width"], VIEWPORT["height"]

KEY_NAMES = {
    "enter": "Enter", "return": "Enter", "esc": "Escape", "escape": "Escape", "tab": "Tab", "space": "Space",
    "backspace": "Backspace", "delete": "Delete", "del": "Delete", "up": "ArrowUp", "down": "ArrowDown",
    "left": "ArrowLeft", "right": "ArrowRight", "arrowup": "ArrowUp", "arrowdown": "ArrowDown",
    "arrowleft": "ArrowLeft", "arrowright": "ArrowRight", "pageup": "PageUp", "pagedown": "PageDown",
    "page_up": "PageUp", "page_down": "PageDown", "home": "Home", "end": "End", "ctrl": "Control",
    "control": "Control", "shift": "Shift", "alt": "Alt", "option": "Alt", "cmd": "Meta", "command": "Meta",
    "meta": "Meta", "win": "Meta", "super": "Meta", "insert": "Insert",
}


def normalize_key(key: str) -> str:
    """'ctrl+a' -> 'Control+a', 'enter' -> 'Enter'; function keys and single characters pass through."""
    parts = [p.strip() for p in key.split("+")] if len(key) > 1 else [key]
    out = []
    for part in parts:
        low = part.lower()
        if low in KEY_NAMES:
            out.append(KEY_NAMES[low])
        elif len(low) in (2, 3) and low[0] == "f" and low[1:].isdigit():
            out.append(low.upper())
        else:
            out.append(part)
    return "+".join(out)


def scroll_delta(direction: str, amount: float) -> tuple[int, int]:
    """Wheel / scrollBy pixels for a scroll of `amount` viewports in `direction`."""
    vertical = direction in ("up", "down")
    sign = 1 if direction in ("down", "right") else -1
    pixels = round(amount * (VIEWPORT_HEIGHT if vertical else VIEWPORT_WIDTH))
    return (0, sign * pixels) if vertical else (sign * pixels, 0)


# A gesture is a generator of page calls: it yields `Call`s and receives each call's result. The same
# gesture runs on Playwright's async page (`perform`: the env and the oracle player) and on its sync page
# (`perform_sync`: the BrowserGym adapter), so there is one definition of what each action does.
@dataclass(frozen=True)
class Call:
    on: str                      # "mouse", "keyboard" or "page"
    method: str
    args: tuple[Any, ...] = ()
    kwargs: dict[str, Any] = field(default_factory=dict)

    def start(self, page: Any) -> Any:
        target = page if self.on == "page" else getattr(page, self.on)
        return getattr(target, self.method)(*self.args, **self.kwargs)


Gesture = Generator[Call, Any, Any]


async def perform(page: Any, gesture: Gesture, type_text: Callable[[str], Awaitable[Any]] | None = None) -> Any:
    """Run a gesture on an async Playwright page; returns the gesture's value. With `type_text` the
    gesture's typing (its `keyboard.type` calls) goes through it instead (validation's quick typing)."""
    result = None
    try:
        while True:
            call = gesture.send(result)
            if type_text is not None and call.on == "keyboard" and call.method == "type":
                result = await type_text(*call.args)
            else:
                result = await call.start(page)
    except StopIteration as stop:
        return stop.value


def perform_sync(page: Any, gesture: Gesture) -> Any:
    """Run a gesture on a sync Playwright page; returns the gesture's value."""
    result = None
    try:
        while True:
            result = gesture.send(result).start(page)
    except StopIteration as stop:
        return stop.value


def click(x: float, y: float, button: str = "left", clicks: int = 1) -> Gesture:
    yield Call("mouse", "click", (x, y), {"button": button, "click_count": clicks})


def hover(x: float, y: float) -> Gesture:
    yield Call("mouse", "move", (x, y))


def drag(x1: float, y1: float, x2: float, y2: float) -> Gesture:
    # intermediate moves: drag-and-drop libraries start a drag only after the pointer travelled
    yield Call("mouse", "move", (x1, y1))
    yield Call("mouse", "down")
    yield Call("mouse", "move", (x2, y2), {"steps": 12})
    yield Call("mouse", "up")


# The focused element as `write` needs it (what the env's probe reports of it, weblica/env/probe.js):
# its tag, an input's type, an input's or text area's value.
_FOCUSED_JS = """() => {
  // the focused element through open shadow roots and same-origin frames (an embedded payment form)
  let el = document.activeElement;
  for (let i = 0; i < 8 && el; i++) {
    if (el.shadowRoot && el.shadowRoot.activeElement) el = el.shadowRoot.activeElement;
    else if (el.tagName === 'IFRAME' && el.contentDocument && el.contentDocument.activeElement
             && el.contentDocument.activeElement !== el.contentDocument.body) el = el.contentDocument.activeElement;
    else break;
  }
  if (!el) return null;
  return {tag: el.tagName.toLowerCase(), type: el.tagName === 'INPUT' ? el.type : '',
          value: ['INPUT', 'TEXTAREA'].includes(el.tagName) ? String(el.value) : null};
}"""
_TEXT_INPUTS = ("text", "search", "email", "tel", "url", "password")


def holds_nothing(field: dict[str, Any] | None) -> bool:
    """Whether the focused field is a text field with nothing in it: there `write` types at once. Ctrl+A
    and Backspace are not no-ops in an empty field of a real site (a tag or recipient input's Backspace
    removes its last entry). Other inputs (date, number, time) can hold a partial entry that their value
    does not show, and an editable element's text is not its whole content: those are always cleared."""
    if not field:
        return False
    plain = field.get("tag") == "textarea" or (field.get("tag") == "input" and field.get("type") in _TEXT_INPUTS)
    return plain and field.get("value") == ""

# A native <select> takes no typed text: pick the option whose label (or value) is the text, and fire
# the events a user's choice fires.
_CHOOSE_OPTION_JS = """(t) => {
  const s = document.activeElement;
  const o = [...s.options].find((o) => o.text.trim().toLowerCase() === t.trim().toLowerCase() || o.value === t);
  if (o) {
    s.value = o.value;
    s.dispatchEvent(new Event('input', {bubbles: true}));
    s.dispatchEvent(new Event('change', {bubbles: true}));
  }
}"""


def write(text: str, enter: bool = False, focused: dict[str, Any] | None = None) -> Gesture:
    """Replace the focused field's content with `text` (a select: choose that option), then Enter if
    asked; an empty text field is typed into without clearing (`holds_nothing`). `focused` is the
    focused element (tag, type, value) when the caller has just read it."""
    if focused is None:
        focused = (yield Call("page", "evaluate", (_FOCUSED_JS,))) or {}
    if focused.get("tag") == "select":
        yield Call("page", "evaluate", (_CHOOSE_OPTION_JS, text))
    else:
        if not holds_nothing(focused):
            yield Call("keyboard", "press", ("Control+a",))
            yield Call("keyboard", "press", ("Backspace",))
        yield Call("keyboard", "type", (text,))
    if enter:
        yield Call("keyboard", "press", ("Enter",))


def press_keys(keys: list[str]) -> Gesture:
    """Press each key (or chord) in turn; the gesture's value is the normalized names pressed."""
    names = [normalize_key(k) for k in keys]
    for name in names:
        yield Call("keyboard", "press", (name,))
    return names


def scroll(direction: str, amount: float, x: float | None = None, y: float | None = None) -> Gesture:
    """The mouse wheel at (x, y) (it scrolls what is under the pointer), or the window without a point."""
    dx, dy = scroll_delta(direction, amount)
    if x is not None and y is not None:
        yield Call("mouse", "move", (x, y))
        yield Call("mouse", "wheel", (dx, dy))
    else:
        yield Call("page", "evaluate", ("([dx, dy]) => window.scrollBy(dx, dy)", [dx, dy]))


def click_then_write(text: str, x: float | None = None, y: float | None = None, enter: bool = False) -> Gesture:
    """A write that names its field: click it first, then `write`."""
    if x is not None and y is not None:
        yield from click(x, y)
    yield from write(text, enter)


def navigate(url: str, timeout_ms: float | None = None) -> Gesture:
    """Open `url` in the page and wait for its load; the gesture's value is the main response (or None)."""
    return (yield Call("page", "goto", (url,), {"wait_until": "load",
                                               **({"timeout": timeout_ms} if timeout_ms is not None else {})}))


def history(direction: str, timeout_ms: float | None = None) -> Gesture:
    """Go `back` or `forward` in the page's history and wait for the load; the value is the response (None
    where there was nowhere to go, or the page came from the back/forward cache)."""
    method = "go_back" if direction == "back" else "go_forward"
    return (yield Call("page", method, (), {"wait_until": "load",
                                            **({"timeout": timeout_ms} if timeout_ms is not None else {})}))


# The compositor applies a wheel scroll asynchronously (Playwright's wheel does not wait for it), so the
# new offset may reach the page a few frames after the wheel: read it until it differs from the old one,
# giving up after a bounded real-time wait (at a boundary it never moves). Only the wait is in real time;
# where the scroll lands does not depend on it.
WHEEL_READS = 8
WHEEL_READ_GAP_S = 0.02


async def wheel_landed(read_offset: Callable[[], Awaitable[Any]], before: Any) -> Any:
    """The scroll offset once a wheel scroll has been applied (`before` if it never moves);
    `read_offset` reads the offset of what the wheel scrolls."""
    after = before
    for _ in range(WHEEL_READS):
        after = await read_offset()
        if after != before:
            break
        await asyncio.sleep(WHEEL_READ_GAP_S)
    return after
