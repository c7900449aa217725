"""One rank of tests/train/test_train_distributed.py and tests/train/test_train_fsdp.py, launched by torchrun: a GRPO
update and an SFT step on this rank's share of a saved batch, data-parallel or (`fsdp`) sharded; rank 0
saves the resulting weights and metrics. Sharded, it also saves a checkpoint, resumes it into a fresh
model and reports what came back, and measures its shards against the memory estimate."""
import sys
from pathlib import Path

import torch

from weblica.train.config import GRPOConfig, SFTConfig
from weblica.train.distributed import close_world, init_world
from weblica.train.fsdp import shard_trainable
from weblica.train.memory import estimate_memory
from weblica.train.model_io import export_model, load_trainable, load_training_state, make_optimizer, save_checkpoint
from weblica.train.policy_update import Shards, ppo_update
from weblica.train.sft import sft_step


def full_weights(model):
    """Every parameter, whole, in one vector (an all-gather per tensor that every rank joins)."""
    return torch.cat([(p.full_tensor() if hasattr(p, "full_tensor") else p).detach().flatten().float()
                      for p in model.parameters()])


def main(checkpoint: str, batch_path: str, out_path: str, parallelism: str = "ddp") -> None:
    torch.set_num_threads(1)
    world, device = init_world("cpu")
    saved = torch.load(batch_path, weights_only=False)
    samples, owners = saved["samples"], saved["owners"]
    grpo = GRPOConfig(device=device, parallelism=parallelism, **saved["grpo"])
    trainable = load_trainable(Path(checkpoint), grpo)
    estimate = estimate_memory(trainable.model, grpo, world.size, parallelism)
    shard_trainable(trainable, grpo)
    mine = [s for s, owner in zip(samples, owners) if owner == world.rank]
    optimizer = make_optimizer(trainable, grpo)
    metrics = ppo_update(trainable.model, optimizer, mine, grpo, 0, device, shards=Shards(world, owners))
    report = {"grpo": metrics}
    if parallelism == "fsdp":
        local = lambda ts: sum(t.to_local().numel() * t.element_size() for t in ts)  # noqa: E731
        report["memory"] = {"estimate": estimate, "weights": local(trainable.model.parameters()),
                            "optimizer": local(v for st in optimizer.state.values() for k, v in st.items() if k != "step")}
        out = Path(out_path).parent
        save_checkpoint(out / "checkpoint-0", trainable, optimizer, {"iteration": 0}, world)
        export_model(trainable, out / "final", world)
        report["after_grpo"] = full_weights(trainable.model)
    sft = SFTConfig(device=device, parallelism=parallelism, **saved["sft"])
    report["sft"] = sft_step(trainable, make_optimizer(trainable, sft), samples, sft, world)
    weights = full_weights(trainable.model) if parallelism == "fsdp" else \
        torch.cat([p.detach().flatten() for p in trainable.model.parameters()])
    if parallelism == "fsdp":
        # resumed into a fresh sharded model: the fp32 shards and this rank's AdamW moments (the GRPO
        # optimizer's, which the SFT step above did not touch) come back bit for bit
        fresh = load_trainable(out / "checkpoint-0", grpo)
        shard_trainable(fresh, grpo)
        fresh_optimizer = make_optimizer(fresh, grpo)
        load_training_state(out / "checkpoint-0", fresh_optimizer, fresh.model)
        report["resumed"] = full_weights(fresh.model)
        pairs = [(a, b) for pa, pb in zip(trainable.model.parameters(), fresh.model.parameters())
                 for a, b in zip(optimizer.state[pa].values(), fresh_optimizer.state[pb].values())]
        same = len(pairs) == 3 * len(optimizer.state) and all(
            torch.equal(a.to_local() if hasattr(a, "to_local") else a, b.to_local() if hasattr(b, "to_local") else b)
            for a, b in pairs)
        report["optimizer_restored"] = world.gather(same)
        # the next update twice from the checkpoint: split as before, and with every sample on rank 1
        # (rank 0 then runs only weight-0 passes on a sample broadcast to it): the same step
        for key, layout in (("split", owners), ("one_rank_holds_all", [1] * len(samples))):
            if key != "split":
                fresh = load_trainable(out / "checkpoint-0", grpo)
                shard_trainable(fresh, grpo)
                fresh_optimizer = make_optimizer(fresh, grpo)
                load_training_state(out / "checkpoint-0", fresh_optimizer, fresh.model)
            held = [s for s, owner in zip(samples, layout) if owner == world.rank]
            step = ppo_update(fresh.model, fresh_optimizer, held, grpo, 1, device, shards=Shards(world, layout))
            report[key] = (step, full_weights(fresh.model))
    if world.main:
        torch.save({**report, "weights": weights}, out_path)
    close_world(world)


if __name__ == "__main__":
    main(*sys.argv[1:])
