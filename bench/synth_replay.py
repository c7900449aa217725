"""What the actions alone cost (bench/synth.py): validation's own episodes played again bare.

Validation's cost is set against a floor of page loads alone, but validation also acts: it clicks, types
and scrolls, and each action makes the page work (hover and focus styles, handlers re-rendering lists,
frames), as it would in the env. The bench's validation keeps every episode it played (start URL, site,
instance, episode seed, the actions performed: weblica.synth.validate's `episodes_played`); this plays
them again in a browser set up as validation's (the env's fake clock, the page seeded per episode),
each action followed by its env step of virtual time on the page's clock, texts typed as validation
types them (weblica.synth.quick_typing), waiting between actions on the site server's count of the
episode's requests and the page's loading documents: no in-page question, no compiling, no check, no
negative. Its CPU per page load, against the same per-load floor, is the cost of the actions
themselves: the part of validation's ratio that making validation cheaper cannot remove.
"""
from __future__ import annotations

import asyncio
import functools
from collections import Counter
from pathlib import Path
from typing import Any, Callable

REPLAYERS = 4  # pages replaying at once, as validation's concurrency
PAUSE_S = 0.03  # real time between polls of the server's count


async def _quiet(tracker: Any, least_s: float = PAUSE_S, most_s: float = 5.0) -> None:
    """Wait until the episode has no request in flight and no document loading (no page question)."""
    loop = asyncio.get_running_loop()
    await asyncio.sleep(least_s)
    deadline = loop.time() + most_s
    while (tracker.inflight or tracker.loading) and loop.time() < deadline:
        await asyncio.sleep(PAUSE_S)


async def _replay(paths: list[Path], episodes: list[dict[str, Any]], cpu: Callable[[], float],
                  ) -> tuple[float, dict[str, Counter[str]], int]:
    from playwright.async_api import async_playwright

    from weblica.browser.launcher import launch_browser
    from weblica.env.actions import Action
    from weblica.env.task import Task
    from weblica.serve.server import SiteServer
    from weblica.synth.playback import STEP_VIRTUAL_MS, perform, virtual_ms
    from weblica.synth.validation_tabs import InProcessBackend, SlotPool, origin_of

    run_clock = "ms => globalThis.__pwClock ? globalThis.__pwClock.controller.runFor(ms).catch(() => {}) : undefined"
    documents: dict[str, Counter[str]] = {}
    actions = 0
    with SiteServer(paths) as server:
        backend = InProcessBackend(server)
        async with async_playwright() as pw:
            browser = await launch_browser(pw)
            pool = SlotPool(browser, server.url, REPLAYERS)  # validation's: cleared and seeded per episode
            start = cpu()

            async def one(n: int, played: dict[str, Any]) -> None:
                nonlocal actions
                task = Task.from_dict({"id": f"replay-{n}", "start_url": played["start_url"], "instruction": "replay",
                                       "source": {"kind": "synth", "site": played["site"]},
                                       "metadata": {"instance": played["instance"]}})
                slot = await pool.wait_free()
                try:
                    net = await backend.begin(task, task.id, played["seed"])
                    tab = await pool.prepare(slot, played["seed"])
                    page, tracker = tab.page, tab.tracker
                    try:
                        await page.set_extra_http_headers(net.extra_headers)
                        tracker.counted_by = functools.partial(server.inflight, task.id)
                        tab.documents = []
                        await page.goto(played["start_url"], wait_until="load")
                        # over the page's CDP session, as validation asks (which follows loading documents)
                        await tab.session.evaluate(run_clock, STEP_VIRTUAL_MS)  # as the env's reset settles
                        await _quiet(tracker)
                        for action in map(Action.from_dict, played["actions"]):
                            try:
                                await perform(page, action, tab.typist)
                                await _quiet(tracker)
                                await tab.session.evaluate(run_clock, virtual_ms(action))
                                await _quiet(tracker)
                            except Exception:  # a navigation mid-question: the next action goes on
                                await _quiet(tracker, 0.2)
                            actions += 1
                    finally:
                        documents.setdefault(played["site"] or "", Counter()).update(tab.documents)
                        await pool.release(slot, tab, origin_of(played["start_url"]), True)
                finally:
                    pool.free(slot)
            try:
                await asyncio.gather(*(one(n, e) for n, e in enumerate(episodes)))
                spent = cpu() - start
            finally:
                await pool.close()
                await browser.close()
    return spent, documents, actions


def replay_episodes(paths: list[Path], episodes: list[dict[str, Any]], cpu: Callable[[], float]) -> dict[str, Any]:
    """CPU (`cpu`: this process tree's, as the bench reads it) of playing validation's episodes again bare
    on the bundles, the documents it loaded per site (URL -> loads) and the actions played."""
    spent, documents, actions = asyncio.run(_replay(paths, episodes, cpu))
    return {"cpu_seconds": spent, "documents": {site: dict(urls) for site, urls in documents.items()},
            "page_loads": sum(sum(urls.values()) for urls in documents.values()), "actions": actions,
            "episodes": len(episodes)}
