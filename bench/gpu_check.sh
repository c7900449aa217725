#!/usr/bin/env bash
# GPU check for a lent H200 (not part of CI): vLLM generation with a tiny Qwen3-VL, one GRPO update in
# bf16 on the GPU, tokens/s printed. Usage: bash bench/gpu_check.sh   (from the repository root)
set -euo pipefail
cd "$(dirname "$0")/.."
python3 -m venv .venv-gpu
. .venv-gpu/bin/activate
pip install -q -e ".[train,gpu]" 2>&1 | grep -v '^WARNING: Location' || true
python - <<'PY'
import time, tempfile, torch
from pathlib import Path
from weblica.policy.tiny import build_tiny_qwen3_vl
assert torch.cuda.is_available(), "no CUDA device"
ckpt = build_tiny_qwen3_vl(Path(tempfile.mkdtemp()) / "tiny", seed=0, warm_start_steps=40)
print("GPU:", torch.cuda.get_device_name(0))
# 1. vLLM generation
from vllm import LLM, SamplingParams
llm = LLM(model=str(ckpt), dtype="bfloat16", gpu_memory_utilization=0.3, max_model_len=4096, enforce_eager=True)
prompts = ["<|im_start|>user\nClick the search button.<|im_end|>\n<|im_start|>assistant\n"] * 256
t = time.perf_counter()
outs = llm.generate(prompts, SamplingParams(temperature=1.0, max_tokens=128, seed=0))
dt = time.perf_counter() - t
tokens = sum(len(o.outputs[0].token_ids) for o in outs)
print(f"vLLM: {tokens} tokens in {dt:.2f} s = {tokens / dt:.0f} tokens/s")
# 2. one GRPO update in bf16 on the GPU (the trainer's own loss on the tiny model)
from transformers import AutoModelForImageTextToText
from weblica.train.algorithms import clipped_policy_loss
model = AutoModelForImageTextToText.from_pretrained(ckpt, dtype=torch.bfloat16).cuda()
ids = torch.randint(10, 1000, (8, 256), device="cuda")
opt = torch.optim.AdamW(model.parameters(), lr=1e-5)
t = time.perf_counter()
logits = model(input_ids=ids).logits.float()
lp = torch.log_softmax(logits[:, :-1], -1).gather(2, ids[:, 1:, None])[..., 0]
loss, stats = clipped_policy_loss(lp, lp.detach(), torch.randn(8, 1, device="cuda"), torch.ones_like(lp))
loss.backward(); opt.step(); torch.cuda.synchronize()
print(f"GRPO step (bf16, 8x256 tokens): {time.perf_counter() - t:.3f} s, loss {stats.loss:.4f}, "
      f"{8 * 256 / (time.perf_counter() - t):.0f} train tokens/s")
PY
