"""What the actions alone cost (bench/synth.py): validation's own episodes played again bare.

Validation's cost is set against a floor of page loads alone, but validation also acts: it clicks, types
and scrolls, and each action makes the page work (hover and focus styles, handlers re-rendering lists,
frames), as it would in the env. The bench's validation keeps every episode it played (start URL, site,
instance, episode seed, the actions performed: weblica.synth.validate's `episodes_played`); this plays
them again in validation's own episodes (weblica.synth.validate.Validator: its slot pool, the start
page settled as the env's reset settles), each action followed by its env step of virtual time on the
page's clock, texts typed as validation types them (weblica.synth.quick_typing), waiting between
actions on the site server's count of the episode's requests and the page's loading documents: no
question into the page after the start, no compiling, no check, no negative. Its CPU per page load,
against the same per-load floor, is the cost of the actions themselves: the part of validation's ratio
that making validation cheaper cannot remove.
"""
from __future__ import annotations

import asyncio
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
    from weblica.synth.playback import _RUN_CLOCK_JS, perform, virtual_ms
    from weblica.synth.validate import Validator
    from weblica.synth.validation_tabs import SlotPool

    actions = 0
    with SiteServer(paths) as server:
        async with async_playwright() as pw:
            browser = await launch_browser(pw)
            # validation's own episodes (Validator._episode: a slot of a shared pool cleared and seeded,
            # the start page loaded and settled as the env's reset settles), one validator a seed
            pool, limit = SlotPool(browser, server.url, REPLAYERS), asyncio.Semaphore(REPLAYERS)
            validators: dict[int, Validator] = {}
            start = cpu()

            async def one(n: int, played: dict[str, Any]) -> None:
                validator = validators.get(played["seed"])
                if validator is None:
                    validator = validators[played["seed"]] = Validator(browser, server, REPLAYERS,
                                                                       episode_seed=played["seed"], pool=pool)
                    validator.limit = limit
                task = Task.from_dict({"id": f"replay-{n}", "start_url": played["start_url"], "instruction": "replay",
                                       "source": {"kind": "synth", "site": played["site"]},
                                       "metadata": {"instance": played["instance"]}})

                async def bare(page: Any, tracker: Any, errors: list[str]) -> None:
                    nonlocal actions
                    typist = validator._typist(page)
                    for action in map(Action.from_dict, played["actions"]):
                        try:
                            await perform(page, action, typist)
                            await _quiet(tracker)
                            await tracker.session.evaluate(_RUN_CLOCK_JS, virtual_ms(action))
                            await _quiet(tracker)
                        except Exception:  # a navigation mid-question: the next action goes on
                            await _quiet(tracker, 0.2)
                        actions += 1
                try:
                    await validator._episode(task, task.id, bare)
                except Exception:  # an episode that breaks is one fewer measured, as in validation
                    pass
            try:
                await asyncio.gather(*(one(n, e) for n, e in enumerate(episodes)))
                spent = cpu() - start
            finally:
                await pool.close()
                await browser.close()
    documents: dict[str, Counter[str]] = {}
    for validator in validators.values():
        for site, urls in validator.documents.items():
            documents.setdefault(site, Counter()).update(urls)
    return spent, documents, actions


def replay_episodes(paths: list[Path], episodes: list[dict[str, Any]], cpu: Callable[[], float]) -> dict[str, Any]:
    """CPU (`cpu`: this process tree's, as the bench reads it) of playing validation's episodes again bare
    on the bundles, the documents it loaded per site (URL -> loads) and the actions played."""
    spent, documents, actions = asyncio.run(_replay(paths, episodes, cpu))
    return {"cpu_seconds": spent, "documents": {site: dict(urls) for site, urls in documents.items()},
            "page_loads": sum(sum(urls.values()) for urls in documents.values()), "actions": actions,
            "episodes": len(episodes)}
