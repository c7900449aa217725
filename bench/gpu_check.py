"""GPU check (not part of CI): the trainer's own code paths on a CUDA device, with figures.

1. generation with the tiny Qwen3-VL through the `hf:` backend in bf16 (tokens/s), and the same prompts
   through vLLM when it is installed (`vllm:` backend, all at once as concurrent episodes, then a batched
   throughput run, then a weight sync: sleep, perturbed weights pushed by name, caches reset, and the next
   log-probs must match the trainer's forward of the new weights, not the old);
2. the rollout-vs-trainer log-prob gap in bf16 (the ratio a PPO step starts from);
3. one GRPO update (`ppo_update`: 2 PPO epochs x 2 mini-batches, clipped token-mean loss) and one SFT
   step in bf16 on samples the model itself generated;
4. the same update on a wider random Qwen3-VL (Qwen vocabulary, 720p screenshots at Qwen3-VL's own
   patching), with gradient checkpointing: train tokens/s and peak memory;
5. FSDP on one rank (`parallelism: fsdp`, world size 1): the GRPO update in bf16 with fp32 master shards
   and gradient checkpointing must move the weights as `MasterWeightAdamW` on a replica does, and the
   gathered export must load as a plain Hugging Face checkpoint.

Usage: python bench/gpu_check.py [--device cuda] [--out DIR]   (bench/gpu_check.sh wraps it)
`--device cpu --quick` is a dry run of every step on a CPU (small counts, vLLM skipped).
"""
from __future__ import annotations

import argparse
import asyncio
import dataclasses
import io
import json
import platform
import random
import tempfile
import time
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


def vllm_generation(ckpt: Path, convs: list, hf: HFBackend, batch: int, max_new_tokens: int) -> dict:
    try:
        import vllm
    except ImportError as exc:
        return {"skipped": f"vllm is not importable here ({exc}); pip install 'weblica[gpu]'"}
    from weblica.policy.backends.vllm_engine import VLLMBackend

    backend = VLLMBackend(ckpt, SamplingOptions(temperature=1.0, max_new_tokens=max_new_tokens), sleep_level=1,
                          for_training=True, dtype="bfloat16", gpu_memory_utilization=0.25, max_model_len=4096,
                          enforce_eager=True)

    async def together() -> list:  # concurrent episodes: one batched generate call
        return await asyncio.gather(*(backend.generate(c, seed=i) for i, c in enumerate(convs)))

    start = time.perf_counter()
    generations = asyncio.run(together())
    concurrent_s = time.perf_counter() - start
    valid = sum(check_response(g.text, hf.frame).ok for g in generations)
    # the trainer recomputes these log-probs on its side: the gap is the off-policy error PPO starts from
    gaps = []
    for conv, g in zip(convs, generations):
        if g.logprobs:
            recomputed = hf.sequence_logprobs(hf.encode(conv), g.token_ids)
            gaps.extend(abs(a - b) for a, b in zip(recomputed, g.logprobs))
    encoded = [encode_qwen_prompt(c, backend.tokenizer, None, expand_images=False) for c in convs]
    prompts = [{"prompt_token_ids": e.input_ids, "multi_modal_data": {"image": e.images}}
               for e in (encoded[i % len(encoded)] for i in range(batch))]
    params = vllm.SamplingParams(temperature=1.0, max_tokens=max_new_tokens, seed=0, ignore_eos=True)
    start = time.perf_counter()
    outs = backend.llm.generate(prompts, params, use_tqdm=False)
    seconds = time.perf_counter() - start
    tokens = sum(len(o.outputs[0].token_ids) for o in outs)
    return {"version": vllm.__version__, "responses": len(generations), "valid_format": valid,
            "concurrent_seconds": round(concurrent_s, 3),
            "logprob_gap_vs_hf_mean": round(sum(gaps) / max(1, len(gaps)), 5),
            "logprob_gap_vs_hf_max": round(max(gaps, default=0.0), 5),
            "after_sync": vllm_sync_check(ckpt, convs[:8], backend, hf),
            "batched": {"requests": batch, "tokens": tokens, "seconds": round(seconds, 3),
                        "tokens_per_s": round(tokens / seconds, 1)}}


def vllm_sync_check(ckpt: Path, convs: list, backend: Any, hf: HFBackend, tolerance: float = 0.05) -> dict:
    """Perturb a bf16 copy of the weights as an update would, sleep vLLM, sync, and sample again: the new
    log-probs must equal the trainer's forward of the new weights (not the old ones) within `tolerance`."""
    import torch

    device = hf.device
    trainable = load_trainable(ckpt, GRPOConfig(device=device, dtype="bfloat16" if device.startswith("cuda") else "float32"))
    generator = torch.Generator(device=device).manual_seed(0)
    with torch.no_grad():
        for p in trainable.model.parameters():
            p.add_(torch.randn(p.shape, generator=generator, device=device, dtype=p.dtype) * p.float().std().nan_to_num().to(p.dtype))
    backend.release_memory()
    start = time.perf_counter()
    sent = backend.sync_weights(trainable.model)
    sync_s = time.perf_counter() - start
    new = HFBackend.__new__(HFBackend)
    new._attach("hf:perturbed", trainable.model.eval(), hf.tokenizer, hf.image_processor, device, hf.sampling, hf.frame)
    async def together() -> list:
        return await asyncio.gather(*(backend.generate(c, seed=i) for i, c in enumerate(convs)))

    generations = asyncio.run(together())
    gap_new, gap_old = [], []
    for conv, g in zip(convs, generations):
        gap_new += [abs(a - b) for a, b in zip(new.sequence_logprobs(new.encode(conv), g.token_ids), g.logprobs)]
        gap_old += [abs(a - b) for a, b in zip(hf.sequence_logprobs(hf.encode(conv), g.token_ids), g.logprobs)]
    mean_new, mean_old = sum(gap_new) / len(gap_new), sum(gap_old) / len(gap_old)
    if not mean_new < tolerance < mean_old:
        raise AssertionError(f"after the sync vLLM's log-probs are {mean_new:.4f} from the new weights and "
                             f"{mean_old:.4f} from the old (tolerance {tolerance})")
    return {"tensors_sent": sent, "sync_seconds": round(sync_s, 3), "gap_to_new_weights_mean": round(mean_new, 5),
            "gap_to_new_weights_max": round(max(gap_new), 5), "gap_to_old_weights_mean": round(mean_old, 5)}


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


def fsdp_one_rank(ckpt: Path, samples: list[TurnSample], device: str, out_dir: Path) -> dict:
    """`ppo_update` on a one-rank FSDP model (bf16 compute, fp32 shards) against a replica with fp32 masters."""
    import torch
    import torch.distributed as dist
    from transformers import AutoModelForImageTextToText

    from weblica.train.fsdp import shard_trainable
    from weblica.train.model_io import export_model

    config = GRPOConfig(device=device, dtype="bfloat16", learning_rate=1e-5, micro_batch_size=4,
                        gradient_checkpointing=True)
    replica = load_trainable(ckpt, config)
    start = torch.cat([p.detach().float().flatten() for p in replica.model.parameters()])
    optimizer = make_optimizer(replica, config)
    expected = ppo_update(replica.model, optimizer, samples, config, 0, device)
    masters = torch.cat([m.flatten() for m in optimizer.masters])
    del replica, optimizer
    sharded_config = dataclasses.replace(config, parallelism="fsdp")
    sharded = load_trainable(ckpt, sharded_config)
    try:
        shard_trainable(sharded, sharded_config)
        sync_cuda(device)
        began = time.perf_counter()
        got = ppo_update(sharded.model, make_optimizer(sharded, sharded_config), samples, config, 0, device)
        sync_cuda(device)
        seconds = time.perf_counter() - began
        shards = torch.cat([p.full_tensor().flatten() for p in sharded.model.parameters()])
        export_model(sharded, out_dir / "fsdp-final")
    finally:
        dist.destroy_process_group()
    exported = AutoModelForImageTextToText.from_pretrained(out_dir / "fsdp-final", dtype="auto")  # bf16 expected
    moved = float((masters - start).norm())
    gap = float((shards - masters).norm()) / moved
    return {"loss": got["loss"], "replica_loss": expected["loss"], "seconds": round(seconds, 3),
            "shard_dtype": str(shards.dtype), "weight_gap_relative": round(gap, 5),
            "export_dtype": str(exported.dtype),
            "ok": gap < 0.05 and abs(got["loss"] - expected["loss"]) < 1e-2 and exported.dtype == torch.bfloat16}


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
    parser.add_argument("--parts", default="generation,tiny,wide",
                        help="comma-separated: generation (hf and vLLM), tiny (GRPO/SFT on the tiny model), wide")
    args = parser.parse_args()
    if args.device.startswith("cuda") and not torch.cuda.is_available():
        raise SystemExit("no CUDA device: run on a GPU machine, or --device cpu --quick for a dry run")
    report: dict[str, Any] = {"python": platform.python_version(), "torch": torch.__version__,
                              "transformers": transformers.__version__, "device": args.device}
    if args.device.startswith("cuda"):
        report["gpu"] = torch.cuda.get_device_name(0)
    console.print(report)
    work = Path(tempfile.mkdtemp(prefix="gpu_check-"))
    n, new_tokens = (8, 48) if args.quick else (64, 96)

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
    if parts & {"generation", "tiny"}:  # the tiny model's update trains on what it generated
        ckpt = build_tiny_qwen3_vl(work / "tiny", seed=0, warm_start_steps=160)
        convs = conversations(n, frame)
        state: dict[str, Any] = {}

        def generate() -> dict:
            state["hf"], state["generations"], figures = hf_generation(ckpt, convs, args.device, new_tokens)
            return figures

        step("hf_generation", generate)
        if "generation" in parts and args.device.startswith("cuda"):
            step("vllm", lambda: vllm_generation(ckpt, convs, state["hf"], 256, new_tokens))
        elif "generation" in parts:
            report["vllm"] = {"skipped": "CPU dry run"}
        if "tiny" in parts and "generations" in state:
            samples = samples_from(state["generations"], convs, state.pop("hf"))
            step("tiny_grpo_and_sft", lambda: grpo_and_sft(ckpt, samples, args.device, gradient_checkpointing=False,
                                                           micro_batch_sizes=(1, 8)))
            step("fsdp_one_rank", lambda: fsdp_one_rank(ckpt, samples, args.device, work))

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
