"""bench/gpu_check.sh's gate (issue 40, point 3) in its CPU dry run: an FSDP-sharded trainer (one rank) takes
one optimizer step on the engine's rollouts and syncs its gathered weights; the engine's new log-probs must
match the trainer's new weights (max, p99, mean) and sit well away from the old ones. With the sync broken
the same gates fail and the script exits 1. (On the CPU the engine is an hf stand-in for vLLM; the GPU run
is what proves vLLM: it has not been run yet.)"""
import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def gpu_check(tmp_path, *extra):
    env = {**os.environ, "OMP_NUM_THREADS": "1", "PYTHON": sys.executable}
    done = subprocess.run(["bash", str(ROOT / "bench" / "gpu_check.sh"), "--device", "cpu", "--quick", "--parts",
                           "sync", "--out", str(tmp_path), *extra], capture_output=True, text=True, env=env,
                          timeout=600)
    return done.returncode, json.loads((tmp_path / "gpu_check.json").read_text())["sync"], done


def test_the_sync_gate_passes_a_sync_and_fails_a_broken_one(tmp_path):
    status, sync, done = gpu_check(tmp_path / "ok")
    assert status == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert sync["ok"] and not sync["failed_gates"] and sync["tensors_sent"] > 0
    assert sync["gap_to_new_weights"]["max"] <= sync["gates"]["max"]
    assert sync["gap_to_old_weights"]["p99"] > 3 * sync["gap_to_new_weights"]["p99"]  # the step was visible
    assert sync["update"]["grad_norm"] > 0 and "mismatch_max" in sync["update"]
    status, broken, _ = gpu_check(tmp_path / "broken", "--break-sync")
    assert status == 1 and not broken["ok"]
    assert any(g.startswith("p99") for g in broken["failed_gates"])
    assert any("old weights" in g for g in broken["failed_gates"])
