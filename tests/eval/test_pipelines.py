"""The pipelines below the CLI (weblica/pipelines/, issue 42): callable without click, and what their commands
say. A re-run with nothing to do says so (`weblica run --resume`, `weblica cache build`, `weblica train sft`);
long work shows progress on stderr (`record`, `train sft`, `tiny-model`) and never on stdout, which stays
one JSON object with --json."""
import json
import subprocess
import sys

import pytest

from hand_tasks import hand_tasks
from weblica.env.task import save_tasks
from weblica.pipelines.rollouts import Rollouts, run_rollouts
from weblica.policy.factory import PolicySpecError

WEBLICA = [sys.executable, "-m", "weblica.cli"]


def cli(*args, timeout=600, cwd=None):
    return subprocess.run(WEBLICA + [str(a) for a in args], capture_output=True, text=True, timeout=timeout, cwd=cwd)


def test_rollouts_run_without_the_cli_and_a_full_resume_has_nothing_to_do(site, tmp_path):
    tasks = hand_tasks(site.url)[:2]
    done = run_rollouts(tasks, "oracle", tmp_path / "run", parallel=2)
    assert isinstance(done, Rollouts) and done.summary.success_rate == 1.0 and not done.nothing_to_do
    again = run_rollouts(tasks, "oracle", tmp_path / "run", resume=True)
    assert again.kept == 2 and again.nothing_to_do and again.to_dict(resume=True)["nothing_to_do"]
    save_tasks(tasks, tmp_path / "tasks.jsonl")
    human = cli("run", "--tasks", tmp_path / "tasks.jsonl", "--out", tmp_path / "run", "--resume")
    assert human.returncode == 0, human.stderr
    assert human.stdout.startswith(f"nothing to do: all 2 episodes were already in {tmp_path / 'run' / 'episodes.jsonl'}")
    assert "{" not in human.stdout


def test_a_policy_the_tasks_cannot_use_fails_before_any_browser(tmp_path):
    tasks = hand_tasks("http://127.0.0.1:9")
    for task in tasks:
        task.oracle = None
    with pytest.raises(PolicySpecError, match="4 task\\(s\\) have no oracle actions"):
        run_rollouts(tasks, "oracle", tmp_path / "run")
    with pytest.raises(PolicySpecError, match="unknown policy 'orcale'"):
        run_rollouts(tasks, "orcale", tmp_path / "run")
    assert not (tmp_path / "run").exists()
    save_tasks(tasks, tmp_path / "tasks.jsonl")
    result = cli("run", "--tasks", tmp_path / "tasks.jsonl", "--out", tmp_path / "run", "--json")
    assert result.returncode == 1 and "no oracle actions" in json.loads(result.stdout)["error"]


def test_a_cache_build_rerun_says_it_has_nothing_to_do(tmp_path):
    from weblica.cache.demo_site import NewsSite, news_tasks

    with NewsSite() as site:
        live = [t for t in news_tasks(site) if t["id"] == "news-election"]
        (tmp_path / "live.jsonl").write_text("".join(json.dumps(t) + "\n" for t in live))
        args = ["cache", "build", "--tasks", tmp_path / "live.jsonl", "--policy", "oracle", "--runs", "2",
                "--out", tmp_path / "cache"]
        for spec in site.resolve:
            args += ["--resolve", spec]
        first = cli(*args)
        assert first.returncode == 0, first.stderr[-3000:]
        assert first.stdout.splitlines()[0] == f"1 of 1 task(s) kept, written to {tmp_path / 'cache' / 'tasks.jsonl'}"
        assert "kept    news-election: replay misses 0, tiers: " in first.stdout and "{" not in first.stdout
        again = cli(*args, "--json")
    report = json.loads(again.stdout)
    assert report["nothing_to_do"] and [r["resumed"] for r in report["kept"]] == [True]
    human = cli(*args)   # the site is gone: nothing is recorded again, so nothing needs it
    assert human.stdout.startswith("nothing to do: every task was already built in this --out")


def test_record_shows_progress_on_stderr_and_a_readable_summary(tmp_path):
    from weblica.cache.demo_site import NEWS_ACTIONS, NewsSite

    (tmp_path / "actions.json").write_text(json.dumps(NEWS_ACTIONS[:2]))
    with NewsSite() as site:
        args = ["record", site.url("/"), "--actions", tmp_path / "actions.json", "--runs", "2"]
        for spec in site.resolve:
            args += ["--resolve", spec]
        human = cli(*args, "--out", tmp_path / "rec")
        quiet = cli(*args, "--out", tmp_path / "rec2", "--json")
    assert human.returncode == 0, human.stderr[-3000:]
    assert "record: run 2/2" in human.stderr and "6/6" in human.stderr     # 2 runs x (start page + 2 actions)
    first = human.stdout.splitlines()[0]
    assert first.startswith(f"{tmp_path / 'rec'}: 2 run(s), ") and first.endswith("exchange(s) recorded")
    assert human.stdout.splitlines()[-1] == f"next: weblica rules infer {tmp_path / 'rec'}"
    assert quiet.returncode == 0 and "record:" not in quiet.stderr
    assert json.loads(quiet.stdout)["runs"] == 2


def test_tiny_model_shows_its_warm_start(tmp_path):
    human = cli("tiny-model", tmp_path / "tiny", "--warm-start-steps", "3")
    assert human.returncode == 0, human.stderr[-3000:]
    assert "tiny model: warm start" in human.stderr and "3/3" in human.stderr and "loss" in human.stderr
    assert human.stdout.startswith(f"wrote {tmp_path / 'tiny'}")
    quiet = cli("tiny-model", tmp_path / "tiny2", "--warm-start-steps", "2", "--json")
    assert "warm start" not in quiet.stderr and json.loads(quiet.stdout)["warm_start_steps"] == 2


def test_train_sft_shows_steps_and_loss_and_a_rerun_has_nothing_to_do(site, tmp_path):
    from fixtures_models import tiny_checkpoint

    tasks = hand_tasks(site.url)[:2]
    save_tasks(tasks, tmp_path / "tasks.jsonl")
    run_rollouts(tasks, "oracle", tmp_path / "teacher")
    recipe = tmp_path / "sft.yaml"
    recipe.write_text(f"sft:\n  model: {tiny_checkpoint(0)}\n  trajectories: [{tmp_path / 'teacher'}]\n"
                      f"  output_dir: {tmp_path / 'out'}\n  epochs: 2\n  batch_size: 2\n  learning_rate: 1.0e-3\n")
    first = cli("train", "sft", "--config", recipe)
    assert first.returncode == 0, first.stderr[-3000:]
    assert "train sft" in first.stderr and "loss" in first.stderr
    steps = int(first.stdout.split("SFT: ")[1].split(" steps")[0])
    assert steps >= 2 and f"{steps}/{steps}" in first.stderr
    assert first.stdout.splitlines()[-1] == f"model: {tmp_path / 'out' / 'final'}"
    again = cli("train", "sft", "--config", recipe)
    assert again.returncode == 0, again.stderr[-3000:]
    assert again.stdout.startswith(f"nothing to do: {tmp_path / 'out'} already holds this recipe's finished run "
                                   f"({steps} steps)")
    quiet = cli("train", "sft", "--config", recipe, "--json")
    summary = json.loads(quiet.stdout)
    assert summary["nothing_to_do"] is True and summary["steps"] == steps and "train sft" not in quiet.stderr
