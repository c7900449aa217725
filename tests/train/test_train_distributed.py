"""Data-parallel training: two ranks (torchrun, gloo on CPU) holding different parts of a batch end with
the weights and metrics of one process holding all of it."""
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import torch
import yaml
from fixtures_models import tiny_checkpoint
from scripted_rollouts import scripted_env
from test_train_batching import samples  # noqa: F401  (the fixture: five forced turns)
from test_train_loops import any_answer_tasks, fixed_port_site  # noqa: F401  (tasks on a site at a fixed port)

from weblica.env.task import save_tasks
from weblica.train.config import GRPOConfig, SFTConfig
from weblica.train.distributed import World, own_gpu
from weblica.train.grpo import sample_owners
from weblica.train.model_io import load_trainable, make_optimizer
from weblica.train.policy_update import Shards, ppo_update
from weblica.train.sft import sft_step, train_sft
from hand_tasks import hand_tasks

TESTS = Path(__file__).parents[1]
# the update: two mini-batches, so samples of both ranks meet in one optimizer step and each rank
# sits out nothing; micro-batches of 2 on a rank holding 3 samples
GRPO = dict(ppo_epochs=2, mini_batches=2, micro_batch_size=2, kl_coef=0.0, learning_rate=5e-3, seed=3)
SFT = dict(micro_batch_size=2, learning_rate=5e-3)
OWNERS = [1, 0, 1, 1, 0]  # uneven: rank 1 holds three of five


def one_process(samples):
    torch.manual_seed(0)
    trainable = load_trainable(tiny_checkpoint(), GRPOConfig(device="cpu"))
    grpo = GRPOConfig(device="cpu", **GRPO)
    metrics = ppo_update(trainable.model, make_optimizer(trainable, grpo), samples, grpo, 0, "cpu")
    sft = SFTConfig(device="cpu", **SFT)
    step = sft_step(trainable, make_optimizer(trainable, sft), samples, sft)
    return metrics, step, torch.cat([p.detach().flatten() for p in trainable.model.parameters()])


def test_two_ranks_update_like_one_process(samples, tmp_path):  # noqa: F811
    torch.set_num_threads(1)
    batch = tmp_path / "batch.pt"
    torch.save({"samples": samples, "owners": OWNERS, "grpo": GRPO, "sft": SFT}, batch)
    out = tmp_path / "rank0.pt"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(TESTS), os.environ.get("PYTHONPATH", "")])}
    done = subprocess.run([sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc-per-node=2",
                           str(TESTS / "distributed_worker.py"), str(tiny_checkpoint()), str(batch), str(out)],
                          env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    ranks = torch.load(out, weights_only=False)
    metrics, step, weights = one_process(samples)
    assert ranks["grpo"].keys() == metrics.keys()
    for key in metrics:
        assert ranks["grpo"][key] == pytest.approx(metrics[key], rel=1e-4, abs=1e-6), key
    assert ranks["sft"]["loss"] == pytest.approx(step["loss"], rel=1e-5)
    assert ranks["sft"]["tokens"] == step["tokens"]
    assert ranks["sft"]["grad_norm"] == pytest.approx(step["grad_norm"], rel=1e-4)
    start = torch.cat([p.detach().flatten() for p in load_trainable(tiny_checkpoint(), GRPOConfig(device="cpu")).model.parameters()])
    assert (weights - start).abs().max() > 1e-3  # the steps really changed the weights
    # AdamW turns float noise in a near-zero gradient into a full step for that weight, so the check is on
    # the whole vector: here 2e-4 against a move of 4.75 (regrouping micro-batches in one process: 6e-4)
    assert (ranks["weights"] - weights).norm() < (weights - start).norm() * 1e-3


def test_shards_layout_checks_what_ranks_hold(samples):  # noqa: F811
    one = Shards(World(), [0] * len(samples))
    assert [(r, i) for r, i, _ in one.layout(samples)] == [(0, i) for i in range(len(samples))]
    with pytest.raises(ValueError, match="more samples"):
        Shards(World(), [0] * (len(samples) + 1)).layout(samples)
    with pytest.raises(ValueError, match="leaves samples"):
        Shards(World(), [0] * (len(samples) - 1)).layout(samples)


def test_world_shares_round_robin():
    items = list("abcdefg")
    worlds = [World(rank, 3, rank) for rank in range(3)]
    assert [w.share(items) for w in worlds] == [["a", "d", "g"], ["b", "e"], ["c", "f"]]
    assert sorted(sum((w.share(items) for w in worlds), [])) == items
    assert World().share(items) == items and World().main and not World().distributed


def _cli(*args, env=None):
    return subprocess.run([sys.executable, "-m", "weblica.cli", *args], capture_output=True, text=True, timeout=900,
                          env=env)


def _lines(path):
    return [json.loads(line) for line in path.read_text().splitlines()]


# computed from the ranks' summed floats, so equal to float rounding only; the mismatch terms are rounded to
# 1e-6 after that summing, so they may differ by one unit in the last place
UPDATE_TERMS = ("loss", "clip_fraction", "grad_norm", "mismatch_mean", "mismatch_max", "mismatch_k3")


def _episode(line):
    """An episode line without its sampled tokens' log-probs, and those log-probs."""
    episode = json.loads(line)
    logprobs = [p for step in episode["steps"] for p in step.pop("logprobs") or []]
    return episode, logprobs


def test_grpo_on_two_ranks_plays_learns_and_resumes_like_one_process(any_answer_tasks, grpo_reference,  # noqa: F811
                                                                    tmp_path):
    """`weblica train grpo --nproc 2`, stopped after one iteration and resumed on two ranks: the ranks
    split each iteration's groups, yet every episode, reward and count is the one-process run's, and the
    update terms agree; the second iteration's episodes, played with the weights updated before the stop,
    agree too, so both ranks held and restored the same weights. (An uninterrupted two-rank run used to
    be launched as well; its lines had to equal these, and each of these is checked against the
    one-process run, shared with test_train_fsdp, here.) Every run plays the scripted groups of
    tests/scripted_rollouts.py (`scripted_env` reaches the torchrun ranks): a success and a failure in
    each group, so every iteration updates; the third episode of each group is sampled for real."""
    torch.set_num_threads(1)
    common = dict(model=str(tiny_checkpoint()), tasks=str(any_answer_tasks), groups_per_batch=2, group_size=3,
                  max_new_tokens=64, temperature=1.5, parallel=1, mini_batches=1, learning_rate=1e-3,
                  max_refill_rounds=1, seed=11, iterations=2, save_every=1)
    alone_dir = grpo_reference(common)
    recipe = tmp_path / "two.yaml"
    for iterations in (1, 2):
        recipe.write_text(yaml.safe_dump({"kind": "grpo", "output_dir": str(tmp_path / "two"),
                                          **{**common, "iterations": iterations}}))
        done = _cli("train", "grpo", "--config", str(recipe), "--nproc", "2", "--json", env=scripted_env())
        assert done.returncode == 0, done.stderr[-3000:]
        summary = json.loads(done.stdout)  # one summary: rank 1 stays quiet
        assert summary["ranks"] == 2 and summary["iterations"] == iterations
        if iterations == 1:
            assert len(_lines(tmp_path / "two" / "metrics.jsonl")) == 1  # it did stop there
    one, two = _lines(alone_dir / "metrics.jsonl"), _lines(tmp_path / "two" / "metrics.jsonl")
    assert len(one) == len(two) == 2
    assert all(m["groups"] == 2 and m["zero_variance_groups"] == 0 and m["grad_norm"] > 0 for m in one)
    for a, b in zip(one, two):
        assert {k: v for k, v in a.items() if k not in UPDATE_TERMS} == {k: v for k, v in b.items() if k not in UPDATE_TERMS}
        for key in UPDATE_TERMS:
            assert b[key] == pytest.approx(a[key], rel=1e-3, abs=2e-6), key
    for rollout in sorted((alone_dir / "rollouts").iterdir()):  # each iteration's, refill rounds too
        split = sorted((tmp_path / "two" / "rollouts" / rollout.name).glob("rank-*/episodes.jsonl"))
        episodes = sorted((_episode(line) for path in split for line in path.read_text().splitlines()), key=str)
        alone = sorted((_episode(line) for line in (rollout / "episodes.jsonl").read_text().splitlines()), key=str)
        # a round's groups are dealt over the ranks: a refill round of one group runs on rank 0 alone
        assert len(split) == min(2, len(alone) // common["group_size"])
        assert [e for e, _ in episodes] == [e for e, _ in alone]  # the same tokens, actions and rewards
        for (_, a), (_, b) in zip(episodes, alone):  # after an update, log-probs differ by float noise only
            assert a == pytest.approx(b, abs=1e-4)
    assert (tmp_path / "two" / "checkpoint-1").is_dir() and (tmp_path / "two" / "final" / "config.json").exists()


def test_sft_on_two_ranks_steps_like_one_process(site, tmp_path):
    """`weblica train sft --nproc 2`: rank 0 plays the teacher once, both ranks train on halves of each
    batch, and the losses and gradient norms are the one-process run's."""
    torch.set_num_threads(1)
    tasks = tmp_path / "tasks.jsonl"
    save_tasks(hand_tasks(site.url)[:2], tasks)
    common = dict(model=str(tiny_checkpoint(0)), tasks=str(tasks), batch_size=3, learning_rate=3e-3, seed=4, epochs=2)
    train_sft(SFTConfig(output_dir=str(tmp_path / "one"), **common))
    recipe = tmp_path / "two.yaml"
    recipe.write_text(yaml.safe_dump({"kind": "sft", "output_dir": str(tmp_path / "two"), **common}))
    done = _cli("train", "sft", "--config", str(recipe), "--nproc", "2", "--json")
    assert done.returncode == 0, done.stderr[-3000:]
    assert json.loads(done.stdout)["ranks"] == 2
    one, two = _lines(tmp_path / "one" / "metrics.jsonl"), _lines(tmp_path / "two" / "metrics.jsonl")
    assert len(one) == len(two) == 4 and one[-1]["loss"] < one[0]["loss"]
    for a, b in zip(one, two):
        assert (a["step"], a["epoch"], a["tokens"]) == (b["step"], b["epoch"], b["tokens"])
        assert b["loss"] == pytest.approx(a["loss"], rel=1e-4) and b["grad_norm"] == pytest.approx(a["grad_norm"], rel=1e-3)
    assert len((tmp_path / "two" / "teacher" / "episodes.jsonl").read_text().splitlines()) == 2  # played once


def test_sample_owners_follow_the_batch_order():
    # groups in batch order held by ranks 1, 0, 1; rank 0's group has 2 samples, rank 1's 3 and 1
    assert sample_owners([1, 0, 1], [[2], [3, 1]]) == [1, 1, 1, 0, 0, 1]
    assert sample_owners([], [[], []]) == []


def test_each_gpu_rank_sees_only_its_own_gpu(monkeypatch):
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "3,5,6")
    assert own_gpu(World(rank=1, size=3, local_rank=1)) == "cuda:0"
    assert os.environ["CUDA_VISIBLE_DEVICES"] == "5"
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "3,5")
    with pytest.raises(RuntimeError, match="--nproc at most the number of GPUs"):
        own_gpu(World(rank=2, size=3, local_rank=2))
