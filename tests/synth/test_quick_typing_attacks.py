"""Attacks on validation's quick typing (weblica.synth.quick_typing) in real Chromium: pages whose fields
listen to typing in ways the listener check might miss. Each page is typed into twice, in two fresh
pages under the env's determinism layer (paused fake clock): key by key, as an agent's `write` does in
the env, and through QuickTyping, as validation does. Quick typing is sound for a page when it either
declines (types key by key) or ends in the same state: field value, the page's log of what it saw, and
what it shows after the clock moves on (an env step)."""
from __future__ import annotations

import asyncio
from typing import Any

import pytest

from weblica.browser.determinism import make_deterministic
from weblica.synth.quick_typing import QuickTyping

TEXT = "Oslo harbour"
# every page keeps what its scripts saw in window.seen and shows the field in #f
SEEN = "<script>window.seen = []; const log = (x) => window.seen.push(String(x));</script>"
PAGES: dict[str, str] = {
    # the field is light DOM slotted into a shadow tree: the key events pass the <slot> and the shadow
    # root, which are not among the field's parentNode ancestors
    "slotted": SEEN + """<x-box><input id="f" type="text"></x-box><script>
      customElements.define("x-box", class extends HTMLElement { constructor() { super();
        const root = this.attachShadow({mode: "open"});
        root.innerHTML = '<div id="wrap"><slot></slot></div>';
        root.getElementById("wrap").addEventListener("keydown", (e) => log("key " + e.key)); } });
    </script>""",
    "slotted_root": SEEN + """<x-root><input id="f" type="text"></x-root><script>
      customElements.define("x-root", class extends HTMLElement { constructor() { super();
        const root = this.attachShadow({mode: "open"});
        root.innerHTML = '<slot></slot>';
        root.addEventListener("input", () => log("input " + document.getElementById("f").value)); } });
    </script>""",
    # the same in a closed shadow tree, which the page's own composedPath() does not show either
    "slotted_closed": SEEN + """<x-shut><input id="f" type="text"></x-shut><script>
      customElements.define("x-shut", class extends HTMLElement { constructor() { super();
        const root = this.attachShadow({mode: "closed"});
        root.innerHTML = '<p><slot></slot></p>';
        root.querySelector("p").addEventListener("keyup", (e) => log("up " + e.key)); } });
    </script>""",
    # a closed tree on a built-in host (a div), and one declared in the markup: hidden from page scripts alike
    "slotted_closed_div": SEEN + """<div id="host"><input id="f" type="text"></div><script>
      const root = document.getElementById("host").attachShadow({mode: "closed"});
      root.innerHTML = '<span><slot></slot></span>';
      root.querySelector("span").addEventListener("input", () => log("input"));</script>""",
    "declared_closed": SEEN + """<section><template shadowrootmode="closed"><div onkeydown="window.seen.push('key')">
      <slot></slot></div></template><input id="f" type="text"></section>""",
    # the field inside an open shadow tree (its own host is on the path)
    "inside_open": SEEN + """<x-in></x-in><script>
      customElements.define("x-in", class extends HTMLElement { constructor() { super();
        const root = this.attachShadow({mode: "open"});
        root.innerHTML = '<input id="f" type="text">';
        root.firstChild.addEventListener("keydown", (e) => log("key " + e.key)); } });
      Object.defineProperty(document, "getElementById", {value: (id) => document.querySelector("x-in").shadowRoot.getElementById(id)});
    </script>""",
    # a closed tree elsewhere on the page, listening to keys the field's events never reach: no reason to decline
    "closed_elsewhere": SEEN + """<div id="other"><b>x</b></div><input id="f" type="text"><script>
      const shut = document.getElementById("other").attachShadow({mode: "closed"});
      shut.innerHTML = '<p>other</p>';
      shut.querySelector("p").addEventListener("keydown", () => log("other key"));</script>""",
    "window_property": SEEN + """<input id="f" type="text"><script>
      window.onkeydown = (e) => log("key " + e.key);</script>""",
    "document_capture": SEEN + """<input id="f" type="text"><script>
      document.addEventListener("keyup", (e) => log("up " + e.key), true);</script>""",
    "body_attribute": SEEN + """<input id="f" type="text"><script>
      document.body.setAttribute("onkeypress", "log('press ' + event.key)");</script>""",
    "beforeinput": SEEN + """<input id="f" type="text"><script>
      document.addEventListener("beforeinput", (e) => log("before " + e.data));</script>""",
    "composition": SEEN + """<input id="f" type="text"><script>
      document.getElementById("f").addEventListener("compositionend", (e) => log("comp " + e.data));</script>""",
    # a listener the page adds only once the field has focus (the check runs after the click)
    "added_on_focus": SEEN + """<input id="f" type="text"><script>
      document.getElementById("f").addEventListener("focus", () =>
        document.getElementById("f").addEventListener("input", (e) => log("typed " + e.target.value)), {once: true});
    </script>""",
    # a listener a timer adds: the fake clock is paused while a write types, so it is not there yet either way
    "added_by_timer": SEEN + """<input id="f" type="text"><script>
      setTimeout(() => document.getElementById("f").addEventListener("input", () => log("late")), 30);</script>""",
    # no per-key listener: what the page reads afterwards, on the next env step
    "change_on_blur": SEEN + """<input id="f" type="text"><button id="b">Go</button><script>
      document.getElementById("f").addEventListener("change", (e) => log("change " + e.target.value));</script>""",
    "polled": SEEN + """<input id="f" type="text"><script>
      setInterval(() => { const v = document.getElementById("f").value; if (window.seen.at(-1) !== v) log(v); }, 50);
    </script>""",
    "user_valid": SEEN + """<style>#f:user-valid { outline: 3px solid green; }</style>
      <input id="f" type="text" minlength="2" required><script>
      setInterval(() => log(document.getElementById("f").matches(":user-valid")), 100);</script>""",
    # a field focused without a click (autofocus): typing is the page's first user activation either way
    "activation": SEEN + """<input id="f" type="text" autofocus><script>
      setInterval(() => log(navigator.userActivation.hasBeenActive), 100);</script>""",
}
async def _type_on(browser: Any, html: str, quick: bool) -> dict[str, Any]:
    context = await browser.new_context()
    await make_deterministic(context, 0)
    try:
        page = await context.new_page()
        await page.set_content(f"<!doctype html><html><body>{html}</body></html>")
        if "autofocus" in html:
            await page.evaluate("() => document.getElementById('f').focus()")
        else:
            await page.click("#f")
        typist = QuickTyping(page)
        if quick:
            await typist.type(TEXT)
        else:
            await page.keyboard.type(TEXT)
        await typist.close()
        await page.evaluate("() => document.getElementById('f').blur()")  # the next action elsewhere
        await page.clock.run_for(500)  # the env's next step moves the clock on
        end = await page.evaluate("() => ({value: document.getElementById('f').value, seen: window.seen})")
        return {**end, "inserted": typist.inserted}
    finally:
        await context.close()


@pytest.fixture(scope="module")
def typed() -> dict[str, tuple[dict[str, Any], dict[str, Any]]]:
    """Every page typed into both ways, in one browser: page name -> (key by key, quick)."""
    from playwright.async_api import async_playwright

    from weblica.browser.launcher import launch_browser

    async def go() -> dict[str, tuple[dict[str, Any], dict[str, Any]]]:
        async with async_playwright() as pw:
            browser = await launch_browser(pw)
            try:
                return {name: (await _type_on(browser, html, quick=False), await _type_on(browser, html, quick=True))
                        for name, html in PAGES.items()}
            finally:
                await browser.close()
    return asyncio.run(go())


@pytest.mark.parametrize("name", list(PAGES))
def test_quick_typing_declines_or_ends_as_typing_key_by_key(name, typed):
    keyed, quick = typed[name]
    assert keyed["value"] == TEXT
    keyed_state = {k: keyed[k] for k in ("value", "seen")}
    quick_state = {k: quick[k] for k in ("value", "seen")}
    assert quick["inserted"] == 0 or quick_state == keyed_state, (name, keyed_state, quick_state)


def test_the_pages_without_per_key_listeners_are_the_ones_inserted_at_once(typed):
    # so the comparisons above compare something: these pages did take the quick path
    inserted = {name for name, (_, quick) in typed.items() if quick["inserted"]}
    assert inserted == {"closed_elsewhere", "added_by_timer", "change_on_blur", "polled", "user_valid", "activation"}
