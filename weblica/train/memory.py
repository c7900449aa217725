"""Per-rank memory of a training update, estimated from parameter counts and dtypes (printed before
training; `train/README.md`'s table for the 8B recipe comes from `qwen3vl_8b_estimates`).

Counted: parameters as stored, a separate fp32 master copy (data-parallel with master weights), gradients,
AdamW moments, under FSDP the full parameters of the units in flight, and one micro-batch's activations
and logits. Not counted: the CUDA context, allocator fragmentation and a vLLM engine (asleep during the
update). Activations follow the usual transformer rule of thumb (34 bytes x tokens x hidden per layer in
16-bit, flash attention: no tokens^2 term); with checkpointing only each layer's input is kept, plus one
layer recomputed in the backward.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Sequence

from weblica.train.fsdp import decoder_layers, uses_masters

TOKENS_PER_SAMPLE = 1300  # a 720p screenshot turn of Qwen3-VL (~1.26k tokens measured, train/README.md)
RESPONSE_TOKENS = 256


@dataclass(frozen=True)
class MemoryEstimate:
    """Bytes on the fullest rank during an update."""

    weights: int      # parameters as stored (under fsdp this rank's shards; fp32 when they are the masters)
    masters: int      # a separate fp32 copy of the trainable weights (ddp with master weights)
    gradients: int
    optimizer: int    # AdamW moments
    unsharded: int    # fsdp: full parameters of the root (vision tower included) and of two layers in flight, one layer's fp32 gradient
    activations: int  # one micro-batch: kept activations and the logits of its responses

    @property
    def total(self) -> int:
        return self.weights + self.masters + self.gradients + self.optimizer + self.unsharded + self.activations

    def describe(self) -> str:
        parts = ("weights", "masters", "gradients", "optimizer", "unsharded", "activations", "total")
        return ", ".join(f"{p} {getattr(self, p) / 1e9:.3g} GB" for p in parts)


def shard_count(shape: Sequence[int], ranks: int) -> int:
    """Elements the fullest rank holds of a tensor FSDP shards on dim 0 (ceil(rows / ranks) rows)."""
    if not shape:
        return 1
    rest = 1
    for n in shape[1:]:
        rest *= n
    return -(-shape[0] // ranks) * rest


def estimate_memory(model: Any, options: Any, ranks: int, parallelism: str = "ddp",
                    tokens_per_sample: int = TOKENS_PER_SAMPLE,
                    response_tokens: int = RESPONSE_TOKENS) -> MemoryEstimate:
    """The estimate for `model` (unsharded, any device, "meta" included) trained with `options`
    (dtype, master_weights, gradient_checkpointing, micro_batch_size; freeze_vision as already applied
    to `requires_grad`) on `ranks` ranks."""
    import torch

    from weblica.train.precision import update_kind

    dtype = getattr(torch, options.dtype)
    low = dtype.itemsize
    params = list(model.parameters())
    trainable = [p for p in params if p.requires_grad]
    count = lambda ps: sum(p.numel() for p in ps)  # noqa: E731
    if parallelism == "fsdp":
        stored = 4 if uses_masters(options, dtype) else low
        shard = lambda ps: sum(shard_count(tuple(p.shape), ranks) for p in ps)  # noqa: E731
        weights, masters = shard(params) * stored, 0
        gradients = shard(trainable) * stored
        optimizer = shard(trainable) * 2 * (4 if stored == 4 else low)
        layers = decoder_layers(model)
        in_layers = {id(p) for unit in layers for p in unit.parameters()}
        root = count([p for p in params if id(p) not in in_layers])
        layer = max(count(list(unit.parameters())) for unit in layers)
        unsharded = (root + 2 * layer) * low + layer * 4
    else:
        kind = update_kind(options.master_weights, [torch.empty(0, dtype=dtype)])  # as the model will be loaded
        weights, unsharded = count(params) * low, 0
        masters = count(trainable) * 4 if kind == "masters" else 0
        gradients = count(trainable) * low
        optimizer = count(trainable) * 2 * (4 if kind in ("masters", "stochastic") else low)
    return MemoryEstimate(weights, masters, gradients, optimizer, unsharded,
                          activation_bytes(model.config, options, tokens_per_sample, response_tokens))


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
    # fp32 logits of the response positions, their log-softmax and its gradient
    logits = 3 * response_tokens * options.micro_batch_size * text.vocab_size * 4
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
    """Print (main rank, stderr) the per-rank estimate for this run before it trains."""
    import sys

    parallelism = getattr(options, "parallelism", "ddp")
    estimate = estimate_memory(model, options, world.size, parallelism)
    if world.main:
        print(f"memory per rank (estimate, {parallelism} on {world.size} rank(s), {options.dtype}, master_weights "
              f"{options.master_weights}): {estimate.describe()}", file=sys.stderr)
    return estimate
