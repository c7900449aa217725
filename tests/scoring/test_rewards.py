"""Rewards: checks first, the judge where none exist, the format gate, removal of env-side failures."""
import asyncio
import base64

import pytest
from fixtures_models import ProviderServer, make_task, png

from weblica.env.episode import StepRecord, Trajectory
from weblica.env.task import Check
from weblica.scoring.judge import JudgeVerdict, judge_messages, make_judge, parse_verdict
from weblica.scoring.reward import FORMAT_PENALTY, compute_reward, format_error_streak, load_screenshots

GOOD = '<think>ok</think><tool_call>{"name": "click", "arguments": {"x": 1, "y": 2}}</tool_call>'
CLICK = {"name": "click", "arguments": {"x": 1.0, "y": 2.0, "button": "left", "clicks": 1}}


def good(i: int) -> StepRecord:
    return StepRecord(i, GOOD, [CLICK], [f"Success: clicked at (1, 2), step {i}."], f"http://shop.test/{i}", "0" * 64)


def bad(i: int, text: str = "I think I should click") -> StepRecord:
    return StepRecord(i, text, [], [], f"http://shop.test/{i}", "0" * 64, parse_errors=["no tool call found"])


def done(i: int, answer: str = "$24.99") -> StepRecord:
    action = {"name": "done", "arguments": {"answer": answer}}
    return StepRecord(i, f'<think>x</think><tool_call>{{"name": "done", "arguments": {{"answer": "{answer}"}}}}'
                         f'</tool_call>', [action], ["Success: task marked done."], f"http://shop.test/{i}", "0" * 64)


def trajectory(steps, reason="done", **kwargs) -> Trajectory:
    return Trajectory(task_id="t-kettle", seed=0, episode_id="e1", start_url="http://shop.test/",
                      start_screenshot_sha256="0" * 64, steps=list(steps), termination_reason=reason, **kwargs)


class NeverCalled:
    async def __call__(self, *args, **kwargs):
        raise AssertionError("the judge must not be called here")


class Fixed:
    def __init__(self, verdict, text="Verdict: x"):
        self.verdict, self.text, self.calls = verdict, text, 0

    async def __call__(self, *args, **kwargs):
        self.calls += 1
        return JudgeVerdict(self.verdict, self.text)


def reward(traj, task=None, **kwargs):
    return asyncio.run(compute_reward(traj, task or make_task(), **kwargs))


# ---- gate, removal, order ---------------------------------------------------------------------------

@pytest.mark.parametrize("reason", ["env_error", "browser_crash", "timeout"])
def test_env_failures_are_removed_not_scored(reason):
    result = reward(trajectory([good(0), done(1)], reason=reason), judge=NeverCalled())
    assert result.removed and result.source == "env_failure" and not result.success


def test_format_gate_after_three_consecutive_unparseable_responses():
    steps = [good(0), bad(1), bad(2), bad(3)]
    assert format_error_streak(steps) == 3
    result = reward(trajectory(steps, reason="format_error"), judge=NeverCalled())
    assert result.reward == FORMAT_PENALTY == -1.0 and not result.removed
    # the gate holds even if the engine named another reason
    assert reward(trajectory(steps + [done(4)]), judge=NeverCalled()).reward == -1.0


def test_two_unparseable_in_a_row_do_not_trip_the_gate():
    steps = [bad(0), bad(1), good(2), bad(3), bad(4, "<think>no calls</think> hmm"), done(5)]
    assert format_error_streak(steps) == 2
    task = make_task(checks=[Check("answer_match", "$24.99", mode="numeric")])
    result = reward(trajectory(steps), task)
    assert result.reward == 1.0 and result.source == "checks"


def test_missing_think_counts_as_unparseable():
    no_think = StepRecord(0, '<tool_call>{"name": "wait", "arguments": {}}</tool_call>', [{"name": "wait"}],
                          [], "u", "0" * 64)
    assert format_error_streak([no_think] * 3) == 3


def test_unfinished_trajectories_score_zero_without_judge():
    result = reward(trajectory([good(0), good(1)], reason="max_steps"), judge=NeverCalled())
    assert (result.reward, result.removed, result.source) == (0.0, False, "not_done")


def test_checks_come_first_and_the_judge_is_not_asked():
    task = make_task(checks=[Check("answer_match", "24.99", mode="numeric")], rubric=["price is right"])
    assert reward(trajectory([good(0), done(1)]), task, judge=NeverCalled()).reward == 1.0
    wrong = reward(trajectory([done(0, "$19.99")]), task, judge=NeverCalled())
    assert wrong.reward == 0.0 and not wrong.removed and wrong.check_results[0]["passed"] is False


def test_state_and_url_checks_use_final_state():
    task = make_task(checks=[Check("state_match", 1, path="cart.count"), Check("url_match", "/3", mode="contains")])
    traj = trajectory([good(0), good(1), good(2), done(3)])
    assert reward(traj, task, state={"cart": {"count": 1}}).reward == 1.0
    assert reward(traj, task, state={"cart": {"count": 0}}).reward == 0.0


def test_judge_verdicts_map_to_rewards_and_removal():
    traj = trajectory([good(0), done(1)])
    success = Fixed("success")
    result = reward(traj, judge=success)
    assert (result.reward, result.success, result.source, success.calls) == (1.0, True, "judge", 1)
    assert reward(traj, judge=Fixed("failure")).reward == 0.0
    site = reward(traj, judge=Fixed("website_failure"))
    assert site.removed and site.reward == 0.0
    assert reward(traj, judge=Fixed(None, "I cannot tell.")).removed
    assert reward(traj).removed  # no checks, no judge: nobody can say; not a 0


def test_apply_writes_onto_the_trajectory():
    traj = trajectory([good(0), done(1)])
    reward(traj, judge=Fixed("website_failure", "Verdict: website failure")).apply(traj)
    assert traj.removed and traj.reward == 0.0 and traj.metadata["reward"]["judge"] == "Verdict: website failure"


# ---- the judge's parser and input ---------------------------------------------------------------------

@pytest.mark.parametrize("text,verdict", [
    ("Verdict: unsuccessful", "failure"),
    ("Verdict: successful", "success"),
    ("The agent was unsuccessful.", "failure"),      # 'successful' is inside 'unsuccessful'
    ("The task was not successful", "failure"),
    ("It successfully opened the page but the answer is wrong.\nVerdict: unsuccessful", "failure"),
    ("Looked unsuccessful at first, but it recovered.\nVerdict: successful", "success"),
    ("verdict: Website Failure", "website_failure"),
    ("Verdict: successful\n...on reflection...\nVerdict: unsuccessful", "failure"),  # the last one counts
    ("I am not sure.", None),
    ("", None),
])
def test_parse_verdict(text, verdict):
    assert parse_verdict(text) == verdict


def test_judge_input_has_instruction_answer_history_and_last_three_screenshots():
    shots = [png((i * 50, 0, 0), (64, 36)) for i in range(5)]
    steps = [good(0), bad(1), done(2)]
    task = make_task(rubric=["The answer is the kettle's price.", "The kettle page is open."])
    system, user = judge_messages(task, "$24.99", steps, shots)
    assert "Verdict: successful | unsuccessful | website failure" in system.text
    text = user.text
    assert "Task: Find the price of the blue kettle." in text and "Final answer: $24.99" in text
    assert "- The kettle page is open." in text
    assert "Step 0: click(x=1.0, y=2.0" in text and "feedback: Success: clicked at (1, 2), step 0." in text
    assert "Step 1: (no valid tool call)" in text and "error: no tool call found" in text
    assert "Step 2: done(answer='$24.99')" in text
    assert user.images == shots[-3:]


# ---- the judge over the wire ------------------------------------------------------------------------

def test_anthropic_judge_success_over_the_wire():
    shots = [png((i * 60, 10, 10), (64, 36)) for i in range(4)]
    with ProviderServer() as server:
        server.queue("anthropic_messages_judge_success")
        judge = make_judge("anthropic:claude-sonnet-4-5", base_url=server.url, api_key="k")
        result = reward(trajectory([good(0), done(1)]), judge=judge, screenshots=shots)
    assert (result.reward, result.success, result.source) == (1.0, True, "judge")
    body = server.requests[-1]["json"]
    assert body["temperature"] == 0.0 and "Verdict:" in body["system"]
    images = [b for b in body["messages"][0]["content"] if b["type"] == "image"]
    assert [base64.b64decode(b["source"]["data"]) for b in images] == shots[-3:]


def test_openai_judge_unsuccessful_despite_successfully_in_reasoning():
    with ProviderServer() as server:
        server.queue("openai_chat_judge_unsuccessful")
        judge = make_judge(f"openai:{server.url}/v1#gpt-4.1")
        result = reward(trajectory([done(0, "$19.99")]), judge=judge, screenshots=[png()])
    assert (result.reward, result.removed) == (0.0, False)
    assert "successfully opened" in result.judge_text


def test_website_failure_over_the_wire_removes_the_sample():
    with ProviderServer() as server:
        server.queue("anthropic_messages_judge_website_failure")
        judge = make_judge("anthropic:claude-sonnet-4-5", base_url=server.url, api_key="k")
        result = reward(trajectory([done(0)]), judge=judge)
    assert result.removed and result.source == "judge"


def test_judge_provider_error_removes_the_sample():
    with ProviderServer() as server:
        server.queue("anthropic_overloaded")
        judge = make_judge("anthropic:claude-sonnet-4-5", base_url=server.url, api_key="k")
        result = reward(trajectory([done(0)]), judge=judge)
    assert result.removed and result.source == "judge_error" and "Overloaded" in result.detail


def test_judge_timeout_removes_the_sample():
    with ProviderServer() as server:
        server.queue("anthropic_messages_judge_success", delay=3.0)
        judge = make_judge("anthropic:claude-sonnet-4-5", base_url=server.url, api_key="k", timeout_s=0.5)
        result = reward(trajectory([done(0)]), judge=judge)
    assert result.removed and result.source == "judge_error" and "Timeout" in result.detail


def test_load_screenshots_takes_the_last_three_distinct_states(tmp_path):
    import hashlib

    shots = [png((i * 40, 0, 0), (32, 18)) for i in range(5)]
    shas = [hashlib.sha256(s).hexdigest() for s in shots]
    for sha, shot in zip(shas, shots):
        (tmp_path / f"{sha}.png").write_bytes(shot)
    steps = [good(i) for i in range(5)]
    for step, sha in zip(steps, [shas[1], shas[2], shas[3], shas[3], shas[4]]):  # step 3 changed nothing
        step.screenshot_sha256 = sha
    traj = trajectory(steps)
    traj.start_screenshot_sha256 = shas[0]
    assert load_screenshots(traj, tmp_path) == [shots[2], shots[3], shots[4]]
    (tmp_path / f"{shas[4]}.png").unlink()
    assert load_screenshots(traj, tmp_path) == [shots[2], shots[3]]


def test_the_judge_request_says_that_lists_hedges_and_refuse_and_guess_fail():
    """Issue 16 point 7: the rubric judge is told the checks' rule, over both wire formats."""
    from weblica.scoring.answer import ANSWER_RULE

    listed = "Soft Oxford, Cropped Cardigan, Bold Poncho"
    with ProviderServer() as server:
        server.queue("anthropic_messages_judge_success")
        server.queue("openai_chat_judge_unsuccessful")
        reward(trajectory([done(0, listed)]), judge=make_judge("anthropic:claude-sonnet-4-5", base_url=server.url,
                                                               api_key="k"))
        reward(trajectory([done(0, listed)]), judge=make_judge(f"openai:{server.url}/v1#gpt-4.1"))
    anthropic, openai = (r["json"] for r in server.requests)
    systems = [anthropic["system"] if isinstance(anthropic["system"], str) else
               " ".join(b["text"] for b in anthropic["system"]),
               next(m["content"] for m in openai["messages"] if m["role"] == "system")]
    for system in systems:
        system = system if isinstance(system, str) else " ".join(p.get("text", "") for p in system)
        assert ANSWER_RULE in system
        for words in ("lists several candidates", "'X or Y'", "offers a value or an alternative anyway", "asserts no value"):
            assert words in system
    assert f"Final answer: {listed}" in str(anthropic["messages"])


def test_done_with_the_infeasible_flag_reaches_the_checks():
    from weblica.synth.checks import answer_infeasible

    def flagged(answer=""):
        action = {"name": "done", "arguments": {"answer": answer, "infeasible": True}}
        return StepRecord(0, "<think>x</think>", [action], ["Success: done."], "http://shop.test/0", "0" * 64)

    infeasible = make_task(checks=[answer_infeasible()])
    feasible = make_task(checks=[Check("answer_match", "$24.99", mode="numeric")])
    assert reward(trajectory([flagged()]), infeasible).reward == 1.0
    assert reward(trajectory([flagged("probably $24.99")]), infeasible).reward == 0.0
    result = reward(trajectory([flagged("$24.99")]), feasible)
    assert result.reward == 0.0 and "infeasible: true" in result.detail
    # a listing of candidates is not the price, whoever scores it
    assert reward(trajectory([done(0, "$19.99, $24.99, $29.99")]), feasible).reward == 0.0
