"""The trajectory viewer: a Flask app factory over one or two run directories.

JSON routes serve the episodes (listing with filters, one episode step by step) and the page itself is
static HTML/CSS/JS that renders them. Runs are read once when the app is created: a run directory is
finished output, and reading it per request would make a large run slow to browse.
"""
from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any, Sequence

from flask import Blueprint, Flask, abort, current_app, jsonify, request, send_from_directory

from weblica.env.actions import VIEWPORT_HEIGHT, VIEWPORT_WIDTH
from weblica.env.episode import Trajectory
from weblica.env.task import Task, TaskError, episode_task

STATIC = Path(__file__).parent / "static"
SHA_RE = re.compile(r"^[0-9a-f]{16,64}$")
OUTCOMES = ("success", "failure", "aborted")


class RunDirError(ValueError):
    """A directory that is not a run directory (no episodes.jsonl), or one that cannot be read."""


@dataclass
class Run:
    index: int
    name: str
    path: Path
    trajectories: list[Trajectory]
    tasks: dict[str, dict[str, Any]] = field(default_factory=dict)
    summary: dict[str, Any] = field(default_factory=dict)

    @cached_property
    def rows(self) -> list[dict[str, Any]]:
        """The listing rows, built once: every request filters or indexes them."""
        return episode_rows(self)


def _read_json_lines(path: Path) -> list[dict[str, Any]]:
    rows = []
    for lineno, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if line.strip():
            try:
                rows.append(json.loads(line))
            except json.JSONDecodeError as exc:
                raise RunDirError(f"{path}:{lineno}: not valid JSON ({exc.msg})") from None
    return rows


def load_run(path: str | Path, index: int = 0) -> Run:
    """Read a run directory written by `weblica run` / `weblica eval`."""
    path = Path(path)
    episodes = path / "episodes.jsonl"
    if not episodes.is_file():
        raise RunDirError(f"{path} is not a run directory (no episodes.jsonl): "
                          "make one with `weblica run --out DIR` or `weblica eval --out DIR`")
    try:
        trajectories = [Trajectory.from_dict(d) for d in _read_json_lines(episodes)]
    except TypeError as exc:
        raise RunDirError(f"{episodes}: an episode does not follow the trajectory schema ({exc})") from None
    # tasks.jsonl (written by `weblica eval`) gives instructions and skills; a plain run may lack it
    tasks = {}
    if (path / "tasks.jsonl").is_file():
        tasks = {t["id"]: t for t in _read_json_lines(path / "tasks.jsonl") if isinstance(t, dict) and "id" in t}
    summary = {}
    for name in ("report.json", "summary.json"):
        if (path / name).is_file():
            data = json.loads((path / name).read_text(encoding="utf-8"))
            summary = data.get("overall", data)
            break
    return Run(index, path.resolve().name, path, trajectories, tasks, summary)


def played_instruction(task: dict[str, Any], seed: int) -> str:
    """The instruction an episode with `seed` played: for a task with instances (weblica/synth/instances.py),
    that of its seed's member, not the base task's."""
    if not (task.get("metadata") or {}).get("instances"):
        return str(task.get("instruction", ""))
    try:
        return episode_task(Task.from_dict(task), seed).instruction
    except (TaskError, TypeError, ValueError, KeyError):  # a hand-edited family: the base instruction
        return str(task.get("instruction", ""))


def outcome(traj: Trajectory) -> str:
    if traj.success:
        return "success"
    return "aborted" if traj.removed else "failure"


def episode_rows(run: Run) -> list[dict[str, Any]]:
    """One listing row per episode; `repeat` numbers the episodes of the same task in run order, which is
    what pairs episodes across two runs of the same task file."""
    seen: dict[str, int] = {}
    rows = []
    for i, traj in enumerate(run.trajectories):
        repeat = seen.get(traj.task_id, 0)
        seen[traj.task_id] = repeat + 1
        task = run.tasks.get(traj.task_id, {})
        rows.append({
            "run": run.index, "index": i, "task_id": traj.task_id, "episode_id": traj.episode_id,
            "repeat": repeat, "outcome": outcome(traj), "success": traj.success, "reward": traj.reward,
            "termination_reason": traj.termination_reason or "unknown", "removed": traj.removed,
            "steps": len(traj.steps), "instruction": played_instruction(task, traj.seed),
            **{key: str(task.get(key, traj.metadata.get(key)) or "") for key in ("skill", "category", "difficulty")},
        })
    return rows


def filter_rows(rows: list[dict[str, Any]], args: Any) -> list[dict[str, Any]]:
    """Keep rows matching ?outcome=success|failure|aborted, ?skill=, ?termination= (each optional)."""
    wanted = {"outcome": args.get("outcome"), "skill": args.get("skill"),
              "termination_reason": args.get("termination")}
    return [r for r in rows if all(not v or r[k] == v for k, v in wanted.items())]


def _screen_url(run: Run, sha: str) -> str | None:
    return f"/runs/{run.index}/screens/{sha}.png" if sha else None


def episode_detail(run: Run, index: int) -> dict[str, Any]:
    """One episode step by step. Each step carries the screenshot the agent *saw* when it chose its
    actions (the previous observation), since that is the frame its coordinates refer to."""
    traj = run.trajectories[index]
    row = run.rows[index]
    seen = traj.start_screenshot_sha256
    steps = []
    for s in traj.steps:
        steps.append({"step": s.step, "response": s.response, "actions": s.actions, "feedback": s.feedback,
                      "url": s.url, "reward": s.reward, "parse_errors": s.parse_errors,
                      "screenshot": _screen_url(run, seen), "result_screenshot": _screen_url(run, s.screenshot_sha256)})
        seen = s.screenshot_sha256
    return {**row, "start_url": traj.start_url, "answer": traj.answer, "error": traj.error,
            "check_results": traj.check_results, "seed": traj.seed, "metadata": traj.metadata,
            "start_screenshot": _screen_url(run, traj.start_screenshot_sha256),
            "final_screenshot": _screen_url(run, seen), "steps_detail": steps}


def compare_pairs(runs: list[Run]) -> list[dict[str, Any]]:
    """Episodes of the runs lined up by (task, repeat), in the first run's order, then any extras."""
    keyed = [{(r["task_id"], r["repeat"]): r for r in run.rows} for run in runs]
    order: list[tuple[str, int]] = []
    for table in keyed:
        order += [key for key in table if key not in order]
    return [{"task_id": key[0], "repeat": key[1], "episodes": [table.get(key) for table in keyed]}
            for key in order]


def _runs() -> list[Run]:
    return current_app.extensions["weblica_viewer"]


def _run(run_index: int) -> Run:
    runs = _runs()
    if not 0 <= run_index < len(runs):
        abort(404, f"no run {run_index}")
    return runs[run_index]


api = Blueprint("viewer_api", __name__)


@api.get("/api/runs")
def list_runs() -> Any:
    runs = _runs()
    out = []
    for run in runs:
        rows = run.rows
        out.append({"index": run.index, "name": run.name, "path": str(run.path), "summary": run.summary,
                    "episodes": len(rows),
                    "facets": {"skill": sorted({r["skill"] for r in rows if r["skill"]}),
                               "termination": sorted({r["termination_reason"] for r in rows}),
                               "outcome": list(OUTCOMES)}})
    return jsonify({"viewport": {"width": VIEWPORT_WIDTH, "height": VIEWPORT_HEIGHT}, "runs": out})


@api.get("/api/runs/<int:run_index>/episodes")
def list_episodes(run_index: int) -> Any:
    return jsonify(filter_rows(_run(run_index).rows, request.args))


@api.get("/api/runs/<int:run_index>/episodes/<int:index>")
def get_episode(run_index: int, index: int) -> Any:
    run = _run(run_index)
    if not 0 <= index < len(run.trajectories):
        abort(404, f"run {run_index} has no episode {index}")
    return jsonify(episode_detail(run, index))


@api.get("/api/compare")
def compare() -> Any:
    """Pairs whose episodes match the filters in any run."""
    pairs = compare_pairs(_runs())
    return jsonify([p for p in pairs if any(e is not None and filter_rows([e], request.args) for e in p["episodes"])])


@api.get("/runs/<int:run_index>/screens/<sha>.png")
def screenshot(run_index: int, sha: str) -> Any:
    if not SHA_RE.match(sha):  # names are content hashes; anything else is not ours to serve
        abort(404)
    return send_from_directory(_run(run_index).path.resolve() / "screens", f"{sha}.png", max_age=86400)


@api.get("/")
def index() -> Any:
    return send_from_directory(STATIC, "index.html", max_age=0)


def create_app(run_dirs: Sequence[str | Path]) -> Flask:
    """The viewer over `run_dirs` (one run, or two shown side by side). Raises RunDirError early, so the
    command fails before it starts serving."""
    if not run_dirs:
        raise RunDirError("name at least one run directory")
    runs = [load_run(path, i) for i, path in enumerate(run_dirs)]
    app = Flask(__name__, static_folder=str(STATIC), static_url_path="/static")
    app.extensions["weblica_viewer"] = runs
    app.json.sort_keys = False  # keep step and field order as written
    app.register_blueprint(api)
    return app
