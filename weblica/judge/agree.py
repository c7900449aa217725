"""Agreement of a judge with reference labels: accuracy, precision, recall, F1 (OpenWebRL table 3).

Positive means "the episode succeeded". A verdict the judge did not give in a readable form, or a
`website failure` verdict, counts as a negative prediction (the reward code never scores those as a
success) and is also counted apart, so a judge that rambles shows up as such rather than as a lucky one.
Precision with no positive predictions, and recall with no positive labels, are reported as 0.

By default a verdict must come on a `Verdict:` line (strict). The reward's parser also falls back to any
"success" in the text, which is right for a judge that forgot the line but credits an undertrained model
that merely echoes "Success: clicked ..." feedback; `strict=False` measures with the reward's parser.

Judges: `hf:PATH` (a local checkpoint, e.g. one `weblica judge distill` wrote), `openai:URL[#MODEL]`,
`anthropic:MODEL`, or `labels:FILE` (another label file, to compare label sources without a model).
"""
from __future__ import annotations

import asyncio
import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Sequence

from weblica.judge.distill import load_labels, screenshots_of

_VERDICT_LINE = re.compile(r"verdict\s*[:：]", re.IGNORECASE)


@dataclass
class Agreement:
    tp: int = 0
    fp: int = 0
    tn: int = 0
    fn: int = 0
    unreadable: int = 0
    website_failure: int = 0

    @property
    def n(self) -> int:
        return self.tp + self.fp + self.tn + self.fn

    @property
    def accuracy(self) -> float:
        return (self.tp + self.tn) / self.n if self.n else 0.0

    @property
    def precision(self) -> float:
        return self.tp / (self.tp + self.fp) if self.tp + self.fp else 0.0

    @property
    def recall(self) -> float:
        return self.tp / (self.tp + self.fn) if self.tp + self.fn else 0.0

    @property
    def f1(self) -> float:
        p, r = self.precision, self.recall
        return 2 * p * r / (p + r) if p + r else 0.0

    def to_dict(self) -> dict[str, Any]:
        return {"n": self.n, "accuracy": round(self.accuracy, 4), "precision": round(self.precision, 4),
                "recall": round(self.recall, 4), "f1": round(self.f1, 4), "tp": self.tp, "fp": self.fp,
                "tn": self.tn, "fn": self.fn, "unreadable": self.unreadable, "website_failure": self.website_failure}


def agreement(predicted: Sequence[str | None], reference: Sequence[bool]) -> Agreement:
    """Confusion counts of verdicts (`success` / `failure` / `website_failure` / None) against labels."""
    if len(predicted) != len(reference):
        raise ValueError(f"{len(predicted)} predictions for {len(reference)} labels")
    out = Agreement()
    for verdict, label in zip(predicted, reference):
        out.unreadable += verdict is None
        out.website_failure += verdict == "website_failure"
        positive = verdict == "success"
        if positive and label:
            out.tp += 1
        elif positive:
            out.fp += 1
        elif label:
            out.fn += 1
        else:
            out.tn += 1
    return out


def make_trajectory_judge(spec: str, max_new_tokens: int = 256) -> Any:
    """A `weblica.scoring.judge.Judge` for the spec (hf: is loaded locally and decodes greedily)."""
    from weblica.scoring.judge import Judge, make_judge

    if spec.startswith("hf:"):
        from weblica.policy.backends.base import SamplingOptions
        from weblica.policy.backends.hf import HFBackend

        path, *opts = spec[3:].split(";")
        options = dict(o.split("=", 1) for o in opts if "=" in o)
        backend = HFBackend(path, SamplingOptions(temperature=0.0, max_new_tokens=max_new_tokens),
                            device=options.get("device"), dtype=options.get("dtype"))
        return Judge(backend, timeout_s=float(options.get("timeout_s", 600)))
    return make_judge(spec, max_new_tokens=max_new_tokens)


def judge_agreement(judge_spec: str, labels_path: str | Path, max_new_tokens: int = 256,
                    limit: int | None = None, strict: bool = True) -> dict[str, Any]:
    """Run the judge on every labelled episode and compare. Returns metrics plus per-episode rows."""
    from weblica.env.task import episode_task, load_tasks
    from weblica.scoring.judge import JudgeTimeout
    from weblica.rollout import load_trajectories

    labels = list(load_labels(labels_path).values())[:limit]
    if not labels:
        raise ValueError(f"{labels_path} holds no labels")
    rows: list[dict[str, Any]] = []
    if judge_spec.startswith("labels:"):
        other = load_labels(judge_spec[len("labels:"):])
        for row in labels:
            found = other.get((str(Path(row["run"]).resolve()), str(row["episode_id"])))
            verdict = None if found is None else ("success" if found["success"] else "failure")
            rows.append({**row, "verdict": verdict, "text": ""})
    else:
        judge = make_trajectory_judge(judge_spec, max_new_tokens)
        runs: dict[str, tuple[dict, dict]] = {}
        for row in labels:
            run = Path(row["run"])
            if str(run) not in runs:
                runs[str(run)] = ({t.id: t for t in load_tasks(run / "tasks.jsonl")},
                                  {t.episode_id: t for t in load_trajectories(run)})
            tasks, trajs = runs[str(run)]
            traj = trajs.get(str(row["episode_id"]))
            if traj is None or traj.task_id not in tasks:
                raise ValueError(f"{labels_path}: episode {row['episode_id']} is not in {run}")
            try:
                played = episode_task(tasks[traj.task_id], traj.seed)  # with instances: this episode's member
                result = asyncio.run(judge(played, traj.answer, traj.steps, screenshots_of(run, traj)))
                verdict, text = result.verdict, result.text
                if strict and not _VERDICT_LINE.search(text or ""):
                    verdict = None
            except JudgeTimeout as exc:
                verdict, text = None, f"(judge error: {exc})"
            rows.append({**row, "verdict": verdict, "text": text[-500:]})
    metrics = agreement([r["verdict"] for r in rows], [bool(r["success"]) for r in rows])
    return {"judge": judge_spec, "labels": str(labels_path), "strict": strict, **metrics.to_dict(), "episodes": rows}


def write_rows(rows: Sequence[dict[str, Any]], path: str | Path) -> None:
    Path(path).write_text("".join(json.dumps(r, sort_keys=True) + "\n" for r in rows), encoding="utf-8")
