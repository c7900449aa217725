"""FSDP (`parallelism: fsdp`): two gloo CPU ranks holding sharded parameters, gradients and AdamW moments
end with the losses and weights of one process holding all of it (and of the data-parallel path); a
sharded checkpoint resumes exactly; the exported `final/` is a plain Hugging Face checkpoint; the memory
estimate adds up and matches the shards the ranks really hold."""
import json
import os
from dataclasses import replace
import subprocess
import sys
from pathlib import Path

import pytest
import torch
import yaml
from fixtures_models import tiny_checkpoint
from test_train_batching import samples  # noqa: F401  (the fixture: five forced turns, one text-only)
from scripted_rollouts import scripted_env
from test_train_distributed import GRPO, OWNERS, SFT, UPDATE_TERMS, _cli, _episode, _lines, one_process
from test_train_loops import any_answer_tasks, fixed_port_site  # noqa: F401  (tasks on a site at a fixed port)

from weblica.train.config import ConfigError, GRPOConfig, SFTConfig, config_from_dict
from weblica.train.fsdp import micro_batches, passes_needed
from weblica.train.memory import estimate_memory, qwen3vl_8b_shell, shard_count
from weblica.train.model_io import load_trainable, make_optimizer

TESTS = Path(__file__).parents[1]


@pytest.fixture(scope="module")
def two_sharded_ranks(samples, tmp_path_factory):  # noqa: F811
    tmp = tmp_path_factory.mktemp("fsdp")
    torch.save({"samples": samples, "owners": OWNERS, "grpo": GRPO, "sft": SFT}, tmp / "batch.pt")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(TESTS), os.environ.get("PYTHONPATH", "")]),
           "OMP_NUM_THREADS": "1"}
    done = subprocess.run([sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc-per-node=2",
                           str(TESTS / "distributed_worker.py"), str(tiny_checkpoint()), str(tmp / "batch.pt"),
                           str(tmp / "rank0.pt"), "fsdp"], env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-4000:]
    return tmp, torch.load(tmp / "rank0.pt", weights_only=False)


def test_two_sharded_ranks_update_like_one_process(samples, two_sharded_ranks):  # noqa: F811
    torch.set_num_threads(1)
    _, ranks = two_sharded_ranks
    metrics, step, weights = one_process(samples)
    assert ranks["grpo"].keys() == metrics.keys()
    for key in metrics:
        assert ranks["grpo"][key] == pytest.approx(metrics[key], rel=1e-4, abs=1e-6), key
    assert ranks["sft"]["loss"] == pytest.approx(step["loss"], rel=1e-5)
    assert ranks["sft"]["tokens"] == step["tokens"]
    assert ranks["sft"]["grad_norm"] == pytest.approx(step["grad_norm"], rel=1e-4)
    start = torch.cat([p.detach().flatten() for p in load_trainable(tiny_checkpoint(), GRPOConfig(device="cpu")).model.parameters()])
    moved = (weights - start).norm()
    assert moved > 1e-2
    # measured: 3.9e-4 against a move of 4.75 (the data-parallel path: 2e-4)
    assert (ranks["weights"] - weights).norm() < moved * 1e-3


def test_sharded_checkpoint_resumes_exactly(two_sharded_ranks):
    _, ranks = two_sharded_ranks
    assert torch.equal(ranks["resumed"], ranks["after_grpo"])  # fp32 shards, not a cast of them
    assert ranks["optimizer_restored"] == [True, True]  # each rank's moments and step counts, bit for bit


def test_a_rank_without_samples_joins_with_filler_passes(two_sharded_ranks):
    _, ranks = two_sharded_ranks
    (split, split_weights), (alone, alone_weights) = ranks["split"], ranks["one_rank_holds_all"]
    for key in split:
        assert alone[key] == pytest.approx(split[key], rel=1e-4, abs=1e-6), key
    assert (alone_weights - split_weights).norm() < (split_weights - ranks["after_grpo"]).norm() * 1e-3


def test_final_is_a_plain_hugging_face_checkpoint(two_sharded_ranks):
    from transformers import AutoModelForImageTextToText

    tmp, ranks = two_sharded_ranks
    config = (tmp / "final" / "config.json").read_text()
    assert '"Qwen3VLForConditionalGeneration"' in config and "FSDP" not in config
    model = AutoModelForImageTextToText.from_pretrained(tmp / "final")
    exported = torch.cat([p.detach().flatten() for p in model.parameters()])
    assert torch.equal(exported, ranks["after_grpo"])
    assert (tmp / "checkpoint-0" / "sharded" / ".metadata").exists()


def test_memory_estimate_matches_the_shards_and_adds_up(two_sharded_ranks):
    _, ranks = two_sharded_ranks
    memory = ranks["memory"]
    estimate = memory["estimate"]
    assert estimate.weights == memory["weights"]  # rank 0 holds ceil(rows / 2) of every tensor
    assert estimate.optimizer == memory["optimizer"]  # two fp32 moments per trainable shard element
    assert estimate.total == sum(getattr(estimate, k) for k in
                                 ("weights", "masters", "gradients", "optimizer", "unsharded", "activations",
                                  "runtime"))
    assert estimate.masters == 0 and estimate.gradients == estimate.weights  # all trainable, fp32


def test_memory_estimates_of_the_8b_recipe():
    model = qwen3vl_8b_shell()
    assert 8.7e9 < sum(p.numel() for p in model.parameters()) < 8.8e9
    recipe = dict(dtype="bfloat16", gradient_checkpointing=True, micro_batch_size=4)
    sharded = estimate_memory(model, GRPOConfig(parallelism="fsdp", master_weights="auto", **recipe), 8, "fsdp")
    replica = estimate_memory(model, GRPOConfig(master_weights="auto", **recipe), 8, "ddp")
    # fp32 masters: 4 bytes a weight, sharded over 8 ranks; trainable (vision frozen) moments 8 bytes / 8
    assert 4.3e9 < sharded.weights < 4.45e9 and 8.1e9 < sharded.optimizer < 8.3e9
    assert replica.masters > 32e9 and replica.total > 130e9
    assert sharded.total < 37e9  # leaves an 80 GB card room for a sleeping vLLM and its wake-up
    assert sharded.activations == replica.activations


def test_passes_are_padded_to_the_fullest_rank():
    assert passes_needed([3, 1, 0], 2) == 2 and passes_needed([], 2) == 0
    assert micro_batches(["a", "b", "c"], 2, 0, None) == [(["a", "b"], True), (["c"], True)]
    assert micro_batches([], 2, 2, "f") == [(["f"], False), (["f"], False)]
    assert shard_count((5, 3), 2) == 9 and shard_count((), 4) == 1


def test_fsdp_refuses_stochastic_rounding_and_unknown_parallelism():
    with pytest.raises(ConfigError, match="master_weights auto"):
        config_from_dict(SFTConfig, {"parallelism": "fsdp", "master_weights": "stochastic_rounding"})
    with pytest.raises(ConfigError, match="ddp, fsdp"):
        config_from_dict(GRPOConfig, {"parallelism": "zero3"})


def test_grpo_sharded_on_two_ranks_plays_and_resumes_like_one_process(any_answer_tasks, grpo_reference,  # noqa: F811
                                                                       tmp_path):
    """`weblica train grpo --nproc 2 --set parallelism=fsdp`, stopped after one iteration and resumed from
    its sharded checkpoint: the metric lines are the one-process run's (update terms within float noise),
    and the second iteration's episodes, sampled from the replica refreshed with the gathered weights, are
    its episodes too. Both play the scripted groups of tests/scripted_rollouts.py, so every iteration
    updates (`scripted_env` reaches the torchrun ranks)."""
    torch.set_num_threads(1)
    common = dict(model=str(tiny_checkpoint()), tasks=str(any_answer_tasks), groups_per_batch=2, group_size=3,
                  max_new_tokens=64, temperature=1.5, parallel=1, mini_batches=1, learning_rate=1e-3,
                  max_refill_rounds=1, seed=11, iterations=2, save_every=1)
    alone_dir = grpo_reference(common)  # the one-process run, shared with test_train_distributed
    recipe = tmp_path / "two.yaml"
    for iterations in (1, 2):
        recipe.write_text(yaml.safe_dump({"kind": "grpo", "output_dir": str(tmp_path / "two"),
                                          **{**common, "iterations": iterations}}))
        done = _cli("train", "grpo", "--config", str(recipe), "--nproc", "2", "--set", "parallelism=fsdp", "--json",
                    env=scripted_env())
        assert done.returncode == 0, done.stderr[-3000:]
        assert "memory per rank (estimate, fsdp on 2 rank(s)" in done.stderr
    one, two = _lines(alone_dir / "metrics.jsonl"), _lines(tmp_path / "two" / "metrics.jsonl")
    assert len(one) == len(two) == 2 and all(m["groups"] == 2 and m["grad_norm"] > 0 for m in one)
    for a, b in zip(one, two):
        assert {k: v for k, v in a.items() if k not in UPDATE_TERMS} == {k: v for k, v in b.items() if k not in UPDATE_TERMS}
        for key in UPDATE_TERMS:
            assert b[key] == pytest.approx(a[key], rel=1e-3, abs=1e-6), key
    last = sorted((alone_dir / "rollouts").iterdir())[-1]
    split = sorted((tmp_path / "two" / "rollouts" / last.name).glob("rank-*/episodes.jsonl"))
    episodes = sorted((_episode(line) for path in split for line in path.read_text().splitlines()), key=str)
    alone = sorted((_episode(line) for line in (last / "episodes.jsonl").read_text().splitlines()), key=str)
    assert [e for e, _ in episodes] == [e for e, _ in alone]
    for (_, a), (_, b) in zip(episodes, alone):
        assert a == pytest.approx(b, abs=1e-4)
    assert (tmp_path / "two" / "checkpoint-0" / "sharded").is_dir()
    final = json.loads((tmp_path / "two" / "final" / "config.json").read_text())
    assert final["architectures"] == ["Qwen3VLForConditionalGeneration"]


def test_bf16_fsdp_shards_are_the_fp32_masters(samples):  # noqa: F811
    """One rank, bf16: the shards are fp32 and the forward gathers their bf16 cast, so a GRPO step at a
    small learning rate moves the weights as `MasterWeightAdamW` does on a replica (same bf16 forward and
    gradients, AdamW on fp32 copies)."""
    import torch.distributed as dist

    from weblica.train.fsdp import shard_trainable
    from weblica.train.policy_update import ppo_update

    torch.set_num_threads(1)
    config = GRPOConfig(device="cpu", dtype="bfloat16", learning_rate=1e-5, mini_batches=1, ppo_epochs=1,
                        micro_batch_size=2)
    replica = load_trainable(tiny_checkpoint(), config)
    start = torch.cat([p.detach().float().flatten() for p in replica.model.parameters()])
    optimizer = make_optimizer(replica, config)
    expected = ppo_update(replica.model, optimizer, samples, config, 0, "cpu")
    masters = torch.cat([m.flatten() for m in optimizer.masters])
    sharded = load_trainable(tiny_checkpoint(), replace(config, parallelism="fsdp"))
    try:
        shard_trainable(sharded, replace(config, parallelism="fsdp"))
        assert {p.dtype for p in sharded.model.parameters()} == {torch.float32}
        got = ppo_update(sharded.model, make_optimizer(sharded, config), samples, config, 0, "cpu")
        shards = torch.cat([p.full_tensor().flatten() for p in sharded.model.parameters()])
    finally:
        dist.destroy_process_group()
    assert got["loss"] == pytest.approx(expected["loss"], rel=1e-3)
    moved = (masters - start).norm()
    assert moved > 0
    gap = (shards - masters).norm() / moved
    assert gap < 0.03, gap  # measured 0.011 (max |delta| 1e-5); plain bf16 AdamW: 0.99, 1.7% of weights moved


def test_sft_sharded_on_two_ranks_steps_like_one_process(site, tmp_path):
    """`weblica train sft --nproc 2 --set parallelism=fsdp`: the losses and gradient norms of the
    one-process run, and a final/ that loads as a plain checkpoint holding the same weights."""
    from transformers import AutoModelForImageTextToText

    from hand_tasks import hand_tasks
    from weblica.env.task import save_tasks
    from weblica.train.sft import train_sft

    torch.set_num_threads(1)
    tasks = tmp_path / "tasks.jsonl"
    save_tasks(hand_tasks(site.url)[:2], tasks)
    common = dict(model=str(tiny_checkpoint(0)), tasks=str(tasks), batch_size=3, learning_rate=3e-3, seed=4,
                  epochs=2, micro_batch_size=2)
    train_sft(SFTConfig(output_dir=str(tmp_path / "one"), **common))
    recipe = tmp_path / "two.yaml"
    recipe.write_text(yaml.safe_dump({"kind": "sft", "output_dir": str(tmp_path / "two"), "parallelism": "fsdp",
                                      **common}))
    done = _cli("train", "sft", "--config", str(recipe), "--nproc", "2", "--json")
    assert done.returncode == 0, done.stderr[-3000:]
    one, two = _lines(tmp_path / "one" / "metrics.jsonl"), _lines(tmp_path / "two" / "metrics.jsonl")
    assert len(one) == len(two) == 4 and one[-1]["loss"] < one[0]["loss"]
    for a, b in zip(one, two):
        assert (a["step"], a["epoch"], a["tokens"]) == (b["step"], b["epoch"], b["tokens"])
        assert b["loss"] == pytest.approx(a["loss"], rel=1e-4) and b["grad_norm"] == pytest.approx(a["grad_norm"], rel=1e-3)
    weights = [torch.cat([p.detach().flatten() for p in AutoModelForImageTextToText.from_pretrained(
        tmp_path / run / "final").parameters()]) for run in ("one", "two")]
    assert (weights[0] - weights[1]).abs().max() < 1e-3
