"""SFT and GRPO on the tiny Qwen3-VL, on real environments: loss falls, runs repeat exactly, and a
resumed run continues exactly as an uninterrupted one."""
import json
import shutil
import subprocess
import sys

import pytest
import torch

from weblica.env.task import Task, save_tasks
from weblica.train.config import GRPOConfig, SFTConfig
from weblica.train.grpo import train_grpo
from weblica.train.outcomes import horizon_for
from weblica.train.metrics import MetricsLogger
from weblica.train.sft import train_sft
from fixtures_models import tiny_checkpoint
from scripted_rollouts import GROUP_SCRIPTS, install_grpo_scripts
from sites import LocalServer, create_app
from hand_tasks import hand_tasks


def lines(path):
    return [json.loads(l) for l in path.read_text().splitlines()]


@pytest.fixture(scope="module")
def fixed_port_site():
    """The test site on the first free port of a fixed range: the URL is part of every prompt, so a
    random port would make the freely sampled episodes vary from one pytest process to the next (whether
    a group's rewards differ does not: the scripted repeats decide that, tests/scripted_rollouts.py)."""
    for port in range(41000, 41100):
        try:
            server = LocalServer(create_app(), port=port)
        except (OSError, SystemExit):  # werkzeug exits (SystemExit) on a port another socket holds
            continue
        with server:
            yield server
        return
    pytest.skip("no free port in 41000-41099")


@pytest.fixture(scope="module")
def any_answer_tasks(fixed_port_site, tmp_path_factory):
    site = fixed_port_site
    path = tmp_path_factory.mktemp("grpo") / "tasks.jsonl"
    save_tasks([Task.from_dict({"id": f"any-{i}", "start_url": site.url + p, "instruction": "Finish with any answer.",
                                "max_steps": 2, "checks": [{"type": "answer_match", "expected": ".", "mode": "regex"}]})
                for i, p in enumerate(["/", "/second", "/form"])], path)
    return path


def test_sft_learns_and_resumes_exactly(site, tmp_path):
    torch.set_num_threads(1)
    tasks = tmp_path / "tasks.jsonl"
    save_tasks(hand_tasks(site.url)[:2], tasks)
    base = str(tiny_checkpoint(0))
    common = dict(model=base, tasks=str(tasks), batch_size=3, learning_rate=3e-3, seed=4)
    full = train_sft(SFTConfig(output_dir=str(tmp_path / "full"), epochs=3, **common))
    metrics = lines(tmp_path / "full" / "metrics.jsonl")
    assert full["samples"] == 6 and full["steps"] == 6 and len(metrics) == 6
    assert metrics[-1]["loss"] < metrics[0]["loss"] * 0.8  # behaviour cloning really fits the teacher
    assert (tmp_path / "full" / "final" / "config.json").exists()
    # the same recipe stopped after one epoch, then resumed to three
    train_sft(SFTConfig(output_dir=str(tmp_path / "split"), epochs=1, **common))
    train_sft(SFTConfig(output_dir=str(tmp_path / "split"), epochs=3, **common))
    assert lines(tmp_path / "split" / "metrics.jsonl") == metrics


def test_grpo_repeatable_and_resumes_exactly(any_answer_tasks, tmp_path, monkeypatch):
    torch.set_num_threads(1)
    # each group: a scripted answer (reward 1), a scripted empty answer (reward 0) and a free sample of
    # the warm-started model at temperature 1.5, so every group is informative whatever the model samples
    install_grpo_scripts(monkeypatch.setattr)
    assert len(GROUP_SCRIPTS) == 3 and GROUP_SCRIPTS[-1] is None
    base = str(tiny_checkpoint())  # warm-started: answers in the protocol; temperature adds variance
    common = dict(model=base, tasks=str(any_answer_tasks), groups_per_batch=2, group_size=3, max_new_tokens=64,
                  temperature=1.5, parallel=2, mini_batches=1, learning_rate=1e-4, max_refill_rounds=2, seed=11)
    train_grpo(GRPOConfig(output_dir=str(tmp_path / "a"), iterations=2, **common))
    a = lines(tmp_path / "a" / "metrics.jsonl")
    assert len(a) == 2
    for m in a:
        assert m["groups"] == 2 and m["zero_variance_groups"] == 0 and m["refill_rounds"] == 0
        assert m["samples"] >= 2 * (2 + 1 + 1) and m["grad_norm"] > 0  # an update really happened
        assert 0 < m["reward"] < 1 and set(m["terminations"]) <= {"done", "max_steps", "format_error"}
        assert m["terminations"]["done"] >= 4 and m["response_length"] > 0 and m["steps_per_episode"] >= 1
    for rollout in (tmp_path / "a" / "rollouts").iterdir():  # the scripted repeats played their scripts
        episodes = [json.loads(l) for l in (rollout / "episodes.jsonl").read_text().splitlines()]
        for task_id in {e["task_id"] for e in episodes}:
            answered, empty, _free = [e for e in episodes if e["task_id"] == task_id]
            assert (answered["reward"], len(answered["steps"]), answered["answer"]) == (1.0, 2, "ok")
            assert (empty["reward"], len(empty["steps"]), empty["answer"]) == (0.0, 1, "")
    # run b: one iteration, then resumed for the second; identical to the uninterrupted run a
    train_grpo(GRPOConfig(output_dir=str(tmp_path / "b"), iterations=1, **common))
    train_grpo(GRPOConfig(output_dir=str(tmp_path / "b"), iterations=2, **common))
    assert lines(tmp_path / "b" / "metrics.jsonl") == a
    for rollout in sorted((tmp_path / "a" / "rollouts").iterdir()):
        assert (tmp_path / "b" / "rollouts" / rollout.name / "episodes.jsonl").read_bytes() == \
            (rollout / "episodes.jsonl").read_bytes()
    # run c died after logging its second iteration but before checkpointing it: the resumed run
    # replaces that line instead of appending a second one for the same iteration
    shutil.copytree(tmp_path / "a", tmp_path / "c")
    shutil.rmtree(tmp_path / "c" / "checkpoint-1")
    train_grpo(GRPOConfig(output_dir=str(tmp_path / "c"), iterations=2, **common))
    assert lines(tmp_path / "c" / "metrics.jsonl") == a
    assert "kl" not in a[0] and "entropy" not in a[0]  # both terms are off by default
    # with the KL term on, the second PPO epoch (after the policy moved) pays a positive KL to the start
    train_grpo(GRPOConfig(output_dir=str(tmp_path / "kl"), iterations=1, kl_coef=0.5, ppo_epochs=2,
                          **{**common, "learning_rate": 5e-3}))
    (kl_line,) = lines(tmp_path / "kl" / "metrics.jsonl")
    assert kl_line["kl"] > 0 and kl_line["grad_norm"] > 0


def test_metrics_logger_resume_drops_lines_past_the_checkpoint(tmp_path):
    logger = MetricsLogger(tmp_path)
    for step in range(4):
        logger.log(step, {"loss": float(step)})
    logger.close()
    resumed = MetricsLogger(tmp_path, resume_after=1, tensorboard=False)
    resumed.log(2, {"loss": 9.0})
    resumed.close()
    assert [(m["step"], m["loss"]) for m in lines(tmp_path / "metrics.jsonl")] == [(0, 0.0), (1, 1.0), (2, 9.0)]


def test_horizon_schedule():
    cfg = GRPOConfig(max_steps=10, horizon_schedule=[[0, 15], [90, 30]])
    assert [horizon_for(cfg, i) for i in (0, 89, 90, 200)] == [15, 15, 30, 30]
    assert horizon_for(GRPOConfig(max_steps=7), 3) == 7


def test_train_cli_reports_bad_recipe(tmp_path):
    recipe = tmp_path / "r.yaml"
    recipe.write_text("kind: grpo\niterations: 2\nlearning_rat: 0.1\n")
    proc = subprocess.run([sys.executable, "-m", "weblica.cli", "train", "grpo", "--config", str(recipe)],
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode != 0 and "unknown option(s) learning_rat" in proc.stderr and "Traceback" not in proc.stderr
    proc = subprocess.run([sys.executable, "-m", "weblica.cli", "train", "sft", "--config", str(recipe)],
                          capture_output=True, text=True, timeout=60)
    assert "is a 'grpo' recipe, not 'sft'" in proc.stderr
