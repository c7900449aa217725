"""One data-parallel rank of tests/test_train_distributed.py, launched by torchrun: a GRPO update and an
SFT step on this rank's share of a saved batch; rank 0 saves the resulting weights and metrics."""
import sys
from pathlib import Path

import torch

from weblica.train.config import GRPOConfig, SFTConfig
from weblica.train.distributed import close_world, init_world
from weblica.train.model_io import load_trainable, make_optimizer
from weblica.train.policy_update import Shards, ppo_update
from weblica.train.sft import sft_step


def main(checkpoint: str, batch_path: str, out_path: str) -> None:
    torch.set_num_threads(1)
    world, device = init_world("cpu")
    saved = torch.load(batch_path, weights_only=False)
    samples, owners = saved["samples"], saved["owners"]
    grpo = GRPOConfig(device=device, **saved["grpo"])
    trainable = load_trainable(Path(checkpoint), grpo)
    mine = [s for s, owner in zip(samples, owners) if owner == world.rank]
    metrics = ppo_update(trainable.model, make_optimizer(trainable, grpo), mine, grpo, 0, device,
                         shards=Shards(world, owners))
    sft = SFTConfig(device=device, **saved["sft"])
    step = sft_step(trainable, make_optimizer(trainable, sft), samples, sft, world)
    if world.main:
        weights = torch.cat([p.detach().flatten() for p in trainable.model.parameters()])
        torch.save({"grpo": metrics, "sft": step, "weights": weights}, out_path)
    close_world(world)


if __name__ == "__main__":
    main(*sys.argv[1:])
