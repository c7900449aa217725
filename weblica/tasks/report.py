"""What a task import did: which parts of the source format became which checks, and what did not map."""
from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any

SHOWN_IDS = 5   # task ids listed per unmapped item (the count says how many there were)


@dataclass
class ImportReport:
    """Counts of what mapped to checks, what went to rubric criteria (an LLM judges them), what was not
    imported at all, and the records skipped with why."""

    checks: Counter = field(default_factory=Counter)
    rubric: dict[str, list[str]] = field(default_factory=dict)
    not_imported: dict[str, list[str]] = field(default_factory=dict)
    skipped: dict[str, str] = field(default_factory=dict)

    def mapped(self, what: str) -> None:
        self.checks[what] += 1

    def to_rubric(self, what: str, task_id: str) -> None:
        self.rubric.setdefault(what, []).append(task_id)

    def unmapped(self, what: str, task_id: str) -> None:
        self.not_imported.setdefault(what, []).append(task_id)

    def skip(self, record: str, reason: str) -> None:
        self.skipped[record] = reason

    def to_dict(self) -> dict[str, Any]:
        def listed(items: dict[str, list[str]]) -> dict[str, Any]:
            return {what: {"tasks": len(ids), "e.g.": sorted(set(ids))[:SHOWN_IDS]} for what, ids in items.items()}

        return {"to_checks": dict(self.checks), "to_rubric": listed(self.rubric),
                "not_imported": listed(self.not_imported), "skipped": dict(self.skipped)}

    def lines(self) -> list[str]:
        out = [f"  {n:>5}  {what}" for what, n in self.checks.most_common()]
        out += [f"  {len(ids):>5}  {what} -> rubric (an LLM judges it)" for what, ids in self.rubric.items()]
        out += [f"  {len(ids):>5}  not imported: {what} (e.g. {', '.join(sorted(set(ids))[:3])})"
                for what, ids in self.not_imported.items()]
        out += [f"  skipped {record}: {reason}" for record, reason in list(self.skipped.items())[:20]]
        if len(self.skipped) > 20:
            out.append(f"  ... and {len(self.skipped) - 20} more skipped")
        return out
