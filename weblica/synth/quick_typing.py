"""Typing a `write` action's text in one insertion where key-by-key typing cannot end otherwise.

Validation's "do everything" runs type a lot (every other field filled, the task done twice), and
each typed character costs the renderer a keydown, a keypress, an input event and a keyup. Inserting
the whole text at once (CDP Input.insertText, what an IME commit does) leaves the same value in the
field; the end state can differ only through something that listens to the per-key events. So the
text is inserted at once only when the focused field is a plain text field (text, email, tel,
password, search, url input or a textarea; no maxlength, not read-only) and nothing on its event
path (the field, its ancestors, the document, the window) listens to key, input, composition or
selection events, besides handlers recognized to act on Escape alone (the synth runtime's pop-up and
drawer closers: typed text holds no Escape), no node on it hosts a shadow root, open or closed (a
field slotted into a shadow tree has its events pass listeners in that tree, which a closed root
hides from page scripts; the field's own user-agent root is no page's), and the text holds no
newline or tab (typed, those are Enter and Tab). Then no page script runs either way, and a field's value is no DOM mutation, so the
page and the server end the same. Anything else is typed key by key. The recorded action is the
same `write` either way: only how validation performs it differs.
"""
from __future__ import annotations

import asyncio
import json
import re
from typing import Any

from weblica.synth.page_session import PageSession

MIN_CHARS = 4  # shorter texts are typed key by key: few key events, and the recorded runs stay as they were

_PER_KEY_EVENTS = frozenset({"keydown", "keypress", "keyup", "beforeinput", "input", "textInput", "textinput",
                             "compositionstart", "compositionupdate", "compositionend", "select", "selectionchange",
                             "selectstart"})
# keydown handlers that return at once unless the key is Escape (weblica/site_runtime/distractors.js, site.js)
_ESCAPE_ONLY = (
    re.compile(r'^\(?(\w+)\)?\s*=>\s*\{\s*if\s*\(\1\.key\s*!==\s*"Escape"\)\s*return;'),
    re.compile(r'^\(?(\w+)\)?\s*=>\s*\{\s*if\s*\(\1\.key\s*===\s*"Escape"\)\s*\w+\(false\);\s*\}$'),
)

# The focused field's event path (itself up to the document, then the window), checked in the page in
# one round trip through DevTools' command-line `getEventListeners` (what DOMDebugger.getEventListeners
# reads, node by node, in as many round trips): false when it is not a plain text field, a node on
# the path lists a per-key listener (other than an Escape-only closer) or hosts an open shadow tree
# (or the field is slotted into one); true when none of that holds and no element on the path could
# host a closed shadow tree; else the elements that could (custom elements and the element kinds
# attachShadow accepts), returned by reference for `_hosts_closed_root`: a closed tree is hidden from
# every page script, but its listeners hear a slotted field's events. A page script named
# `getEventListeners` shadows the command-line one: false, and the text is typed key by key.
_HOST_TAGS = ("article", "aside", "blockquote", "body", "div", "footer", "h1", "h2", "h3", "h4", "h5", "h6", "header",
              "main", "nav", "p", "section", "span")
_CHECK_JS = """((perKey, escapeOnly, hostTags) => {
  if (typeof getEventListeners !== 'function' || !String(getEventListeners).includes('[Command Line API]')) return false;
  const el = document.activeElement;
  if (!el) return false;
  const plain = el.tagName === 'TEXTAREA' ||
    (el.tagName === 'INPUT' && ['text', 'email', 'tel', 'password', 'search', 'url'].includes(el.type));
  if (!plain || el.hasAttribute('maxlength') || el.readOnly || el.disabled) return false;
  const harmless = (type, source) => !perKey.includes(type) ||
    (type === 'keydown' && escapeOnly.some((p) => new RegExp(p).test(source)));
  const hosts = [];
  const path = [];
  for (let n = el; n; n = n.parentNode || (n instanceof ShadowRoot ? n.host : null)) {
    if (n.nodeType === 1 && (n.shadowRoot || n.assignedSlot)) return false;  // an open shadow tree on the way
    if (n !== el && n.nodeType === 1 && (n.localName.includes('-') || hostTags.includes(n.localName))) hosts.push(n);
    path.push(n);
  }
  path.push(window);
  for (const node of path) {
    for (const [type, listeners] of Object.entries(getEventListeners(node))) {
      if (!listeners.every((l) => harmless(type, String(l.listener)))) return false;
    }
  }
  return hosts.length ? hosts : true;
})"""


def _check_expression() -> str:
    patterns = [p.pattern for p in _ESCAPE_ONLY]
    return f"{_CHECK_JS}({json.dumps(sorted(_PER_KEY_EVENTS))}, {json.dumps(patterns)}, {json.dumps(list(_HOST_TAGS))})"


class QuickTyping:
    """Per page: decides, for the focused field, whether a text may be inserted at once. It asks over
    the page's CDP session (weblica.synth.page_session: a validation page's one, else its own, opened
    at the first check and kept until `close`)."""

    def __init__(self, page: Any, session: PageSession | None = None) -> None:
        self.page = page
        self.session = session if session is not None else PageSession(page)
        self._owns_session = session is None
        self.inserted = self.typed = 0  # texts each way, for measurement

    async def keyless(self, text: str) -> bool:
        """True when inserting `text` at once into the focused field ends as typing it would."""
        if len(text) < MIN_CHARS or any(c in text for c in "\n\r\t"):  # typed, these are Enter and Tab
            return False
        try:
            found = (await self.session.send("Runtime.evaluate", {"expression": _EXPRESSION, "includeCommandLineAPI": True},
                                             retry=True)).get("result", {})
            if found.get("type") == "boolean":
                return bool(found.get("value"))
            return found.get("subtype") == "array" and not await self._hosts_closed_root(found["objectId"])
        except Exception:  # a page navigating or gone: type it key by key, as the env does
            return False

    async def _hosts_closed_root(self, hosts_id: str) -> bool:
        """Whether an element of the array `hosts_id` hosts a shadow root of the page's own (CDP shows the
        closed ones a page script cannot see; a field's built-in user-agent tree is not the page's)."""
        props = await self.session.send("Runtime.getProperties", {"objectId": hosts_id, "ownProperties": True})
        ids = [p["value"]["objectId"] for p in props.get("result", [])
               if p.get("name", "").isdigit() and p.get("value", {}).get("objectId")]
        nodes = await asyncio.gather(*(self.session.send("DOM.describeNode", {"objectId": i, "depth": 0}) for i in ids))
        return any(root.get("shadowRootType") != "user-agent"
                   for found in nodes for root in found.get("node", {}).get("shadowRoots", []))

    def take_counts(self) -> tuple[int, int]:
        """The texts inserted at once and typed key by key since the last call (one run's, for measurement)."""
        counts = (self.inserted, self.typed)
        self.inserted = self.typed = 0
        return counts

    async def close(self) -> None:
        """Detach its own session (a shared one is its page's to close)."""
        if self._owns_session:
            await self.session.close()

    async def type(self, text: str) -> None:
        """Type `text` into the focused field: at once where that cannot end otherwise, else key by key."""
        if await self.keyless(text):
            self.inserted += 1
            await self.page.keyboard.insert_text(text)
        else:
            self.typed += 1
            await self.page.keyboard.type(text)


_EXPRESSION = _check_expression()
