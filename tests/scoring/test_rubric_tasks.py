"""WebGym rubric tasks: fact groups, difficulty, the decomposition rule, importers, and the rubric judge
protocol over a local OpenAI-compatible server."""
from __future__ import annotations

import json
import re
import threading
from pathlib import Path

import pytest
from click.testing import CliRunner

from episode_records import cli_with, png_bytes
from weblica.env.task import Check, Task, TaskError, load_tasks, save_tasks
from weblica.scoring.benchmark_judges import Evidence, OpenAIChatProvider
from weblica.tasks.decompose import LLMRewriter, decompose_task, template_instruction, valid_subsets
from weblica.tasks.importers import import_tasks
from weblica.scoring.fact_groups import FactGroup, difficulty, fact_groups, parse_fact_groups
from weblica.scoring.rubric import RubricJudge, parse_success

SAMPLES = Path(__file__).resolve().parents[2] / "eval" / "tasks"


def rubric_task(rubric, **kwargs) -> Task:
    return Task(id=kwargs.pop("id", "t"), start_url="https://shop.test/", instruction="Do the whole task.",
                rubric=rubric, **kwargs)


# ---- fact groups ---------------------------------------------------------------------------------------

def test_fact_group_shapes_and_difficulty() -> None:
    plain = parse_fact_groups([["a", "b", "c"], ["d"]])
    assert [g.facts for g in plain] == [["a", "b", "c"], ["d"]] and difficulty(plain) == 4
    # WebGym's released files: a flat list (strings or {"description"}) is one group
    flat = parse_fact_groups(["x", {"description": "y"}])
    assert len(flat) == 1 and flat[0].facts == ["x", "y"] and difficulty(flat) == 2
    named = parse_fact_groups([{"objective": "find the price", "facts": ["p1", "p2"]}])
    assert named[0].objective == "find the price" and named[0].to_json() == {"objective": "find the price",
                                                                             "facts": ["p1", "p2"]}
    assert parse_fact_groups(None) is None and parse_fact_groups("free text criteria") is None
    with pytest.raises(TaskError, match="mixes"):
        parse_fact_groups([["a"], "b"])
    with pytest.raises(TaskError, match="at least one fact"):
        parse_fact_groups([["a"], []])


# ---- the decomposition rule, by hand ---------------------------------------------------------------------

@pytest.mark.parametrize("sizes,expected", [
    ([3, 1], [(0,)]),
    ([3, 4, 1], [(0,), (1,), (0, 1), (0, 2), (1, 2)]),
    ([1, 1, 3], [(2,), (0, 2), (1, 2)]),
    ([3, 3], [(0,), (1,)]),
    ([2, 2], []),          # no large group
    ([5], []),             # a single group
    ([2, 2, 2, 2], []),
])
def test_valid_subsets_by_hand(sizes: list[int], expected: list[tuple[int, ...]]) -> None:
    assert valid_subsets(sizes) == expected


def test_subset_count_matches_the_closed_form() -> None:
    # proper non-empty subsets of n groups minus those built only from the n - L small groups
    for sizes in ([3, 1, 1, 1], [4, 3, 2, 1], [3, 3, 3], [1, 2, 3, 4, 5]):
        n, small = len(sizes), sum(1 for s in sizes if s < 3)
        assert len(valid_subsets(sizes)) == (2 ** n - 2) - (2 ** small - 1)


def test_decomposed_tasks_are_strictly_easier_and_well_formed(tmp_path: Path) -> None:
    task = rubric_task([["a1", "a2", "a3"], ["b1", "b2", "b3", "b4"], ["c1"]], id="p",
                       checks=[Check("answer_match", "42")])
    subs = decompose_task(task)
    assert [s.id for s in subs] == ["p~g0", "p~g1", "p~g0-1", "p~g0-2", "p~g1-2"]
    assert [s.difficulty for s in subs] == [3, 4, 7, 4, 5]
    assert all(s.difficulty < 8 for s in subs)
    assert subs[3].rubric == [["a1", "a2", "a3"], ["c1"]]
    assert subs[3].metadata == {"parent": "p", "fact_groups": [0, 2], "parent_difficulty": 8}
    assert all(not s.checks and s.oracle is None for s in subs)  # the parent's checks verify the whole task
    for sub in subs:  # every fact the judge will check is named in the instruction
        assert all(f in sub.instruction for g in fact_groups(sub) for f in g.facts)
    save_tasks(subs, tmp_path / "subs.jsonl")
    assert [t.to_dict() for t in load_tasks(tmp_path / "subs.jsonl")] == [t.to_dict() for t in subs]
    assert decompose_task(rubric_task([["a", "b"], ["c", "d"]])) == []
    assert decompose_task(rubric_task(None)) == []


def test_template_uses_group_objectives() -> None:
    groups = [FactGroup(["x"], "find the cheapest flight to Denver"), FactGroup(["y"], "report its airline.")]
    text = template_instruction(rubric_task(None), groups)
    assert text == "Find the cheapest flight to Denver; and report its airline."


def test_llm_rewriter_marks_kept_and_dropped_groups() -> None:
    seen = []

    def provider(messages):
        seen.append(messages)
        return '"Find the price of the blue kettle."\n'

    task = rubric_task([{"objective": "find the price", "facts": ["p1", "p2", "p3"]}, ["colour is blue"]], id="k")
    subs = decompose_task(task, LLMRewriter(provider))
    assert [s.instruction for s in subs] == ["Find the price of the blue kettle."]
    prompt = seen[0][1]["content"][0]["text"]
    assert "Group 1 (KEPT): find the price" in prompt and "Group 2 (DROPPED)" in prompt


# ---- importers ---------------------------------------------------------------------------------------

def test_import_webgym_sample() -> None:
    tasks = import_tasks(SAMPLES / "webgym.sample.jsonl")
    assert [t.id for t in tasks] == ["wg-0001", "wg-0002", "wg-0003"]
    assert [t.difficulty for t in tasks] == [4, 7, 1]
    assert tasks[0].start_url == "https://laminex.com.au/" and tasks[1].start_url == "https://www.kayak.com"
    assert tasks[0].source.kind == "live" and tasks[0].metadata["webgym_difficulty"] == "medium"
    assert [len(g.facts) for g in fact_groups(tasks[1])] == [4, 2, 1]
    assert tasks[2].metadata["reference_answer"] == "about 16,000"
    assert len(decompose_task(tasks[1])) == 3 and decompose_task(tasks[2]) == []


def test_import_insta_sample_and_json_array(tmp_path: Path) -> None:
    tasks = import_tasks(SAMPLES / "insta-v3.sample.jsonl")
    assert [t.start_url for t in tasks] == ["https://laminex.com.au/", "https://allrecipes.com/",
                                            "https://www.nps.gov/"]
    assert tasks[2].metadata == {"benchmark": "insta", "judgment": "valid"} and tasks[0].rubric is None
    array = tmp_path / "tasks.json"
    array.write_text(json.dumps([{"task_id": 7, "task_name": "Q?", "website": "a.test",
                                  "evaluator_reference": json.dumps(["f1", "f2"])}]))
    (task,) = import_tasks(array)
    assert task.id == "7" and task.difficulty == 2 and task.rubric == [["f1", "f2"]]
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"question": "?"}\n')
    with pytest.raises(TaskError, match="--format"):
        import_tasks(bad)


def test_tasks_cli_import_then_decompose(tmp_path: Path) -> None:
    runner, cli = CliRunner(), cli_with("weblica.tasks.commands")
    out = tmp_path / "tasks.jsonl"
    result = runner.invoke(cli, ["tasks", "import", str(SAMPLES / "webgym.sample.jsonl"), "--out", str(out), "--json"])
    assert result.exit_code == 0, result.output
    summary = json.loads(result.stdout)
    assert {k: summary[k] for k in ("tasks", "with_rubric", "with_checks", "out")} == \
        {"tasks": 3, "with_rubric": 3, "with_checks": 0, "out": str(out)}
    assert summary["report"]["skipped"] == {} and summary["report"]["not_imported"] == {}
    result = runner.invoke(cli, ["tasks", "decompose", str(out), "--out", str(tmp_path / "d.jsonl"), "--json"])
    assert result.exit_code == 0, result.output
    summary = json.loads(result.stdout)
    assert summary["subtasks"] == 1 + 3 and summary["decomposed"] == 2 and summary["written"] == 3 + 4
    assert len(load_tasks(tmp_path / "d.jsonl")) == 7
    # running it again on its own output adds nothing: sub-tasks are not decomposed again
    result = runner.invoke(cli, ["tasks", "decompose", str(tmp_path / "d.jsonl"), "--out", str(tmp_path / "dd.jsonl"),
                                 "--json"])
    assert json.loads(result.stdout)["subtasks"] == 0 and len(load_tasks(tmp_path / "dd.jsonl")) == 7


# ---- the rubric judge over the OpenAI wire format ----------------------------------------------------

class ChatServer:
    """A chat-completions server on 127.0.0.1 whose reply is `reply(user_text)`; keeps every request body."""

    def __init__(self, reply) -> None:
        from flask import Flask, jsonify, request
        from werkzeug.serving import make_server

        self.requests: list[dict] = []
        app = Flask("chat-server")

        @app.post("/v1/chat/completions")
        def complete():
            body = request.get_json()
            self.requests.append(body)
            content = body["messages"][-1]["content"]
            text = content if isinstance(content, str) else content[0]["text"]
            return jsonify({"id": "x", "object": "chat.completion", "model": body["model"],
                            "choices": [{"index": 0, "finish_reason": "stop",
                                         "message": {"role": "assistant", "content": reply(text)}}]})

        self._server = make_server("127.0.0.1", 0, app, threaded=True)
        self.url = f"http://127.0.0.1:{self._server.server_port}/v1"
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    def __enter__(self):
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._server.shutdown()
        self._thread.join(timeout=5)


def FactServer(true_facts: set[str], grounded_answers: set[str]) -> ChatServer:
    """A judge that verifies the facts in `true_facts` and the answers in `grounded_answers`."""
    def reply(text: str) -> str:
        fact = re.search(r"^Fact to check: (.+)$", text, re.M)
        if fact:
            ok = fact.group(1) in true_facts
        else:
            ok = re.search(r"^Agent's final answer: (.+)$", text, re.M).group(1) in grounded_answers
        return f"The screenshots were inspected.\nVerdict: {'SUCCESS' if ok else 'NOT SUCCESS'}"

    return ChatServer(reply)


def _evidence(answer: str) -> Evidence:
    task = rubric_task([["price shown", "item is blue", "store is Shop"], ["stock shown"]])
    return Evidence(task, answer, ["1. click(x=1, y=2)"], [png_bytes(1), png_bytes(2)])


@pytest.mark.parametrize("true_facts,answer,success,failed", [
    ({"price shown", "item is blue", "store is Shop", "stock shown"}, "$12", True, []),
    ({"price shown", "store is Shop", "stock shown"}, "$12", False, ["item is blue"]),
    ({"price shown", "item is blue", "store is Shop", "stock shown"}, "$99 (invented)", False, []),
])
def test_rubric_judge_rewards_only_when_every_fact_and_the_answer_hold(true_facts, answer, success, failed) -> None:
    with FactServer(true_facts, {"$12"}) as server:
        judge = RubricJudge(OpenAIChatProvider(server.url, "judge-model"))
        verdict = judge.judge(_evidence(answer), "rubric")
        requests = server.requests
    assert verdict.success is success and verdict.protocol == "rubric"
    assert [f["fact"] for f in verdict.details["facts"] if not f["passed"]] == failed
    assert verdict.details["grounded"] is (answer == "$12")
    assert verdict.calls == len(requests) == 5  # every fact plus the anti-hallucination call
    # each call carries both screenshots as image parts, in the chat-completions format
    assert all(sum(p["type"] == "image_url" for p in r["messages"][1]["content"]) == 2 for r in requests)


def test_stop_on_failure_saves_calls() -> None:
    with FactServer({"price shown"}, {"$12"}) as server:
        result = RubricJudge(OpenAIChatProvider(server.url, "m"), stop_on_failure=True).rubric_verdict(_evidence("$12"))
        assert len(server.requests) == 3 and result.reward == 0.0  # grounding, fact 1 ok, fact 2 fails


def test_verdict_parsing_never_reads_not_success_as_success() -> None:
    assert parse_success("... Verdict: NOT SUCCESS") is False
    assert parse_success("first Verdict: NOT SUCCESS, on reflection\nVerdict: **SUCCESS**") is True
    with pytest.raises(Exception, match="no 'Verdict"):
        parse_success("looks fine to me")


def test_rubric_judge_plugs_into_the_trajectory_reward() -> None:
    import asyncio

    from weblica.env.episode import StepRecord, Trajectory
    from weblica.scoring.judge import JudgeTimeout
    from weblica.scoring.reward import compute_reward
    from weblica.scoring.rubric import RubricTrajectoryJudge

    task = rubric_task([["price shown", "item is blue", "store is Shop"]])
    steps = [StepRecord(1, "<think>ok</think>", [{"name": "done", "arguments": {"answer": "$12"}}],
                        ["Success: task marked done."], "https://shop.test/", "s1")]
    trajectory = Trajectory("t", 0, "e", "https://shop.test/", "s0", steps=steps, termination_reason="done",
                            answer="$12")
    with FactServer({"price shown", "item is blue", "store is Shop"}, {"$12"}) as server:
        judge = RubricTrajectoryJudge(OpenAIChatProvider(server.url, "m"))
        result = asyncio.run(compute_reward(trajectory, task, judge=judge, screenshots=[png_bytes(3)]))
        assert (result.reward, result.success, result.source) == (1.0, True, "judge")
        assert "done(answer='$12')" in server.requests[-1]["messages"][1]["content"][0]["text"]
    with FactServer({"price shown"}, {"$12"}) as server:
        judge = RubricTrajectoryJudge(OpenAIChatProvider(server.url, "m"))
        result = asyncio.run(compute_reward(trajectory, task, judge=judge, screenshots=[png_bytes(3)]))
        assert (result.reward, result.removed) == (0.0, False)
    with pytest.raises(JudgeTimeout):  # no fact groups and no fallback: a judge error, never a 0
        asyncio.run(RubricTrajectoryJudge(lambda m: "")(rubric_task(None), "x", steps, []))


def test_decompose_cli_rewrites_through_an_openai_compatible_server(tmp_path: Path) -> None:
    src = tmp_path / "t.jsonl"
    save_tasks([rubric_task([["p1", "p2", "p3"], ["q1"]], id="k")], src)
    with ChatServer(lambda text: "Find the price on shop.test." if "Group 2 (DROPPED)" in text else "?") as server:
        result = CliRunner().invoke(cli_with("weblica.tasks.commands"),
                                    ["tasks", "decompose", str(src), "--llm", f"openai:{server.url}#rewriter",
                                     "--only-subtasks", "--json"])
        assert len(server.requests) == 1 and server.requests[0]["model"] == "rewriter"
    assert result.exit_code == 0, result.output
    (sub,) = load_tasks(json.loads(result.stdout)["out"])
    assert (sub.id, sub.instruction, sub.difficulty) == ("k~g0", "Find the price on shop.test.", 3)
