"""Rubric tasks (WebGym): a rubric is a list of *fact groups*, each a list of facts; difficulty is the total
number of facts; a run earns 1 only if every fact is verified and the answer claims nothing unseen.

A task's `rubric` field holds the groups in one of two JSON shapes, both read by `fact_groups`:

- `[["fact", "fact"], ["fact"]]` — plain groups;
- `[{"objective": "find the cheapest flight", "facts": ["...", "..."]}, ...]` — groups with the clause of the
  instruction they come from (decomposition rewrites instructions from these clauses).

A flat list of strings is *one* group: that is how WebGym's released task files store `evaluator_reference`
(the whole list is the fact group its judge shows as context), and how older weblica tasks list criteria.

The judge protocol follows WebGym's evaluator: one call per fact (is this fact verified by the screenshots?)
and one anti-hallucination call (is every claim in the final answer visible in the screenshots?). The reward
is 1 only if all of them say SUCCESS. It runs through `weblica.scoring.benchmark_judges.Judge` and any chat provider, so
the same OpenAI-compatible server (or distilled judge) that serves the other protocols serves this one.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from typing import Any, Sequence

from weblica.env.task import Task
from weblica.scoring.answer import ANSWER_RULE
from weblica.scoring.benchmark_judges import Evidence, Judge, JudgeError, Prompt, Verdict, chat
from weblica.scoring.fact_groups import FactGroup, fact_groups, parse_fact_groups
from weblica.scoring.judge import JudgeTimeout, JudgeVerdict, history_text

MAX_JUDGE_IMAGES = 48  # chat APIs cap images per request near 50; the last ones carry the result


# ---- the judge protocol ----------------------------------------------------------------------------

FACT_PROMPT = Prompt(
    system="""You check one fact about a web agent's browsing session against screenshots of that session.
You get the task (context only), the group of facts the fact belongs to (context only), the fact to check,
the agent's actions, and the screenshots it saw. Decide only whether the screenshots show evidence that the
fact holds. A fact naming a specific item needs that exact item on screen, not a similar one; a fact with
several parts needs every part; "or" between alternatives means any one alternative suffices. The agent's
own words are not evidence.
Explain briefly what the screenshots show, then end with exactly one line:
Verdict: SUCCESS or Verdict: NOT SUCCESS""",
    user="""Task (context only): $task

Fact group (context only):
$group

Fact to check: $fact

Agent actions:
$actions

$n_images screenshot(s) of the session follow, oldest first.""")

GROUNDING_PROMPT = Prompt(
    system="""You check a web agent's final answer for hallucination. You get the task, the agent's final
answer and screenshots of the pages it visited. List the concrete claims in the answer (names, numbers,
dates, prices, places, statuses) and for each say whether a screenshot shows it. The answer passes only if
every claim is visible in some screenshot; an answer that says it could not find something passes only if
the screenshots agree. Expect agents to invent answers. $answer_rule
End with exactly one line:
Verdict: SUCCESS or Verdict: NOT SUCCESS""",
    user="""Task: $task

Agent's final answer: $answer

$n_images screenshot(s) of the session follow, oldest first.""")

_VERDICT = re.compile(r"verdict\s*[:：]\s*\**\s*(not\s+success|success)", re.IGNORECASE)


def parse_success(text: str) -> bool:
    """SUCCESS / NOT SUCCESS from a reply: the last `Verdict:` line decides; NOT SUCCESS is matched first so
    a negative verdict is never read as a positive one. A reply with no verdict line is a JudgeError."""
    found = _VERDICT.findall(text or "")
    if not found:
        raise JudgeError(f"rubric judge gave no 'Verdict: SUCCESS|NOT SUCCESS' line: {(text or '')[-200:]!r}")
    return not found[-1].lower().startswith("not")


@dataclass
class FactResult:
    group: int
    fact: str
    passed: bool
    reply: str

    def to_dict(self) -> dict[str, Any]:
        return {"group": self.group, "fact": self.fact, "passed": self.passed, "reply": self.reply[-300:]}


@dataclass
class RubricVerdict:
    """Per-fact outcomes plus the anti-hallucination check; `success` only if every one passed."""

    facts: list[FactResult] = field(default_factory=list)
    grounded: bool = False
    grounding_reply: str = ""

    @property
    def success(self) -> bool:
        return self.grounded and bool(self.facts) and all(f.passed for f in self.facts)

    @property
    def reward(self) -> float:
        return 1.0 if self.success else 0.0


class RubricJudge(Judge):
    """`Judge` with the `rubric` protocol: `judge(evidence, "rubric")` returns a `Verdict` whose details
    hold every fact's outcome. `stop_on_failure` skips the remaining calls once the reward is known to be 0
    (WebGym does this to save calls); by default every fact is checked so reports are complete."""

    def __init__(self, provider: Any, stop_on_failure: bool = False, max_images: int = MAX_JUDGE_IMAGES) -> None:
        super().__init__(provider)
        self.stop_on_failure = stop_on_failure
        self.max_images = max_images

    def _call(self, prompt: Prompt, images: Sequence[bytes], **values: Any) -> str:
        system, user = prompt.render(answer_rule=ANSWER_RULE, **values)
        return self.provider(chat(system, user, images))

    def rubric_verdict(self, evidence: Evidence) -> RubricVerdict:
        groups = fact_groups(evidence.task)
        if not groups:
            raise JudgeError(f"task {evidence.task.id} has no fact-group rubric; use another protocol")
        images = list(evidence.screenshots[-self.max_images:])
        task_text = evidence.task.instruction
        out = RubricVerdict()
        out.grounding_reply = self._call(GROUNDING_PROMPT, images, task=task_text, n_images=len(images),
                                         answer=evidence.answer or "(no answer)")
        out.grounded = parse_success(out.grounding_reply)
        if not out.grounded and self.stop_on_failure:
            return out
        actions = "\n".join(evidence.actions) or "(no actions)"
        for g, group in enumerate(groups):
            listed = "\n".join(f"- {f}" for f in group.facts)
            for fact in group.facts:
                reply = self._call(FACT_PROMPT, images, task=task_text, group=listed, fact=fact, actions=actions,
                                   n_images=len(images))
                out.facts.append(FactResult(g, fact, parse_success(reply), reply))
                if self.stop_on_failure and not out.facts[-1].passed:
                    return out
        return out

    def _rubric(self, evidence: Evidence) -> Verdict:
        # reached through Judge.judge(evidence, "rubric"): the protocol dispatch is by method name
        result = self.rubric_verdict(evidence)
        failed = [f.fact for f in result.facts if not f.passed]
        if not result.grounded:
            reason = "the answer makes claims the screenshots do not show"
        elif failed:
            reason = f"{len(failed)} fact(s) not verified: " + "; ".join(failed)
        else:
            reason = f"all {len(result.facts)} facts verified and the answer is grounded"
        calls = len(result.facts) + 1
        return Verdict(result.success, reason, "rubric", calls,
                       {"grounded": result.grounded, "facts": [f.to_dict() for f in result.facts]})


class RubricTrajectoryJudge:
    """The rubric protocol behind the trajectory-judge interface the reward uses
    (`await judge(task, answer, steps, screenshots) -> JudgeVerdict`, `weblica.scoring.reward.compute_reward`).

    Tasks with fact groups get the WebGym protocol; others go to `fallback` (e.g. `make_judge(spec)`), or are
    reported as a judge error, which the reward turns into a removed sample rather than a 0. Provider and
    protocol errors are judge errors too: a broken judge must not read as a failed agent.
    """

    def __init__(self, provider: Any, fallback: Any = None, stop_on_failure: bool = True) -> None:
        # stop_on_failure: a reward needs only the 0/1, so skip calls once it is known to be 0
        self.judge = RubricJudge(provider, stop_on_failure=stop_on_failure)
        self.fallback = fallback

    async def __call__(self, task: Task, answer: str | None, steps: Sequence[Any], screenshots: Sequence[bytes]) -> Any:
        import asyncio

        import httpx

        if not fact_groups(task):
            if self.fallback is not None:
                return await self.fallback(task, answer, steps, screenshots)
            raise JudgeTimeout(f"task {task.id} has no fact-group rubric and no fallback judge")
        evidence = Evidence(task, answer, history_text(steps).splitlines(), list(screenshots))
        try:
            verdict = await asyncio.to_thread(self.judge.judge, evidence, "rubric")
        except (JudgeError, httpx.HTTPError) as exc:
            raise JudgeTimeout(f"rubric judge: {exc}") from exc
        outcome = "successful" if verdict.success else "unsuccessful"
        return JudgeVerdict("success" if verdict.success else "failure", f"{verdict.reason}\nVerdict: {outcome}")
