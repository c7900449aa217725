"""The viewer's JSON and HTML routes over hand-made run directories."""
import hashlib
import io
import json
import subprocess
import sys

import pytest
from PIL import Image

from weblica.env.episode import StepRecord, Trajectory
from weblica.env.task import Task, save_tasks
from weblica.viewer import RunDirError, create_app


def png(colour):
    buf = io.BytesIO()
    Image.new("RGB", (1280, 720), colour).save(buf, "PNG")
    data = buf.getvalue()
    return hashlib.sha256(data).hexdigest(), data


def make_run(path, outcomes, with_tasks=True):
    """A run directory: one episode per (task_id, success, reason, removed) in `outcomes`, two steps each."""
    screens = path / "screens"
    screens.mkdir(parents=True)
    shas = []
    for colour in ("red", "green", "blue"):
        sha, data = png(colour)
        (screens / f"{sha}.png").write_bytes(data)
        shas.append(sha)
    lines = []
    for n, (task_id, success, reason, removed) in enumerate(outcomes):
        steps = [StepRecord(step=1, response="<think>press the button</think>",
                            actions=[{"name": "click", "arguments": {"x": 640.0, "y": 360.0}},
                                     {"name": "drag", "arguments": {"x1": 10, "y1": 20, "x2": 300, "y2": 400}},
                                     {"name": "hover", "arguments": {"x": 1279, "y": 719}}],
                            feedback=["clicked <button> Go"], url="http://x/1", screenshot_sha256=shas[1]),
                 StepRecord(step=2, response="done", actions=[{"name": "done", "arguments": {"answer": "42"}}],
                            feedback=["episode ended"], url="http://x/2", screenshot_sha256=shas[2])]
        traj = Trajectory(task_id=task_id, seed=n, episode_id=f"ep-{n}", start_url="http://x/",
                          start_screenshot_sha256=shas[0], steps=steps, success=success, reward=float(success),
                          termination_reason=reason, removed=removed, answer="42",
                          check_results=[{"type": "answer_match", "passed": success, "detail": "answer '42'"}])
        lines.append(json.dumps(traj.to_dict()))
    (path / "episodes.jsonl").write_text("\n".join(lines) + "\n")
    if with_tasks:
        ids = dict.fromkeys(o[0] for o in outcomes)
        save_tasks([Task(id=t, start_url="http://x/", instruction=f"Do {t}.", skill="forms" if t == "a" else "navigation")
                    for t in ids], path / "tasks.jsonl")
    return shas


@pytest.fixture
def runs(tmp_path):
    shas = make_run(tmp_path / "one", [("a", True, "done", False), ("b", False, "max_steps", False),
                                       ("a", False, "env_error", True)])
    make_run(tmp_path / "two", [("a", False, "done", False), ("c", True, "done", False)], with_tasks=False)
    return tmp_path / "one", tmp_path / "two", shas


def test_listing_and_filters(runs):
    one, _, _ = runs
    client = create_app([one]).test_client()
    data = client.get("/api/runs").get_json()
    assert data["viewport"] == {"width": 1280, "height": 720}
    assert data["runs"][0]["facets"]["skill"] == ["forms", "navigation"]
    assert data["runs"][0]["facets"]["termination"] == ["done", "env_error", "max_steps"]
    rows = client.get("/api/runs/0/episodes").get_json()
    assert [(r["task_id"], r["repeat"], r["outcome"]) for r in rows] == [
        ("a", 0, "success"), ("b", 0, "failure"), ("a", 1, "aborted")]
    assert rows[0]["instruction"] == "Do a." and rows[0]["skill"] == "forms"
    assert [r["index"] for r in client.get("/api/runs/0/episodes?outcome=success").get_json()] == [0]
    assert [r["index"] for r in client.get("/api/runs/0/episodes?skill=forms").get_json()] == [0, 2]
    assert [r["index"] for r in client.get("/api/runs/0/episodes?termination=max_steps&skill=navigation").get_json()] == [1]
    assert client.get("/api/runs/0/episodes?outcome=aborted&skill=navigation").get_json() == []


def test_episode_pairs_each_step_with_the_screenshot_the_agent_saw(runs):
    one, _, shas = runs
    client = create_app([one]).test_client()
    ep = client.get("/api/runs/0/episodes/0").get_json()
    steps = ep["steps_detail"]
    # step 1 acted on the start page, step 2 on the page step 1 produced
    assert steps[0]["screenshot"] == f"/runs/0/screens/{shas[0]}.png"
    assert steps[1]["screenshot"] == f"/runs/0/screens/{shas[1]}.png"
    assert ep["final_screenshot"] == f"/runs/0/screens/{shas[2]}.png"
    assert steps[0]["actions"][0] == {"name": "click", "arguments": {"x": 640.0, "y": 360.0}}
    assert steps[0]["response"].startswith("<think>") and steps[0]["feedback"] == ["clicked <button> Go"]
    image = client.get(steps[0]["screenshot"])
    assert image.status_code == 200 and image.mimetype == "image/png"
    assert Image.open(io.BytesIO(image.data)).getpixel((0, 0)) == (255, 0, 0)
    assert client.get("/api/runs/0/episodes/3").status_code == 404
    assert client.get("/api/runs/1/episodes").status_code == 404
    assert client.get("/runs/0/screens/..%2Fepisodes.png").status_code == 404
    assert client.get("/runs/0/screens/not-a-hash.png").status_code == 404


def test_compare_pairs_episodes_by_task_and_repeat(runs):
    one, two, _ = runs
    client = create_app([one, two]).test_client()
    pairs = client.get("/api/compare").get_json()
    assert [(p["task_id"], p["repeat"]) for p in pairs] == [("a", 0), ("b", 0), ("a", 1), ("c", 0)]
    first = pairs[0]["episodes"]
    assert (first[0]["run"], first[0]["outcome"], first[1]["run"], first[1]["outcome"]) == (0, "success", 1, "failure")
    assert pairs[1]["episodes"][1] is None and pairs[3]["episodes"][0] is None
    # a pair is listed when any run's episode matches the filter
    assert [(p["task_id"], p["repeat"]) for p in client.get("/api/compare?outcome=success").get_json()] == [("a", 0), ("c", 0)]


def test_page_and_assets_are_served(runs):
    one, _, _ = runs
    client = create_app([one]).test_client()
    page = client.get("/")
    assert page.status_code == 200 and b'<script src="/static/viewer.js">' in page.data
    assert client.get("/static/viewer.js").status_code == 200
    assert b".marker" in client.get("/static/viewer.css").data


def test_bad_run_directory_is_named(tmp_path):
    with pytest.raises(RunDirError, match="no episodes.jsonl"):
        create_app([tmp_path])
    proc = subprocess.run([sys.executable, "-m", "weblica.cli", "view", str(tmp_path / "missing")],
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode != 0 and "is not a run directory" in proc.stderr and "weblica run --out" in proc.stderr


def test_view_command_serves_the_runs(runs):
    import httpx

    one, two, _ = runs
    proc = subprocess.Popen([sys.executable, "-m", "weblica.cli", "view", str(one), "--compare", str(two),
                             "--port", "0", "--json"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        info = json.loads(proc.stdout.readline())
        assert info["runs"] == [str(one), str(two)]
        data = httpx.get(info["url"] + "api/runs", timeout=10).json()
        assert [r["episodes"] for r in data["runs"]] == [3, 2]
        assert httpx.get(info["url"], timeout=10).status_code == 200
    finally:
        proc.terminate()
        proc.wait(timeout=10)
