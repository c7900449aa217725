"""Generation and validation in a real browser: every skill yields tasks whose oracle succeeds while
no-op runs, random runs and wrong answers are rejected; compiled oracles succeed in the real env."""
from __future__ import annotations

import asyncio
import json

import pytest

from weblica.env.task import load_tasks, save_tasks
from weblica.synth.generate import keep_valid, write_unvalidated
from weblica.synth.spec import compatible_categories, sample_spec, skills
from weblica.synth.validate import validate_bundles

TASKS_PER_SITE = 1  # a sample per site keeps the suite short; `weblica synth` validates every task


@pytest.fixture(scope="module")
def validated(tmp_path_factory):
    """One site per skill (categories rotated), the first tasks of each validated and kept."""
    out = tmp_path_factory.mktemp("synth")
    paths = []
    for i, skill in enumerate(sorted(skills())):
        fit = compatible_categories(skill)  # the genres the skill makes sense for
        path = write_unvalidated(sample_spec(100 + i, skill, fit[i % len(fit)]), out)
        save_tasks(load_tasks(path / "tasks.jsonl")[:TASKS_PER_SITE], path / "tasks.jsonl")
        paths.append(path)
    results = asyncio.run(keep_valid(paths, concurrency=6))
    return out, results


def test_every_skill_generates_and_validates(validated):
    _, results = validated
    assert len(results) == len(skills())
    for result in results:
        assert result.tasks_kept == TASKS_PER_SITE, (result.site_id, result.failures)
        for task in load_tasks(result.path / "tasks.jsonl"):
            assert task.oracle and all(0 <= a.args.get("x", 0) < 1280 and 0 <= a.args.get("y", 0) < 720
                                       for a in task.oracle)
            assert task.max_steps >= len(task.oracle)
            # the compiler says what each action does; it survives the round trip through tasks.jsonl
            assert task.oracle_thoughts and len(task.oracle_thoughts) == len(task.oracle)
            assert all(isinstance(t, str) and t.endswith(".") for t in task.oracle_thoughts), task.oracle_thoughts


def test_validate_replays_kept_oracles_and_rejects_a_broken_task(validated, tmp_path):
    out, results = validated
    report, _ = asyncio.run(validate_bundles([r.path for r in results[:4]], concurrency=6))
    summary = report.to_dict()
    assert summary["tasks"] == summary["valid_tasks"] == summary["oracle_success"] == 4 * TASKS_PER_SITE
    assert summary["failures"] == []
    # every oracle episode loads its start page, and a random run per start page loads it again
    assert all(report.page_loads[r.site_id] > TASKS_PER_SITE for r in results[:4]), report.page_loads
    # corrupt one gold answer / expected state: validation must notice
    broken = results[0].path
    lines = (broken / "tasks.jsonl").read_text().splitlines()
    task = json.loads(lines[0])
    for check in task["checks"]:
        check["expected"] = "something else entirely" if check["type"] != "state_match" else "nope"
        check["mode"] = "exact"
    lines[0] = json.dumps(task)
    (broken / "tasks.jsonl").write_text("\n".join(lines) + "\n")
    report, _ = asyncio.run(validate_bundles([broken], concurrency=4))
    assert report.valid_tasks == TASKS_PER_SITE - 1 and report.to_dict()["failures"]


def test_compiled_oracles_succeed_in_the_env(validated):
    """The env the agents use (WebEnv + OraclePolicy) reaches reward 1 on a sample of kept tasks."""
    from weblica.env.browser_env import WebEnv
    from weblica.policy.oracle import OraclePolicy
    from weblica.rollout import run_episode
    from weblica.synth.backend import ServedSynthBackend

    _, results = validated
    sample = [r for r in results if r.site_id.split("-")[0] in ("checkout", "date", "drag", "menus", "search", "pagination")]
    tasks = [load_tasks(r.path / "tasks.jsonl")[0] for r in sample]

    async def run():
        backend = ServedSynthBackend([r.path for r in sample])
        await backend.start()
        env = WebEnv(backends={"synth": backend})
        try:
            return [await run_episode(env, t, OraclePolicy(), seed=0) for t in tasks]
        finally:
            await env.close()
            await backend.stop()
    trajectories = asyncio.run(run())
    assert [t.reward for t in trajectories] == [1.0] * len(tasks), [(t.task_id, t.termination_reason) for t in trajectories]
    # the oracle's thoughts name what it acts on: on a menus task, the department and section asked for
    import re

    menus = next((task, traj) for task, traj in zip(tasks, trajectories) if task.skill == "menus")
    task, traj = menus
    thoughts = [step.response.split("</think>")[0].removeprefix("<think>") for step in traj.steps]
    named = [re.findall(r'"([^"]+)"', t) for t in thoughts if t.startswith(("Hover", "Click"))]
    assert len(named) == 2 and all(named), thoughts  # hover the department, click the section
    assert all(name in task.instruction for names in named for name in names), (task.instruction, named)


@pytest.fixture(scope="module")
def regressions(tmp_path_factory):
    """Sites that once lost most of their tasks: a custom slider whose value readout sits outside the
    slider box (the script threw, and the chained handlers after it, the steppers, never ran), and an
    infinite list whose sentinel stayed in view after a page was appended (the observer never fired
    again) or was checked before the page had rendered the scroll."""
    out = tmp_path_factory.mktemp("synth-regressions")
    slider = write_unvalidated(sample_spec(13, "numeric-widgets"), out)
    infinite = write_unvalidated(sample_spec(16, "pagination"), out)  # seed 16: an infinite list (news, 113 entities)
    assert json.loads((slider / "site.json").read_text())["spec"]["style"]["widgets"] == "custom"
    assert json.loads((infinite / "data.json").read_text())["paging"] == "infinite"
    generated = {p.name: len(load_tasks(p / "tasks.jsonl")) for p in (slider, infinite)}
    results = asyncio.run(keep_valid([slider, infinite], concurrency=4))
    return infinite, generated, results


def test_custom_slider_and_infinite_list_sites_keep_every_task(regressions):
    _, generated, results = regressions
    for result in results:
        assert result.tasks_kept == generated[result.site_id] >= 10, (result.site_id, result.failures)


def test_infinite_list_keeps_loading_while_its_sentinel_stays_in_view(regressions):
    """Scroll again right after each page of rows is appended, before the observer's next frame: the
    sentinel is back in view without having been seen leaving it, and the list must still grow."""
    from playwright.async_api import async_playwright

    from weblica.browser.launcher import context_kwargs, launch_browser
    from weblica.serve.server import SiteServer

    infinite, _, _ = regressions
    base = json.loads((infinite / "site.json").read_text())["spec"]["base_url"]
    total = len(json.loads((infinite / "data.json").read_text())["items"])

    async def shown_after_scrolling() -> int:
        async with async_playwright() as pw:
            browser = await launch_browser(pw)
            try:
                with SiteServer([infinite]) as server:
                    page = await (await browser.new_context(**context_kwargs(proxy=server.url))).new_page()
                    await page.goto(base + "/items", wait_until="load")
                    await page.evaluate("""() => new MutationObserver(() => window.scrollBy(0, 576))
                        .observe(document.querySelector('[data-paged]'), {childList: true})""")
                    for _ in range(12):
                        await page.evaluate("""() => { window.scrollBy(0, 576);
                            return new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r))); }""")
                    return int(await page.text_content("[data-shown-count]"))
            finally:
                await browser.close()

    assert asyncio.run(shown_after_scrolling()) == total
