"""Rubric fact groups (WebGym): a rubric is a list of groups of facts, each group verifying one part of a
task; difficulty is the total number of facts. The two JSON shapes a task's `rubric` may hold, and what
reads them; the judge that verifies facts is weblica.scoring.rubric."""
from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any, Sequence

from weblica.env.task import Task, TaskError

LARGE_GROUP = 3        # a group with at least this many facts is "large" (WebGym's decomposition rule)


@dataclass
class FactGroup:
    """Facts that together verify one part of a task; `objective` is that part as an instruction clause."""

    facts: list[str]
    objective: str | None = None

    @property
    def large(self) -> bool:
        return len(self.facts) >= LARGE_GROUP

    def to_json(self) -> Any:
        if self.objective:
            return {"objective": self.objective, "facts": list(self.facts)}
        return list(self.facts)


def _fact_text(item: Any) -> str:
    # WebGym writes a fact either as a string or as {"description": ...}
    text = item.get("description") if isinstance(item, dict) else item
    if not isinstance(text, str) or not text.strip():
        raise TaskError(f"a rubric fact must be a non-empty string, not {item!r}")
    return text.strip()


def parse_fact_groups(rubric: Any) -> list[FactGroup] | None:
    """The fact groups of a rubric value, or None when it holds none (no rubric, or free-text criteria).
    Raises TaskError on a rubric that mixes shapes or holds an empty group."""
    if not rubric or isinstance(rubric, str):
        return None
    if not isinstance(rubric, list):
        raise TaskError(f"a rubric is a list of fact groups, not {type(rubric).__name__}")
    is_group = [isinstance(i, list) or (isinstance(i, dict) and "facts" in i) for i in rubric]
    if not any(is_group):  # a flat list of facts: one group
        return [FactGroup([_fact_text(i) for i in rubric])]
    if not all(is_group):
        raise TaskError("a rubric mixes fact groups and loose facts: put every fact inside a group")
    groups = []
    for item in rubric:
        facts = item if isinstance(item, list) else item["facts"]
        objective = item.get("objective") if isinstance(item, dict) else None
        if not isinstance(facts, list) or not facts:
            raise TaskError(f"a fact group needs at least one fact: {item!r}")
        groups.append(FactGroup([_fact_text(f) for f in facts], objective or None))
    return groups


def fact_groups(task: Task) -> list[FactGroup] | None:
    return parse_fact_groups(task.rubric)


def difficulty(groups: Sequence[FactGroup]) -> int:
    """WebGym's difficulty: the total number of facts over all groups."""
    return sum(len(g.facts) for g in groups)


def with_fact_groups(task: Task, groups: Sequence[FactGroup]) -> Task:
    """The task with `groups` as its rubric and its difficulty set to their fact count."""
    return replace(task, rubric=[g.to_json() for g in groups], difficulty=difficulty(groups))
