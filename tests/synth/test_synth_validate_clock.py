"""Validation runs on the env's virtual clock (weblica.synth.validate, weblica.synth.playback): a
pop-up on a delay shows after the same action as in the env however fast or loaded the machine is,
so a site with delayed pop-ups validates the same way every time. Real Chromium, real site server."""
from __future__ import annotations

import asyncio
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from weblica.env.actions import Action
from weblica.env.task import load_tasks
from weblica.synth.validate import validate_bundles

sys.path.insert(0, str(Path(__file__).parents[1]))
from test_synth_distractors import menu, one, site  # noqa: E402

# the pop-ups showing now, by kind
_SHOWN_JS = "() => Array.from(document.querySelectorAll('[data-distractor]')).filter((d) => !d.hidden).map((d) => d.dataset.distractor).sort()"
STEPS = 10  # 600 virtual ms each after the reset's 600: past the longest delay (6000 ms)
REAL_PAUSE_S = 6.5  # longer than any delay: on a real clock every delayed pop-up would be showing


@pytest.fixture(scope="module")
def delayed(tmp_path_factory) -> Path:
    """A forms site whose chat and slide-in pop-ups (non-blocking) show on a delay in every episode."""
    out = tmp_path_factory.mktemp("delayed")
    return site(out, 22, menu(chat=one("chat", timings=["delay"], controls=["x"]),
                              slidein=one("slidein", positions=["side-left", "side-right"], timings=["delay"],
                                          controls=["x"])), skill="forms")


def _busy(seconds: float) -> subprocess.Popen:
    """A bounded busy loop in its own process: the machine under load while validation runs."""
    return subprocess.Popen([sys.executable, "-c", f"import time\nend = time.time() + {seconds}\nwhile time.time() < end: pass"])


def test_popups_show_after_the_same_action_as_in_the_env_whatever_the_real_time(delayed):
    """The same do-nothing actions in the env and in a validation episode: the pop-ups shown after the
    reset and after each step are the same, though validation pauses ~6.5 real seconds after the
    start page settled (a real clock would have shown every delayed pop-up by then)."""
    from playwright.async_api import async_playwright

    from weblica.browser.launcher import launch_browser
    from weblica.env.browser_env import WebEnv
    from weblica.serve.server import SiteServer
    from weblica.synth.backend import ServedSynthBackend
    from weblica.synth.playback import play
    from weblica.synth.validate import Validator

    task = load_tasks(delayed / "tasks.jsonl")[0]
    keys = Action("press_keys", {"keys": ["Shift"]})

    async def in_env() -> list[list[str]]:
        backend = ServedSynthBackend([delayed])
        await backend.start()
        try:
            async with WebEnv(backends={"synth": backend}) as env:
                await env.reset(task, seed=0)
                seen = [await env._tabs.page.evaluate(_SHOWN_JS)]
                for _ in range(STEPS):
                    await env.step([keys])
                    seen.append(await env._tabs.page.evaluate(_SHOWN_JS))
                return seen
        finally:
            await backend.stop()

    async def in_validation() -> list[list[str]]:
        seen: list[list[str]] = []

        async def body(page: Any, tracker: Any, errors: list[str]) -> None:
            await asyncio.sleep(REAL_PAUSE_S)
            seen.append(await page.evaluate(_SHOWN_JS))
            for _ in range(STEPS):
                await play(page, tracker, [keys])
                seen.append(await page.evaluate(_SHOWN_JS))
        with SiteServer([delayed]) as server:
            async with async_playwright() as pw:
                browser = await launch_browser(pw)
                validator = Validator(browser, server, concurrency=1)
                try:
                    await validator._episode(task, "clock-test", body)
                finally:
                    await validator.close()
                    await browser.close()
        return seen

    env_seen = asyncio.run(in_env())
    validation_seen = asyncio.run(in_validation())
    assert validation_seen == env_seen
    assert env_seen[0] == [] and env_seen[-1] == ["chat", "slidein"], env_seen  # both came due mid-episode


def _decisions(bundle: Path) -> dict[str, Any]:
    report, per_bundle = asyncio.run(validate_bundles([bundle], compile_plans=True, limit=1))
    assert not report.site_failures
    return {task.id: (outcome.valid, outcome.failures, [(a.name, a.args) for a in outcome.oracle or []],
                      dict(outcome.negatives_tried), [(a.name, a.args) for a in outcome.maximal or []])
            for task, outcome in per_bundle[bundle]}


def test_a_site_with_delayed_popups_validates_the_same_five_times_also_under_load(delayed):
    """Five validations of the same tasks, the last three with two busy-loop processes running: the
    same tasks kept, the same compiled oracles (every pixel, every dismissal), the same negatives."""
    first = _decisions(delayed)
    assert all(valid for valid, *_ in first.values()), first
    runs = [first, _decisions(delayed)]
    for _ in range(3):
        busy = [_busy(90) for _ in range(2)]
        try:
            runs.append(_decisions(delayed))
        finally:
            for proc in busy:
                proc.kill()
                proc.wait()
    assert all(run == first for run in runs), [run == first for run in runs]
