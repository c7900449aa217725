"""What validation decides, per task and per run: the outcome of a task's validation episodes (its
oracle, the negatives its checks were asked about and any they accepted) and the report over bundles."""
from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from weblica.env.actions import Action


@dataclass
class TaskOutcome:
    task_id: str
    site: str
    oracle_ok: bool = False
    negatives_rejected: bool = True
    failures: list[str] = field(default_factory=list)
    oracle: list[Action] | None = None
    oracle_thoughts: list[str] | None = None
    negatives_tried: Counter[str] = field(default_factory=Counter)  # by kind
    negatives_accepted: list[tuple[str, str]] = field(default_factory=list)  # (kind, what it was)
    end_state: Any = None  # the oracle's end state (what a maximal run is compared with)
    # the first rejected "do everything" run, compiled, less its dismissals (the adversary replays it and
    # dismisses its own episode's pop-ups)
    maximal: list[Action] | None = None
    seeds: list[int] = field(default_factory=lambda: [0])  # the episode seeds it was validated at

    @property
    def valid(self) -> bool:
        return self.oracle_ok and self.negatives_rejected and not self.failures

    def accepted(self, kind: str, what: str) -> None:
        """A negative the task's checks accepted: the task is dropped, listed with it."""
        self.negatives_rejected = False
        self.negatives_accepted.append((kind, what))
        self.failures.append(f"{kind} negative accepted: {what}")


@dataclass
class ValidationReport:
    sites: int = 0
    tasks: int = 0
    outcomes: list[TaskOutcome] = field(default_factory=list)
    site_failures: list[str] = field(default_factory=list)
    documents: dict[str, Counter[str]] = field(default_factory=dict)  # site -> URL -> loads: which documents

    @property
    def page_loads(self) -> Counter[str]:
        """Documents loaded per site: the browser work."""
        return Counter({site: sum(urls.values()) for site, urls in self.documents.items()})

    def count_loads(self, validator: Any) -> None:
        """Add a validator's page loads (weblica.synth.validate.Validator), per document of each site."""
        for site, urls in validator.documents.items():
            self.documents.setdefault(site, Counter()).update(urls)

    @property
    def valid_tasks(self) -> int:
        return sum(o.valid for o in self.outcomes)

    def negatives(self) -> tuple[dict[str, int], dict[str, int]]:
        """Negatives tried and rejected, summed over tasks, by kind."""
        tried: Counter[str] = Counter()
        rejected: Counter[str] = Counter()
        for outcome in self.outcomes:
            tried.update(outcome.negatives_tried)
            accepted = Counter(kind for kind, _ in outcome.negatives_accepted)
            rejected.update({k: n - accepted[k] for k, n in outcome.negatives_tried.items()})
        return dict(sorted(tried.items())), dict(sorted(rejected.items()))

    def to_dict(self) -> dict[str, Any]:
        failures = list(self.site_failures) + [f"{o.task_id}: {f}" for o in self.outcomes for f in o.failures]
        tried, rejected = self.negatives()
        return {"sites": self.sites, "tasks": self.tasks, "valid_tasks": self.valid_tasks,
                "oracle_success": sum(o.oracle_ok for o in self.outcomes),
                "tasks_negatives_rejected": sum(o.negatives_rejected for o in self.outcomes),
                "negatives_tried": tried, "negatives_rejected": rejected,
                "dropped": [{"task": o.task_id, "kind": kind, "negative": what}
                            for o in self.outcomes for kind, what in o.negatives_accepted],
                "seeds": [{"task": o.task_id, "seeds": o.seeds, "valid": o.valid} for o in self.outcomes],
                "failures": failures}


