"""Validation's slots (weblica.synth.validation_tabs.SlotPool): each concurrent episode has a browser context of its
own, and a slot reused for a later episode is cleared as a fresh env context is empty: cookies,
localStorage, sessionStorage, IndexedDB and the page's clock log (CacheStorage and service
workers need a secure origin, which a synth site's http:// is not). Real Chromium, real
site server; the pages store something of every kind and report what an earlier episode left."""
from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

from weblica.browser.determinism import DEFAULT_EPOCH_MS
from weblica.env.task import Task, TaskSource
from weblica.synth.checks import answer_text

# what the document finds stored when it loads, then stores one of each
_STORES = """<script>
const before = {local: localStorage.getItem('k'), session: sessionStorage.getItem('k'), cookie: document.cookie,
                now: Date.now()};
window.found = indexedDB.databases().then((dbs) => ({...before, idb: dbs.map((d) => d.name)}));
localStorage.setItem('k', location.host); sessionStorage.setItem('k', location.host);
document.cookie = 'k=' + location.host + '; path=/';
document.cookie = 'wide=1; path=/; domain=synth.test';
indexedDB.open('kept-' + location.host, 1).onupgradeneeded = (e) => e.target.result.createObjectStore('s');
</script>"""


def _bundle(root: Path, name: str) -> Path:
    bundle = root / name
    (bundle / "public").mkdir(parents=True)
    (bundle / "public" / "index.html").write_text(f"<!doctype html><title>{name}</title><p>{name}</p>{_STORES}")
    (bundle / "site.json").write_text(json.dumps({"spec": {"site_id": name, "host": f"{name}.synth.test"},
                                                  "initial_state": {}}))
    return bundle


def _task(name: str) -> Task:
    return Task(id=f"{name}-t01", start_url=f"http://{name}.synth.test/", instruction="What does it say?",
                checks=[answer_text(name)], source=TaskSource(kind="synth", site=name))


def _run(bundles: list[Path], go: Any, concurrency: int) -> Any:
    from playwright.async_api import async_playwright

    from weblica.browser.launcher import launch_browser
    from weblica.serve.server import SiteServer
    from weblica.synth.validate import Validator

    async def main() -> Any:
        with SiteServer(bundles) as server:
            async with async_playwright() as pw:
                browser = await launch_browser(pw)
                validator = Validator(browser, server, concurrency=concurrency)
                try:
                    return await go(validator), validator.pages_opened
                finally:
                    await validator.close()
                    await browser.close()
    return asyncio.run(main())


async def _found(page: Any) -> dict[str, Any]:
    await page.wait_for_function("() => window.found")
    # the stores are written asynchronously: give them a moment (real time), so a leak would show
    await page.evaluate("() => new Promise((r) => (globalThis.__pwClock ? globalThis.__pwClock.builtins : window).setTimeout(r, 100))")
    return await page.evaluate("() => window.found")


NOTHING = {"local": None, "session": None, "cookie": "", "idb": []}


def test_a_reused_slot_starts_with_nothing_stored_and_its_clock_at_the_start(tmp_path):
    """Three episodes in one slot, each loading the page twice (the second document mid-episode): every
    episode's first document finds nothing stored and the same virtual time, and the page is reused."""
    bundle = _bundle(tmp_path, "keeps")
    task = _task("keeps")

    async def go(validator: Any) -> list[tuple[dict[str, Any], dict[str, Any]]]:
        seen = []

        async def body(page: Any, tracker: Any, errors: list[str]) -> None:
            # one CDP session serves settle's questions, quick typing and the clock log, which holds this
            # episode's advances only (the reset's one step)
            assert validator._typist(page).session is tracker.session and tracker.session.logged_ms == 600
            first = await _found(page)
            await page.goto(task.start_url)
            seen.append((first, await _found(page)))
        for n in range(3):
            await validator._episode(task, f"keeps-{n}", body)
        return seen
    seen, pages = _run([bundle], go, concurrency=1)
    assert pages == 1
    for first, again in seen:
        assert {k: first[k] for k in NOTHING} == NOTHING, first
        # the mid-episode document sees what the first stored (one episode), its clock past the reset's advance
        assert again["local"] == again["session"] == "keeps.synth.test" and "k=keeps" in again["cookie"]
        assert again["idb"] == ["kept-keeps.synth.test"]
    assert [first["now"] for first, _ in seen] == [DEFAULT_EPOCH_MS] * 3
    assert [again["now"] for _, again in seen] == [DEFAULT_EPOCH_MS + 600] * 3  # the reset's settle: one step


def test_episodes_running_side_by_side_do_not_see_each_others_storage(tmp_path):
    """Two episodes at once (two slots): neither sees what the other stored while both run."""
    bundle = _bundle(tmp_path, "keeps")
    task = _task("keeps")

    async def go(validator: Any) -> dict[int, list[str]]:
        both = asyncio.Event()
        arrived: list[int] = []
        seen: dict[int, list[str]] = {}

        def body_for(n: int) -> Any:
            async def body(page: Any, tracker: Any, errors: list[str]) -> None:
                await page.evaluate("n => { localStorage.setItem('ep' + n, '1'); document.cookie = `ep${n}=1; path=/`; }", n)
                arrived.append(n)
                if len(arrived) == 2:
                    both.set()
                await asyncio.wait_for(both.wait(), 30)
                seen[n] = await page.evaluate("() => [...Object.keys(localStorage).filter((k) => k.startsWith('ep')),"
                                              " ...document.cookie.split('; ').filter((c) => c.startsWith('ep'))].sort()")
            return body
        await asyncio.gather(*(validator._episode(task, f"side-{n}", body_for(n)) for n in range(2)))
        return seen
    seen, pages = _run([bundle], go, concurrency=2)
    assert pages == 2
    assert seen == {0: ["ep0", "ep0=1"], 1: ["ep1", "ep1=1"]}


def test_a_slot_whose_episode_left_the_site_is_cleared_for_both_origins(tmp_path):
    """An episode that went to another site: its page is not reused (its sessionStorage there cannot be
    cleared in place), and the slot's next episode finds nothing of either site."""
    bundles = [_bundle(tmp_path, "home"), _bundle(tmp_path, "away")]
    home, away = _task("home"), _task("away")

    async def go(validator: Any) -> list[dict[str, Any]]:
        seen = []

        async def leave(page: Any, tracker: Any, errors: list[str]) -> None:
            await _found(page)
            await page.goto(away.start_url)
            await _found(page)

        async def look(page: Any, tracker: Any, errors: list[str]) -> None:
            seen.append(await _found(page))
        await validator._episode(home, "leave", leave)
        await validator._episode(away, "look-away", look)
        await validator._episode(home, "look-home", look)
        return seen
    seen, pages = _run(bundles, go, concurrency=1)
    assert pages == 2  # the page that left was closed; the next one is kept for the third episode
    for found in seen:
        assert {k: found[k] for k in NOTHING} == NOTHING, found


def test_validators_sharing_a_limit_use_its_places_with_one_context_each(tmp_path):
    """A round of seed validators (weblica/synth/validate_seeds.py) shares one limit, each keeping the
    slots it was given: one here. An episode waiting for its validator's slot holds no place of the
    limit, so two validators' episodes run side by side (the limit's two places) while the rest wait,
    every episode completes, and each validator opens one page."""
    from playwright.async_api import async_playwright

    from weblica.browser.launcher import launch_browser
    from weblica.serve.server import SiteServer
    from weblica.synth.validate import Validator

    bundle = _bundle(tmp_path, "keeps")
    task = _task("keeps")

    async def main() -> tuple[int, int, list[int]]:
        running, most, done = 0, 0, 0

        async def body(page: Any, tracker: Any, errors: list[str]) -> None:
            nonlocal running, most, done
            running += 1
            most = max(most, running)
            # until two episodes have met, wait (at most 5 s) for a second one beside this one; then hold
            # 0.3 s more (room for a third, were the limit broken): a fixed pause alone can end before a
            # loaded machine has opened the other validator's page, so two that may meet would not
            for _ in range(100):
                if most >= 2 or done + running == 9:
                    break
                await asyncio.sleep(0.05)
            await asyncio.sleep(0.3)
            running -= 1
            done += 1
        with SiteServer([bundle]) as server:
            async with async_playwright() as pw:
                browser = await launch_browser(pw)
                limit = asyncio.Semaphore(2)
                validators = [Validator(browser, server, concurrency=2, episode_seed=seed, slots=1) for seed in (0, 7, 9)]
                for validator in validators:
                    validator.limit = limit
                try:
                    # each validator's three episodes queue first: under the old order (the limit's place
                    # taken before the slot) they took both places and waited on their own one slot
                    await asyncio.gather(*(v._episode(task, f"shared-{i}-{n}", body)
                                           for i, v in enumerate(validators) for n in range(3)))
                    return most, done, [v.pages_opened for v in validators]
                finally:
                    for validator in validators:
                        await validator.close()
                    await browser.close()
    most, done, pages = asyncio.run(main())
    assert (most, done, pages) == (2, 9, [1, 1, 1])


def test_the_seed_rounds_share_one_pool_of_concurrency_slots(tmp_path, monkeypatch):
    """validate_extra_seeds: every round's validators, whatever their seeds, take their episodes' slots
    from one pool of `concurrency` slots (pages are seeded per episode), which it closes at the end; a
    dozen sites once kept a context per seed's validator (a renderer and a cold cache each)."""
    from weblica.synth import validate_seeds
    from weblica.synth.validation_report import TaskOutcome, ValidationReport

    pools: list[Any] = []
    made = validate_seeds.SeedValidator.__init__

    def record(self: Any, *args: Any, pool: Any = None, **kwargs: Any) -> None:
        pools.append(pool)
        made(self, *args, pool=pool, **kwargs)
    monkeypatch.setattr(validate_seeds.SeedValidator, "__init__", record)
    for sites, concurrency, extra in ((3, 4, 2), (5, 2, 1), (1, 4, 3)):
        pools.clear()
        bundles = [_bundle(tmp_path / f"{sites}-{concurrency}", f"s{n}") for n in range(sites)]
        per_bundle = {b: [(_task(b.name), TaskOutcome(f"{b.name}-t01", b.name))] for b in bundles}  # no plan: no episode
        asyncio.run(validate_seeds.validate_extra_seeds(bundles, ValidationReport(), per_bundle, browser=None,
                                                        concurrency=concurrency, extra=extra))
        assert len(pools) == sites * extra and all(p is pools[0] for p in pools), (sites, extra)
        assert len(pools[0]._slots) == concurrency and pools[0].tabs == {}


# what a document draws as it loads
_DRAWS = """<script>window.drawn = {random: [Math.random(), Math.random(), Math.random()],
  bytes: Array.from(crypto.getRandomValues(new Uint8Array(6))), uuid: crypto.randomUUID(), now: Date.now(),
  cores: navigator.hardwareConcurrency};</script>"""


def test_a_page_seeded_per_episode_draws_as_an_env_context_of_that_seed(tmp_path):
    """One slot's page plays episodes at seeds 7, 9, 7 and 0 (its seeded script swapped between them):
    each episode's document draws the same Math.random, crypto values and clock as a fresh context with
    the env's determinism layer at that seed (weblica.browser.determinism.make_deterministic); and the
    two seeds draw differently, so the swap is seen."""
    from playwright.async_api import async_playwright

    from weblica.browser.determinism import make_deterministic
    from weblica.browser.launcher import context_kwargs, launch_browser
    from weblica.serve.server import SiteServer
    from weblica.synth.validate import Validator
    from weblica.synth.validation_tabs import SlotPool

    bundle = _bundle(tmp_path, "draws")
    (bundle / "public" / "index.html").write_text(f"<!doctype html><title>draws</title><p>draws</p>{_DRAWS}")
    task = _task("draws")
    seeds = [7, 9, 7, 0]

    async def main() -> tuple[list[Any], list[Any], int]:
        with SiteServer([bundle]) as server:
            async with async_playwright() as pw:
                browser = await launch_browser(pw)
                pool = SlotPool(browser, server.url, 1)
                pooled = []
                try:
                    for n, seed in enumerate(seeds):
                        validator = Validator(browser, server, concurrency=1, episode_seed=seed, pool=pool)

                        async def body(page: Any, tracker: Any, errors: list[str]) -> None:
                            pooled.append(await page.evaluate("() => window.drawn"))
                        await validator._episode(task, f"draws-{n}", body)
                        await validator.close()  # leaves the shared pool open
                    fresh = []
                    for seed in seeds:
                        context = await browser.new_context(**context_kwargs(proxy=server.url))
                        await make_deterministic(context, seed)
                        page = await context.new_page()
                        await page.goto(task.start_url)
                        fresh.append(await page.evaluate("() => window.drawn"))
                        await context.close()
                    return pooled, fresh, pool.pages_opened
                finally:
                    await pool.close()
                    await browser.close()
    pooled, fresh, pages = asyncio.run(main())
    assert pages == 1  # one page played all four episodes
    assert pooled == fresh
    assert pooled[0] == pooled[2] and pooled[0]["random"] != pooled[1]["random"] != pooled[3]["random"]
    assert {p["now"] for p in pooled} == {DEFAULT_EPOCH_MS}


def test_an_episode_that_fails_before_its_page_loads_raises_its_own_error(tmp_path):
    """The episode's headers cannot be set (a header value that is no string): the episode raises that
    error, not one of its own bookkeeping, and its slot serves the next episode, whose record (kept for
    measurement) counts its page load."""
    bundle = _bundle(tmp_path, "fails")
    task = _task("fails")

    async def go(validator: Any) -> tuple[str, list[dict[str, Any]]]:
        begin = validator.backend.begin

        async def bad_headers(*args: Any) -> Any:
            net = await begin(*args)
            net.extra_headers = {"x-broken": 1}
            return net
        validator.episodes_played = []
        validator.backend.begin = bad_headers
        try:
            await validator._episode(task, "fails-0", lambda *_: asyncio.sleep(0))
            raised = "nothing"
        except Exception as exc:
            raised = f"{type(exc).__name__}: {exc}"
        validator.backend.begin = begin
        validator.episodes_played = []
        await validator._episode(task, "fails-1", lambda *_: asyncio.sleep(0), kind="random")
        return raised, validator.episodes_played
    (raised, played), _ = _run([bundle], go, concurrency=1)
    assert "UnboundLocalError" not in raised and "x-broken" in raised, raised
    assert [(e["kind"], e["loads"], e["actions"]) for e in played] == [("random", 1, [])]
