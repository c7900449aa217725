"""Data-parallel training on one node: one process per GPU (`torchrun`, or `weblica train --nproc N`).
(`parallelism: fsdp` shards the model over the same ranks instead: `weblica.train.fsdp`.)

Every rank holds the whole model and optimizer. Rollouts and samples are split between ranks; each rank
weights its samples' losses by the *global* token count of the mini-batch, and the gradients are summed
across ranks, so an update equals the single-process update on the union of the samples (same
mini-batches, same token mean), up to the order of float additions. The optimizer then takes the same
step on every rank and the weights stay equal without being broadcast.

On CUDA each rank sees only its own GPU (`CUDA_VISIBLE_DEVICES` is narrowed before CUDA starts), so the
training weights and a rank's vLLM engine share that device and NCCL needs no device mapping.
"""
from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any, Callable, Iterable, Sequence, TypeVar

T = TypeVar("T")

# gradients travel in flat buckets of this many elements: one collective per bucket, not per tensor
BUCKET_ELEMENTS = 1 << 24
# ranks wait for each other's rollouts inside a collective: a round of long episodes on a slow rank
# must not trip the default watchdog (10 minutes for NCCL)
COLLECTIVE_TIMEOUT_S = 4 * 3600


@dataclass(frozen=True)
class World:
    """This process's place among the training ranks; a `World()` is a single-process run."""

    rank: int = 0
    size: int = 1
    local_rank: int = 0

    @property
    def main(self) -> bool:
        """The rank that writes metrics, checkpoints and the exported model."""
        return self.rank == 0

    @property
    def distributed(self) -> bool:
        return self.size > 1

    def owner(self, index: int) -> int:
        """The rank that plays item `index` of a list every rank holds (round robin)."""
        return index % self.size

    def share(self, items: Sequence[T]) -> list[T]:
        """This rank's items of a list every rank holds."""
        return [item for i, item in enumerate(items) if self.owner(i) == self.rank]

    def gather(self, value: T) -> list[T]:
        """Every rank's `value` (picklable), in rank order, on every rank."""
        if not self.distributed:
            return [value]
        import torch.distributed as dist

        out: list[Any] = [None] * self.size
        dist.all_gather_object(out, value)
        return out

    def barrier(self) -> None:
        if self.distributed:
            import torch.distributed as dist

            dist.barrier()

    def on_main(self, write: Callable[[], Any]) -> None:
        """Do `write` on the main rank only (a checkpoint, an export); every rank goes on once it is done."""
        if self.main:
            write()
        self.barrier()

    def sum_floats(self, values: Sequence[float]) -> list[float]:
        """Element-wise sum over ranks of a few floats (loss terms to log)."""
        if not self.distributed:
            return list(values)
        return [sum(col) for col in zip(*self.gather(list(values)))]

    def sum_gradients(self, parameters: Iterable[Any]) -> None:
        """Replace every trainable parameter's gradient by its sum over ranks; a rank that saw no sample
        in a mini-batch takes part with zeros."""
        if not self.distributed:
            return
        import torch
        import torch.distributed as dist

        params = [p for p in parameters if p.requires_grad]
        # a parameter no rank has a gradient for keeps none, so the optimizer skips it as it would in
        # one process (AdamW would otherwise decay it)
        held = torch.tensor([p.grad is not None for p in params], dtype=torch.int32, device=_device(params))
        dist.all_reduce(held, op=dist.ReduceOp.MAX)
        params = [p for p, h in zip(params, held.tolist()) if h]
        for p in params:
            if p.grad is None:
                p.grad = torch.zeros_like(p)
        for bucket in _buckets(params):
            # summed in fp32 whatever the gradients' dtype: a bf16 sum over 8 ranks rounds each partial sum
            # to 8 significant bits (FSDP's reduce_dtype does the same on the sharded path)
            flat = torch.cat([p.grad.reshape(-1).to(torch.float32) for p in bucket])
            dist.all_reduce(flat)
            offset = 0
            for p in bucket:
                p.grad.copy_(flat[offset:offset + p.numel()].view_as(p.grad))  # cast back to the grad's dtype
                offset += p.numel()


def _device(params: Sequence[Any]) -> Any:
    """Where this rank's collectives run: NCCL only moves CUDA tensors."""
    return params[0].device if params else "cpu"


def _buckets(params: Sequence[Any]) -> Iterable[list[Any]]:
    """Consecutive parameters whose gradients share a dtype and device, up to BUCKET_ELEMENTS each."""
    bucket: list[Any] = []
    filled = 0
    for p in params:
        if bucket and (filled + p.numel() > BUCKET_ELEMENTS or p.grad.dtype != bucket[0].grad.dtype
                       or p.grad.device != bucket[0].grad.device):
            yield bucket
            bucket, filled = [], 0
        bucket.append(p)
        filled += p.numel()
    if bucket:
        yield bucket


def world_from_env() -> World:
    """The world torchrun describes (RANK, WORLD_SIZE, LOCAL_RANK); a single process without them."""
    size = int(os.environ.get("WORLD_SIZE", "1"))
    if size <= 1:
        return World()
    return World(int(os.environ["RANK"]), size, int(os.environ.get("LOCAL_RANK", os.environ["RANK"])))


def init_world(device: str) -> tuple[World, str]:
    """Join the process group torchrun set up and return the world and this rank's device. A CUDA rank
    is narrowed to its own GPU (it becomes `cuda:0`), which requires CUDA not to have started yet."""
    world = world_from_env()
    if not world.distributed:
        return world, device
    import torch
    import torch.distributed as dist

    if device.startswith("cuda") or device == "auto" and torch.cuda.is_available():
        device, backend = own_gpu(world), "nccl"
    else:
        backend = "gloo"
    if not dist.is_initialized():
        import datetime

        dist.init_process_group(backend, timeout=datetime.timedelta(seconds=COLLECTIVE_TIMEOUT_S))
    return world, device


def own_gpu(world: World) -> str:
    """Narrow this process to the GPU of its local rank (`CUDA_VISIBLE_DEVICES`, so the rank's vLLM
    engine lands there too) and return that GPU's device name, which is then `cuda:0`."""
    import torch

    if torch.cuda.is_initialized():
        raise RuntimeError("CUDA started before the training ranks were set up; start training before "
                           "anything touches the GPU")
    visible = os.environ.get("CUDA_VISIBLE_DEVICES")
    gpus = visible.split(",") if visible else [str(i) for i in range(torch.cuda.device_count())]
    if world.local_rank >= len(gpus):
        raise RuntimeError(f"rank {world.rank} has no GPU: {len(gpus)} visible for {world.size} ranks "
                           "(one rank per GPU: --nproc at most the number of GPUs)")
    os.environ["CUDA_VISIBLE_DEVICES"] = gpus[world.local_rank]
    return "cuda:0"


def close_world(world: World) -> None:
    if world.distributed:
        import torch.distributed as dist

        if dist.is_initialized():
            dist.destroy_process_group()
