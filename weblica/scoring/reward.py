"""Trajectory rewards (OpenWebRL appendix A.4, with weblica's checks first).

In order:
1. Environment failures (env_error, browser_crash, timeout) -> the sample is *removed*: training masks
   it, metrics that exclude aborted tasks skip it. Never a 0, which would punish the policy for the env.
2. Format gate: 3 consecutive unparseable responses (or a `format_error` termination) -> -1.
3. Only a trajectory the agent ended itself (`done`) can score; others (max_steps, ...) get 0.
4. Checks, where the task has any: 1 when all pass, else 0. An answer check passes only for an answer that
   asserts the gold and no competing value (`weblica.scoring.answer`); `done(infeasible=true)` counts
   as a refusal, which passes only on an infeasible task.
5. Otherwise the LLM judge: successful -> 1, unsuccessful -> 0; `website failure`, an unreadable verdict,
   a timeout or a provider error -> removed.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Sequence

from weblica.env.episode import ENV_FAILURES, StepRecord, Trajectory
from weblica.env.task import Task, episode_task
from weblica.scoring.checks import evaluate_checks
from weblica.scoring.judge import Judge, JudgeTimeout

FORMAT_GATE_STREAK = 3
FORMAT_PENALTY = -1.0


@dataclass
class RewardResult:
    reward: float
    success: bool
    removed: bool
    source: str  # env_failure | format_gate | not_done | no_answer | checks | judge | judge_error | no_judge
    detail: str = ""
    check_results: list[dict[str, Any]] = field(default_factory=list)
    judge_text: str | None = None

    def apply(self, trajectory: Trajectory) -> Trajectory:
        """Write the result onto a trajectory (reward, success, removed, check results, metadata)."""
        trajectory.reward = self.reward
        trajectory.success = self.success
        trajectory.removed = trajectory.removed or self.removed
        if self.check_results:
            trajectory.check_results = self.check_results
        trajectory.metadata["reward"] = {"source": self.source, "detail": self.detail}
        if self.judge_text is not None:
            trajectory.metadata["reward"]["judge"] = self.judge_text
        return trajectory


def is_unparseable(step: StepRecord) -> bool:
    """A response that broke the protocol: no `</think>`, or calls that did not parse into any action."""
    return "</think>" not in step.response or (bool(step.parse_errors) and not step.actions)


def format_error_streak(steps: Sequence[StepRecord]) -> int:
    """The longest run of consecutive unparseable responses."""
    longest = run = 0
    for step in steps:
        run = run + 1 if is_unparseable(step) else 0
        longest = max(longest, run)
    return longest


def final_answer(trajectory: Trajectory) -> str | None:
    """The answer of the final `done` call (the trajectory's own field when the engine set it)."""
    if trajectory.answer is not None:
        return trajectory.answer
    for step in reversed(trajectory.steps):
        for action in reversed(step.actions):
            if action.get("name") == "done":
                return str((action.get("arguments") or action.get("args") or {}).get("answer", ""))
    return None


def declared_infeasible(trajectory: Trajectory) -> bool:
    """Whether the final `done` call carried the structured flag `infeasible: true`."""
    for step in reversed(trajectory.steps):
        for action in reversed(step.actions):
            if action.get("name") == "done":
                return (action.get("arguments") or action.get("args") or {}).get("infeasible") is True
    return False


def load_screenshots(trajectory: Trajectory, screens_dir: str | Path, last: int = 3) -> list[bytes]:
    """The episode's last `last` distinct screenshots, oldest first, from a run's `screens/<sha>.png`
    store (the start page counts); missing files are skipped."""
    shas = [trajectory.start_screenshot_sha256] + [s.screenshot_sha256 for s in trajectory.steps]
    distinct: list[str] = []
    for sha in shas:  # a no-op step repeats the screenshot; the judge should see different states
        if sha and (not distinct or distinct[-1] != sha):
            distinct.append(sha)
    out = []
    for sha in distinct[-last:]:
        path = Path(screens_dir) / f"{sha}.png"
        if path.exists():
            out.append(path.read_bytes())
    return out


async def compute_reward(trajectory: Trajectory, task: Task, *, final_url: str | None = None,
                         state: dict[str, Any] | None = None, judge: Judge | None = None,
                         screenshots: Sequence[bytes] = ()) -> RewardResult:
    """The reward of a finished trajectory. `final_url` defaults to the last step's URL, `state` is the
    site's server-side state for `state_match` checks, `screenshots` the episode's screenshots (the judge
    sees the last three)."""
    task = episode_task(task, trajectory.seed)  # a task with instances: scored as the episode played it
    reason = trajectory.termination_reason
    if reason in ENV_FAILURES or trajectory.removed:
        return RewardResult(0.0, False, True, "env_failure", f"environment failure: {reason or trajectory.error}")
    streak = format_error_streak(trajectory.steps)
    if reason == "format_error" or streak >= FORMAT_GATE_STREAK:
        return RewardResult(FORMAT_PENALTY, False, False, "format_gate",
                            f"{streak} consecutive unparseable responses")
    if reason != "done":
        return RewardResult(0.0, False, False, "not_done", f"the agent did not finish ({reason})")
    answer = final_answer(trajectory)
    if answer is None:
        return RewardResult(0.0, False, False, "no_answer", "the episode ended without a done call")
    if task.checks and trajectory.check_results and state is None:
        # the env ran the checks when the agent called done, against the state as it was then; the
        # site's per-episode state may be gone by now, so those results are the truth
        passed = all(r.get("passed") for r in trajectory.check_results)
        return RewardResult(1.0 if passed else 0.0, passed, False, "checks",
                            "; ".join(str(r.get("detail", "")) for r in trajectory.check_results),
                            list(trajectory.check_results))
    url = final_url if final_url is not None else (trajectory.steps[-1].url if trajectory.steps else task.start_url)
    if task.checks:
        reward, results = evaluate_checks(task, answer, url, state, infeasible=declared_infeasible(trajectory))
        return RewardResult(reward, reward == 1.0, False, "checks",
                            "; ".join(r.detail for r in results), [r.to_dict() for r in results])
    if judge is None:
        # no checks and no judge: nothing can say it succeeded; remove rather than call it a failure
        return RewardResult(0.0, False, True, "no_judge", "the task has no checks and no judge was configured")
    try:
        verdict = await judge(task, answer, trajectory.steps, screenshots)
    except JudgeTimeout as exc:
        return RewardResult(0.0, False, True, "judge_error", str(exc))
    if verdict.verdict == "website_failure":
        return RewardResult(0.0, False, True, "judge", "the judge reports a website failure", judge_text=verdict.text)
    if verdict.score is None:
        return RewardResult(0.0, False, True, "judge_error", "the judge gave no verdict", judge_text=verdict.text)
    return RewardResult(verdict.score, verdict.score == 1.0, False, "judge", f"judge: {verdict.verdict}",
                        judge_text=verdict.text)
