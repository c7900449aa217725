"""GPU check (not part of CI): one short script, about 8 minutes on one H100, that proves what a first GPU
run needs and no CPU test can: the weight sync from an FSDP-sharded trainer into vLLM.

1. `sync` (the gate): the tiny Qwen3-VL as the recipe trains it -- FSDP2 on one rank, bf16 compute on fp32
   master shards, gradient checkpointing -- and a vLLM engine beside it as the trainer builds it
   (`training_engine_args`: max_model_len, gpu_memory_utilization, one 1280x720 image a prompt, CUDA graphs
   ON, sleep level 1). vLLM plays groups of first turns; the trainer takes ONE optimizer step on them (a real
   GRPO update: rewards 1, 0, 1, 0 a group, TIS on, the rollout/trainer mismatch measured before it); the
   engine sleeps, wakes and gets the full weights gathered from the shards (`FullWeights`), its caches
   reset; it samples again, and those tokens' log-probs are recomputed by the trainer's new weights and by
   the old ones. Gates: the max, 99th percentile and mean of |vLLM - new| under `--gate-max`, `--gate-p99`,
   `--gate-mean`, and the old weights at least `--separation` times further off (p99 and mean): otherwise
   the step was too small to tell whether the weights arrived. Exit status 1 when a gate fails.
2. `tiny`: one GRPO update and one SFT step in bf16 on the tiny model's own generations (figures).
3. `wide` (not by default): the update on a wider random Qwen3-VL with Qwen's vocabulary, 720p screenshots:
   train tokens/s and peak memory.

Usage: bash bench/gpu_check.sh [--out DIR] [--parts sync,tiny]     (writes DIR/gpu_check.json)
`--device cpu --quick` is a dry run on a CPU: vLLM is replaced by an hf engine over its own copy of the
weights (same calls: generate, release_memory, sync_weights), so the gates' code runs; `--break-sync`
makes the engine drop what it is sent, and the gates must then fail (tests/train/test_gpu_check.py).
"""
from __future__ import annotations

import argparse
import asyncio
import dataclasses
import io
import json
import platform
import random
import statistics
import tempfile
import time
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from rich.console import Console

from weblica.env.observation import Observation, Tab
from weblica.env.task import Task
from weblica.policy.backends.base import SamplingOptions
from weblica.policy.backends.hf import HFBackend, encode_qwen_prompt, varying_length_attention
from weblica.policy.context import ContextBuilder, check_response
from weblica.policy.coords import frame_for_model_type
from weblica.policy.tiny import build_tiny_qwen3_vl, train_tokenizer
from weblica.train.algorithms import group_advantages
from weblica.train.config import GRPOConfig, SFTConfig
from weblica.train.model_io import load_trainable, make_optimizer
from weblica.train.policy_update import ppo_update
from weblica.train.samples import TurnSample, sequence_logprobs
from weblica.train.sft import sft_step

console = Console()


def screenshot(rng: random.Random, size: tuple[int, int] = (1280, 720)) -> bytes:
    """A page-like PNG: a header bar, a few coloured boxes and text."""
    from PIL import Image, ImageDraw

    image = Image.new("RGB", size, (250, 250, 250))
    draw = ImageDraw.Draw(image)
    draw.rectangle([0, 0, size[0], 60], fill=tuple(rng.randrange(256) for _ in range(3)))
    for _ in range(8):
        x, y = rng.randrange(size[0] - 200), rng.randrange(80, size[1] - 60)
        draw.rectangle([x, y, x + rng.randint(60, 200), y + rng.randint(20, 60)],
                       fill=tuple(rng.randrange(256) for _ in range(3)))
        draw.text((x + 4, y + 4), rng.choice(["Search", "Add to cart", "Price $12", "Next", "Sign in"]), fill=(0, 0, 0))
    buffer = io.BytesIO()
    image.save(buffer, "PNG")
    return buffer.getvalue()


def conversations(n: int, frame: Any, seed: int = 0) -> list[list[Any]]:
    """First-turn conversations as the model policy builds them, over n different tasks and pages."""
    rng = random.Random(seed)
    builder = ContextBuilder(frame)
    out = []
    for i in range(n):
        url = f"http://shop{i % 4}.test/item/{i}"
        task = Task(id=f"gpu{i}", start_url=url,
                    instruction=f"Find the {rng.choice(['price', 'rating', 'delivery date'])} of item {i}.")
        obs = Observation(screenshot(rng), url, [Tab(0, url, "Shop")], 0, [], 0)
        out.append(builder.build(task, [], obs))
    return out


def sync_cuda(device: str) -> None:
    import torch

    if device.startswith("cuda"):
        torch.cuda.synchronize()


def hf_generation(ckpt: Path, convs: list, device: str, max_new_tokens: int) -> tuple[HFBackend, list, dict]:
    backend = HFBackend(ckpt, SamplingOptions(temperature=1.0, max_new_tokens=max_new_tokens), device=device,
                        dtype="bfloat16" if device.startswith("cuda") else "float32")
    asyncio.run(backend.generate(convs[0], seed=0))  # warm-up (kernels, allocator)
    sync_cuda(device)
    start = time.perf_counter()
    generations = [asyncio.run(backend.generate(c, seed=i)) for i, c in enumerate(convs)]
    sync_cuda(device)
    seconds = time.perf_counter() - start
    tokens = sum(len(g.token_ids) for g in generations)
    valid = sum(check_response(g.text, backend.frame).ok for g in generations)
    return backend, generations, {"responses": len(generations), "tokens": tokens, "seconds": round(seconds, 3),
                                  "tokens_per_s": round(tokens / seconds, 1), "valid_format": valid}


# ---- 1. the sync gate --------------------------------------------------------------------------------


@dataclass(frozen=True)
class Gates:
    max: float = 1.0         # |vLLM - trainer| of the worst token (bf16 kernels differ; a rare token moves most)
    p99: float = 0.15
    mean: float = 0.03
    separation: float = 3.0  # the old weights must be this many times further off (p99 and mean)


def gap_figures(gaps: list[float]) -> dict:
    ordered = sorted(gaps)
    return {"tokens": len(ordered), "mean": round(statistics.fmean(ordered), 5),
            "p99": round(ordered[min(len(ordered) - 1, int(0.99 * len(ordered)))], 5), "max": round(ordered[-1], 5)}


class HFEngine:
    """The CPU dry run's stand-in for vLLM: an hf backend over its own copy of the weights, with the three
    calls the trainer makes of the engine. `drop_sync` makes it ignore what it is sent (a broken sync)."""

    def __init__(self, ckpt: Path, sampling: SamplingOptions, device: str, drop_sync: bool = False) -> None:
        self.hf = HFBackend(ckpt, sampling, device=device, dtype="float32")
        self.drop_sync = drop_sync
        self.tokenizer, self.frame, self.banned_ids = self.hf.tokenizer, self.hf.frame, self.hf.banned_ids

    async def generate(self, messages: Any, seed: int) -> Any:
        return await self.hf.generate(messages, seed)

    def release_memory(self) -> None:
        pass

    def sync_weights(self, model: Any) -> int:
        import torch

        own = dict(self.hf.model.named_parameters())
        sent = 0
        with torch.no_grad():
            for name, tensor in model.named_parameters():
                if not self.drop_sync:
                    own[name].copy_(tensor.to(own[name].dtype))
                sent += 1
        return sent


def vllm_engine(ckpt: Path, sampling: SamplingOptions, drop_sync: bool = False) -> Any:
    """The engine the trainer builds for `rollout_backend: vllm`, CUDA graphs on."""
    from weblica.policy.backends.vllm_engine import VLLMBackend, training_engine_args

    engine = VLLMBackend(ckpt, sampling, sleep_level=1, for_training=True,
                         **training_engine_args(4096, 0.3, 1, enforce_eager=False))
    if drop_sync:  # the gates must fail when the weights never arrive: wake, reset, load nothing
        def wake_only(model: Any) -> int:
            with engine._queue.engine_lock:
                engine.llm.wake_up()
                engine._asleep = False
                engine._reset_caches()
            return 0

        engine.sync_weights = wake_only  # type: ignore[method-assign]
    return engine


def engine_generations(engine: Any, convs: list, seed: int) -> list:
    async def together() -> list:  # concurrent episodes: one batched generate call
        return await asyncio.gather(*(engine.generate(c, seed=seed + i) for i, c in enumerate(convs)))

    return asyncio.run(together())


def trainer_logprobs(model: Any, prompts: list, generations: list, device: str, banned: list[int]) -> list[float]:
    """The trainer's log-probs of the engine's tokens (its own forward, no grad)."""
    import torch

    samples = [TurnSample(p, list(g.token_ids), list(g.logprobs)) for p, g in zip(prompts, generations)]
    out: list[float] = []
    with torch.no_grad(), varying_length_attention():
        model.eval()
        for sample in samples:
            logprobs, _ = sequence_logprobs(model, sample, device, 1.0, banned=banned)
            out.extend(float(x) for x in logprobs)
    return out


def sync_check(ckpt: Path, convs: list, device: str, max_new_tokens: int, gates: Gates, lr: float,
               break_sync: bool = False) -> dict:
    """Section 1 of the module docstring."""
    import torch

    from weblica.train.fsdp import FullWeights, shard_trainable

    cuda = device.startswith("cuda")
    dtype = "bfloat16" if cuda else "float32"
    config = GRPOConfig(device=device, dtype=dtype, parallelism="fsdp", master_weights="auto", rollout_backend="vllm",
                        gradient_checkpointing=True, micro_batch_size=4, ppo_epochs=1, mini_batches=1,
                        learning_rate=lr, tis_cap=2.0, max_new_tokens=max_new_tokens)
    sampling = SamplingOptions(temperature=1.0, max_new_tokens=max_new_tokens)
    started = time.perf_counter()
    engine = vllm_engine(ckpt, sampling, break_sync) if cuda else HFEngine(ckpt, sampling, device, break_sync)
    engine_start_s = time.perf_counter() - started
    trainable = load_trainable(ckpt, config)
    shard_trainable(trainable, config)
    from weblica.policy.backends.hf import load_image_processor

    processor = load_image_processor(ckpt)
    encode = lambda conv: encode_qwen_prompt(conv, trainable.tokenizer, processor)  # noqa: E731 (the trainer's ids)
    banned = list(engine.banned_ids)
    # rollouts by the engine, one GRPO step by the sharded trainer
    first = engine_generations(engine, convs, seed=0)
    prompts = [encode(c) for c in convs]
    samples = []
    for g0 in range(0, len(first), 4):
        members = list(zip(first, prompts))[g0:g0 + 4]
        advantages = group_advantages([float(i % 2 == 0) for i in range(len(members))], "grpo")
        samples += [TurnSample(p, list(g.token_ids), list(g.logprobs), a) for (g, p), a in zip(members, advantages)]
    optimizer = make_optimizer(trainable, config)
    sync_cuda(device)
    began = time.perf_counter()
    update = ppo_update(trainable.model, optimizer, samples, config, 0, device, banned=banned)
    sync_cuda(device)
    update_s = time.perf_counter() - began
    # the sync: sleep, wake the weights (cached blocks freed first), load the gathered full weights, reset caches
    engine.release_memory()
    began = time.perf_counter()
    sent = engine.sync_weights(FullWeights(trainable.model, getattr(torch, dtype)))
    sync_s = time.perf_counter() - began
    second = engine_generations(engine, convs, seed=1000)
    sampled = [lp for g in second for lp in g.logprobs]
    new = trainer_logprobs(trainable.model, prompts, second, device, banned)
    old_model = load_trainable(ckpt, replace(config, parallelism="ddp")).model  # the weights before the step
    old = trainer_logprobs(old_model, prompts, second, device, banned)
    to_new = gap_figures([abs(a - b) for a, b in zip(sampled, new)])
    to_old = gap_figures([abs(a - b) for a, b in zip(sampled, old)])
    failed = [name for name, ok in (
        (f"max {to_new['max']} > {gates.max}", to_new["max"] <= gates.max),
        (f"p99 {to_new['p99']} > {gates.p99}", to_new["p99"] <= gates.p99),
        (f"mean {to_new['mean']} > {gates.mean}", to_new["mean"] <= gates.mean),
        (f"old weights not {gates.separation}x further (p99 {to_old['p99']})",
         to_old["p99"] >= gates.separation * to_new["p99"] and to_old["mean"] >= gates.separation * to_new["mean"]),
    ) if not ok]
    if hasattr(engine, "close"):
        engine.close()
    return {"engine": "vllm" if cuda else "hf stand-in (dry run)", "engine_start_seconds": round(engine_start_s, 1),
            "cuda_graphs": cuda, "dtype": dtype, "update": update, "update_seconds": round(update_s, 3),
            "tensors_sent": sent, "sync_seconds": round(sync_s, 3), "gap_to_new_weights": to_new,
            "gap_to_old_weights": to_old, "gates": dataclasses.asdict(gates), "failed_gates": failed,
            "ok": not failed}


# ---- 2. tiny GRPO and SFT figures --------------------------------------------------------------------


def samples_from(generations: list, convs: list, backend: HFBackend, group: int = 4) -> list[TurnSample]:
    """Turn samples as a GRPO batch has them: the encoded prompt (pixels included) each generation was
    sampled from, its tokens and log-probs, and group advantages over rewards 1, 0, 1, 0 per `group`."""
    samples = []
    for g0 in range(0, len(generations), group):
        members = list(zip(generations, convs))[g0:g0 + group]
        advantages = group_advantages([float(i % 2 == 0) for i in range(len(members))], "grpo")
        for (g, conv), advantage in zip(members, advantages):
            samples.append(TurnSample(backend.encode(conv), list(g.token_ids), list(g.logprobs), advantage))
    return samples


def grpo_and_sft(ckpt: Path, samples: list[TurnSample], device: str, gradient_checkpointing: bool,
                 reps: int = 1, on_policy: bool = True, micro_batch_sizes: tuple[int, ...] = (1,)) -> dict:
    """Figures of `ppo_update` (per micro-batch size) and `sft_step`. With `on_policy` (the samples'
    log-probs came from this model) also the gap between the trainer's forward and the rollout's log-probs."""
    import torch

    dtype = "bfloat16" if device.startswith("cuda") else "float32"
    config = GRPOConfig(device=device, dtype=dtype, gradient_checkpointing=gradient_checkpointing,
                        learning_rate=1e-6)
    trainable = load_trainable(ckpt, config)
    model = trainable.model
    gap = None
    if on_policy:  # the trainer's forward against the rollout's log-probs: the ratio PPO starts from
        with torch.no_grad(), varying_length_attention():
            gap = torch.cat([(sequence_logprobs(model.eval(), s, device)[0].float()
                              - torch.tensor(s.old_logprobs, device=device)).abs() for s in samples])
    optimizer = make_optimizer(trainable, config)
    if device.startswith("cuda"):
        torch.cuda.reset_peak_memory_stats()
    tokens = sum(len(s.prompt.input_ids) + len(s.response_ids) for s in samples)
    updates, metrics = {}, {}
    for micro in micro_batch_sizes:
        config = dataclasses.replace(config, micro_batch_size=micro)
        timings = []
        for rep in range(reps + 1):  # the first is a warm-up
            sync_cuda(device)
            start = time.perf_counter()
            metrics = ppo_update(model, optimizer, samples, config, iteration=rep, device=device)
            sync_cuda(device)
            timings.append(time.perf_counter() - start)
        seconds = min(timings[1:]) if reps else timings[0]
        # every sample goes forward and backward once per PPO epoch
        updates[f"micro_batch_{micro}"] = {**metrics, "seconds": round(seconds, 3),
                                           "train_tokens_per_s": round(tokens * config.ppo_epochs / seconds, 1)}
    sync_cuda(device)
    start = time.perf_counter()
    sft = sft_step(trainable, optimizer, samples, SFTConfig(micro_batch_size=max(micro_batch_sizes)))
    sync_cuda(device)
    out = {"parameters_m": round(sum(p.numel() for p in model.parameters()) / 1e6, 1),
           "samples": len(samples), "sequence_tokens": tokens, "dtype": dtype,
           "gradient_checkpointing": gradient_checkpointing, "update": updates,
           "sft_step": {**sft, "micro_batch": max(micro_batch_sizes), "seconds": round(time.perf_counter() - start, 3)}}
    if gap is not None:
        out.update(logprob_gap_mean=round(float(gap.mean()), 5), logprob_gap_max=round(float(gap.max()), 5))
    if device.startswith("cuda"):
        out["peak_memory_gib"] = round(torch.cuda.max_memory_allocated() / 2 ** 30, 2)
    numbers = [v for u in updates.values() for v in u.values()] + [sft["loss"]]
    out["finite"] = all(abs(v) < float("inf") for v in numbers)  # nan compares false too
    del trainable, model, optimizer
    if device.startswith("cuda"):
        torch.cuda.empty_cache()
    return out


# ---- 3. the wide model's update ---------------------------------------------------------------------


def build_wide(out_dir: Path, quick: bool) -> Path:
    """A random Qwen3-VL with Qwen's vocabulary size and real patching (not trained: for throughput)."""
    import torch
    from transformers import Qwen3VLConfig, Qwen3VLForConditionalGeneration

    from weblica.policy.backends.hf import image_processor_class
    from weblica.policy.tiny import SPECIAL_TOKENS

    tokenizer = train_tokenizer(0)
    ids = {t: tokenizer.convert_tokens_to_ids(t) for t in SPECIAL_TOKENS}
    hidden, layers, heads = (128, 2, 4) if quick else (1536, 16, 12)
    head_dim = 128 if not quick else 32
    text = dict(vocab_size=151936, hidden_size=hidden, intermediate_size=hidden * 3, num_hidden_layers=layers,
                num_attention_heads=heads, num_key_value_heads=max(1, heads // 3), head_dim=head_dim,
                max_position_embeddings=32768, rope_theta=5_000_000.0, tie_word_embeddings=False,
                rope_scaling={"rope_type": "default", "mrope_section": [head_dim // 4, head_dim // 8, head_dim // 8],
                              "mrope_interleaved": True},
                eos_token_id=ids["<|im_end|>"], pad_token_id=ids["<|endoftext|>"])
    vision = dict(depth=2 if quick else 12, hidden_size=64 if quick else 768, intermediate_size=128 if quick else 3072,
                  num_heads=2 if quick else 12, in_channels=3, patch_size=16, spatial_merge_size=2,
                  temporal_patch_size=2, out_hidden_size=hidden, num_position_embeddings=2304,
                  deepstack_visual_indexes=[0] if quick else [2, 5, 8])
    config = Qwen3VLConfig(text_config=text, vision_config=vision, image_token_id=ids["<|image_pad|>"],
                           video_token_id=ids["<|video_pad|>"], vision_start_token_id=ids["<|vision_start|>"],
                           vision_end_token_id=ids["<|vision_end|>"], eos_token_id=ids["<|im_end|>"],
                           pad_token_id=ids["<|endoftext|>"], tie_word_embeddings=False)
    torch.manual_seed(0)
    model = Qwen3VLForConditionalGeneration(config).to(torch.bfloat16)
    model.save_pretrained(out_dir, safe_serialization=True)
    tokenizer.save_pretrained(out_dir)
    # Qwen3-VL's own pixel budget: a 1280x720 screenshot becomes ~900 visual tokens
    image_processor_class()(patch_size=16, merge_size=2, temporal_patch_size=2, min_pixels=32 * 32 * 4,
                            max_pixels=1280 * 736, image_mean=[0.5] * 3,
                            image_std=[0.5] * 3).save_pretrained(out_dir)
    return out_dir


def wide_samples(ckpt: Path, convs: list, response_tokens: int, seed: int = 0) -> list[TurnSample]:
    """Samples with random responses of a fixed length (a random model's own text is noise too) and
    arbitrary old log-probs: what is measured is the update's cost, not its direction."""
    from transformers import AutoTokenizer

    from weblica.policy.backends.hf import load_image_processor

    tokenizer = AutoTokenizer.from_pretrained(ckpt)
    processor = load_image_processor(ckpt)
    rng = random.Random(seed)
    samples = []
    for i, conv in enumerate(convs):
        prompt = encode_qwen_prompt(conv, tokenizer, processor)
        response = [rng.randrange(20, len(tokenizer)) for _ in range(response_tokens)]
        samples.append(TurnSample(prompt, response, [-5.0] * response_tokens, 1.0 if i % 2 else -1.0))
    return samples


def main() -> None:
    import torch
    import transformers

    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--device", default="cuda")
    parser.add_argument("--quick", action="store_true", help="small counts (a CPU dry run)")
    parser.add_argument("--out", type=Path, default=None, help="write gpu_check.json here")
    parser.add_argument("--parts", default="sync,tiny", help="comma-separated: sync (the gate), tiny, wide")
    parser.add_argument("--lr", type=float, default=1e-3, help="the step's learning rate (the tiny recipe's)")
    parser.add_argument("--gate-max", type=float, default=Gates.max)
    parser.add_argument("--gate-p99", type=float, default=Gates.p99)
    parser.add_argument("--gate-mean", type=float, default=Gates.mean)
    parser.add_argument("--separation", type=float, default=Gates.separation)
    parser.add_argument("--break-sync", action="store_true", help="the engine drops the weights: the gates must fail")
    args = parser.parse_args()
    if args.device.startswith("cuda") and not torch.cuda.is_available():
        raise SystemExit("no CUDA device: run on a GPU machine, or --device cpu --quick for a dry run")
    report: dict[str, Any] = {"python": platform.python_version(), "torch": torch.__version__,
                              "transformers": transformers.__version__, "device": args.device}
    if args.device.startswith("cuda"):
        report["gpu"] = torch.cuda.get_device_name(0)
        try:
            import vllm

            report["vllm"] = vllm.__version__
        except ImportError as exc:
            raise SystemExit(f"vllm is not importable ({exc}): use the Python 3.12 environment "
                             "(pip install -r requirements/gpu-py312.txt)") from None
    console.print(report)
    work = Path(tempfile.mkdtemp(prefix="gpu_check-"))
    n, new_tokens = (8, 24) if args.quick else (32, 64)

    def step(name: str, fn: Any) -> None:
        start = time.perf_counter()
        try:
            report[name] = fn()
        except Exception as exc:  # one failed part must not hide the figures of the others
            import traceback

            traceback.print_exc()
            report[name] = {"error": f"{type(exc).__name__}: {exc}"}
        console.print(f"[bold]{name}[/] ({time.perf_counter() - start:.1f} s):", report[name])

    parts = set(args.parts.split(","))
    frame = frame_for_model_type("qwen3_vl")
    ckpt = build_tiny_qwen3_vl(work / "tiny", seed=0, warm_start_steps=160)
    convs = conversations(n, frame)
    if "sync" in parts:
        gates = Gates(args.gate_max, args.gate_p99, args.gate_mean, args.separation)
        step("sync", lambda: sync_check(ckpt, convs, args.device, new_tokens, gates, args.lr, args.break_sync))
    if "tiny" in parts:
        state: dict[str, Any] = {}

        def generate() -> dict:
            state["hf"], state["generations"], figures = hf_generation(ckpt, convs, args.device, new_tokens)
            return figures

        step("hf_generation", generate)
        if "generations" in state:
            samples = samples_from(state["generations"], convs, state.pop("hf"))
            step("tiny_grpo_and_sft", lambda: grpo_and_sft(ckpt, samples, args.device, gradient_checkpointing=False,
                                                           micro_batch_sizes=(1, 8)))

    def wide() -> dict:
        wide_ckpt = build_wide(work / "wide", args.quick)
        samples = wide_samples(wide_ckpt, conversations(4 if args.quick else 16, frame, seed=1),
                               response_tokens=32 if args.quick else 256)
        return grpo_and_sft(wide_ckpt, samples, args.device, gradient_checkpointing=True, reps=1,
                            on_policy=False, micro_batch_sizes=(1, 4))

    if "wide" in parts:
        step("wide_grpo_update", wide)
    if args.out:
        args.out.mkdir(parents=True, exist_ok=True)
        (args.out / "gpu_check.json").write_text(json.dumps(report, indent=2) + "\n")
    failed = [k for k, v in report.items() if isinstance(v, dict) and ("error" in v or v.get("ok") is False)]
    console.print(f"[{'red' if failed else 'green'}]failed parts: {failed or 'none'}[/]")
    raise SystemExit(1 if failed else 0)


if __name__ == "__main__":
    main()
