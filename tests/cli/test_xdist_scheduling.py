"""The suite's xdist scheduler (tests/xdist_scheduling.py) run for real: `pytest -n 2 --dist loadfile` on a
small suite named like ours, in a subprocess. Files that must not run beside each other end on one worker,
one after the other; each worker starts on one of the two costliest units; every test runs once."""
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from xdist_scheduling import TOGETHER, unit_costs, unit_of

pytest.importorskip("xdist")

HERE = Path(__file__).parents[1]
TEST_BODY = """import json, os, time
def _log(name):
    start = time.monotonic()
    time.sleep(0.05)
    with open({log!r}, "a") as f:
        f.write(json.dumps({{"worker": os.environ.get("PYTEST_XDIST_WORKER"), "test": name,
                            "start": start, "end": time.monotonic()}}) + "\\n")
def test_one(): _log(__file__ + "::one")
def test_two(): _log(__file__ + "::two")
"""
FILES = [*TOGETHER, "tests/synth/test_synth_distractors.py", "tests/scoring/test_adversarial_policy.py", "tests/test_light_a.py",
         "tests/test_light_b.py", "tests/test_light_c.py"]


def test_units_group_the_files_that_share_a_port_or_a_ray_instance():
    assert unit_of("tests/cache/test_cache_ray.py::test_x") == unit_of("tests/eval/test_rollout_ray.py::test_y")
    assert len({unit_of(p) for p in ("tests/train/test_train_loops.py", "tests/train/test_train_fsdp.py",
                                     "tests/train/test_train_distributed.py")}) == 1
    assert unit_of("tests/env/test_task.py::test_a[1]") == "tests/env/test_task.py"
    costs = unit_costs()
    assert costs[unit_of("tests/train/test_train_fsdp.py")] > costs["tests/synth/test_synth_distractors.py"]  # summed


def test_a_two_worker_run_keeps_groups_on_one_worker_and_starts_with_the_costliest(tmp_path):
    log = tmp_path / "log.jsonl"
    (tmp_path / "pytest.ini").write_text("[pytest]\ntestpaths = tests\n")
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "conftest.py").write_text(
        f"import sys\nsys.path.insert(0, {str(HERE)!r})\n"
        "from xdist_scheduling import pytest_xdist_make_scheduler  # noqa: F401\n")
    for path in FILES:
        (tmp_path / path).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / path).write_text(TEST_BODY.format(log=str(log)))
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST_")}
    done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-n", "2",
                           "--dist", "loadfile"], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    rows = [json.loads(line) for line in log.read_text().splitlines()]
    for row in rows:
        row["file"] = Path(row["test"].split("::")[0]).relative_to(tmp_path).as_posix()
    assert sorted(r["test"] for r in rows) == sorted(str(tmp_path / p) + t for p in FILES for t in ("::one", "::two"))
    assert {r["worker"] for r in rows} == {"gw0", "gw1"}
    for group in set(TOGETHER.values()):
        members = [r for r in rows if TOGETHER.get(r["file"]) == group]
        assert len({r["worker"] for r in members}) == 1, members
        spans = sorted((r["start"], r["end"]) for r in members)
        assert all(a_end <= b_start for (_, a_end), (b_start, _) in zip(spans, spans[1:])), spans
    costs = unit_costs()
    costliest = sorted(costs, key=costs.get, reverse=True)[:2]
    first = {min((r for r in rows if r["worker"] == w), key=lambda r: r["start"])["file"] for w in ("gw0", "gw1")}
    assert {unit_of(f) for f in first} == set(costliest), first
