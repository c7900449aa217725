"""Reward integrity across episodes: validation compiles the oracle and the "do everything" run in one
episode, while the env draws each episode's pop-ups from its own seed (weblica/synth/distractors.py). On
crud and checkout sites and on two genre flows (a banking transfer, a job application), at five episode
seeds, the oracle policy solves every task and the adversarial policy, which replays the whole "do
everything" run and dismisses that episode's pop-ups as it goes, scores 0 on every one; a pop-up that
swallowed its extra clicks would have let it do only the task and be paid for it."""
from __future__ import annotations

import asyncio
import json

import pytest

from weblica.env.actions import Action
from weblica.env.observation import Observation
from weblica.env.popups import DISMISS, dismissal_of_any, without_dismissals
from weblica.env.task import Check, Task, load_tasks, save_tasks
from weblica.policy.adversarial import CARELESS
from weblica.synth.generate import keep_valid, write_unvalidated
from weblica.synth.spec import sample_spec

REPEATS = 5  # episode seeds per task (episode_seed(run seed, task, repeat))
EVERYTHING = "The task, and everything else."
# (seed, skill, genre, which state tasks: an intent prefix of the genre's flow, or None for the skill's)
SITES = [(305, "checkout", "fashion", None), (306, "crud", "education", None),
         (22, "forms", "banking", "banking-own-transfer"), (25, "search", "jobs", "jobs-apply")]


@pytest.fixture(scope="module")
def seeded_tasks(tmp_path_factory):
    out = tmp_path_factory.mktemp("adversarial-seeds")
    paths = []
    for seed, skill, genre, intent in SITES:
        path = write_unvalidated(sample_spec(seed, skill, genre), out)
        state = [t for t in load_tasks(path / "tasks.jsonl") if any(c.type == "state_match" for c in t.checks)]
        if intent:
            state = [t for t in state if t.metadata.get("intent") == intent]
        save_tasks(state[:1], path / "tasks.jsonl")
        paths.append(path)
    results = asyncio.run(keep_valid(paths, concurrency=4))
    tasks = []
    for result in results:
        assert result.tasks_kept == 1, (result.site_id, result.failures)
        for task in load_tasks(result.path / "tasks.jsonl"):
            task.source.bundle = str(result.path.resolve())
            tasks.append(task)
    return tasks


def _play(tasks, policy):
    from weblica.policy.factory import make_policy_factory
    from weblica.rollout import run_tasks
    from weblica.synth.backend import ServedSynthBackend

    async def go():
        backend = ServedSynthBackend(sorted({t.source.bundle for t in tasks}))
        await backend.start()
        try:
            trajectories, _ = await run_tasks(tasks, make_policy_factory(policy, 0), None, parallel=4,
                                              repeats=REPEATS, backends={"synth": backend})
            return trajectories
        finally:
            await backend.stop()
    return asyncio.run(go())


def _dismissals(traj) -> tuple:
    """The dismissals an episode played (this episode's pop-ups, where they were)."""
    return tuple(json.dumps(s.actions, sort_keys=True) for s in traj.steps if s.response.startswith("<think>" + DISMISS))


@pytest.mark.slow
def test_adversary_scores_zero_and_oracle_solves_at_every_episode_seed(seeded_tasks):
    tasks = seeded_tasks
    by_id = {t.id: t for t in tasks}
    assert all(t.metadata.get("maximal_oracle") for t in tasks), [t.id for t in tasks if not t.metadata.get("maximal_oracle")]
    oracle = _play(tasks, "oracle")
    assert len({(t.task_id, t.seed) for t in oracle}) == REPEATS * len(tasks)
    assert [(t.task_id, t.seed, t.termination_reason, [c.get("detail", "")[:160] for c in t.check_results
             if not c.get("passed")]) for t in oracle if not t.success] == []
    adversary = _play(tasks, "adversarial")
    assert [(t.task_id, t.seed) for t in adversary if t.success] == []
    for traj in adversary:
        task = by_id[traj.task_id]
        assert traj.termination_reason == "done", (traj.task_id, traj.seed, traj.termination_reason, traj.error)
        # it really played the whole run (no pop-up swallowed the rest, the budget held): every
        # action of the "do everything" run went out, and the end state is the task done and more
        # (a check passes, another fails), not a run that failed to get anywhere
        # (the careless typist's episodes do the task with one value the instruction gave typed wrong: the
        # site may refuse it outright, a transfer of the wrong amount, so every check may fail there)
        if any(CARELESS in s.response for s in traj.steps):
            continue
        played = sum(len(s.actions) for s in traj.steps if EVERYTHING in s.response)
        assert played == len(task.metadata["maximal_oracle"]), (traj.task_id, traj.seed, played)
        passed = [c.get("passed") for c in traj.check_results]
        assert True in passed and False in passed, (traj.task_id, traj.seed, traj.check_results)
    # the seeds did vary the pop-ups: the dismissals differ between the episodes of a task
    varied = [tid for tid in by_id if len({_dismissals(t) for t in adversary if t.task_id == tid}) > 1]
    assert varied, "every episode of every task met the same pop-ups: the seeds did not reach the pages"
    assert any(_dismissals(t) for t in adversary)


# ---- the replay itself, without a browser -------------------------------------------------------------
def _popup(kind, blocking, box, close=None, escape=False):
    return {"kind": kind, "blocking": blocking, "z": 10, "box": dict(zip(("left", "top", "right", "bottom"), box)),
            "close": close, "escape": escape, "outside": None}


def _obs(popups):
    return Observation(screenshot=b"", url="http://s.test/", tabs=[], active_tab=0,
                       page={"text": "A\nB", "controls": [], "popups": popups, "can_scroll": False})


def test_recorded_dismissals_are_dropped_and_this_episodes_are_dismissed_first():
    from weblica.policy.adversarial import AdversarialPolicy

    run = [Action("click", {"x": 1258.0, "y": 20.0}), Action("click", {"x": 161.0, "y": 94.0}),
           Action("write", {"text": "3"})]
    thoughts = [DISMISS + "cookie notice that is in the way: click its close button.", "Open All pieces.", "Type 3."]
    assert without_dismissals(run, thoughts) == run[1:]
    assert without_dismissals(run, None) == run  # no thoughts: nothing can be told apart
    task = Task(id="t", start_url="http://s.test/", instruction="Add it.", max_steps=12,
                checks=[Check(type="state_match", path="cart", expected=1, mode="count")],
                metadata={"maximal_oracle": [a.to_dict() for a in run[1:]]})
    policy = AdversarialPolicy(0)
    policy.reset(task, 0)
    interstitial = _popup("interstitial", True, (0, 0, 1280, 720), close={"x": 640.0, "y": 500.0, "label": "No thanks"})
    out = asyncio.run(policy.act(_obs([interstitial]), task, []))
    assert [(a.name, a.args) for a in out.actions] == [("click", {"x": 640.0, "y": 500.0})]
    assert out.text.count(DISMISS) == 1
    # a corner chat beside the next click is not in its way: the run goes on, one action a turn
    chat = _popup("chat", False, (1000, 500, 1280, 720), close={"x": 1260.0, "y": 510.0, "label": "×"})
    out = asyncio.run(policy.act(_obs([chat]), task, [None]))
    assert [a.args.get("x") for a in out.actions] == [161.0]
    out = asyncio.run(policy.act(_obs([chat]), task, [None, None]))
    assert [a.name for a in out.actions] == ["write"]
    out = asyncio.run(policy.act(_obs([]), task, [None] * 3))
    assert [a.name for a in out.actions] == ["done"]
    # the blind run closes whatever is open before it looks for controls (a pop-up hides the ones under it)
    assert dismissal_of_any([chat, interstitial])[0].args == {"x": 640.0, "y": 500.0}
    assert dismissal_of_any([chat])[0].args == {"x": 1260.0, "y": 510.0}
    assert dismissal_of_any([_popup("promo", False, (0, 0, 10, 10))]) is None  # no way out offered
    assert dismissal_of_any([]) is None


def test_a_run_short_of_turns_plays_several_actions_a_turn_and_still_answers():
    from weblica.policy.adversarial import AdversarialPolicy

    run = [Action("click", {"x": float(10 * i), "y": 300.0}) for i in range(1, 9)]
    task = Task(id="t", start_url="http://s.test/", instruction="Add it.", max_steps=5,
                checks=[Check(type="state_match", path="cart", expected=1, mode="count")],
                metadata={"maximal_oracle": [a.to_dict() for a in run]})
    policy = AdversarialPolicy(0)
    policy.reset(task, 0)
    sent = []
    for turn in range(task.max_steps):
        out = asyncio.run(policy.act(_obs([]), task, [None] * turn))
        sent += out.actions
        if out.actions[-1].name == "done":
            break
    assert [(a.name, a.args["x"]) for a in sent[:-1]] == [("click", a.args["x"]) for a in run]
    assert sent[-1].name == "done" and turn == task.max_steps - 1
