"""Error analysis of failed episodes (OpenWebRL appendix E), by rules over what a run records.

The paper sorted 100 failures by hand into four kinds; these rules sort every failure automatically from its
termination reason, check outcomes, reward source, environment feedback and reasoning, first rule wins:

| category | when |
|---|---|
| environment/access | the episode was removed for an environment failure (env_error, browser_crash, timeout); live eval marked the site blocked or unloadable; the judge reported a website failure; the last turns diagnose a blocker (CAPTCHA, 403, access denied) or the last feedback is a network error |
| task definition | nothing could evaluate it (task or evaluation problem): no checks and no judge, a judge error, or a check that cannot run against this task (state path missing, no state, unknown check) |
| grounding/interaction | format errors (no executable action); the agent answered but a state or URL check failed (the page never reached the state it believed); half or more of its steps were no-ops (screen unchanged) or failed actions |
| reasoning/constraint | the rest: a wrong or incomplete answer (answer check failed, judge said unsuccessful), or steps ran out while the agent kept acting on a working page |

Each category lists counts, the rules that fired, and example episodes as viewer links
(`weblica view RUN` serves `#episode/0/<index>`).
"""
from __future__ import annotations

import re
from collections import Counter, defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Sequence

from weblica.analysis.patterns import proxy_labels
from weblica.env.episode import ENV_FAILURES, Trajectory
from weblica.train.filters import unchanged_screens

CATEGORIES = ("environment/access", "reasoning/constraint", "grounding/interaction", "task definition")
NETWORK_ERROR = re.compile(r"net::ERR_|ERR_[A-Z_]{4,}|\b(?:HTTP\s+)?(?:403|429|5\d\d)\b.*(?:forbidden|error|denied)|"
                           r"access denied|captcha", re.IGNORECASE)
UNRUNNABLE_CHECK = re.compile(r"supplies no state|state has no|unknown check type", re.IGNORECASE)
BLOCKER_TURNS = 3          # how many final turns may show a blocker diagnosis
NO_OP_SHARE = 0.5          # share of no-op or failed steps that makes a failure an interaction failure
DEFAULT_EXAMPLES = 3


@dataclass
class Failure:
    index: int
    episode_id: str
    task_id: str
    termination_reason: str
    category: str
    rule: str

    def to_dict(self, link: str) -> dict[str, Any]:
        return {"index": self.index, "episode_id": self.episode_id, "task_id": self.task_id,
                "termination_reason": self.termination_reason, "rule": self.rule, "link": link}


def _reward_source(traj: Trajectory) -> str:
    return str((traj.metadata.get("reward") or {}).get("source", ""))


def _judge_text(traj: Trajectory) -> str:
    return str((traj.metadata.get("reward") or {}).get("judge", ""))


def classify(traj: Trajectory, task: dict[str, Any] | None = None) -> tuple[str, str]:
    """(category, rule) of one failed episode; `task` is its tasks.jsonl record when known."""
    reason = traj.termination_reason or "unknown"
    source = _reward_source(traj)
    steps = traj.steps
    # -- environment / access
    if reason in ENV_FAILURES:
        return "environment/access", f"terminated by {reason}"
    if traj.metadata.get("blocked") or traj.metadata.get("fault") == "site":  # live eval's attribution
        return "environment/access", "the site was blocked or failed to load"
    if re.search(r"website[\s_-]*failure", _judge_text(traj), re.IGNORECASE):
        return "environment/access", "the judge reported a website failure"
    if any("blocker_diagnosis" in proxy_labels(s.response) for s in steps[-BLOCKER_TURNS:]):
        return "environment/access", "the agent diagnosed a blocker (CAPTCHA, access denied, verification)"
    last_feedback = " ".join(steps[-1].feedback) if steps else ""
    if (traj.error and NETWORK_ERROR.search(traj.error)) or NETWORK_ERROR.search(last_feedback):
        return "environment/access", "the last step hit a network or access error"
    # -- task definition / evaluation
    if source in ("no_judge", "judge_error") or "judge_error" in traj.metadata:
        return "task definition", f"no verdict could be given ({source or 'judge_error'})"
    if any(UNRUNNABLE_CHECK.search(str(r.get("detail", ""))) for r in traj.check_results):
        return "task definition", "a check cannot run against this task"
    if traj.removed:
        return "environment/access", "removed from training (environment-side)"
    # -- grounding / interaction
    if reason == "format_error":
        return "grounding/interaction", "no executable action (format errors)"
    failed = [r for r in traj.check_results if not r.get("passed")]
    if reason == "done" and any(r.get("type") in ("state_match", "url_match") for r in failed):
        return "grounding/interaction", "the agent finished but the page never reached the checked state"
    if steps:
        no_ops = unchanged_screens(traj)
        bad = sum(1 for s, same in zip(steps, no_ops)
                  if same or any(f.startswith("Failed") for f in s.feedback))
        if bad / len(steps) >= NO_OP_SHARE and len(steps) >= 2:
            return "grounding/interaction", f"{bad} of {len(steps)} steps changed nothing or failed"
    # -- reasoning / constraints
    if reason == "done" and any(r.get("type") == "answer_match" for r in failed):
        return "reasoning/constraint", "the answer does not meet the task (answer check failed)"
    if reason == "done":
        return "reasoning/constraint", "the judge found the answer or final state does not satisfy the task"
    return "reasoning/constraint", f"the agent did not finish ({reason}) on a working page"


def failure_report(trajectories: Sequence[Trajectory], tasks: dict[str, dict[str, Any]] | None = None,
                   viewer_url: str = "http://127.0.0.1:8765", run_index: int = 0,
                   examples: int = DEFAULT_EXAMPLES) -> dict[str, Any]:
    """Counts per category (every category listed, zero or not), rule counts and example links."""
    tasks = tasks or {}
    by_category: dict[str, list[Failure]] = defaultdict(list)
    for index, traj in enumerate(trajectories):
        if traj.success:
            continue
        category, rule = classify(traj, tasks.get(traj.task_id))
        by_category[category].append(Failure(index, traj.episode_id, traj.task_id,
                                              traj.termination_reason or "unknown", category, rule))
    failed = sum(len(v) for v in by_category.values())
    out: dict[str, Any] = {"episodes": len(trajectories), "failed": failed, "categories": {}}
    base = viewer_url.rstrip("/")
    for category in CATEGORIES:
        items = by_category.get(category, [])
        out["categories"][category] = {
            "count": len(items), "share": round(len(items) / failed, 4) if failed else 0.0,
            "by_termination": dict(Counter(f.termination_reason for f in items)),
            "rules": dict(Counter(f.rule for f in items).most_common()),
            "examples": [f.to_dict(f"{base}/#episode/{run_index}/{f.index}") for f in items[:examples]],
        }
    return out


def analyze_failures(run_dir: str | Path, viewer_url: str = "http://127.0.0.1:8765",
                     examples: int = DEFAULT_EXAMPLES) -> dict[str, Any]:
    import json

    from weblica.rollout import load_trajectories

    run_dir = Path(run_dir)
    if not (run_dir / "episodes.jsonl").is_file():
        raise FileNotFoundError(f"{run_dir} is not a run directory (no episodes.jsonl)")
    tasks: dict[str, dict[str, Any]] = {}
    if (run_dir / "tasks.jsonl").is_file():
        for line in (run_dir / "tasks.jsonl").read_text(encoding="utf-8").splitlines():
            if line.strip():
                record = json.loads(line)
                tasks[record.get("id", "")] = record
    report = failure_report(load_trajectories(run_dir), tasks, viewer_url, examples=examples)
    return {"run": str(run_dir), **report}


def format_failures(report: dict[str, Any]) -> str:
    lines = [f"{report['run']}: {report['failed']} failed of {report['episodes']} episodes"]
    for category, data in report["categories"].items():
        lines.append(f"\n{category}: {data['count']} ({data['share']:.0%})")
        for rule, count in data["rules"].items():
            lines.append(f"  {count:>4}  {rule}")
        for example in data["examples"]:
            lines.append(f"        e.g. {example['task_id']} ({example['termination_reason']}): {example['link']}")
    return "\n".join(lines)
