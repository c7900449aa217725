"""The LLM judge for tasks without checks (OpenWebRL appendix A.4, F.2).

It sees the instruction, the rubric, the final answer, the action + feedback history as text and the last
three screenshots, and answers with a verdict line. The parser looks for `website failure` first, then
`unsuccessful` before `successful` (the latter is a substring of the former), so a negative verdict is
never read as a positive one. Timeouts and provider errors are not verdicts: the caller removes the sample.
"""
from __future__ import annotations

import asyncio
import re
from dataclasses import dataclass
from typing import Any, Sequence

from weblica.scoring.answer import ANSWER_RULE
from weblica.env.episode import StepRecord
from weblica.env.task import Task
from weblica.scoring.fact_groups import parse_fact_groups
from weblica.policy.backends.base import Backend, BackendError, SamplingOptions
from weblica.policy.context import Message, Part

JUDGE_SCREENSHOTS = 3
DEFAULT_JUDGE_TIMEOUT_S = 120.0

JUDGE_SYSTEM = f"""You evaluate whether a web agent completed a task in a browser.
You get the task, the criteria a successful run must meet (if any), the agent's final answer, the history
of its tool calls with the environment's feedback on each, and the last screenshots of the browser.
Judge only from this evidence. A run succeeds when the final state and answer satisfy the task and every
criterion; plausible effort is not success. {ANSWER_RULE} If the website itself was broken or unreachable
(error pages, blocked access, a CAPTCHA) so that no agent could have finished, say website failure.
Reason briefly, then end with exactly one line:
Verdict: successful | unsuccessful | website failure"""

VERDICTS = ("success", "failure", "website_failure")


@dataclass
class JudgeVerdict:
    verdict: str | None  # success | failure | website_failure | None (unreadable)
    text: str

    @property
    def score(self) -> float | None:
        return {"success": 1.0, "failure": 0.0}.get(self.verdict or "")


_VERDICT_LINE = re.compile(r"verdict\s*[:：]\s*(.+)", re.IGNORECASE)


def parse_verdict(text: str) -> str | None:
    """success / failure / website_failure from a judge's text, or None when it gave none.

    The last `Verdict:` line decides when there is one (reasoning may mention other outcomes); otherwise
    the whole text, checked in the order website failure, unsuccessful/not successful, successful.
    """
    lines = _VERDICT_LINE.findall(text or "")
    scope = (lines[-1] if lines else text or "").lower()
    if re.search(r"website[\s_-]*failure", scope):
        return "website_failure"
    if re.search(r"\bunsuccessful\b|\bnot\s+successful\b|\bfail(ed|ure)?\b", scope):
        return "failure"
    if re.search(r"\bsuccessful(ly)?\b|\bsuccess\b", scope):
        return "success"
    return None


def history_text(steps: Sequence[StepRecord]) -> str:
    """The action + feedback history, one block per step."""
    if not steps:
        return "(no steps)"
    blocks = []
    for s in steps:
        calls = "; ".join(_call_text(a) for a in s.actions) or "(no valid tool call)"
        lines = [f"Step {s.step}: {calls}"]
        lines += [f"  feedback: {f}" for f in s.feedback]
        lines += [f"  error: {e}" for e in s.parse_errors]
        blocks.append("\n".join(lines))
    return "\n".join(blocks)


def _call_text(action: dict[str, Any]) -> str:
    args = action.get("arguments", action.get("args", {})) or {}
    return f"{action.get('name')}({', '.join(f'{k}={v!r}' for k, v in args.items())})"


def _rubric_text(rubric: Any) -> str:
    """A rubric for the judge prompt: plain criteria as a list, WebGym fact groups group by group."""
    if not rubric:
        return "(none given; judge against the task itself)"
    if isinstance(rubric, str):
        return rubric
    groups = parse_fact_groups(rubric)
    if len(groups) == 1:
        return "\n".join(f"- {fact}" for fact in groups[0].facts)
    return "\n".join(f"Group {i}" + (f" ({g.objective})" if g.objective else "") + ":\n"
                     + "\n".join(f"  - {f}" for f in g.facts) for i, g in enumerate(groups, 1))


def judge_messages(task: Task, answer: str | None, steps: Sequence[StepRecord],
                   screenshots: Sequence[bytes]) -> list[Message]:
    """The judge's conversation: text first, then the last `JUDGE_SCREENSHOTS` screenshots, oldest first."""
    shots = list(screenshots)[-JUDGE_SCREENSHOTS:]
    text = (f"Task: {task.instruction}\n\nCriteria:\n{_rubric_text(task.rubric)}\n\n"
            f"Final answer: {answer if answer else '(empty)'}\n\nHistory:\n{history_text(steps)}\n\n"
            f"The last {len(shots)} screenshot(s) follow, oldest first.")
    parts = [Part("text", text)] + [Part("image", image=s) for s in shots]
    return [Message("system", [Part("text", JUDGE_SYSTEM)]), Message("user", parts)]


class JudgeTimeout(Exception):
    """The judge gave no usable answer in time; the sample is removed, not scored."""


class Judge:
    """An LLM judge over any chat backend (`anthropic:MODEL` or `openai:URL#MODEL`)."""

    def __init__(self, backend: Backend, timeout_s: float = DEFAULT_JUDGE_TIMEOUT_S) -> None:
        self.backend = backend
        self.timeout_s = timeout_s

    async def __call__(self, task: Task, answer: str | None, steps: Sequence[StepRecord],
                       screenshots: Sequence[bytes]) -> JudgeVerdict:
        """The verdict; raises JudgeTimeout on timeouts and provider errors."""
        messages = judge_messages(task, answer, steps, screenshots)
        try:
            generation = await asyncio.wait_for(self.backend.generate(messages, seed=0), self.timeout_s)
        except (asyncio.TimeoutError, BackendError) as exc:
            raise JudgeTimeout(f"judge {self.backend.name}: {type(exc).__name__}: {exc}") from exc
        return JudgeVerdict(parse_verdict(generation.text), generation.text)


def make_judge(spec: str, timeout_s: float = DEFAULT_JUDGE_TIMEOUT_S, **options: Any) -> Judge:
    """`anthropic:MODEL` or `openai:URL[#MODEL]`; options: base_url, api_key, max_new_tokens."""
    from weblica.policy.backends.api import AnthropicBackend, OpenAIBackend
    from weblica.policy.factory import parse_spec

    kind, target, spec_options = parse_spec(spec)
    opts = {**spec_options, **options}
    sampling = SamplingOptions(temperature=0.0, max_new_tokens=int(opts.pop("max_new_tokens", 1024)))
    # the provider client gets a little longer than the judge so our timeout is the one that fires
    client_timeout = timeout_s + 5
    if kind == "anthropic":
        backend: Backend = AnthropicBackend(target, base_url=opts.pop("base_url", None), api_key=opts.pop("api_key", None),
                                            sampling=sampling, timeout_s=client_timeout, max_retries=0)
    elif kind == "openai":
        url, _, model = target.partition("#")
        backend = OpenAIBackend(url, model or None, api_key=opts.pop("api_key", None), sampling=sampling,
                                timeout_s=client_timeout, max_retries=0)
    else:
        raise ValueError(f"a judge is an anthropic: or openai: model, not '{spec}'")
    if opts:
        raise ValueError(f"unknown judge option(s): {', '.join(sorted(opts))}")
    return Judge(backend, timeout_s)
