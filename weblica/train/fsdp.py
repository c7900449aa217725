"""Fully sharded data parallel (`parallelism: fsdp`): FSDP2's `fully_shard` over the training ranks.

Units, as torchtitan's `apply_fsdp` lays them out: the input embeddings, each Qwen3-VL text decoder
layer, and [final norm, LM head] (one unit of the three when the embeddings are tied); the root holds the
rest, which is the vision tower. An 8B model's embeddings and LM head are 1.2 GB each in bf16: in the root
they would stay whole, with their gradients and an fp32 reduce buffer, for the whole forward and backward.
[norm, LM head] is not resharded after the forward (the backward begins with it). The vision tower is
not a unit of its own: text-only turns and filler passes do not run it, and a unit that runs on some
ranks only leaves its all-gather unmatched (a hang); in the root its parameters are gathered at every
forward and stay whole until the backward ends (the root is not resharded after its forward). A rank keeps 1/N of every parameter, gradient and AdamW
moment; a unit's full parameters exist only while it runs (all-gathered before, freed after; the backward gathers them
again, and activation checkpointing recomputes the layer inside that window).

Precision: with fp32 master weights (`master_weights: auto|on` on a bf16/fp16 model) the *sharded*
parameters are the fp32 masters and `MixedPrecisionPolicy(param_dtype=bf16, reduce_dtype=fp32)` gathers
their bf16 cast for the forward and reduce-scatters the gradients in fp32 onto them; a plain
`torch.optim.AdamW` over the shards then is the master-weight optimizer (what `MasterWeightAdamW` does for
a replica). `master_weights: off` keeps the shards in the model's dtype. Stochastic rounding is not offered
under FSDP: its point was to save the fp32 copy, which sharding makes cheap (4 bytes / N per weight).

Gradients are summed over ranks, not averaged (`set_gradient_divide_factor(1.0)`): every rank's loss is
already weighted by the token count of the whole mini-batch, as on the data-parallel path. Every forward
and backward is collective, so all ranks must run the same number of passes: a rank with fewer samples
in a mini-batch runs `filler` passes with weight 0 (`passes_needed`).

Rollouts and export need full weights: `full_tensors` (and `FullWeights`, its view for the vLLM sync) streams them tensor by tensor (each an all-gather
all ranks join) for the vLLM sync and to refresh the unsharded replica the hf rollout backend samples from
(ranks play different episodes, whose forwards could not be collective); `export_full` writes a normal
Hugging Face checkpoint from the full state dict gathered on rank 0; `save_sharded`/`load_sharded` keep
the fp32 shards and the optimizer in a `torch.distributed.checkpoint` directory, which resumes exactly.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any, Iterator, Sequence, TypeVar

T = TypeVar("T")

SHARDED_DIR = "sharded"  # inside a checkpoint-N/ directory: torch.distributed.checkpoint files of every rank


def decoder_layers(model: Any) -> list[Any]:
    """The text decoder layers of a Qwen3-VL (or a plain causal LM): the units FSDP shards one by one."""
    inner = getattr(model, "model", model)
    text = getattr(inner, "language_model", inner)
    layers = getattr(text, "layers", None)
    if layers is None:
        raise ValueError(f"{type(model).__name__} has no decoder layers where FSDP expects them "
                         "(model.language_model.layers or model.layers)")
    return list(layers)


def edge_units(model: Any) -> tuple[list[Any], list[Any]]:
    """The modules before and after the decoder layers that get FSDP units of their own, as torchtitan's
    `apply_fsdp` gives them: ([input embeddings], [final norm, LM head]); with tied embeddings the three
    share one parameter and form one unit, returned first (and the second list is empty). A module the
    model lacks is left out (the root keeps whatever is not in a unit)."""
    inner = getattr(model, "model", model)
    text = getattr(inner, "language_model", inner)
    embed = getattr(text, "embed_tokens", None)
    norm = getattr(text, "norm", None)
    head = getattr(model, "lm_head", None)
    if embed is not None and head is not None and getattr(embed, "weight", None) is getattr(head, "weight", 1):
        return [m for m in (embed, norm, head) if m is not None], []
    return ([embed] if embed is not None else []), [m for m in (norm, head) if m is not None]


def is_sharded(model: Any) -> bool:
    from torch.distributed.fsdp import FSDPModule

    return isinstance(model, FSDPModule)


def uses_masters(options: Any, dtype: Any) -> bool:
    """Whether the shards are fp32 masters of a low-precision model (see the module docstring)."""
    import torch

    mode = options.master_weights
    if mode == "stochastic_rounding":
        raise ValueError("master_weights stochastic_rounding is not available with parallelism fsdp: there the "
                         "fp32 masters are the sharded parameters (use auto/on, or off)")
    low = dtype in (torch.bfloat16, torch.float16)
    return mode == "on" or mode == "auto" and low


def shard_model(model: Any, options: Any, trainable: bool = True) -> None:
    """Turn `model` (on this rank's device, in the configured dtype) into an FSDP2 module in place.
    With master weights its parameters become fp32 shards, gathered as `options.dtype` for compute."""
    import torch
    from torch.distributed.fsdp import MixedPrecisionPolicy, fully_shard

    dtype = getattr(torch, options.dtype)
    if trainable and uses_masters(options, dtype):
        model.float()
    policy = MixedPrecisionPolicy(param_dtype=dtype, reduce_dtype=torch.float32)
    if trainable and options.gradient_checkpointing:
        # non-reentrant checkpointing: the recompute reruns the layer's FSDP pre-forward (an all-gather)
        # inside autograd, which the reentrant variant does not support
        model.gradient_checkpointing_enable(gradient_checkpointing_kwargs={"use_reentrant": False})
    embed, head = edge_units(model)
    if len(embed) > 1:  # tied input and output embeddings: one parameter, so one unit (as torchtitan does)
        fully_shard(embed, mp_policy=policy, reshard_after_forward=False)
    elif embed:
        fully_shard(embed[0], mp_policy=policy)
    for layer in decoder_layers(model):
        fully_shard(layer, mp_policy=policy)
    if head:
        # the backward starts here: resharding after the forward would only gather them again at once
        fully_shard(head, mp_policy=policy, reshard_after_forward=False)
    fully_shard(model, mp_policy=policy)  # the rest, vision tower included (module docstring)
    for unit in model.modules():  # neither setting recurses into the layers' units
        if is_sharded(unit):
            unit.set_gradient_divide_factor(1.0)
            # a plain SUM collective: a custom factor would otherwise use NCCL's PREMUL_SUM, which gloo lacks
            unit.set_force_sum_reduction_for_comms(True)
    # a rank whose pass skips parameters (the vision tower on a text-only turn) still joins the reduce-scatter
    model.set_reduce_scatter_unused_params(True)


def shard_trainable(trainable: Any, options: Any) -> Any:
    """Shard the model to train when `options.parallelism` is fsdp (a single process gets a one-rank
    process group, so the same code runs); returns the unsharded rollout replica when the hf backend will
    sample from it (GRPO with rollout_backend hf), else None."""
    if getattr(options, "parallelism", "ddp") != "fsdp":
        return None
    import torch.distributed as dist

    if not dist.is_initialized():
        backend = "nccl" if str(trainable.device).startswith("cuda") else "gloo"
        dist.init_process_group(backend, store=dist.HashStore(), rank=0, world_size=1)
    replica = rollout_replica(trainable.model) if getattr(options, "rollout_backend", None) == "hf" else None
    shard_model(trainable.model, options)
    return replica


def passes_needed(per_rank: Sequence[int], micro_batch_size: int) -> int:
    """Forward/backward passes every rank runs for a mini-batch whose samples ranks hold `per_rank`."""
    return max((-(-n // micro_batch_size) for n in per_rank), default=0)


def micro_batches(mine: Sequence[T], size: int, passes: int, filler: T | None) -> list[tuple[list[T], bool]]:
    """This rank's micro-batches, (samples, real), padded to `passes` with weight-0 passes on `filler`
    (sharded models only: there every pass is collective; `passes` is then `passes_needed`)."""
    out = [(list(mine[i:i + size]), True) for i in range(0, len(mine), size)]
    while len(out) < passes:
        out.append(([filler], False))
    return out


def broadcast_filler(world: Any, samples: Sequence[Any], layout: Sequence[tuple[int, int, int]]) -> Any:
    """A sample this rank can run a weight-0 pass on: its own first one, else the first of the batch sent
    by its owner (only when some rank holds none, so usually no transfer)."""
    holding = {rank for rank, _, _ in layout}
    if len(holding) == world.size:
        return samples[0]
    import torch.distributed as dist

    source = layout[0][0]
    box = [samples[0] if world.rank == source else None]
    dist.broadcast_object_list(box, src=source)
    return samples[0] if samples else box[0]


def norm_value(norm: Any) -> float:
    """`clip_grad_norm_` over DTensor gradients returns a (replicated) DTensor."""
    full = getattr(norm, "full_tensor", None)
    return float(full() if full is not None else norm)


# ---- full weights ------------------------------------------------------------------------------------


def full_tensors(model: Any, dtype: Any = None, trainable_only: bool = False) -> Iterator[tuple[str, Any, bool]]:
    """(name, full tensor, requires_grad) of every parameter then buffer, one all-gather at a time; every
    rank must iterate to the end, in the same order."""
    import torch

    with torch.no_grad():
        for name, param in model.named_parameters():
            if trainable_only and not param.requires_grad:
                continue
            full = param.full_tensor() if hasattr(param, "full_tensor") else param.detach()
            yield name, full.to(dtype) if dtype is not None else full, param.requires_grad
        if not trainable_only:
            for name, buffer in model.named_buffers():
                yield name, buffer, False


class FullWeights:
    """A view of a sharded model with the two calls the vLLM sync reads (`named_parameters`, `state_dict`),
    yielding full tensors in the rollout dtype, gathered one by one."""

    def __init__(self, model: Any, dtype: Any) -> None:
        self.model, self.dtype = model, dtype

    def named_parameters(self) -> Iterator[tuple[str, Any]]:
        for name, full, grad in full_tensors(self.model, self.dtype, trainable_only=True):
            yield name, full.requires_grad_(grad) if full.is_floating_point() else full

    def state_dict(self) -> dict[str, Any]:
        persistent = set(self.model.state_dict().keys())
        return {name: full for name, full, _ in full_tensors(self.model, self.dtype) if name in persistent}


def rollout_replica(model: Any) -> Any:
    """An unsharded copy for the hf rollout backend (taken before sharding, then refreshed after every
    update); it never trains."""
    import copy

    replica = copy.deepcopy(model).eval()
    for param in replica.parameters():
        param.requires_grad_(False)
    return replica


def refresh_replica(replica: Any, model: Any) -> None:
    """The replica := the sharded model's current weights (cast to the replica's dtype)."""
    import torch

    own = dict(replica.named_parameters())
    with torch.no_grad():
        for name, full, _ in full_tensors(model, trainable_only=True):
            own[name].copy_(full)


# ---- export and checkpoints ----------------------------------------------------------------------------


def export_full(trainable: Any, directory: Path, dtype: Any, main: bool) -> None:
    """A Hugging Face checkpoint of the sharded model in `dtype`: the full state dict is gathered to rank 0's
    CPU (every rank joins), loaded into an empty shell of the model's class (its own `save_pretrained`
    then names the right architecture and ties the right weights) and saved with the tokenizer."""
    import torch
    from torch.distributed.checkpoint.state_dict import StateDictOptions, get_model_state_dict

    full = get_model_state_dict(trainable.model, options=StateDictOptions(full_state_dict=True, cpu_offload=True))
    if not main:
        return
    model = trainable.model
    shell_class = next(c for c in type(model).__mro__ if c.__name__ == type(model).__name__.removeprefix("FSDP"))
    with torch.device("meta"):
        shell = shell_class(model.config)
    shell.load_state_dict({k: v.to(dtype) for k, v in full.items()}, assign=True, strict=False)
    missing = [n for n, p in shell.named_parameters() if p.is_meta]
    if missing:
        raise RuntimeError(f"the gathered state dict lacks {len(missing)} weights, e.g. {missing[0]}")
    shell.generation_config = model.generation_config
    directory.mkdir(parents=True, exist_ok=True)
    shell.save_pretrained(directory, safe_serialization=True)
    trainable.tokenizer.save_pretrained(directory)
    if trainable.image_processor is not None:
        trainable.image_processor.save_pretrained(directory)


def save_sharded(directory: Path, model: Any, optimizer: Any) -> None:
    """Every rank writes its shards of the parameters (fp32 masters included) and AdamW moments."""
    import torch.distributed.checkpoint as dcp
    from torch.distributed.checkpoint.state_dict import get_state_dict

    model_state, optim_state = get_state_dict(model, optimizer)
    dcp.save({"model": model_state, "optimizer": optim_state}, checkpoint_id=str(directory / SHARDED_DIR))


def load_sharded(directory: Path, model: Any, optimizer: Any) -> None:
    """Restore what `save_sharded` wrote (any rank count: DCP reshards on load)."""
    import torch.distributed.checkpoint as dcp
    from torch.distributed.checkpoint.state_dict import get_state_dict, set_state_dict

    path = directory / SHARDED_DIR
    if not path.is_dir():
        raise ValueError(f"{directory} has no {SHARDED_DIR}/ (it was saved with parallelism ddp): resume with "
                         "parallelism ddp, or start a new output_dir")
    model_state, optim_state = get_state_dict(model, optimizer)
    state = {"model": model_state, "optimizer": optim_state}
    dcp.load(state, checkpoint_id=str(path))
    set_state_dict(model, optimizer, model_state_dict=state["model"], optim_state_dict=state["optimizer"])
