"""The modern web's mechanics (issue 38, point 5): a new tab, an iframe, web components with shadow roots,
a sign-in wall, a blocking consent wall and dark patterns. Each skill's site is generated, served by the
real site server and validated in real Chromium (oracles played, negatives rejected); kept oracles reach
reward 1 in the env the agents use, and policies that stop early, act in the wrong tab or skip the step
inside the frame or shadow root score 0."""
from __future__ import annotations

import asyncio
import dataclasses

import pytest

from weblica.env.actions import Action
from weblica.env.task import load_tasks
from weblica.synth.generate import build_site, keep_valid, write_unvalidated
from weblica.synth.spec import all_skills, drawn_skills, sample_spec, skills

# five sites validated in full and a dozen env episodes: past the suite's default 300 s on a busy machine
pytestmark = pytest.mark.timeout(1200)

MECHANICS = ("new-tab", "iframe", "web-components", "login-wall", "dark-patterns")


@pytest.fixture(scope="module")
def validated(tmp_path_factory):
    """One site per mechanic, every task validated in Chromium through the real site server."""
    out = tmp_path_factory.mktemp("mechanics")
    paths = [write_unvalidated(sample_spec(7, skill, "electronics"), out) for skill in MECHANICS]
    results = asyncio.run(keep_valid(paths, concurrency=2))
    return {skill: (result, load_tasks(result.path / "tasks.jsonl")) for skill, result in zip(MECHANICS, results)}


def test_every_mechanic_keeps_its_tasks_with_negatives_rejected(validated):
    for skill, (result, tasks) in validated.items():
        assert result.ok and result.tasks_kept >= 10, (skill, result.tasks_kept, result.failures[:3])
        assert result.tasks_kept >= result.tasks_generated - 1, (skill, result.failures[:3])
        # validation ran its negatives and every one was rejected
        assert result.negatives_tried.get("noop") == result.negatives_tried.get("random") == result.tasks_generated
        assert result.negatives_tried == result.negatives_rejected, (skill, result.failures[:3])
        assert all(t.oracle and t.skill == skill for t in tasks)


def test_validate_replays_kept_oracles_across_tabs_frames_and_shadow_roots(validated):
    """`weblica validate` replays the kept oracles (pixels, tab switches included) and keeps them all."""
    from weblica.synth.validate import validate_bundles

    results = [validated[s][0] for s in ("new-tab", "iframe", "web-components")]
    report, _ = asyncio.run(validate_bundles([r.path for r in results], concurrency=2))
    summary = report.to_dict()
    assert summary["failures"] == [] and summary["valid_tasks"] == sum(r.tasks_kept for r in results), summary["failures"][:3]


def test_new_tab_tasks_read_in_the_new_tab_and_switch_back(validated):
    _, tasks = validated["new-tab"]
    copied = [t for t in tasks if t.metadata.get("intent") == "confirm-payment-reference"]
    read = [t for t in tasks if t.metadata.get("intent") in ("invoice-reference", "tracking-number")]
    assert copied and read
    for task in copied:  # the reference is typed back in the first tab
        names = [a.name for a in task.oracle]
        assert names.index("switch_tab") < names.index("write") and task.oracle[names.index("switch_tab")].args == {"index": 0}
    for task in read:  # the answer comes from the page the new tab shows
        assert task.oracle[-1].name == "done" and "switch_tab" not in [a.name for a in task.oracle]


def test_frame_and_shadow_plans_click_at_page_coordinates(validated):
    """The iframe's controls are clicked below the frame's top (the frame's offset added to the inner box)."""
    _, frames = validated["iframe"]
    site = build_site(sample_spec(7, "iframe", "electronics"))
    assert "/pay-widget" in site.pages
    for task in frames:
        plan = task.metadata["plan"]
        assert any(" >>> " in step.get("sel", "") for step in plan)
    _, comps = validated["web-components"]
    assert all(any("qty-" in s.get("sel", "") and " >>> " in s.get("sel", "") for s in t.metadata["plan"]) for t in comps)


def _env_rewards(paths, tasks):
    from weblica.env.browser_env import WebEnv
    from weblica.policy.oracle import OraclePolicy
    from weblica.rollout import run_episode
    from weblica.synth.backend import ServedSynthBackend

    async def run():
        backend = ServedSynthBackend(paths)
        await backend.start()
        env = WebEnv(backends={"synth": backend})
        try:
            return [await run_episode(env, t, OraclePolicy(), seed=0) for t in tasks]
        finally:
            await env.close()
            await backend.stop()
    return [t.reward for t in asyncio.run(run())]


def _first(tasks, intent):
    return next(t for t in tasks if t.metadata.get("intent") == intent)


def _without(task, words):
    """The task's oracle less the actions whose thought names `words`."""
    kept = [a for a, t in zip(task.oracle, task.oracle_thoughts) if words not in t]
    assert len(kept) < len(task.oracle), (words, task.oracle_thoughts)
    return kept


def _with_oracle(task, actions):
    return dataclasses.replace(task, oracle=actions, oracle_thoughts=None)


def test_oracles_succeed_in_the_env_and_shortcuts_fail(validated):
    """Through the env (its tabs, its clicks at viewport pixels into frames and shadow roots), the kept
    oracles reach reward 1; stopping at once, writing in the wrong tab, leaving out the click inside the
    frame or the shadow root, or signing in with a wrong password reach 0."""
    tab_result, tab_tasks = validated["new-tab"]
    frame_result, frame_tasks = validated["iframe"]
    comp_result, comp_tasks = validated["web-components"]
    wall_result, wall_tasks = validated["login-wall"]
    dark_result, dark_tasks = validated["dark-patterns"]
    copy = _first(tab_tasks, "confirm-payment-reference")
    read = _first(tab_tasks, "invoice-reference")
    pay = _first(frame_tasks, "pay-bill-in-full")
    sheet = _first(comp_tasks, "component-quantity")
    login = _first(wall_tasks, "signed-in-address")
    join = _first(dark_tasks, "join-without-marketing")
    good = [copy, read, pay, sheet, login, join]
    done = Action("done", {"answer": ""})
    no_switch = [a for a in copy.oracle if a.name != "switch_tab"]  # the reference typed into the invoice's tab
    no_pay = _without(pay, '"Pay now"')  # the frame's own button never clicked
    steps = [i for i, t in enumerate(sheet.oracle_thoughts) if '"More"' in t]
    one_short = [a for i, a in enumerate(sheet.oracle) if i != steps[-1]]  # one stepper click fewer
    wrong_pw = [Action("write", {**a.args, "text": a.args["text"] + "x"}) if "password" in t.lower() else a
                for a, t in zip(login.oracle, login.oracle_thoughts)]
    assert wrong_pw != login.oracle
    ticked = _without(join, "exclusive offers")  # the pre-ticked marketing box left ticked
    bad = [_with_oracle(copy, [done]), _with_oracle(copy, no_switch), _with_oracle(pay, no_pay),
           _with_oracle(sheet, one_short), _with_oracle(login, wrong_pw), _with_oracle(join, ticked),
           _with_oracle(read, [done])]
    assert all(len(b.oracle) < len(g.oracle) or b.oracle != g.oracle for b, g in zip(bad, [copy, copy, pay, sheet, login, join, read]))
    paths = [r.path for r in (tab_result, frame_result, comp_result, wall_result, dark_result)]
    rewards = _env_rewards(paths, good + bad)
    assert rewards[:len(good)] == [1.0] * len(good), [(t.id, r) for t, r in zip(good, rewards)]
    assert rewards[len(good):] == [0.0] * len(bad), [(t.id, r) for t, r in zip(bad, rewards[len(good):])]


def test_mechanics_are_made_only_when_asked_for():
    """Adding the mechanics moved no seed's draw: a seed naming no skill never draws one of them, so
    every site made before (the shipped bundles in sites/) is drawn again as it was."""
    opt_in = {s for s, entry in all_skills().items() if entry.get("opt_in")}
    assert opt_in == set(MECHANICS)
    assert not opt_in & set(drawn_skills()) and not opt_in & set(skills())
    for seed in range(60):
        assert sample_spec(seed).skill not in opt_in
        assert sample_spec(seed, category="banking").skill not in opt_in
    # asked for, each one is made, in any genre
    assert {sample_spec(3, skill, "banking").skill for skill in MECHANICS} == set(MECHANICS)
