"""`weblica eval` offline: n episodes per task, report.json/report.html with figures that match the episodes."""
import json
import subprocess
import sys

from hand_tasks import hand_tasks
from weblica.env.task import save_tasks
from weblica.eval.runner import samples_per_task

WEBLICA = [sys.executable, "-m", "weblica.cli"]


def test_samples_per_task_is_never_below_k():
    assert (samples_per_task(2, None), samples_per_task(2, 3), samples_per_task(3, 1)) == (2, 3, 3)


def test_oracle_eval_writes_reports(site, tmp_path):
    tasks_file = tmp_path / "tasks.jsonl"
    tasks = hand_tasks(site.url)
    save_tasks([tasks[0], tasks[2], tasks[3]], tasks_file)  # navigation, forms and reading
    out = tmp_path / "eval"
    proc = subprocess.run(WEBLICA + ["eval", "--tasks", str(tasks_file), "--policy", "oracle", "--k", "2",
                                     "--parallel", "2", "--out", str(out), "--json"],
                          capture_output=True, text=True, timeout=240)
    assert proc.returncode == 0, proc.stderr
    summary = json.loads(proc.stdout)
    # 3 tasks x n=2; the oracles take 2, 3 and 1 steps
    assert summary["episodes"] == 6 and summary["tasks"] == 3
    assert summary["success_rate"] == 1.0 and summary["abort_excluded_success_rate"] == 1.0
    assert summary["pass_at_k"] == {"1": 1.0, "2": 1.0}
    assert summary["mean_steps"] == 2.0 and summary["termination_reasons"] == {"done": 6}
    assert summary["breakdowns"]["skill"] == {"forms": 1.0, "navigation": 1.0, "reading": 1.0}

    episodes = [json.loads(l) for l in (out / "episodes.jsonl").read_text().splitlines()]
    assert [e["task_id"] for e in episodes] == [t for t in ["open-search", "submit-form", "read-second"]
                                                for _ in range(2)]
    assert len({e["episode_id"] for e in episodes}) == 6  # repeats are distinct episodes
    report = json.loads((out / "report.json").read_text())
    assert report["meta"]["k"] == 2 and report["meta"]["n"] == 2 and report["meta"]["policy"] == "oracle"
    assert [(r["task_id"], r["n"], r["c"]) for r in report["per_task"]] == [
        ("open-search", 2, 2), ("submit-form", 2, 2), ("read-second", 2, 2)]
    assert report["breakdowns"]["skill"]["forms"]["episodes"] == 2
    for sha in report["final_screens"].values():
        assert (out / "screens" / f"{sha}.png").exists()
    html = (out / "report.html").read_text()
    assert "pass@2" in html and "100.0%" in html and "submit-form" in html and "By skill" in html
    assert (out / "tasks.jsonl").exists()  # for the viewer's instructions and skill filter


def test_mode_options_are_checked(tmp_path):
    tasks_file = tmp_path / "tasks.jsonl"
    save_tasks(hand_tasks("http://127.0.0.1:9"), tasks_file)
    proc = subprocess.run(WEBLICA + ["eval", "--tasks", str(tasks_file), "--benchmark", "webvoyager"],
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode != 0 and "add --live" in proc.stderr
    proc = subprocess.run(WEBLICA + ["eval", "--tasks", str(tasks_file), "--live", "--judge", "openai:http://x/v1"],
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode != 0 and "--live needs --benchmark" in proc.stderr
