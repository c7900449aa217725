"""Attacks on the determinism layer (weblica/browser/determinism.py) from what a page can read about the
machine it runs on: the same task, seed and actions must give the same page on any machine."""
from __future__ import annotations

import asyncio
import os

_MACHINE_JS = """() => [navigator.hardwareConcurrency, navigator.deviceMemory ?? null,
                        Object.getOwnPropertyDescriptor(Navigator.prototype, 'hardwareConcurrency') !== undefined]"""


def _read_machine(deterministic: bool) -> list:
    from playwright.async_api import async_playwright

    from weblica.browser.determinism import make_deterministic
    from weblica.browser.launcher import launch_browser

    async def go() -> list:
        async with async_playwright() as pw:
            browser = await launch_browser(pw)
            try:
                context = await browser.new_context()
                if deterministic:
                    await make_deterministic(context, 0)
                page = await context.new_page()
                await page.set_content("<p>machine</p>")
                return await page.evaluate(_MACHINE_JS)
            finally:
                await browser.close()
    return asyncio.run(go())


def test_a_page_reads_the_layer_s_machine_not_this_one():
    # without the layer Chromium reports this machine's logical cores (2 on the shared box, 16 on the GPU one)
    assert _read_machine(False)[0] in {os.cpu_count(), len(os.sched_getaffinity(0))}
    cores, memory, native = _read_machine(True)
    assert cores == 4 and memory in (None, 8) and native  # still Navigator's own property, as without the layer
