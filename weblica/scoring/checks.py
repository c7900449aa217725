"""Scoring an episode: every check of its task asked about what the episode left (weblica.scoring.registry)."""
from __future__ import annotations

from dataclasses import replace
from typing import Any, Protocol, Sequence

from weblica.scoring.attacks import REFUSAL_PHRASINGS, paraphrase_kind, paraphrases, restated
from weblica.scoring.model import Check, CheckResult
from weblica.scoring.registry import Evidence, score_check


class Checked(Protocol):
    """What scoring reads of a task: its instruction (values it states are context) and its checks."""

    instruction: str
    checks: Sequence[Check]


def run_check(check: Check, answer: str | None, url: str, state: dict[str, Any] | None, *,
              instruction: str = "", infeasible: bool = False) -> CheckResult:
    """One check's result. `instruction` is the task's; `infeasible` is the `done` tool's structured flag."""
    return score_check(check, Evidence(answer, url, state, instruction, infeasible))


def evaluate_checks(task: Checked, answer: str | None, url: str, state: dict[str, Any] | None, *,
                    infeasible: bool = False) -> tuple[float, list[CheckResult]]:
    """Reward 1.0 when every check passes, else 0.0. A task with no checks scores 0 (a judge decides).
    `infeasible` is the `done` tool's flag: the agent says the task cannot be done."""
    evidence = Evidence(answer, url, state, task.instruction, infeasible)
    results = [score_check(c, evidence) for c in task.checks]
    reward = 1.0 if results and all(r.passed for r in results) else 0.0
    return reward, results


def paraphrases_accepted(tasks: Sequence[Any]) -> dict[str, list]:
    """For every kept answer task, the ways a person states its gold (weblica.scoring.attacks: alone, in a
    carrier, labelled, the question restated) or refuses an infeasible one: kind -> [accepted, tried,
    first misses]."""

    out: dict[str, list] = {}
    for task in tasks:
        checks = [c for c in task.checks if c.type == "answer_match"]
        if not checks:
            continue
        if any(c.mode == "refusal" for c in checks):
            said = [("refusal", text) for text in REFUSAL_PHRASINGS]
        else:
            gold = next((str(s["answer"]) for s in reversed(task.metadata.get("plan", []))
                         if s.get("op") == "done" and s.get("answer")), None)
            if gold is None:
                continue
            kind = paraphrase_kind(gold)
            said = [(kind, text) for _, text in paraphrases(gold, kind)]
            again = restated(gold, task.instruction)
            if again:
                said.append(("restated", again))
        for kind, text in said:
            row = out.setdefault(kind, [0, 0, []])
            row[1] += 1
            if evaluate_checks(replace(task, checks=checks), text, "", None)[0] > 0:
                row[0] += 1
            elif len(row[2]) < 3:
                row[2].append(f"{task.id}: {text}")
    return dict(sorted(out.items()))
