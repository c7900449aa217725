"""Validation's settle runs a step's virtual time in as few page questions as the env's order allows
(weblica.synth.playback._IDLE_JS): a step in which no timer is due costs one question and one clock-log
entry, and where timers are due, they fire at the virtual times the env's two chunks give them, and a
document a timer loads starts at the time the env's log gives it (the chunk the timer fired in, logged
before it ran). Real Chromium, real site server, the validator's own pages (fake clock, clock log).

The env splits a step of 600 virtual ms into two chunks of 300 (weblica.env.tabs.TabSet.settle),
logging each before running it; the reset settles one step. So with the click at T (after the reset):
a timer of 200 ms fires at T+200 (first chunk), one of 450 at T+450 (second chunk), one of 900 in the
next step; a navigation by a timer of 100 ms loads a document that starts at T+300 (the first chunk's
entry only), and then the second chunk runs there; one by a timer of 400 ms, a document at T+600."""
from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

from weblica.browser.determinism import DEFAULT_EPOCH_MS
from weblica.env.actions import Action
from weblica.env.task import Task, TaskSource
from weblica.synth.checks import answer_text

SITE = "chunks"
HOST = f"{SITE}.synth.test"
STEP = 600
T = DEFAULT_EPOCH_MS + STEP  # the click's virtual time: the reset settled one step

# the whole viewport is the button; what it schedules is in the URL's query (`?go=<ms>` navigates)
_START = """<!doctype html><title>start</title>
<button id="b" style="position:fixed;inset:0;width:100%;height:100%">go</button>
<script>
window.seen = [];
const note = (what) => window.seen.push([what, Date.now()]);
document.getElementById('b').addEventListener('click', () => {
  const go = new URLSearchParams(location.search).get('go');
  if (go) { setTimeout(() => { location.href = '/next'; }, Number(go)); return; }
  setTimeout(() => note('a200'), 200);
  setTimeout(() => note('b450'), 450);
  setTimeout(() => note('c900'), 900);
});
</script>"""
# the document a timer loads: when it started, and a timer of its own that the rest of the step fires
_NEXT = """<!doctype html><title>next</title><p>next</p>
<script>window.started = Date.now(); window.seen = []; setTimeout(() => window.seen.push(['n250', Date.now()]), 250);</script>"""


def _bundle(root: Path) -> Path:
    bundle = root / SITE
    (bundle / "public").mkdir(parents=True)
    (bundle / "public" / "index.html").write_text(_START)
    (bundle / "public" / "next.html").write_text(_NEXT)
    (bundle / "site.json").write_text(json.dumps({"spec": {"site_id": SITE, "host": HOST}, "initial_state": {}}))
    return bundle


def _task(query: str = "") -> Task:
    return Task(id=f"{SITE}-t01", start_url=f"http://{HOST}/{query}", instruction="Go.",
                checks=[answer_text("go")], source=TaskSource(kind="synth", site=SITE))


def _episodes(bundle: Path, runs: list[tuple[str, Any]]) -> list[Any]:
    """Each (query, body) as a validation episode at the start URL with that query; body(page, tracker)."""
    from playwright.async_api import async_playwright

    from weblica.browser.launcher import launch_browser
    from weblica.serve.server import SiteServer
    from weblica.synth.validate import Validator

    async def main() -> list[Any]:
        with SiteServer([bundle]) as server:
            async with async_playwright() as pw:
                browser = await launch_browser(pw)
                validator = Validator(browser, server, concurrency=1)
                try:
                    out = []
                    for n, (query, body) in enumerate(runs):
                        out.append(await validator._episode(_task(query), f"chunks-{n}",
                                                            lambda page, tracker, errors, body=body: body(page, tracker)))
                    return out
                finally:
                    await validator.close()
                    await browser.close()
    return asyncio.run(main())


def _counting(tracker: Any) -> dict[str, int]:
    """Count the page questions `tracker` asks and the clock-log entries its session registers."""
    counts = {"questions": 0, "entries": 0}
    ask, log = tracker.ask, tracker.session.log_clock

    async def asked(js: str, arg: Any) -> Any:
        counts["questions"] += 1
        return await ask(js, arg)

    def logged(ms: int) -> None:
        counts["entries"] += 1
        log(ms)
    tracker.ask, tracker.session.log_clock = asked, logged
    return counts


def test_timers_fire_in_the_env_chunks_and_a_step_without_timers_costs_one_question(tmp_path):
    from weblica.synth.playback import play

    async def body(page: Any, tracker: Any) -> tuple[Any, ...]:
        counts = _counting(tracker)
        await play(page, tracker, [Action("press_keys", {"keys": ["Shift"]})])  # nothing scheduled: one question
        quiet = dict(counts)
        await play(page, tracker, [Action("click", {"x": 640.0, "y": 360.0, "button": "left", "clicks": 1})])
        first = await page.evaluate("() => [window.seen, Date.now()]")
        await play(page, tracker, [Action("press_keys", {"keys": ["Shift"]})])
        second = await page.evaluate("() => [window.seen, Date.now()]")
        return quiet, first, second, tracker.session.logged_ms
    quiet, first, second, logged = _episodes(_bundle(tmp_path), [("", body)])[0]
    assert quiet == {"questions": 1, "entries": 1}
    t = T + STEP  # the click came one (quiet) step later
    assert first == [[["a200", t + 200], ["b450", t + 450]], t + STEP]
    assert second == [[["a200", t + 200], ["b450", t + 450], ["c900", t + 900]], t + 2 * STEP]
    assert logged == 4 * STEP  # the reset and three steps, whatever the entries


def test_a_document_a_timer_loads_starts_where_the_env_log_puts_it(tmp_path):
    from weblica.synth.playback import play

    async def body(page: Any, tracker: Any) -> Any:
        await play(page, tracker, [Action("click", {"x": 640.0, "y": 360.0, "button": "left", "clicks": 1})])
        return await page.evaluate("() => [location.pathname, window.started, window.seen, Date.now()]")
    early, late = _episodes(_bundle(tmp_path), [("?go=100", body), ("?go=400", body)])
    # fired in the first chunk: the document starts past it alone, and the second chunk runs there
    assert early == ["/next", T + 300, [["n250", T + 550]], T + STEP]
    # fired in the second chunk: the document starts past both, and its timer waits for the next step
    assert late == ["/next", T + STEP, [], T + STEP]


def test_the_times_expected_here_are_the_envs(tmp_path):
    """The same episodes in the env (weblica.env.browser_env.WebEnv): the times above are its own. The
    validation before this one ran the early navigation's second chunk nowhere (its document stopped at
    T+300, its timer never fired)."""
    from weblica.env.browser_env import WebEnv
    from weblica.synth.backend import ServedSynthBackend

    bundle = _bundle(tmp_path)
    click = Action("click", {"x": 640.0, "y": 360.0, "button": "left", "clicks": 1})
    shift = Action("press_keys", {"keys": ["Shift"]})
    read = "() => [location.pathname, window.started, window.seen, Date.now()]"

    async def main() -> list[Any]:
        backend = ServedSynthBackend([bundle])
        await backend.start()
        try:
            async with WebEnv(backends={"synth": backend}) as env:
                out = []
                for query in ("?go=100", "?go=400"):
                    await env.reset(_task(query), seed=0)
                    await env.step([click])
                    out.append(await env._tabs.page.evaluate(read))
                await env.reset(_task(), seed=0)
                await env.step([shift])
                await env.step([click])
                out.append(await env._tabs.page.evaluate("() => [window.seen, Date.now()]"))
                await env.step([shift])
                out.append(await env._tabs.page.evaluate("() => [window.seen, Date.now()]"))
                return out
        finally:
            await backend.stop()
    early, late, first, second = asyncio.run(main())
    assert early == ["/next", T + 300, [["n250", T + 550]], T + STEP]
    assert late == ["/next", T + STEP, [], T + STEP]
    t = T + STEP
    assert first == [[["a200", t + 200], ["b450", t + 450]], t + STEP]
    assert second == [[["a200", t + 200], ["b450", t + 450], ["c900", t + 900]], t + 2 * STEP]
