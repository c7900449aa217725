"""Hand-made episode records for the analysis, judge and training-filter tests: steps, trajectories, a run
directory holding them, tiny PNGs, and a click group around one command module."""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import click

from weblica.env.episode import StepRecord, Trajectory


def step(i: int, response: str, sha: str, actions: list[dict] | None = None, feedback: list[str] | None = None,
         token_ids: list[int] | None = None) -> StepRecord:
    return StepRecord(step=i, response=response, actions=actions if actions is not None else
                      [{"name": "click", "arguments": {"x": 1, "y": 2}}], feedback=feedback or ["Success: clicked."],
                      url="http://shop.test/", screenshot_sha256=sha, token_ids=token_ids)


def traj(episode: str, steps: list[StepRecord], *, task_id: str = "t1", success: bool = False,
         reason: str = "done", start_sha: str = "s0", **kwargs: Any) -> Trajectory:
    return Trajectory(task_id=task_id, seed=0, episode_id=episode, start_url="http://shop.test/",
                      start_screenshot_sha256=start_sha, steps=steps, success=success, reward=float(success),
                      termination_reason=reason, **kwargs)


def png_bytes(value: int) -> bytes:
    import io

    from PIL import Image

    buffer = io.BytesIO()
    Image.new("RGB", (64, 36), (value % 256, 40, 90)).save(buffer, "PNG")
    return buffer.getvalue()


def make_run(directory: Path, trajectories: list[Trajectory], tasks: list[dict]) -> Path:
    """A run directory as `weblica run` writes it: episodes.jsonl, tasks.jsonl, screens/<sha>.png."""
    (directory / "screens").mkdir(parents=True, exist_ok=True)
    shas = {t.start_screenshot_sha256 for t in trajectories} | {s.screenshot_sha256 for t in trajectories for s in t.steps}
    for n, sha in enumerate(sorted(x for x in shas if x)):
        (directory / "screens" / f"{sha}.png").write_bytes(png_bytes(n * 37))
    (directory / "episodes.jsonl").write_text("".join(json.dumps(t.to_dict()) + "\n" for t in trajectories))
    (directory / "tasks.jsonl").write_text("".join(json.dumps(t) + "\n" for t in tasks))
    return directory


def cli_with(module: str) -> click.Group:
    import importlib

    group = click.Group()
    importlib.import_module(module).register(group)
    return group


# ---- proxy labels --------------------------------------------------------------------------------------
