"""One scoring room (issue 37, point 5): every check kind is one registry entry carrying its scoring, how a
page shows its gold, and its negatives; a task file naming a kind the registry lacks is refused when it
loads, with the file and line; scoring imports no task model and sits in no import circle."""
from __future__ import annotations

import ast
import json
from pathlib import Path

import pytest

from weblica.env.task import Check, Task, TaskError, load_tasks
from weblica.scoring.checks import evaluate_checks
from weblica.scoring.negatives import OracleRun
from weblica.scoring.registry import CHECK_TYPES, KINDS, all_negatives, check_problem, negative_builders
from weblica.synth.checks import answer_infeasible, answer_number, state_is, url_is

ROOT = Path(__file__).resolve().parents[2]


def test_every_kind_has_an_entry_that_scores_it():
    assert set(CHECK_TYPES) == {"answer_match", "url_match", "state_match"}
    assert {m for t, m in KINDS if t == "answer_match"} == {"exact", "numeric", "set", "regex", "date", "refusal"}
    assert {m for t, m in KINDS if t == "state_match"} >= {"exact", "numeric", "count", "password"}
    for (check_type, mode), kind in KINDS.items():
        assert (kind.type, kind.mode) == (check_type, mode) and callable(kind.check)
    # a page shows one gold for the value kinds, none for a refusal or a state
    assert KINDS[("answer_match", "numeric")].gold_on_page and KINDS[("answer_match", "refusal")].gold_on_page is None
    assert KINDS[("state_match", "exact")].gold_on_page is None


def test_a_task_file_naming_an_unknown_kind_is_refused_with_its_file_and_line(tmp_path):
    good = {"id": "a", "start_url": "http://s.test/", "instruction": "q",
            "checks": [{"type": "answer_match", "expected": "x"}]}
    bad = dict(good, id="b", checks=[{"type": "answer_match", "expected": "x", "mode": "fuzzy"}])
    path = tmp_path / "tasks.jsonl"
    path.write_text(json.dumps(good) + "\n" + json.dumps(bad) + "\n")
    with pytest.raises(TaskError) as err:
        load_tasks(path)
    message = str(err.value)
    assert message.startswith(f"{path}:2: ") and "mode 'fuzzy'" in message and "exact, numeric" in message
    path.write_text(json.dumps(dict(good, checks=[{"type": "state_match", "path": "a", "expected": 1, "mode": "sorta"}])))
    with pytest.raises(TaskError, match=r":1: .*state_match mode 'sorta' \(use exact"):
        load_tasks(path)
    with pytest.raises(TaskError, match="unknown check type 'dom_match'"):
        Task.from_dict(dict(good, checks=[{"type": "dom_match", "expected": "x"}]))
    assert check_problem(Check("url_match", "http://x/", "prefix")) is None


def test_every_task_file_in_the_repository_loads():
    files = [p for p in ROOT.rglob("tasks*.jsonl") if ".venv" not in p.parts and "node_modules" not in p.parts]
    assert files
    for path in files:
        load_tasks(path)  # raises, naming the file and line, on a kind the registry lacks


def test_the_negatives_a_task_gets_are_those_its_kinds_name():
    answer = Task(id="a", start_url="http://s.test/", instruction="What does it cost?",
                  checks=[answer_number(316, 0, [342], locale="ja-JP")])
    url = Task(id="u", start_url="http://s.test/", instruction="Sort it.", checks=[url_is("http://s.test/?sort=a")])
    state = Task(id="s", start_url="http://s.test/", instruction="Order to 12 Harbour Road.",
                 checks=[state_is("orders.0.street", "12 Harbour Road")],
                 metadata={"plan": [{"op": "fill", "sel": "#f-street", "text": "12 Harbour Road"}]})
    kinds = lambda task, run: {n.kind for n in all_negatives(task, run)}  # noqa: E731
    assert {"enumeration", "two_assertions", "foreign_hedge", "approximation"} <= kinds(answer, OracleRun(gold="¥316"))
    assert kinds(url, OracleRun()) == {"url_extra"}
    assert kinds(state, OracleRun(state={"orders": [{"id": "r1", "street": "12 Harbour Road"}]}, initial={})) == \
        {"altered_state", "named_field"}
    assert len(negative_builders(state.checks * 3)) == 2  # each builder once, however many checks name it
    refusal = Task(id="r", start_url="http://s.test/", instruction="Is it sold?", checks=[answer_infeasible()])
    assert "two_assertions" not in kinds(refusal, OracleRun(gold="It is not sold."))


def test_every_state_negative_is_rejected_when_the_checks_read_every_field():
    state = {"orders": [{"id": "r1", "street": "12 Harbour Road", "city": "Porto"}]}
    task = Task(id="s", start_url="http://s.test/", instruction="Order to 12 Harbour Road, Porto.",
                checks=[state_is("orders.0.street", "12 Harbour Road"), state_is("orders.0.city", "Porto")],
                metadata={"plan": [{"op": "fill", "sel": "#f-street", "text": "12 Harbour Road"},
                                   {"op": "fill", "sel": "#f-city", "text": "Porto"}]})
    negatives = all_negatives(task, OracleRun(state=state, initial={}))
    assert len(negatives) >= 4
    assert [n.label for n in negatives if evaluate_checks(task, None, "", n.state)[0]] == []


def _imports(path: Path) -> set[str]:
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.module:
            found.add(node.module)
        elif isinstance(node, ast.Import):
            found.update(a.name for a in node.names)
    return found


def test_scoring_reads_no_task_model_and_the_old_modules_are_gone():
    scoring = ROOT / "weblica" / "scoring"
    for path in scoring.glob("*.py"):
        if path.name in ("judge.py", "reward.py", "rubric.py", "benchmark_judges.py", "fact_groups.py"):
            continue  # the judges read whole tasks and trajectories; the checks do not
        assert not {m for m in _imports(path) if m.startswith("weblica.env.task")}, path.name
    for old in ("env/answer_check.py", "env/answer_context.py", "env/answers.py", "env/refusal.py", "env/text.py",
                "policy/judge.py", "policy/reward.py", "tasks/rubric.py", "eval/judge.py", "synth/negatives.py"):
        assert not (ROOT / "weblica" / old).exists(), old
