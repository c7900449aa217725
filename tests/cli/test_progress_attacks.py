"""Attacks on the progress bars (weblica/progress.py) and --json mode: a bar draws on stderr only, off it
draws nothing, and stdout carries exactly what the command prints, whether stderr is a terminal (the bar
is live), a pipe, or --json switched the bar off; `weblica synth --json` prints one JSON object."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from weblica.progress import OptionalBar

ROOT = Path(__file__).resolve().parents[2]
ENV = {**os.environ, "PYTHONPATH": str(ROOT)}


def test_a_bar_on_draws_on_stderr_only_and_off_draws_nothing(capfd):
    with OptionalBar(3, "validating tasks (0/1 sites done)", True) as bar:
        for _ in range(3):
            bar.advance()
        bar.relabel("validating tasks (1/1 sites done)")
    out, err = capfd.readouterr()
    assert out == "" and "1/1 sites done" in err
    with OptionalBar(3, "hidden", False) as bar:
        bar.advance("still hidden")
        bar.relabel("hidden")
    assert capfd.readouterr() == ("", "")


def test_a_bar_that_ends_in_an_exception_stops_and_lets_it_through(capfd):
    with pytest.raises(KeyError):
        with OptionalBar(2, "working", True) as bar:
            bar.advance()
            raise KeyError("boom")
    out, err = capfd.readouterr()
    assert out == "" and "working" in err


SCRIPT = textwrap.dedent("""
    import json, sys
    from weblica.progress import OptionalBar
    with OptionalBar(4, "rollouts", True) as bar:
        for i in range(4):
            print(json.dumps({"line": i}), flush=True)   # what a command writes to stdout meanwhile
            bar.advance()
    print(json.dumps({"done": True}))
""")


def test_stdout_keeps_its_lines_while_a_bar_is_live_on_a_terminal():
    """stderr a terminal (the bar is live and redraws), stdout a pipe: every line printed to stdout during
    the bar arrives on stdout, none is drawn into the terminal instead."""
    import pty

    leader, follower = pty.openpty()
    try:
        run = subprocess.run([sys.executable, "-c", SCRIPT], stdout=subprocess.PIPE, stderr=follower, env=ENV,
                             timeout=120, text=True)
        os.close(follower)
        follower = -1
        drawn = b""
        while True:
            try:
                chunk = os.read(leader, 65536)
            except OSError:
                break
            if not chunk:
                break
            drawn += chunk
    finally:
        if follower >= 0:
            os.close(follower)
        os.close(leader)
    assert run.returncode == 0
    lines = [json.loads(line) for line in run.stdout.splitlines()]
    assert lines == [{"line": i} for i in range(4)] + [{"done": True}]
    assert b"rollouts" in drawn and b'"line"' not in drawn


def test_synth_json_prints_one_object_and_the_human_mode_keeps_bars_off_stdout(tmp_path):
    base = [sys.executable, "-m", "weblica.cli", "synth", "--skill", "search", "--category", "books", "--n", "1",
            "--no-validate"]
    run = subprocess.run(base + ["--out", str(tmp_path / "a"), "--json"], capture_output=True, text=True,
                         env=ENV, timeout=300)
    assert run.returncode == 0, run.stderr[-2000:]
    summary = json.loads(run.stdout)  # exactly one JSON document, nothing before or after it
    assert summary["tasks_kept"] >= 0 and summary["out"] == str(tmp_path / "a")
    human = subprocess.run(base + ["--out", str(tmp_path / "b")], capture_output=True, text=True, env=ENV,
                           timeout=300)
    assert human.returncode == 0
    assert "━" not in human.stdout and "ETA" not in human.stdout
    # a usage error in --json mode is one JSON error object, too
    bad = subprocess.run(base + ["--out", str(tmp_path / "c"), "--n", "0", "--json"], capture_output=True,
                         text=True, env=ENV, timeout=300)
    assert bad.returncode != 0 and "error" in json.loads(bad.stdout)
