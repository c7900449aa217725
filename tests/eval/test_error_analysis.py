"""Reasoning-pattern proxies (OpenWebRL appendix D) and rule-based error analysis (appendix E)."""
from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from weblica.analysis.failures import CATEGORIES, classify, failure_report
from weblica.analysis.patterns import proxy_labels, reasoning_text
from weblica.analysis.reasoning import compare_reports, pattern_report
from weblica.env.episode import Trajectory


from episode_records import cli_with, make_run, png_bytes, step, traj  # noqa: F401,E402


@pytest.mark.parametrize("text,expected", [
    ("I have already tried the search box twice.", {"history_summarization"}),
    ("So far, we have visited three pages without luck.", {"history_summarization"}),
    ("All approaches have failed on this site.", {"history_summarization"}),
    ("The page shows a reCAPTCHA challenge.", {"blocker_diagnosis"}),
    ("I am blocked by a 403 Forbidden page.", {"blocker_diagnosis"}),
    ("This site needs human verification before continuing.", {"blocker_diagnosis"}),
    ("Let me try a different search query.", {"retry_plan_loop"}),
    ("One final attempt: the help center.", {"retry_plan_loop"}),
    ("I should go back and try the menu.", {"retry_plan_loop"}),
    ("This laptop meets every requirement I was given.", {"condition_proof"}),
    ("All the criteria are now met.", {"condition_proof"}),
    ("The second condition is the colour.", {"condition_proof"}),
    ("The kettle costs $39, which satisfies the budget of under $50.", {"condition_proof"}),
    ("I need to find a kettle under $50.", set()),  # a constraint mentioned, nothing proven
    ("Click the search button.", set()),
])
def test_proxy_labels_match_each_family(text: str, expected: set[str]) -> None:
    assert proxy_labels(text) == expected


def test_only_reasoning_before_the_first_tool_call_counts() -> None:
    response = ('<think>Open the product page.</think>\n<tool_call>{"name": "done", "arguments": '
                '{"answer": "I have already tried everything; captcha"}}</tool_call>')
    assert "captcha" not in reasoning_text(response)
    assert proxy_labels(response) == set()
    assert proxy_labels("I have already tried the cart and hit a captcha wall.") == {"history_summarization",
                                                                                      "blocker_diagnosis"}


def test_pattern_report_frequencies_and_lengths_by_hand() -> None:
    a = "I have already tried the search."                 # 32 chars, history
    b = "Let me try a different search."                   # 30 chars, retry
    c = "Click it."                                         # 9 chars, none
    d = "I have already tried it; a captcha blocks me."     # 45 chars, history + blocker
    trajs = [traj("e1", [step(1, a, "x1"), step(2, c, "x2")]), traj("e2", [step(1, b, "y1"), step(2, d, "y2")])]
    report = pattern_report(trajs, "run").to_dict()
    assert report["turns"] == 4 and report["mean_length"] == (32 + 30 + 9 + 45) / 4
    labels = report["labels"]
    assert labels["history_summarization"] == {"turns": 2, "frequency": 0.5, "mean_length": (32 + 45) / 2}
    assert labels["blocker_diagnosis"] == {"turns": 1, "frequency": 0.25, "mean_length": 45.0}
    assert labels["retry_plan_loop"] == {"turns": 1, "frequency": 0.25, "mean_length": 30.0}
    assert labels["condition_proof"]["turns"] == 0
    assert labels["no_proxy"] == {"turns": 1, "frequency": 0.25, "mean_length": 9.0}


def test_token_unit_uses_sampled_token_ids() -> None:
    trajs = [traj("e1", [step(1, "I have already tried it.", "x1", token_ids=[1] * 12)])]
    report = pattern_report(trajs, "run", unit="tokens").to_dict()
    assert report["labels"]["history_summarization"]["mean_length"] == 12.0


def test_compare_reports_gives_after_minus_before() -> None:
    early = pattern_report([traj("e", [step(1, "Click.", "a"), step(2, "I have already tried it.", "b")])], "early")
    late = pattern_report([traj("e", [step(1, "I have already tried the search box and the menu.", "a")])], "late")
    change = compare_reports(early.to_dict(), late.to_dict())
    history = change["labels"]["history_summarization"]
    assert history["frequency"] == [0.5, 1.0] and history["frequency_change"] == 0.5
    assert history["mean_length_change"] == len("I have already tried the search box and the menu.") - len(
        "I have already tried it.")
    assert change["labels"]["no_proxy"]["frequency_change"] == -0.5


# ---- failures ------------------------------------------------------------------------------------------

def _failures() -> list[tuple[Trajectory, str]]:
    ok = [{"name": "done", "arguments": {"answer": "42"}}]
    return [
        (traj("env", [step(1, "Open.", "a")], reason="env_error", removed=True), "environment/access"),
        (traj("captcha", [step(1, "There is a CAPTCHA on the page.", "a")], reason="max_steps"), "environment/access"),
        (traj("net", [step(1, "Open.", "a", feedback=["Failed: 'goto_url' failed: net::ERR_CONNECTION_REFUSED"])],
              reason="max_steps"), "environment/access"),
        (traj("nojudge", [step(1, "Done.", "a", actions=ok)], removed=True,
              metadata={"reward": {"source": "no_judge"}}), "task definition"),
        (traj("badcheck", [step(1, "Done.", "a", actions=ok)],
              check_results=[{"type": "state_match", "passed": False, "detail": "state has no 'cart.total'"}]),
         "task definition"),
        (traj("format", [step(1, "garbage", "a", actions=[])], reason="format_error"), "grounding/interaction"),
        (traj("state", [step(1, "Submit.", "a"), step(2, "Done.", "b", actions=ok)],
              check_results=[{"type": "state_match", "passed": False, "detail": "state cart=0 does not match 1"}]),
         "grounding/interaction"),
        (traj("noops", [step(1, "Click.", "s0"), step(2, "Click.", "s0"), step(3, "Click.", "b")], reason="max_steps"),
         "grounding/interaction"),
        (traj("wrong", [step(1, "Read.", "a"), step(2, "Done.", "b", actions=ok)],
              check_results=[{"type": "answer_match", "passed": False, "detail": "answer '42' does not match"}]),
         "reasoning/constraint"),
        (traj("slow", [step(1, "Read.", "a"), step(2, "Scroll.", "b")], reason="max_steps"), "reasoning/constraint"),
    ]


@pytest.mark.parametrize("index", range(10))
def test_each_failure_lands_in_its_category(index: int) -> None:
    trajectory, expected = _failures()[index]
    category, rule = classify(trajectory)
    assert category == expected, rule


def test_failure_report_counts_and_viewer_links() -> None:
    cases = _failures()
    success = traj("good", [step(1, "Done.", "a")], success=True)
    trajs = [success] + [t for t, _ in cases]
    report = failure_report(trajs, viewer_url="http://127.0.0.1:9000/")
    assert report["episodes"] == 11 and report["failed"] == 10
    assert list(report["categories"]) == list(CATEGORIES)
    counts = {c: d["count"] for c, d in report["categories"].items()}
    assert counts == {"environment/access": 3, "reasoning/constraint": 2, "grounding/interaction": 3,
                      "task definition": 2}
    env = report["categories"]["environment/access"]
    assert env["share"] == 0.3 and env["by_termination"] == {"env_error": 1, "max_steps": 2}
    # episode index in the run (the success is index 0), as the viewer routes #episode/<run>/<index>
    assert env["examples"][0]["link"] == "http://127.0.0.1:9000/#episode/0/1"


def test_analyze_cli_patterns_compare_and_failures(tmp_path: Path) -> None:
    tasks = [{"id": "t1", "start_url": "http://shop.test/", "instruction": "Find it.", "checks": []}]
    early = make_run(tmp_path / "early", [traj("e1", [step(1, "Click.", "a"), step(2, "Let me try a different search.", "b")])],
                     tasks)
    late = make_run(tmp_path / "late", [t for t, _ in _failures()], tasks)
    runner = CliRunner()
    cli = cli_with("weblica.analysis.commands")
    result = runner.invoke(cli, ["analyze", str(early), "--compare", str(late), "--json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert data["before"]["turns"] == 2
    assert data["change"]["labels"]["retry_plan_loop"]["frequency"][0] == 0.5
    result = runner.invoke(cli, ["analyze", "--failures", str(late), "--json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert data["failed"] == 10 and sum(c["count"] for c in data["categories"].values()) == 10
    result = runner.invoke(cli, ["analyze", str(tmp_path / "missing")])
    assert result.exit_code != 0 and "not a run directory" in result.output


def test_live_eval_attribution_is_respected() -> None:
    blocked = traj("b", [step(1, "Open.", "a")], reason="env_error", removed=True, metadata={"blocked": True})
    site = traj("s", [step(1, "Read.", "a"), step(2, "Read.", "b")], reason="max_steps", metadata={"fault": "site"})
    judge = traj("j", [step(1, "Done.", "a")], metadata={"judge_error": "HTTP 500"}, removed=True)
    assert classify(blocked)[0] == classify(site)[0] == "environment/access"
    assert classify(judge)[0] == "task definition"
