"""WebGym task decomposition: sub-tasks made of subsets of a task's fact groups.

A task decomposes when it has at least 2 fact groups and at least one *large* group (>= 3 facts). Its
sub-tasks are the proper, non-empty subsets of its groups that contain at least one large group. Why these:

- proper subset -> strictly fewer facts to verify, so strictly easier (and a denser reward signal);
- at least one large group -> no trivial one-fact questions;
- each fact was already part of a well-defined task on the same site, so the sub-task stays well-defined.

The instruction is rewritten for the kept groups: by a template (offline, the default) or by an LLM through
any chat provider. Checks and oracles of the parent are dropped: they verify the *whole* task, and a
sub-task's success is decided by its rubric.
"""
from __future__ import annotations

from dataclasses import replace
from itertools import combinations
from typing import Callable, Sequence

from weblica.env.task import Task
from weblica.scoring.benchmark_judges import ChatProvider, JudgeError, chat
from weblica.scoring.fact_groups import LARGE_GROUP, FactGroup, difficulty, fact_groups

# (task, kept groups, all groups) -> the sub-task's instruction
Rewriter = Callable[[Task, Sequence[FactGroup], Sequence[FactGroup]], str]


def valid_subsets(sizes: Sequence[int], large: int = LARGE_GROUP) -> list[tuple[int, ...]]:
    """Indices of every valid group subset for groups of these sizes, smallest subsets first.

    [3, 1] -> [(0,)]; [3, 4, 1] -> [(0,), (1,), (0, 1), (0, 2), (1, 2)]; [2, 2] -> [] (no large group).
    """
    n = len(sizes)
    if n < 2 or not any(s >= large for s in sizes):
        return []
    out = []
    for k in range(1, n):  # k == n would be the task itself
        for subset in combinations(range(n), k):
            if any(sizes[i] >= large for i in subset):
                out.append(subset)
    return out


def _clause(text: str) -> str:
    return text.strip().rstrip(".;")


def template_instruction(task: Task, groups: Sequence[FactGroup], all_groups: Sequence[FactGroup] = ()) -> str:
    """The sub-task's instruction without a model.

    With objectives the instruction is those clauses joined; without them it keeps the parent instruction
    for context and names the facts the answer must establish, which is what the judge will check.
    """
    if all(g.objective for g in groups):
        clauses = [_clause(g.objective or "") for g in groups]
        text = clauses[0] if len(clauses) == 1 else "; ".join(clauses[:-1]) + "; and " + clauses[-1]
        return text[:1].upper() + text[1:] + "."
    facts = [f for g in groups for f in g.facts]
    listed = "\n".join(f"- {_clause(f)}" for f in facts)
    return (f"This is one part of the task \"{_clause(task.instruction)}\". Do only this part: find and report "
            f"what establishes each of the following.\n{listed}")


REWRITE_SYSTEM = """You rewrite web-task instructions. You get a task instruction and the facts its judge
checks, grouped. Write a new, self-contained instruction for the same website that asks for exactly the
facts in the KEPT groups and nothing from the DROPPED groups. Keep names, places, dates and limits exactly as
the original states them. Reply with the new instruction only, one paragraph, no preamble."""


class LLMRewriter:
    """Rewrites instructions through a chat provider (e.g. `make_provider("openai:URL#MODEL")`)."""

    def __init__(self, provider: ChatProvider) -> None:
        self.provider = provider

    def __call__(self, task: Task, kept: Sequence[FactGroup], all_groups: Sequence[FactGroup] = ()) -> str:
        kept_ids = {id(g) for g in kept}
        lines = [f"Original instruction: {task.instruction}", f"Website: {task.start_url}", ""]
        for i, group in enumerate(all_groups or kept):
            status = "KEPT" if id(group) in kept_ids else "DROPPED"
            lines.append(f"Group {i + 1} ({status})" + (f": {group.objective}" if group.objective else ""))
            lines += [f"  - {f}" for f in group.facts]
        reply = self.provider(chat(REWRITE_SYSTEM, "\n".join(lines))).strip()
        if not reply:
            raise JudgeError(f"the rewriter returned an empty instruction for task {task.id}")
        return reply.strip('"').strip()


def decompose_task(task: Task, rewriter: Rewriter = template_instruction) -> list[Task]:
    """The valid sub-tasks of `task` (none if it has no fact groups or does not meet the rule)."""
    groups = fact_groups(task)
    if not groups:
        return []
    total = difficulty(groups)
    out = []
    for subset in valid_subsets([len(g.facts) for g in groups]):
        kept = [groups[i] for i in subset]
        instruction = rewriter(task, kept, groups)
        sub_difficulty = difficulty(kept)
        assert sub_difficulty < total  # a proper subset of non-empty groups has fewer facts
        out.append(replace(
            task, id=f"{task.id}~g{'-'.join(str(i) for i in subset)}", instruction=instruction,
            rubric=[g.to_json() for g in kept], difficulty=sub_difficulty, checks=[], oracle=None,
            metadata={**task.metadata, "parent": task.id, "fact_groups": list(subset),
                      "parent_difficulty": total},
        ))
    return out


def decompose_tasks(tasks: Sequence[Task], rewriter: Rewriter | None = None, keep_parents: bool = True) -> tuple[list[Task], dict[str, int]]:
    """Every task (when `keep_parents`) followed by its sub-tasks, and counts for a summary. Tasks that are
    already sub-tasks (`metadata.parent`) are passed through, not decomposed again: their subsets are
    sub-tasks of the parent; and a sub-task already in `tasks` (an earlier run's output) is not written twice."""
    out: list[Task] = []
    decomposed = subtasks = 0
    existing = {t.id for t in tasks}
    for task in tasks:
        subs = [] if "parent" in task.metadata else decompose_task(task, rewriter or template_instruction)
        subs = [s for s in subs if s.id not in existing]
        if keep_parents:
            out.append(task)
        out.extend(subs)
        decomposed += bool(subs)
        subtasks += len(subs)
    return out, {"tasks": len(tasks), "decomposed": decomposed, "subtasks": subtasks, "written": len(out)}
