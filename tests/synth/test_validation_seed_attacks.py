"""Attacks on session 10's validation: the extra episode seeds (weblica/synth/validate_seeds.py) and the
virtual clock. A seed set that never reaches some member of an instance family leaves that member's
gold unvalidated; a page script that reads real time (not the fake clock the env and validation share)
would behave differently at another machine speed."""
from __future__ import annotations

import asyncio
import re
from pathlib import Path

import pytest

from weblica.synth.validate_seeds import episode_seeds

REPO = Path(__file__).resolve().parents[2]
SITE_IDS = [f"search-fashion-{n:08x}" for n in range(40)]


@pytest.mark.parametrize("members", [1, 2, 3, 4])
def test_the_drawn_seeds_reach_every_member_of_the_largest_family(members):
    for site in SITE_IDS:
        seeds = episode_seeds(site, members - 1 if members > 1 else 2, members)
        assert seeds[0] == 0 and len(set(seeds)) == len(seeds)
        assert {s % members for s in seeds} == set(range(members)), (site, seeds)
        assert seeds == episode_seeds(site, len(seeds) - 1, members)  # the same on any call


def test_the_drawn_seeds_reach_every_member_of_a_smaller_family_too():
    missed = [site for site in SITE_IDS if {s % 2 for s in episode_seeds(site, 2, 3)} != {0, 1}]
    assert not missed, f"{len(missed)} of {len(SITE_IDS)} sites, e.g. {missed[0]}: {episode_seeds(missed[0], 2, 3)}"


# ---- real time in the pages --------------------------------------------------------------------------------

# what Playwright's fake clock does not cover: an event's timeStamp, the document timeline, navigation
# timing entries, the real time origin, and a worker's own timers
REAL_TIME = re.compile(r"\.timeStamp\b|document\.timeline|performance\.(?:timing|timeOrigin|getEntries)|new Worker\b|"
                       r"new SharedWorker\b")


def _page_scripts() -> list[Path]:
    shipped = [p for p in (REPO / "sites").glob("*/public/**/*") if p.suffix in (".js", ".html")]
    own = [*(REPO / "weblica" / "synth").rglob("*.js"), *(REPO / "weblica" / "synth").rglob("*.j2")]
    return shipped + own


def test_no_page_script_reads_a_clock_the_env_does_not_fake():
    scripts = _page_scripts()
    assert len(scripts) > 100
    found = [(str(p.relative_to(REPO)), m.group(0)) for p in scripts
             for m in REAL_TIME.finditer(p.read_text(encoding="utf-8", errors="replace"))]
    assert not found, found[:10]


def test_the_page_clock_moves_only_when_the_env_moves_it():
    """Under the determinism layer Date, performance.now, timers and frames stand still over real time,
    and move by exactly what the env runs the clock for."""
    from playwright.async_api import async_playwright

    from weblica.browser.determinism import DEFAULT_EPOCH_MS, make_deterministic
    from weblica.browser.launcher import launch_browser

    read = """() => ({date: Date.now(), made: new Date().getTime(), perf: Math.round(performance.now()),
                      fired: window.fired})"""

    async def go() -> list[dict]:
        async with async_playwright() as pw:
            browser = await launch_browser(pw)
            try:
                context = await browser.new_context()
                await make_deterministic(context, 0)
                page = await context.new_page()
                await page.set_content("<script>window.fired = 0; setInterval(() => window.fired++, 100);"
                                       "requestAnimationFrame(() => window.fired += 1000);</script>")
                first = await page.evaluate(read)
                await asyncio.sleep(0.6)  # real time only
                second = await page.evaluate(read)
                await page.clock.run_for(1000)
                third = await page.evaluate(read)
                await context.close()
                return [first, second, third]
            finally:
                await browser.close()
    first, second, third = asyncio.run(go())
    assert first == second and first["date"] == first["made"] == DEFAULT_EPOCH_MS
    assert third["date"] - first["date"] == 1000 and third["perf"] - first["perf"] == 1000
    assert first["fired"] == 0 and third["fired"] == 1010


# ---- virtual time across a navigation: the env and validation --------------------------------------------

_NOW_JS = "() => Date.now()"


def test_a_new_document_starts_at_the_same_virtual_time_as_in_the_env(tmp_path):
    import sys

    from playwright.async_api import async_playwright

    from weblica.browser.launcher import launch_browser
    from weblica.env.actions import Action
    from weblica.env.browser_env import WebEnv
    from weblica.env.task import load_tasks
    from weblica.serve.server import SiteServer
    from weblica.synth.backend import ServedSynthBackend
    from weblica.synth.playback import play
    from weblica.synth.validate import Validator

    sys.path.insert(0, str(Path(__file__).parents[1]))
    from test_synth_distractors import menu, site

    bundle = site(tmp_path, 22, menu(), skill="forms")
    task = load_tasks(bundle / "tasks.jsonl")[0]
    keys = Action("press_keys", {"keys": ["Shift"]})
    actions = [keys, keys, keys, Action("goto_url", {"url": task.start_url}), keys]

    async def in_env() -> list[int]:
        backend = ServedSynthBackend([bundle])
        await backend.start()
        try:
            async with WebEnv(backends={"synth": backend}) as env:
                await env.reset(task, seed=0)
                seen = [await env._tabs.page.evaluate(_NOW_JS)]
                for action in actions:
                    await env.step([action])
                    seen.append(await env._tabs.page.evaluate(_NOW_JS))
                return seen
        finally:
            await backend.stop()

    async def in_validation() -> list[int]:
        seen: list[int] = []

        async def body(page, tracker, errors) -> None:
            seen.append(await page.evaluate(_NOW_JS))
            for action in actions:
                await play(page, tracker, [action])
                seen.append(await page.evaluate(_NOW_JS))
        with SiteServer([bundle]) as server:
            async with async_playwright() as pw:
                browser = await launch_browser(pw)
                validator = Validator(browser, server, concurrency=1)
                try:
                    await validator._episode(task, "clock-nav", body)
                finally:
                    await validator.close()
                    await browser.close()
        return seen

    env_seen, validation_seen = asyncio.run(in_env()), asyncio.run(in_validation())
    assert validation_seen[:4] == env_seen[:4]  # the same clock on the first document
    assert validation_seen == env_seen, (env_seen, validation_seen)


def test_the_extra_seeds_follow_the_site_not_its_folder_name(tmp_path, monkeypatch):
    import shutil

    from weblica.env.task import load_tasks
    from weblica.synth import validate_seeds as vs
    from weblica.synth.validate import ValidationReport
    from weblica.synth.validation_report import TaskOutcome

    shipped = REPO / "sites" / "filter-sort-electronics-ca4dd7fc"
    played: dict[str, list[int]] = {}

    async def oracle_run(self, task, compile_plan=False):  # the seed choice is under test, not the oracle
        played.setdefault(self.folder, []).append(self.episode_seed)
        return TaskOutcome(task.id, "s", oracle_ok=True)
    monkeypatch.setattr(vs.SeedValidator, "oracle_run", oracle_run)
    for name in (shipped.name, "copy-of-the-site"):
        bundle = shutil.copytree(shipped, tmp_path / name / shipped.name if name == shipped.name else tmp_path / name)
        task = next(t for t in load_tasks(bundle / "tasks.jsonl") if t.metadata.get("plan"))
        outcome = TaskOutcome(task.id, "s", oracle_ok=True)
        monkeypatch.setattr(vs.SeedValidator, "folder", name, raising=False)
        asyncio.run(vs.validate_extra_seeds([bundle], ValidationReport(), {bundle: [(task, outcome)]}, None))
    assert played[shipped.name] == vs.episode_seeds(shipped.name)[1:]
    assert played["copy-of-the-site"] == played[shipped.name]


def test_each_validation_episode_starts_with_nothing_stored_in_the_browser(tmp_path):
    import json

    from playwright.async_api import async_playwright

    from weblica.browser.launcher import launch_browser
    from weblica.env.task import Task, TaskSource
    from weblica.serve.server import SiteServer
    from weblica.synth.checks import answer_text
    from weblica.synth.validate import Validator

    bundle = tmp_path / "keeps"
    (bundle / "public").mkdir(parents=True)
    (bundle / "public" / "index.html").write_text(
        "<!doctype html><title>Keeps</title><p id='banner'>We use cookies</p><script>"
        "window.seenBefore = [localStorage.getItem('consent'), document.cookie];"
        "localStorage.setItem('consent', 'yes'); document.cookie = 'consent=yes; path=/';</script>")
    (bundle / "site.json").write_text(json.dumps({"spec": {"site_id": "keeps", "host": "keeps.synth.test"},
                                                  "initial_state": {}}))
    task = Task(id="keeps-t01", start_url="http://keeps.synth.test/", instruction="What does the banner say?",
                checks=[answer_text("We use cookies")], source=TaskSource(kind="synth", site="keeps"))

    async def go() -> list:
        seen = []

        async def body(page, tracker, errors) -> None:
            seen.append(await page.evaluate("() => window.seenBefore"))
        with SiteServer([bundle]) as server:
            async with async_playwright() as pw:
                browser = await launch_browser(pw)
                validator = Validator(browser, server, concurrency=1)
                try:
                    for n in range(3):
                        await validator._episode(task, f"keeps-{n}", body)
                finally:
                    await validator.close()
                    await browser.close()
        return seen
    assert asyncio.run(go()) == [[None, ""]] * 3
