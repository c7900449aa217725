"""Per-run statistics of the reasoning-pattern proxies, and their change between two runs (appendix D).

For each label: how many assistant turns carry it, that count over all turns (frequency), and the mean
response length of those turns; `no_proxy` is the baseline of turns carrying no label. Comparing an early
and a late checkpoint's runs shows whether training amplified particular patterns (the paper: history
summarisation 14.5% -> 21.4% of turns, 332 -> 542 tokens, while no-proxy turns grew only 282 -> 325).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable

from weblica.analysis.patterns import LABELS, NO_PROXY, proxy_labels
from weblica.env.episode import StepRecord, Trajectory

UNITS = ("chars", "tokens")


def response_length(step: StepRecord, unit: str = "chars") -> int:
    """A response's length: characters, or sampled tokens (falling back to whitespace words when a step
    has no token ids, e.g. from an API model)."""
    if unit == "tokens":
        return len(step.token_ids) if step.token_ids else len(step.response.split())
    return len(step.response)


@dataclass
class LabelStats:
    turns: int = 0
    length_sum: int = 0

    def mean_length(self) -> float:
        return self.length_sum / self.turns if self.turns else 0.0


@dataclass
class PatternReport:
    run: str
    unit: str
    turns: int = 0
    length_sum: int = 0
    labels: dict[str, LabelStats] = field(default_factory=lambda: {k: LabelStats() for k in LABELS + (NO_PROXY,)})

    def add(self, step: StepRecord) -> set[str]:
        found = proxy_labels(step.response)
        length = response_length(step, self.unit)
        self.turns += 1
        self.length_sum += length
        for label in found or {NO_PROXY}:
            self.labels[label].turns += 1
            self.labels[label].length_sum += length
        return found

    def to_dict(self) -> dict[str, Any]:
        return {
            "run": self.run, "unit": self.unit, "turns": self.turns,
            "mean_length": round(self.length_sum / self.turns, 2) if self.turns else 0.0,
            "labels": {k: {"turns": s.turns, "frequency": round(s.turns / self.turns, 4) if self.turns else 0.0,
                           "mean_length": round(s.mean_length(), 2)} for k, s in self.labels.items()},
        }


def pattern_report(trajectories: Iterable[Trajectory], run: str = "", unit: str = "chars") -> PatternReport:
    if unit not in UNITS:
        raise ValueError(f"unknown length unit '{unit}': use {' or '.join(UNITS)}")
    report = PatternReport(run, unit)
    for traj in trajectories:
        for step in traj.steps:
            report.add(step)
    return report


def analyze_run(run_dir: str | Path, unit: str = "chars") -> dict[str, Any]:
    from weblica.rollout import load_trajectories

    run_dir = Path(run_dir)
    if not (run_dir / "episodes.jsonl").is_file():
        raise FileNotFoundError(f"{run_dir} is not a run directory (no episodes.jsonl)")
    return pattern_report(load_trajectories(run_dir), str(run_dir), unit).to_dict()


def compare_reports(before: dict[str, Any], after: dict[str, Any]) -> dict[str, Any]:
    """Per label: frequency and mean length in each run and their differences (after - before)."""
    rows = {}
    for label in LABELS + (NO_PROXY,):
        a, b = before["labels"][label], after["labels"][label]
        rows[label] = {"frequency": [a["frequency"], b["frequency"]],
                       "frequency_change": round(b["frequency"] - a["frequency"], 4),
                       "mean_length": [a["mean_length"], b["mean_length"]],
                       "mean_length_change": round(b["mean_length"] - a["mean_length"], 2)}
    return {"runs": [before["run"], after["run"]], "unit": after["unit"],
            "mean_length": [before["mean_length"], after["mean_length"]],
            "mean_length_change": round(after["mean_length"] - before["mean_length"], 2), "labels": rows}


def format_report(report: dict[str, Any], comparison: dict[str, Any] | None = None) -> str:
    lines = [f"{report['run']}: {report['turns']} assistant turns, mean length {report['mean_length']} {report['unit']}",
             f"{'label':24} {'turns':>6} {'freq':>7} {'mean len':>9}"]
    for label, s in report["labels"].items():
        lines.append(f"{label:24} {s['turns']:>6} {s['frequency']:>7.1%} {s['mean_length']:>9.1f}")
    if comparison:
        lines += ["", f"change {comparison['runs'][0]} -> {comparison['runs'][1]}",
                  f"{'label':24} {'freq':>17} {'mean len':>21}"]
        for label, row in comparison["labels"].items():
            f0, f1 = row["frequency"]
            m0, m1 = row["mean_length"]
            lines.append(f"{label:24} {f0:>7.1%} -> {f1:>6.1%} {m0:>9.1f} -> {m1:>8.1f}")
    return "\n".join(lines)
