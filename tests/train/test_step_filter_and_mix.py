"""WebGym's repeated-action step filter and difficulty-mix task sampling, on hand-computed cases."""
from __future__ import annotations

import random
from collections import Counter

import pytest

from episode_records import step, traj
from weblica.env.task import Task
from weblica.train.algorithms import group_advantages
from weblica.train.curriculum import DifficultySampler, difficulty_band, task_difficulty
from weblica.train.filters import changed_step_indices, filter_repeated_steps, unchanged_screens

DONE = [{"name": "done", "arguments": {"answer": "x"}}]


def test_unchanged_screens_compare_each_step_with_what_it_acted_on() -> None:
    # start a; steps land on a (no-op), b, b (no-op), c, c (done: answers without changing the page)
    t = traj("e", [step(1, "", "a"), step(2, "", "b"), step(3, "", "b"), step(4, "", "c"),
                   step(5, "", "c", actions=DONE)], start_sha="a")
    assert unchanged_screens(t) == [True, False, True, False, True]
    assert changed_step_indices(t) == [1, 3, 4]
    assert changed_step_indices(t, keep_terminal=False) == [1, 3]
    turns = ["turn1", "turn2", "turn3", "turn4", "turn5"]  # per-turn items aligned with the steps
    assert filter_repeated_steps(turns, t) == ["turn2", "turn4", "turn5"]


def test_missing_screenshots_are_not_taken_for_no_ops() -> None:
    t = traj("e", [step(1, "", ""), step(2, "", "")], start_sha="")
    assert unchanged_screens(t) == [False, False]


def test_filtered_bc_is_reinforce_on_successes_only() -> None:
    assert group_advantages([1.0, 0.0, 1.0, -1.0], "filtered_bc") == [1.0, 0.0, 1.0, 0.0]


def _tasks() -> list[Task]:
    def task(i: int, difficulty=None, rubric=None) -> Task:
        return Task(id=f"t{i}", start_url="http://x.test/", instruction="i", difficulty=difficulty, rubric=rubric)

    return [task(0, 1), task(1, 3), task(2, 4), task(3, 6), task(4, 7), task(5, 12), task(6, "hard"),
            task(7, "easy"), task(8, None, [["a", "b"], ["c", "d", "e"]]), task(9), task(10, "2")]


def test_difficulty_bands_by_hand() -> None:
    tasks = _tasks()
    assert [task_difficulty(t) for t in tasks] == [1, 3, 4, 6, 7, 12, "hard", "easy", 5, None, 2]
    assert [difficulty_band(t) for t in tasks] == ["easy", "easy", "medium", "medium", "hard", "hard", "hard",
                                                   "easy", "medium", None, "easy"]
    assert [difficulty_band(t, (1, 4)) for t in tasks[:5]] == ["easy", "medium", "medium", "hard", "hard"]


def test_uniform_mix_draws_exactly_what_the_trainer_drew_before() -> None:
    tasks = _tasks()
    sampler = DifficultySampler(tasks, "uniform")
    assert sampler.sample(4, random.Random(7)) == random.Random(7).sample(tasks, 4)
    assert len(sampler.sample(50, random.Random(0))) == len(tasks)


def test_single_band_mixes_draw_only_that_band() -> None:
    sampler = DifficultySampler(_tasks(), "easy")
    assert sampler.counts() == {"easy": 4, "medium": 3, "hard": 3}
    for seed in range(20):
        drawn = sampler.sample(3, random.Random(seed))
        assert len(drawn) == 3 == len({t.id for t in drawn})
        assert {t.id for t in drawn} <= {"t0", "t1", "t7", "t10"}
    assert {t.id for t in DifficultySampler(_tasks(), "hard").sample(10, random.Random(0))} == {"t4", "t5", "t6"}


def test_weighted_mix_follows_its_weights() -> None:
    sampler = DifficultySampler(_tasks(), "weighted", {"easy": 3, "hard": 1})
    bands = Counter(difficulty_band(sampler.sample(1, random.Random(seed))[0]) for seed in range(4000))
    assert set(bands) == {"easy", "hard"}
    assert 0.72 < bands["easy"] / 4000 < 0.78  # 3 / (3 + 1)
    # a band runs dry: the rest of the draw comes from the bands that still have tasks, without repeats
    drawn = sampler.sample(7, random.Random(1))
    assert len(drawn) == 7 and len({t.id for t in drawn}) == 7
    assert Counter(difficulty_band(t) for t in drawn) == {"easy": 4, "hard": 3}
    assert sampler.sample(5, random.Random(3)) == sampler.sample(5, random.Random(3))


@pytest.mark.parametrize("mix,weights,message", [
    ("hard", None, None), ("medium-ish", None, "unknown difficulty mix"), ("weighted", {}, "needs weights"),
    ("weighted", {"tricky": 1}, "needs weights"), ("weighted", {"easy": -1}, ">= 0"),
])
def test_bad_mixes_fail_before_any_rollout(mix, weights, message) -> None:
    easy_only = [Task(id="e", start_url="http://x.test/", instruction="i", difficulty=1)]
    with pytest.raises(ValueError, match=message or "no task is hard"):
        DifficultySampler(easy_only, mix, weights)
