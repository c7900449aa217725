"""What a task's checks are, and what a check says of an episode: the data, without the scoring."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol, Sequence


@dataclass
class Check:
    """One declarative check; what each (type, mode) means is its entry in weblica.scoring.registry.

    type `answer_match`: mode exact | numeric (tol) | set | regex | date | refusal against `expected`. An
        answer passes only if it states the gold, plainly, and nothing competing (weblica.scoring.answer,
        weblica.scoring.grammar): `confusers` are the values of the same field the site shows for other
        entities (`confusers_from` says where they came from: "data" or "page"); `locale` (e.g. "de-DE")
        says how the site writes numbers and dates; `unit` is the unit of the question ("owners"), which an
        answer may omit. Mode `refusal`: the task is infeasible and only a refusal that asserts no value passes.
    type `url_match`: `expected` is a URL or pattern; mode exact | prefix | regex | contains
        (exact compares host, path and query parameters, ignoring their order).
    type `state_match`: `path` into the source's state dict (dotted, list indexes allowed) and `expected`;
        mode exact | numeric | set | regex | contains | count (length of the list at `path`) | password
        (`expected` in clear, the state holds the site's hash of it: weblica.serve.passwords).
    """

    type: str
    expected: Any = None
    mode: str = "exact"
    path: str | None = None
    tol: float = 0.0
    confusers: list[Any] | None = None
    confusers_from: str | None = None  # "data" | "page"; None when no confusers are known
    locale: str | None = None
    unit: str | None = None

    def to_dict(self) -> dict[str, Any]:
        out = {"type": self.type, "expected": self.expected}
        if self.mode != "exact":
            out["mode"] = self.mode
        if self.path is not None:
            out["path"] = self.path
        if self.tol:
            out["tol"] = self.tol
        for key in ("confusers", "confusers_from", "locale", "unit"):
            if getattr(self, key) is not None:
                out[key] = getattr(self, key)
        return out


class TaskLike(Protocol):
    """What scoring reads of a task (weblica.env.task.Task): scoring never imports the task model."""

    id: str
    start_url: str
    instruction: str
    checks: Sequence["Check"]
    metadata: dict[str, Any]


@dataclass
class CheckResult:
    check: Check
    passed: bool
    detail: str

    def to_dict(self) -> dict[str, Any]:
        return {"type": self.check.type, "passed": self.passed, "detail": self.detail}
