"""Typing a `write` action's text in one insertion where key-by-key typing cannot end otherwise.

Validation's "do everything" runs type a lot (every other field filled, the task done twice), and
each typed character costs the renderer a keydown, a keypress, an input event and a keyup. Inserting
the whole text at once (CDP Input.insertText, what an IME commit does) leaves the same value in the
field; the end state can differ only through something that listens to the per-key events. So the
text is inserted at once only when the focused field is a plain text field (text, email, tel,
password, search, url input or a textarea; no maxlength, not read-only) and nothing on its event
path (the field, its ancestors, the document, the window) listens to key, input, composition or
selection events, besides handlers recognized to act on Escape alone (the synth runtime's pop-up and
drawer closers: typed text holds no Escape), and the text holds no newline or tab (typed, those are
Enter and Tab). Then no page script runs either way, and a field's value is no DOM mutation, so the
page and the server end the same. Anything else is typed key by key. The recorded action is the
same `write` either way: only how validation performs it differs.
"""
from __future__ import annotations

import re
from typing import Any

MIN_CHARS = 4  # shorter texts are typed key by key: few key events, and the recorded runs stay as they were

_PER_KEY_EVENTS = frozenset({"keydown", "keypress", "keyup", "beforeinput", "input", "textInput", "textinput",
                             "compositionstart", "compositionupdate", "compositionend", "select", "selectionchange",
                             "selectstart"})
# keydown handlers that return at once unless the key is Escape (synth/static/distractors.js, site.js)
_ESCAPE_ONLY = (
    re.compile(r'^\(?(\w+)\)?\s*=>\s*\{\s*if\s*\(\1\.key\s*!==\s*"Escape"\)\s*return;'),
    re.compile(r'^\(?(\w+)\)?\s*=>\s*\{\s*if\s*\(\1\.key\s*===\s*"Escape"\)\s*\w+\(false\);\s*\}$'),
)

# The focused field's event path (itself up to the document, then the window) with each node's
# listeners as [type, source], or null when it is not a plain text field: one round trip, through
# DevTools' command-line `getEventListeners` (what DOMDebugger.getEventListeners reads, node by node,
# in as many round trips). A page script of that name shadows the command-line one: then null, and
# the text is typed key by key.
_LISTENERS_JS = """(() => {
  if (typeof getEventListeners !== 'function' || !String(getEventListeners).includes('[Command Line API]')) return null;
  const el = document.activeElement;
  if (!el) return null;
  const plain = el.tagName === 'TEXTAREA' ||
    (el.tagName === 'INPUT' && ['text', 'email', 'tel', 'password', 'search', 'url'].includes(el.type));
  if (!plain || el.hasAttribute('maxlength') || el.readOnly || el.disabled) return null;
  const path = [];
  for (let n = el; n; n = n.parentNode || (n instanceof ShadowRoot ? n.host : null)) path.push(n);
  path.push(window);
  return path.map((node) => Object.entries(getEventListeners(node))
    .flatMap(([type, listeners]) => listeners.map((l) => [type, String(l.listener)])));
})()"""


def _harmless(event_type: str, source: str) -> bool:
    if event_type not in _PER_KEY_EVENTS:
        return True
    return event_type == "keydown" and any(p.match(source) for p in _ESCAPE_ONLY)


class QuickTyping:
    """Per page: decides, for the focused field, whether a text may be inserted at once. Its CDP session
    is opened at the first check and kept (validation keeps one per reused page) until `close`."""

    def __init__(self, page: Any) -> None:
        self.page = page
        self._session: Any = None
        self.inserted = self.typed = 0  # texts each way, for measurement

    async def keyless(self, text: str) -> bool:
        """True when inserting `text` at once into the focused field ends as typing it would."""
        if len(text) < MIN_CHARS or any(c in text for c in "\n\r\t"):  # typed, these are Enter and Tab
            return False
        for _ in range(2):  # a session kept from an earlier run may have gone with its renderer: once more afresh
            fresh = self._session is None
            try:
                if self._session is None:
                    self._session = await self.page.context.new_cdp_session(self.page)
                found = await self._session.send("Runtime.evaluate", {"expression": _LISTENERS_JS,
                                                                      "returnByValue": True, "includeCommandLineAPI": True})
                path = found.get("result", {}).get("value")
                if not isinstance(path, list) or not path:
                    return False
                return all(_harmless(str(event_type), str(source)) for node in path for event_type, source in node)
            except Exception:  # a page navigating or gone: type it key by key, as the env does
                self._session = None
                if fresh:
                    return False
        return False

    def take_counts(self) -> tuple[int, int]:
        """The texts inserted at once and typed key by key since the last call (one run's, for measurement)."""
        counts = (self.inserted, self.typed)
        self.inserted = self.typed = 0
        return counts

    async def close(self) -> None:
        if self._session is not None:
            try:
                await self._session.detach()
            except Exception:  # the page is gone, and its session with it
                pass
            self._session = None

    async def type(self, text: str) -> None:
        """Type `text` into the focused field: at once where that cannot end otherwise, else key by key."""
        if await self.keyless(text):
            self.inserted += 1
            await self.page.keyboard.insert_text(text)
        else:
            self.typed += 1
            await self.page.keyboard.type(text)
