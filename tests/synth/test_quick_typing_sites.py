"""Quick typing (weblica.synth.quick_typing) on the shipped synth sites' own form pages, in real Chromium
behind the real site server: every text field of each page is typed into key by key (as an agent's
`write` in the env) and through QuickTyping (as validation), each in a fresh context under the
determinism layer; after the field loses focus and the clock moves one env step, the page (its DOM and
every field's value) must be the same either way."""
from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from weblica.browser.determinism import make_deterministic
from weblica.browser.launcher import context_kwargs
from weblica.env.backend import EPISODE_HEADER
from weblica.synth.quick_typing import QuickTyping

REPO = Path(__file__).resolve().parents[2]
PAGES = [("checkout-groceries-0bebe201", "/checkout"), ("date-picker-healthcare-29811ca4", "/request"),
         ("forms-travel-2a9523da", "/contact"), ("forms-travel-2a9523da", "/hotels/book"),
         ("date-picker-healthcare-29811ca4", "/"), ("filter-sort-electronics-ca4dd7fc", "/")]
TEXT = "Mira Holm 42"
_FIELDS_JS = """() => [...document.querySelectorAll('input, textarea')].filter((el) =>
  (el.tagName === 'TEXTAREA' || ['text', 'email', 'tel', 'search', 'url', 'password'].includes(el.type)) && el.offsetParent
).map((el, i) => { el.dataset.qtIndex = String(i); return i; })"""
_END_JS = """() => ({html: document.body.innerHTML.replace(/ data-qt-index="\\d+"/g, ''),
  values: [...document.querySelectorAll('input, textarea, select')].map((el) => el.type === 'checkbox' ? el.checked : el.value)})"""


async def _typed(browser: Any, url: str, proxy: str, field: int, quick: bool) -> dict[str, Any]:
    context = await browser.new_context(**context_kwargs(proxy=proxy))
    await make_deterministic(context, 0)
    try:
        page = await context.new_page()
        await page.set_extra_http_headers({EPISODE_HEADER: f"qt-{field}-{int(quick)}"})
        await page.goto(url, wait_until="load")
        await page.evaluate(_FIELDS_JS)
        await page.focus(f"[data-qt-index='{field}']")
        typist = QuickTyping(page)
        await (typist.type(TEXT) if quick else page.keyboard.type(TEXT))
        await typist.close()
        await page.evaluate("() => document.activeElement && document.activeElement.blur()")
        await page.clock.run_for(600)  # the env's step after the write
        return {**(await page.evaluate(_END_JS)), "inserted": typist.inserted}
    finally:
        await context.close()


@pytest.fixture(scope="module")
def compared() -> list[tuple[str, int, bool, bool]]:
    """(page, field, inserted at once, same end) for every visible text field of the pages."""
    from playwright.async_api import async_playwright

    from weblica.browser.launcher import launch_browser
    from weblica.serve.server import SiteServer

    async def go(server: SiteServer) -> list[tuple[str, int, bool, bool]]:
        out = []
        async with async_playwright() as pw:
            browser = await launch_browser(pw)
            try:
                for site, path in PAGES:
                    url = f"http://{site}.synth.test{path}"
                    context = await browser.new_context(**context_kwargs(proxy=server.url))
                    page = await context.new_page()
                    await page.goto(url, wait_until="load")
                    fields = await page.evaluate(_FIELDS_JS)
                    await context.close()
                    for field in fields[:6]:
                        keyed = await _typed(browser, url, server.url, field, False)
                        quick = await _typed(browser, url, server.url, field, True)
                        same = {k: keyed[k] for k in ("html", "values")} == {k: quick[k] for k in ("html", "values")}
                        out.append((f"{site}{path}", field, bool(quick["inserted"]), same))
            finally:
                await browser.close()
        return out
    with SiteServer([REPO / "sites"]) as server:
        return asyncio.run(go(server))


def test_every_text_field_ends_the_same_typed_at_once_or_key_by_key(compared):
    assert len(compared) >= 12
    assert [c for c in compared if c[2] and not c[3]] == []
    # the comparisons compare something: the shipped pages' fields take the quick path (all 14 did)
    assert sum(c[2] for c in compared) >= 10, compared
