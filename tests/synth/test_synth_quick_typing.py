"""Validation's "do everything" runs insert a text at once only where typing it key by key could not end
otherwise (weblica.synth.quick_typing): real Chromium, fields with and without per-key listeners."""
from __future__ import annotations

import asyncio
from typing import Any

from weblica.synth.quick_typing import QuickTyping

TEXT = "extra@example.org"
PAGE = """<!doctype html><html><body>
<input id="plain" type="email">
<input id="inline" type="text" oninput="this.dataset.seen = (this.dataset.seen || 0) + 1">
<input id="capped" type="text" maxlength="5">
<input id="number" type="number">
<form id="live"><input id="filtered" type="text"></form>
<div id="keys"><textarea id="counted"></textarea></div>
<script>
  // the synth runtime's own closers, which act on Escape alone (synth/static/distractors.js, site.js)
  window.addEventListener("keydown", (ev) => {
    if (ev.key !== "Escape") return;
    document.body.dataset.closed = "1";
  });
  document.addEventListener("keydown", (e) => { if (e.key === "Escape") set(false); });
  document.getElementById("live").addEventListener("input", () => { document.body.dataset.refiltered = "1"; });
  document.getElementById("keys").addEventListener("keyup", () => { document.body.dataset.keys = "1"; });
</script></body></html>"""


def _run(body: Any) -> Any:
    from playwright.async_api import async_playwright

    from weblica.browser.launcher import launch_browser

    async def go() -> Any:
        async with async_playwright() as pw:
            browser = await launch_browser(pw)
            try:
                page = await browser.new_page()
                await page.set_content(PAGE)
                return await body(page)
            finally:
                await browser.close()
    return asyncio.run(go())


def test_text_goes_in_at_once_only_into_fields_nothing_listens_to_per_key():
    async def body(page: Any) -> dict[str, Any]:
        typist = QuickTyping(page)
        out = {}
        for field in ("plain", "inline", "capped", "number", "filtered", "counted"):
            await page.focus(f"#{field}")
            out[field] = await typist.keyless(TEXT)
        await page.focus("#plain")
        out["short"] = await typist.keyless("abc")  # not worth the check
        await typist.type(TEXT)
        await page.focus("#filtered")
        await typist.type(TEXT)
        out["values"] = await page.evaluate("() => [plain.value, filtered.value, document.body.dataset.refiltered]")
        out["counts"] = (typist.inserted, typist.typed)
        await typist.close()
        return out
    out = _run(body)
    assert out["plain"] is True
    # an inline oninput, a maxlength, a number field, a form's input listener, an ancestor's keyup: key by key
    assert [out[f] for f in ("inline", "capped", "number", "filtered", "counted")] == [False] * 5
    assert out["short"] is False
    assert out["values"] == [TEXT, TEXT, "1"] and out["counts"] == (1, 1)


def test_listener_objects_and_a_page_named_get_event_listeners_type_key_by_key():
    """The listener check reads every node's listeners in one round trip through DevTools' command-line
    `getEventListeners`: a per-key listener object (handleEvent) on an ancestor, and a page script that
    defines its own `getEventListeners` (which would shadow the command-line one and could answer
    "none"), leave the text typed key by key; a field with listeners of other events only still takes it at once."""
    async def body(page: Any) -> dict[str, Any]:
        typist = QuickTyping(page)
        await page.evaluate("""() => {
          const box = document.createElement('div'); box.innerHTML = '<input id="objfield" type="text">';
          box.addEventListener('keydown', {handleEvent() { document.body.dataset.obj = '1'; }});
          document.body.appendChild(box);
          document.getElementById('plain').addEventListener('click', () => {});
          document.getElementById('plain').addEventListener('focus', () => {});
        }""")
        out = {}
        await page.focus("#objfield")
        out["object"] = await typist.keyless(TEXT)
        await page.focus("#plain")
        out["plain"] = await typist.keyless(TEXT)
        await page.evaluate("() => { window.getEventListeners = () => ({}); }")
        out["shadowed_api"] = await typist.keyless(TEXT)
        await typist.close()
        return out
    out = _run(body)
    assert out == {"object": False, "plain": True, "shadowed_api": False}
