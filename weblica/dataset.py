"""Run directories as Hugging Face `datasets`: one row per agent turn, screenshots as images."""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from weblica.rollout import load_trajectories


def turn_rows(run_dir: str | Path) -> list[dict[str, Any]]:
    """One row per step: the screenshot the agent saw, its response, the actions, the feedback after."""
    run_dir = Path(run_dir)
    rows = []
    for traj in load_trajectories(run_dir):
        seen = traj.start_screenshot_sha256
        for step in traj.steps:
            rows.append({
                "task_id": traj.task_id, "episode_id": traj.episode_id, "seed": traj.seed, "step": step.step,
                "screenshot": str(run_dir / "screens" / f"{seen}.png") if seen else None,
                "response": step.response, "actions": json.dumps(step.actions, sort_keys=True),
                "feedback": "\n".join(step.feedback), "url": step.url,
                "episode_reward": traj.reward, "success": traj.success,
                "termination_reason": traj.termination_reason or "", "removed": traj.removed,
            })
            seen = step.screenshot_sha256
    return rows


def export_dataset(run_dir: str | Path, out: str | Path | None = None) -> Any:
    """A `datasets.Dataset` of the run's turns (saved to `out` with `save_to_disk` when given)."""
    import datasets

    rows = turn_rows(run_dir)
    features = datasets.Features({
        "task_id": datasets.Value("string"), "episode_id": datasets.Value("string"),
        "seed": datasets.Value("int64"), "step": datasets.Value("int32"), "screenshot": datasets.Image(),
        "response": datasets.Value("string"), "actions": datasets.Value("string"),
        "feedback": datasets.Value("string"), "url": datasets.Value("string"),
        "episode_reward": datasets.Value("float32"), "success": datasets.Value("bool"),
        "termination_reason": datasets.Value("string"), "removed": datasets.Value("bool"),
    })
    dataset = datasets.Dataset.from_list(rows, features=features)
    if out is not None:
        dataset.save_to_disk(str(out))
    return dataset
