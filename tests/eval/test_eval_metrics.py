"""Evaluation metrics against figures computed by hand."""
import pytest

from weblica.env.episode import StepRecord, Trajectory
from weblica.env.task import Task
from weblica.eval.metrics import compute_metrics, pass_at_k


def traj(task_id, steps, success=False, reason="done", removed=False):
    records = [StepRecord(step=i, response="", actions=[], feedback=[], url="", screenshot_sha256="")
               for i in range(steps)]
    return Trajectory(task_id=task_id, seed=0, episode_id=f"{task_id}-{id(records)}", start_url="",
                      start_screenshot_sha256="", steps=records, success=success, reward=float(success),
                      termination_reason=reason, removed=removed)


def test_pass_at_k_matches_hand_computed_values():
    assert pass_at_k(5, 2, 1) == pytest.approx(0.4)          # 1 - 3/5
    assert pass_at_k(5, 2, 2) == pytest.approx(0.7)          # 1 - C(3,2)/C(5,2) = 1 - 3/10
    assert pass_at_k(5, 2, 4) == 1.0                          # only 3 failures: any 4 hold a success
    assert pass_at_k(4, 0, 2) == 0.0
    assert pass_at_k(10, 1, 3) == pytest.approx(0.3)         # 1 - C(9,3)/C(10,3) = 1 - 84/120
    assert pass_at_k(200, 13, 100) == pytest.approx(1 - 0.5 ** 13, rel=1e-2)  # big n stays exact
    with pytest.raises(ValueError, match="at least 3 samples"):
        pass_at_k(2, 1, 3)
    with pytest.raises(ValueError):
        pass_at_k(2, 3, 1)


@pytest.fixture
def episodes():
    tasks = [Task(id="a", start_url="http://x/", instruction="a", skill="forms", difficulty="easy"),
             Task(id="b", start_url="http://x/", instruction="b", skill="navigation", difficulty=2)]
    trajs = [traj("a", 2, success=True), traj("a", 5, reason="max_steps"), traj("a", 4, success=True),
             traj("b", 3), traj("b", 0, reason="env_error", removed=True), traj("b", 5, reason="max_steps")]
    return tasks, trajs


def test_overall_figures(episodes):
    tasks, trajs = episodes
    m = compute_metrics(trajs, tasks, ks=[1, 2, 3]).overall
    assert (m.episodes, m.tasks, m.successes, m.aborted) == (6, 2, 2, 1)
    assert m.success_rate == pytest.approx(2 / 6, abs=1e-6)
    assert m.abort_excluded_success_rate == pytest.approx(2 / 5)
    # task a: n=3, c=2; task b: n=3, c=0 (n=2 without its aborted episode)
    assert m.pass_at_k["1"] == pytest.approx((2 / 3 + 0) / 2, abs=1e-6)
    assert m.pass_at_k["2"] == pytest.approx(0.5)
    assert m.pass_at_k["3"] == pytest.approx(0.5)
    assert m.pass_at_k_abort_excluded["2"] == pytest.approx(0.5)
    assert m.pass_at_k_abort_excluded["3"] == pytest.approx(1.0)  # b has only 2 valid episodes: left out
    assert m.mean_steps == pytest.approx(19 / 6, abs=1e-6)
    assert m.mean_steps_success == pytest.approx(3.0)
    assert m.termination_reasons == {"done": 3, "env_error": 1, "max_steps": 2}


def test_breakdowns_and_per_task(episodes):
    tasks, trajs = episodes
    result = compute_metrics(trajs, tasks, ks=[2])
    assert result.ks == [1, 2]
    assert set(result.breakdowns) == {"skill", "difficulty"}  # no task has a category
    forms, nav = result.breakdowns["skill"]["forms"], result.breakdowns["skill"]["navigation"]
    assert (forms.episodes, forms.success_rate, forms.pass_at_k["2"]) == (3, pytest.approx(2 / 3, abs=1e-6), 1.0)
    assert (nav.success_rate, nav.abort_excluded_success_rate, nav.aborted) == (0.0, 0.0, 1)
    assert set(result.breakdowns["difficulty"]) == {"easy", "2"}
    rows = {r["task_id"]: r for r in result.to_dict()["per_task"]}
    assert rows["a"]["n"] == 3 and rows["a"]["c"] == 2 and rows["b"]["aborted"] == 1
    assert rows["b"]["mean_steps"] == pytest.approx(8 / 3, abs=1e-6)


def test_all_aborted_has_no_abort_excluded_rate():
    m = compute_metrics([traj("a", 0, reason="browser_crash", removed=True)]).overall
    assert m.success_rate == 0.0 and m.abort_excluded_success_rate is None
    assert m.pass_at_k_abort_excluded["1"] is None and m.pass_at_k["1"] == 0.0
