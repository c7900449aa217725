"""Per-rank memory of a training update, estimated from parameter counts and dtypes (printed before
training; `train/README.md`'s table for the 8B recipe comes from `qwen3vl_8b_shell`).

Counted, on the fullest rank at the update's peak:
- parameters as stored, a separate fp32 master copy (data-parallel with master weights), gradients, AdamW
  moments (under FSDP: this rank's shards);
- under FSDP the units that are whole at once (`weblica.train.fsdp`): the root (the vision tower) stays
  whole for the whole forward and backward, with its gradient and the fp32 buffer its gradient is
  reduce-scattered from when it trains; the larger of the embedding unit and the [norm, LM head] unit, also
  with gradient and fp32 reduce buffer; two decoder layers in flight and one layer's gradient (compute dtype
  and fp32 reduce buffer);
- data-parallel: the fp32 buffer of one gradient bucket summed across ranks;
- one micro-batch's activations and the logits of its responses: the LM head's output in the compute
  dtype, its fp32 copy, the log-softmax, its gradient and the gradient in the compute dtype (16 bytes a
  position and vocabulary entry with bf16), for responses of `response_tokens` (typical) or
  `max_new_tokens` (the worst case: every turn of a micro-batch at the limit);
- on CUDA, the CUDA context, NCCL's buffers and the allocator's slack (`RUNTIME_BYTES`, a rule of thumb).

Not counted: a vLLM engine (asleep during the update; `rollout_peak` adds its share when awake) and
fragmentation beyond that slack. Activations follow the usual transformer rule of thumb (34 bytes x tokens
x hidden per layer in 16-bit, flash attention: no tokens^2 term); with checkpointing only each layer's
input is kept, plus one layer recomputed in the backward. `tests/train/test_memory_estimate.py` checks the sum
against the peak resident memory of an update measured on a CPU.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Sequence

from weblica.train.fsdp import decoder_layers, edge_units, uses_masters

TOKENS_PER_SAMPLE = 1300  # a 720p screenshot turn of Qwen3-VL (~1.26k tokens measured, train/README.md)
RESPONSE_TOKENS = 256
RUNTIME_BYTES = 2 * 10 ** 9  # CUDA context (~0.5 GB), NCCL buffers, allocator slack: a rule of thumb
LOGIT_BYTES = 16  # per response position and vocabulary entry (module docstring), bf16 compute


@dataclass(frozen=True)
class MemoryEstimate:
    """Bytes on the fullest rank during an update."""

    weights: int      # parameters as stored (under fsdp this rank's shards; fp32 when they are the masters)
    masters: int      # a separate fp32 copy of the trainable weights (ddp with master weights)
    gradients: int
    optimizer: int    # AdamW moments
    unsharded: int    # fsdp: units whole at once (module docstring); ddp: a gradient bucket's fp32 sum
    activations: int  # one micro-batch: kept activations and the logits of its responses
    runtime: int = 0  # CUDA context, NCCL, allocator slack (0 on a CPU)

    PARTS = ("weights", "masters", "gradients", "optimizer", "unsharded", "activations", "runtime")

    @property
    def total(self) -> int:
        return sum(getattr(self, p) for p in self.PARTS)

    @property
    def held(self) -> int:
        """Between updates (gradients freed): what stays while the rollouts run."""
        return self.weights + self.masters + self.optimizer + self.runtime

    def rollout_peak(self, gpu_bytes: int, gpu_memory_utilization: float) -> int:
        """While rolling out: the held training state and a vLLM engine awake at its share of the GPU."""
        return self.held + int(gpu_bytes * gpu_memory_utilization)

    def describe(self) -> str:
        return ", ".join(f"{p} {getattr(self, p) / 1e9:.3g} GB" for p in self.PARTS + ("total",))


def shard_count(shape: Sequence[int], ranks: int) -> int:
    """Elements the fullest rank holds of a tensor FSDP shards on dim 0 (ceil(rows / ranks) rows)."""
    if not shape:
        return 1
    rest = 1
    for n in shape[1:]:
        rest *= n
    return -(-shape[0] // ranks) * rest


def _count(params: Sequence[Any]) -> int:
    return sum(p.numel() for p in params)


def _unit_bytes(params: Sequence[Any], low: int) -> int:
    """A unit whole at once: its parameters in the compute dtype and, for the trainable ones, the gradient
    in that dtype and the fp32 buffer it is reduce-scattered from."""
    return _count(params) * low + _count([p for p in params if p.requires_grad]) * (low + 4)


def fsdp_unsharded(model: Any, low: int) -> int:
    """The full parameters (and gradients) whole at once under FSDP, at the backward's fullest moment."""
    layers = decoder_layers(model)
    embed, head = edge_units(model)
    in_units = {id(p) for unit in list(layers) + embed + head for p in unit.parameters()}
    root = [p for p in model.parameters() if id(p) not in in_units]
    edges = [list({id(p): p for m in unit for p in m.parameters()}.values()) for unit in (embed, head) if unit]
    layer = max((list(unit.parameters()) for unit in layers), key=_count)
    trainable_layer = _count([p for p in layer if p.requires_grad])
    return (_unit_bytes(root, low) + max((_unit_bytes(e, low) for e in edges), default=0)
            + 2 * _count(layer) * low + trainable_layer * (low + 4))


def estimate_memory(model: Any, options: Any, ranks: int, parallelism: str = "ddp",
                    tokens_per_sample: int = TOKENS_PER_SAMPLE,
                    response_tokens: int = RESPONSE_TOKENS, cuda: bool | None = None) -> MemoryEstimate:
    """The estimate for `model` (unsharded, any device, "meta" included) trained with `options`
    (dtype, master_weights, gradient_checkpointing, micro_batch_size; freeze_vision as already applied
    to `requires_grad`) on `ranks` ranks. `cuda`: count the runtime overhead (default: when the options'
    device is cuda)."""
    import torch

    from weblica.train.distributed import BUCKET_ELEMENTS
    from weblica.train.precision import update_kind

    dtype = getattr(torch, options.dtype)
    low = dtype.itemsize
    params = list(model.parameters())
    trainable = [p for p in params if p.requires_grad]
    if parallelism == "fsdp":
        stored = 4 if uses_masters(options, dtype) else low
        shard = lambda ps: sum(shard_count(tuple(p.shape), ranks) for p in ps)  # noqa: E731
        weights, masters = shard(params) * stored, 0
        gradients = shard(trainable) * stored
        optimizer = shard(trainable) * 2 * (4 if stored == 4 else low)
        unsharded = fsdp_unsharded(model, low)
    else:
        kind = update_kind(options.master_weights, [torch.empty(0, dtype=dtype)])  # as the model will be loaded
        weights = _count(params) * low
        masters = _count(trainable) * 4 if kind == "masters" else 0
        gradients = _count(trainable) * low
        optimizer = _count(trainable) * 2 * (4 if kind in ("masters", "stochastic") else low)
        # the fp32 sum of one bucket and the concatenation it is made from (weblica.train.distributed)
        unsharded = min(BUCKET_ELEMENTS, _count(trainable)) * 8 if ranks > 1 else 0
    on_cuda = str(getattr(options, "device", "")).startswith("cuda") if cuda is None else cuda
    return MemoryEstimate(weights, masters, gradients, optimizer, unsharded,
                          activation_bytes(model.config, options, tokens_per_sample, response_tokens),
                          RUNTIME_BYTES if on_cuda else 0)


def activation_bytes(config: Any, options: Any, tokens_per_sample: int, response_tokens: int) -> int:
    import torch

    text = getattr(config, "text_config", config)
    low = getattr(torch, options.dtype).itemsize
    tokens = tokens_per_sample * options.micro_batch_size
    per_layer = 34 * tokens * text.hidden_size * low // 2
    if options.gradient_checkpointing:
        kept = text.num_hidden_layers * tokens * text.hidden_size * low + per_layer
    else:
        kept = text.num_hidden_layers * per_layer
    # the LM head's output over the responses (logits_to_keep), its fp32 copy, log-softmax and gradients
    logits = (3 * 4 + 2 * low) * (response_tokens + 1) * options.micro_batch_size * text.vocab_size
    return kept + logits


# Qwen3-VL-8B-Instruct's config.json (the architecture numbers only; the model is built on "meta")
QWEN3VL_8B = {
    "text_config": {"hidden_size": 4096, "intermediate_size": 12288, "num_hidden_layers": 36,
                    "num_attention_heads": 32, "num_key_value_heads": 8, "head_dim": 128, "vocab_size": 151936,
                    "tie_word_embeddings": False,
                    "rope_scaling": {"rope_type": "default", "mrope_section": [24, 20, 20], "mrope_interleaved": True}},
    "vision_config": {"depth": 27, "hidden_size": 1152, "intermediate_size": 4304, "num_heads": 16,
                      "out_hidden_size": 4096, "patch_size": 16, "spatial_merge_size": 2, "temporal_patch_size": 2,
                      "num_position_embeddings": 2304, "deepstack_visual_indexes": [8, 16, 24]},
    "tie_word_embeddings": False,
}


def qwen3vl_8b_shell() -> Any:
    """Qwen3-VL-8B on the meta device (no memory, no weights), vision tower frozen as the recipe does."""
    import torch
    from transformers import Qwen3VLConfig, Qwen3VLForConditionalGeneration

    with torch.device("meta"):
        model = Qwen3VLForConditionalGeneration(Qwen3VLConfig(**QWEN3VL_8B))
    for param in model.model.visual.parameters():
        param.requires_grad_(False)
    return model


def report_memory(model: Any, options: Any, world: Any) -> MemoryEstimate:
    """Print (main rank, stderr) the per-rank estimate for this run before it trains: typical responses and,
    where the options name one, responses at max_new_tokens."""
    import sys

    parallelism = getattr(options, "parallelism", "ddp")
    estimate = estimate_memory(model, options, world.size, parallelism)
    if world.main:
        line = (f"memory per rank (estimate, {parallelism} on {world.size} rank(s), {options.dtype}, master_weights "
                f"{options.master_weights}): {estimate.describe()}")
        longest = getattr(options, "max_new_tokens", 0)
        if longest > RESPONSE_TOKENS:
            worst = estimate_memory(model, options, world.size, parallelism, response_tokens=longest)
            line += f"; with {longest}-token responses {worst.total / 1e9:.3g} GB"
        print(line, file=sys.stderr)
    return estimate
