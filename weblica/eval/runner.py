"""Offline evaluation: play every task n times, score the episodes, write the report beside the run."""
from __future__ import annotations

from pathlib import Path
from typing import Any

from weblica.env.episode import Trajectory
from weblica.env.task import Task, save_tasks
from weblica.eval.metrics import compute_metrics
from weblica.eval.report import build_report, write_report
from weblica.rollout import PolicyFactory, run_tasks

TASKS_COPY = "tasks.jsonl"  # the viewer reads instructions and skills from here


def samples_per_task(k: int, samples: int | None) -> int:
    """n = max(k, samples): pass@k needs at least k episodes of every task."""
    return max(k, samples or 1)


def finish_report(out: Path, tasks: list[Task], trajectories: list[Trajectory], ks: list[int],
                  meta: dict[str, Any], sections: dict[str, dict[str, Any]] | None = None) -> dict[str, Any]:
    """Metrics and report for episodes already written to `out`; returns the report dict."""
    save_tasks(tasks, out / TASKS_COPY)
    metrics = compute_metrics(trajectories, tasks, ks)
    report = build_report(metrics, trajectories, {**meta, "out": str(out)}, sections)
    write_report(out, report)
    return report


async def evaluate(tasks: list[Task], policy_factory: PolicyFactory, out: str | Path, *, k: int = 1,
                   samples: int | None = None, parallel: int = 1, seed: int = 0,
                   backends: dict[str, Any] | None = None, meta: dict[str, Any] | None = None,
                   progress: bool = False, resume: bool = False) -> dict[str, Any]:
    """Run n = max(k, samples) episodes per task into `out` and write report.json / report.html there;
    with `resume`, the episodes `out` already holds (of the same tasks, policy and seed) are kept."""
    out = Path(out)
    n = samples_per_task(k, samples)
    trajectories, _ = await run_tasks(tasks, policy_factory, out, parallel=parallel, seed=seed, repeats=n,
                                      backends=backends, progress=progress, resume=resume,
                                      identity={"policy": (meta or {}).get("policy")})
    return finish_report(out, tasks, trajectories, [1, k], {**(meta or {}), "k": k, "n": n, "seed": seed})


def summary_of(report: dict[str, Any]) -> dict[str, Any]:
    """The command's printed summary: headline figures and where the report went."""
    overall = report["overall"]
    out = Path(report["meta"]["out"])
    return {
        "episodes": overall["episodes"], "tasks": overall["tasks"],
        "success_rate": overall["success_rate"],
        "abort_excluded_success_rate": overall["abort_excluded_success_rate"],
        "pass_at_k": overall["pass_at_k"], "mean_steps": overall["mean_steps"],
        "termination_reasons": overall["termination_reasons"], "aborted": overall["aborted"],
        "breakdowns": {name: {value: m["success_rate"] for value, m in groups.items()}
                       for name, groups in report["breakdowns"].items()},
        "report_json": str(out / "report.json"), "report_html": str(out / "report.html"),
        **({"faults": report["sections"]["faults"]} if "faults" in report.get("sections", {}) else {}),
    }


def human_summary(summary: dict[str, Any]) -> str:
    ae = summary["abort_excluded_success_rate"]
    lines = [f"{summary['episodes']} episodes over {summary['tasks']} tasks: success {summary['success_rate']:.1%}"
             f" (aborts excluded: {'–' if ae is None else f'{ae:.1%}'}, {summary['aborted']} aborted)",
             "pass@k: " + ", ".join(f"pass@{k} {'–' if v is None else f'{v:.1%}'}"
                                    for k, v in summary["pass_at_k"].items()),
             f"mean steps {summary['mean_steps']:.1f}; terminations {summary['termination_reasons']}"]
    for name, groups in summary["breakdowns"].items():
        lines.append(f"by {name}: " + ", ".join(f"{v} {r:.0%}" for v, r in groups.items()))
    if "faults" in summary:
        lines.append(f"faults: {summary['faults']}")
    lines.append(f"report: {summary['report_html']}")
    return "\n".join(lines)
