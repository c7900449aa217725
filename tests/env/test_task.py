import pytest

from weblica.env.task import Check, Task, TaskError, load_tasks, save_tasks
from weblica.scoring.checks import evaluate_checks
from weblica.scoring.registry import Evidence, score_check


def make(checks, **kw):
    return Task(id="t", start_url="http://a.test/", instruction="do", checks=checks, **kw)


@pytest.mark.parametrize("actual,expected,mode,tol,ok", [
    ("  Alpine   RIDGE. ", "alpine ridge", "exact", 0, True),
    ("Alpine", "alpine ridge", "exact", 0, False),
    ("$1,234.50", 1234.5, "numeric", 0, True),
    ("about 99", 100, "numeric", 0.5, False),
    ("about 99.6", 100, "numeric", 0.5, True),
    ("red, Blue and green", ["green", "blue", "red"], "set", 0, True),
    ("red, blue", ["green", "blue", "red"], "set", 0, False),
    ("Order #A-1234 placed", r"#A-\d{4}", "regex", 0, True),
    ("Order placed", r"#A-\d{4}", "regex", 0, False),
    ("x", "(", "regex", 0, False),
])
def test_match_modes(actual, expected, mode, tol, ok):
    check = Check("state_match", expected, mode, path="v", tol=tol)
    assert score_check(check, Evidence(None, "", {"v": actual})).passed is ok


def test_checks_reward():
    task = make([Check("answer_match", "42", "numeric"), Check("url_match", "http://a.test/done?b=2&a=1"),
                 Check("state_match", 2, path="cart.items", mode="count")])
    state = {"cart": {"items": [{"sku": 1}, {"sku": 2}]}}
    reward, results = evaluate_checks(task, "It is 42.", "http://a.test/done/?a=1&b=2", state)
    assert reward == 1.0 and all(r.passed for r in results)
    reward, results = evaluate_checks(task, "41", "http://a.test/done/?a=1&b=2", state)
    assert reward == 0.0 and [r.passed for r in results] == [False, True, True]
    reward, _ = evaluate_checks(task, "42", "http://a.test/done?a=1&b=2", {"cart": {"items": []}})
    assert reward == 0.0
    reward, results = evaluate_checks(task, "42", "http://a.test/done?a=1&b=2", None)
    assert reward == 0.0 and "no state" in results[2].detail


def test_state_path_into_lists():
    task = make([Check("state_match", "B-7", path="orders[1].sku")])
    assert evaluate_checks(task, None, "", {"orders": [{"sku": "A"}, {"sku": "b-7"}]})[0] == 1.0
    assert evaluate_checks(task, None, "", {"orders": [{"sku": "A"}]})[0] == 0.0


def test_no_checks_scores_zero():
    assert evaluate_checks(make([]), "anything", "", None)[0] == 0.0


def test_jsonl_round_trip(tmp_path):
    task = make([Check("answer_match", "x")], oracle=[], skill="forms", difficulty="easy",
                rubric=["mentions x"])
    task.oracle = None
    path = tmp_path / "tasks.jsonl"
    save_tasks([task, make([], max_steps=3)], path)
    loaded = load_tasks(path)
    assert loaded[0].to_dict() == task.to_dict()
    assert loaded[1].max_steps == 3


def test_bad_task_file_names_line(tmp_path):
    path = tmp_path / "tasks.jsonl"
    path.write_text('{"id": "a", "start_url": "https://u.test/", "instruction": "i"}\n{"id": "b"}\n')
    with pytest.raises(TaskError, match=r"tasks.jsonl:2: task is missing 'start_url'"):
        load_tasks(path)
    path.write_text('{"id": "a", "start_url": "u", "instruction": "i", "checks": [{"type": "vibe"}]}\n')
    with pytest.raises(TaskError, match="unknown check type"):
        load_tasks(path)
