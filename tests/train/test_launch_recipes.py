"""The launch recipes (issue 40, point 4): the 8-GPU torchrun script checks what a first run needs (GPUs,
/dev/shm, vLLM, the task files) before it starts and says how to fix each; the 8B recipe names the new
options and loads."""
import os
import subprocess
import sys
from pathlib import Path

from weblica.train.config import load_config

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "train" / "launch" / "torchrun-8gpu.sh"


def dry_run(tmp_path, gpus: int, *args):
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir(exist_ok=True)
    smi = bin_dir / "nvidia-smi"  # a machine with `gpus` GPUs
    smi.write_text("#!/bin/sh\n" + "".join(f"echo 'GPU {i}: NVIDIA H100 80GB HBM3'\n" for i in range(gpus)))
    smi.chmod(0o755)
    env = {**os.environ, "DRY_RUN": "1", "PYTHON": sys.executable, "PATH": f"{bin_dir}:/usr/bin:/bin"}
    return subprocess.run(["bash", str(SCRIPT), *args], capture_output=True, text=True, env=env, timeout=60)


def test_the_torchrun_script_checks_before_it_starts(tmp_path):
    done = dry_run(tmp_path, 4)
    assert "4 GPU(s) visible for NPROC=8 ranks" in done.stderr
    assert "vllm is not importable" in done.stderr  # this CPU venv has no vLLM: the message names the 3.12 env
    assert "tasks file sites/train/tasks.jsonl does not exist: weblica synth --split train" in done.stderr
    assert "eval_tasks file sites/val/tasks.jsonl does not exist: weblica synth --split val" in done.stderr
    command = done.stdout.strip().splitlines()[-1]
    assert "-m torch.distributed.run --nnodes=1 --node-rank=0 --nproc-per-node=8" in command
    assert command.endswith("-m weblica.cli train grpo --config train/qwen3vl-8b-grpo.yaml")
    ok = dry_run(tmp_path, 8, "train/qwen3vl-8b-grpo.yaml", "--set", "iterations=2")
    assert "GPU(s) visible" not in ok.stderr and ok.stdout.strip().endswith("--set iterations=2")
    missing = dry_run(tmp_path, 8, "train/absent.yaml")
    assert "no recipe at train/absent.yaml" in missing.stderr


def test_the_8b_recipe_names_the_options_a_first_gpu_run_needs():
    config = load_config(ROOT / "train" / "qwen3vl-8b-grpo.yaml")
    assert (config.max_model_len, config.gpu_memory_utilization, config.enforce_eager) == (16384, 0.35, False)
    assert config.max_new_tokens < config.max_model_len and config.parallelism == "fsdp"
    assert (config.clip_ratio_c, config.tis_cap, config.mask_truncated) == (3.0, 2.0, True)
    assert (config.tasks, config.eval_tasks, config.eval_every) == ("sites/train/tasks.jsonl", "sites/val/tasks.jsonl", 10)
