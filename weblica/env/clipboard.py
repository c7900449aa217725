"""An episode's own clipboard.

Chromium keeps one clipboard for the whole browser, shared by every context: text one episode copied was
pasted by the next (or by another running at the same time, in the env server). So the env never lets the
browser's clipboard carry the agent's copy and paste: the clipboard keys (Ctrl/Meta+C, X, V, Ctrl+Insert,
Shift+Insert, Shift+Delete) are played against the episode's `EpisodeClipboard` instead. Copy and cut
dispatch a `copy`/`cut` event on the focused element (a page's handler may set the data, as on a real
copy) and keep the selection otherwise; paste dispatches `paste` with the episode's text and, unless a
handler took it, inserts the text as typing would. Pages cannot read the browser's clipboard either
(`clipboard-read` is never granted), so what a page writes there reaches no other episode.
"""
from __future__ import annotations

from typing import Any

# (modifier, key) pairs, lowercased, that copy, cut or paste on Linux and macOS
_COPY = {("control", "c"), ("meta", "c"), ("control", "insert")}
_CUT = {("control", "x"), ("meta", "x"), ("shift", "delete")}
_PASTE = {("control", "v"), ("meta", "v"), ("shift", "insert")}

# the selected text of the focused field (never of a password field, as browsers copy none), else the
# page's selection; a `copy`/`cut` handler's own data wins
_COPY_JS = """(kind) => {
  const el = document.activeElement || document.body;
  const data = new DataTransfer();
  const event = new ClipboardEvent(kind, {clipboardData: data, bubbles: true, cancelable: true});
  const proceed = el.dispatchEvent(event);
  if (!proceed) return {text: data.getData('text/plain'), editable: false, handled: true};
  const field = (el.tagName === 'INPUT' || el.tagName === 'TEXTAREA') && typeof el.selectionStart === 'number';
  if (field) {
    if (el.type === 'password') return {text: '', editable: false, handled: false};
    return {text: el.value.slice(el.selectionStart, el.selectionEnd), editable: !el.readOnly && !el.disabled,
            handled: false};
  }
  return {text: String(getSelection()), editable: !!el.isContentEditable, handled: false};
}"""
_PASTE_JS = """(text) => {
  const el = document.activeElement || document.body;
  const data = new DataTransfer();
  data.setData('text/plain', text);
  return el.dispatchEvent(new ClipboardEvent('paste', {clipboardData: data, bubbles: true, cancelable: true}));
}"""


def clipboard_kind(key: str) -> str | None:
    """'copy', 'cut' or 'paste' for a clipboard chord ('Control+c', 'Shift+Insert'), else None."""
    parts = [p.strip().lower() for p in key.split("+")]
    if len(parts) != 2:
        return None
    pair = (parts[0], parts[1])
    return "copy" if pair in _COPY else "cut" if pair in _CUT else "paste" if pair in _PASTE else None


class EpisodeClipboard:
    """The text one episode copied; empty at its start."""

    def __init__(self) -> None:
        self.text = ""

    async def play(self, page: Any, kind: str) -> None:
        if kind == "paste":
            if self.text and await page.evaluate(_PASTE_JS, self.text):
                await page.keyboard.insert_text(self.text)
            return
        got = await page.evaluate(_COPY_JS, kind)
        if got["text"] or got["handled"]:
            self.text = got["text"]
        if kind == "cut" and got["editable"] and got["text"]:
            await page.keyboard.press("Delete")  # removes the selection as a cut does, with its input events


class ClipboardKeyboard:
    """A page's keyboard whose clipboard chords go to the episode's clipboard; every other key is pressed."""

    def __init__(self, page: Any, clipboard: EpisodeClipboard) -> None:
        self._page, self._keyboard, self._clipboard = page, page.keyboard, clipboard

    async def press(self, key: str, *args: Any, **kwargs: Any) -> None:
        kind = clipboard_kind(key)
        if kind is None:
            await self._keyboard.press(key, *args, **kwargs)
        else:
            await self._clipboard.play(self._page, kind)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._keyboard, name)


class ClipboardPage:
    """A page as gestures see it, with `ClipboardKeyboard` for its keyboard."""

    def __init__(self, page: Any, clipboard: EpisodeClipboard) -> None:
        self._page = page
        self.keyboard = ClipboardKeyboard(page, clipboard)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._page, name)
