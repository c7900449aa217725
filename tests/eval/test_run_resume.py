"""Issue 39, point 6: runs that survive a kill. `weblica run` appends each finished episode as it ends;
after `kill -9` mid-run, `--resume` plays only the episodes the log lacks and leaves the same
`episodes.jsonl` an uninterrupted run writes; two processes writing one --out are refused by a lock."""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from flask import Flask, request

from sites import LocalServer, create_app
from weblica.env.task import Task, save_tasks
from weblica.run_log import read_whole_lines

WEBLICA = [sys.executable, "-m", "weblica.cli"]
EPISODES = 10


class Counted:
    """The foundation test site, counting which episode's start page each request asked for."""

    def __init__(self) -> None:
        self.app: Flask = create_app()
        self.asked: list[str] = []
        self._lock = threading.Lock()

        @self.app.before_request
        def count() -> None:
            if request.path == "/second" and request.args.get("ep"):
                with self._lock:
                    self.asked.append(request.args["ep"])


def resume_tasks(url: str) -> list[Task]:
    return [Task.from_dict({
        "id": f"read-{i}", "start_url": f"{url}/second?ep={i}", "instruction": "What does the page say?",
        "checks": [{"type": "answer_match", "expected": "results"}], "max_steps": 4,
        "oracle": [{"name": "click", "arguments": {"x": 100, "y": 100}}, {"name": "done", "arguments": {"answer": "Results"}}],
    }) for i in range(EPISODES)]


@pytest.fixture(scope="module")
def counted():
    served = Counted()
    with LocalServer(served.app) as server:
        served.url = server.url
        yield served


def run_cmd(tasks: Path, out: Path, *extra: str) -> list[str]:
    return WEBLICA + ["run", "--tasks", str(tasks), "--policy", "oracle", "--out", str(out), "--seed", "5", "--json",
                      *extra]


def wait_for_lines(path: Path, count: int, proc: subprocess.Popen, limit_s: float = 240) -> None:
    deadline = time.monotonic() + limit_s
    while time.monotonic() < deadline and proc.poll() is None:
        if path.exists() and path.read_bytes().count(b"\n") >= count:
            return
        time.sleep(0.02)
    raise AssertionError(f"{path} never held {count} lines (run exit {proc.poll()})")


def kill_group(proc: subprocess.Popen) -> None:
    try:
        os.killpg(proc.pid, signal.SIGKILL)  # what the kill left of its browser
    except ProcessLookupError:
        pass
    proc.wait(timeout=60)


def test_kill_9_mid_run_then_resume_gives_the_episodes_of_an_uninterrupted_run(counted, tmp_path):
    tasks = tmp_path / "tasks.jsonl"
    save_tasks(resume_tasks(counted.url), tasks)
    whole = subprocess.run(run_cmd(tasks, tmp_path / "whole"), capture_output=True, text=True, timeout=600)
    assert whole.returncode == 0, whole.stdout + whole.stderr
    expected = (tmp_path / "whole" / "episodes.jsonl").read_bytes()
    assert expected.count(b"\n") == EPISODES

    out = tmp_path / "killed"
    proc = subprocess.Popen(run_cmd(tasks, out), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            start_new_session=True)
    try:
        wait_for_lines(out / "episodes.jsonl", 3, proc)
        proc.send_signal(signal.SIGKILL)  # kill -9 of the run itself, mid-run
        proc.wait(timeout=60)
    finally:
        kill_group(proc)
    assert proc.returncode == -signal.SIGKILL
    kept, _ = read_whole_lines(out / "episodes.jsonl")
    assert 3 <= len(kept) < EPISODES  # the finished episodes survived the kill, each line whole

    counted.asked.clear()
    resumed = subprocess.run(run_cmd(tasks, out, "--resume"), capture_output=True, text=True, timeout=600)
    assert resumed.returncode == 0, resumed.stdout + resumed.stderr
    summary = json.loads(resumed.stdout)
    assert summary["episodes"] == EPISODES and summary["kept_episodes"] == len(kept)
    assert (out / "episodes.jsonl").read_bytes() == expected
    # only the episodes the log lacked were played again
    kept_eps = {t.task_id.split("-")[1] for t in kept}
    assert set(counted.asked) == {str(i) for i in range(EPISODES)} - kept_eps


def test_resume_refuses_other_options_and_keeps_whole_lines_only(counted, tmp_path):
    tasks = tmp_path / "tasks.jsonl"
    save_tasks(resume_tasks(counted.url)[:3], tasks)
    out = tmp_path / "run"
    first = subprocess.run(run_cmd(tasks, out), capture_output=True, text=True, timeout=600)
    assert first.returncode == 0, first.stderr
    log = out / "episodes.jsonl"
    complete = log.read_bytes()
    lines = complete.splitlines(keepends=True)
    log.write_bytes(lines[0] + lines[1][: len(lines[1]) // 2])  # a kill mid-write: the second line torn
    other = subprocess.run(run_cmd(tasks, out, "--resume", "--seed", "6"), capture_output=True, text=True, timeout=120)
    assert other.returncode != 0 and "--resume continues the run" in json.loads(other.stdout)["error"]
    assert "seed" in json.loads(other.stdout)["error"]
    again = subprocess.run(run_cmd(tasks, out, "--resume"), capture_output=True, text=True, timeout=600)
    assert again.returncode == 0, again.stdout + again.stderr
    assert json.loads(again.stdout)["kept_episodes"] == 1
    assert log.read_bytes() == complete


def test_two_runs_into_one_out_are_refused_by_a_lock(counted, tmp_path):
    tasks = tmp_path / "tasks.jsonl"
    save_tasks(resume_tasks(counted.url), tasks)
    out = tmp_path / "shared"
    first = subprocess.Popen(run_cmd(tasks, out), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                             start_new_session=True)
    try:
        wait_for_lines(out / "episodes.jsonl", 1, first)
        second = subprocess.run(run_cmd(tasks, out), capture_output=True, text=True, timeout=120)
        assert second.returncode != 0
        error = json.loads(second.stdout)["error"]
        assert "being written by another weblica run" in error and str(first.pid) in error
        stdout, stderr = first.communicate(timeout=600)
    finally:
        if first.poll() is None:
            kill_group(first)
    assert first.returncode == 0, stderr
    assert json.loads(stdout)["episodes"] == EPISODES
    lines = (out / "episodes.jsonl").read_text().splitlines()
    assert [json.loads(line)["task_id"] for line in lines] == [f"read-{i}" for i in range(EPISODES)]


def test_a_task_file_with_a_lone_surrogate_is_one_line_and_loses_no_earlier_run(counted, tmp_path):
    tasks = tmp_path / "tasks.jsonl"
    save_tasks(resume_tasks(counted.url)[:2], tasks)
    out = tmp_path / "run"
    assert subprocess.run(run_cmd(tasks, out), capture_output=True, timeout=600).returncode == 0
    before = (out / "episodes.jsonl").read_bytes()
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"id": "x\\ud800", "start_url": "http://127.0.0.1:9/", "instruction": "hi"}\n')
    proc = subprocess.run(run_cmd(bad, out), capture_output=True, text=True, timeout=120)
    assert proc.returncode != 0 and "internal error" not in proc.stdout
    lines = proc.stdout.strip().splitlines()
    assert len(lines) == 1 and "lone surrogate" in json.loads(lines[0])["error"]
    assert (out / "episodes.jsonl").read_bytes() == before


def test_eval_resumes_as_run_does(counted, tmp_path):
    tasks = tmp_path / "tasks.jsonl"
    save_tasks(resume_tasks(counted.url)[:3], tasks)
    out = tmp_path / "eval"
    base = WEBLICA + ["eval", "--tasks", str(tasks), "--policy", "oracle", "--k", "2", "--out", str(out), "--json"]
    first = subprocess.run(base, capture_output=True, text=True, timeout=600)
    assert first.returncode == 0, first.stdout + first.stderr
    complete = (out / "episodes.jsonl").read_bytes()
    (out / "episodes.jsonl").write_bytes(b"".join(complete.splitlines(keepends=True)[:2]))  # killed after 2 of 6
    counted.asked.clear()
    again = subprocess.run(base + ["--resume"], capture_output=True, text=True, timeout=600)
    assert again.returncode == 0, again.stdout + again.stderr
    assert json.loads(again.stdout)["episodes"] == 6
    assert (out / "episodes.jsonl").read_bytes() == complete
    assert len(counted.asked) == 4  # the two kept episodes were not played again
    live = subprocess.run(base + ["--resume", "--live"], capture_output=True, text=True, timeout=120)
    assert live.returncode != 0 and "--resume" in json.loads(live.stdout)["error"]
