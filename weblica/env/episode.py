"""Episode records: what happened at each step, and the whole trajectory (one JSON line each)."""
from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

# Why an episode ended. The env_* / browser_crash / timeout reasons are environment-side failures:
# training masks them instead of scoring them 0. page_crash / page_hang: a page off the task's site, which
# the agent's own navigation opened, crashed or hung: the agent's failure, scored 0.
TERMINATION_REASONS = ("done", "max_steps", "format_error", "env_error", "browser_crash", "timeout",
                       "page_crash", "page_hang")
ENV_FAILURES = frozenset({"env_error", "browser_crash", "timeout"})


@dataclass
class StepRecord:
    """One agent turn: the response, the actions it held, the env's feedback and the resulting state."""

    step: int
    response: str
    actions: list[dict[str, Any]]
    feedback: list[str]
    url: str
    screenshot_sha256: str
    reward: float = 0.0
    parse_errors: list[str] = field(default_factory=list)
    tabs: list[dict[str, Any]] = field(default_factory=list)  # the tabs after the step (what turn step+1 sees)
    active_tab: int = 0
    # filled by local-model policies; the trainer needs them and never re-tokenizes history
    prompt_token_ids: list[int] | None = None
    token_ids: list[int] | None = None
    logprobs: list[float] | None = None
    # the accessibility nodes after the step (what turn step+1 read), for policies that read them
    axtree: list[dict[str, Any]] | None = None

    def to_dict(self) -> dict[str, Any]:
        return {k: v for k, v in asdict(self).items() if v is not None}


@dataclass
class Trajectory:
    task_id: str
    seed: int
    episode_id: str
    start_url: str
    start_screenshot_sha256: str
    start_tabs: list[dict[str, Any]] = field(default_factory=list)
    steps: list[StepRecord] = field(default_factory=list)
    reward: float = 0.0
    success: bool = False
    termination_reason: str | None = None
    answer: str | None = None
    check_results: list[dict[str, Any]] = field(default_factory=list)
    removed: bool = False  # environment failure: excluded from training and abort-excluded metrics
    error: str | None = None
    metadata: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        out = asdict(self)
        out["steps"] = [s.to_dict() for s in self.steps]
        return out

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> "Trajectory":
        data = dict(data)
        steps = [StepRecord(**s) for s in data.pop("steps", [])]
        return cls(steps=steps, **data)
