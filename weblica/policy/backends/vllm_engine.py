"""`vllm:PATH` — in-process vLLM on a GPU (the `gpu` extra). Not exercised by the CPU test suite.

The prompt is the same token sequence as `hf:` (sampled history spliced verbatim) except that each image
keeps a single `<|image_pad|>`, which vLLM's multimodal processor expands; vLLM reports the expanded
prompt ids back, and those are what the trainer gets.
"""
from __future__ import annotations

import asyncio
import threading
from pathlib import Path
from typing import Any, Sequence

from weblica.policy.backends.base import BackendError, Generation, SamplingOptions
from weblica.policy.backends.hf import STOP_TOKENS, detect_assistant_prefix, encode_qwen_prompt, load_image_processor
from weblica.policy.context import Message
from weblica.policy.coords import CoordinateFrame, frame_for_model_type


class VLLMBackend:
    def __init__(self, path: str | Path, sampling: SamplingOptions | None = None,
                 frame: CoordinateFrame | None = None, **engine_args: Any) -> None:
        try:
            import vllm
        except ImportError:
            raise BackendError("vllm is not installed: pip install 'weblica[gpu]' (needs a CUDA GPU)") from None
        from transformers import AutoConfig, AutoTokenizer

        path = Path(path)
        self.name = f"vllm:{path}"
        self.sampling = sampling or SamplingOptions()
        config = AutoConfig.from_pretrained(path)
        self.frame = frame or frame_for_model_type(getattr(config, "model_type", None))
        self.tokenizer = AutoTokenizer.from_pretrained(path)
        self.image_processor = load_image_processor(path)
        self.assistant_prefix = detect_assistant_prefix(self.tokenizer)
        # processed log-probs: those of the distribution actually sampled from (after temperature), as
        # the hf backend returns; vLLM before 0.10.2 has no such option and returns raw-logit log-probs
        engine_args.setdefault("logprobs_mode", "processed_logprobs")
        try:
            self.llm = vllm.LLM(model=str(path), limit_mm_per_prompt={"image": 8}, **engine_args)
        except TypeError as exc:
            if "logprobs_mode" not in str(exc):
                raise
            engine_args.pop("logprobs_mode")
            self.llm = vllm.LLM(model=str(path), limit_mm_per_prompt={"image": 8}, **engine_args)
        self._vllm = vllm
        self._lock = threading.Lock()  # vllm.LLM is not re-entrant; batching belongs to the openai: path

    async def generate(self, messages: Sequence[Message], seed: int) -> Generation:
        prompt = encode_qwen_prompt(messages, self.tokenizer, self.image_processor, expand_images=False,
                                    assistant_prefix=self.assistant_prefix)
        return await asyncio.to_thread(self._run, prompt, seed)

    def _run(self, prompt: Any, seed: int) -> Generation:
        opts = self.sampling
        params = self._vllm.SamplingParams(
            temperature=opts.temperature, top_p=opts.top_p, top_k=opts.top_k if opts.top_k > 0 else -1,
            max_tokens=opts.max_new_tokens, seed=seed & 0x7FFF_FFFF, logprobs=0, skip_special_tokens=False,
            stop_token_ids=[self.tokenizer.convert_tokens_to_ids(t) for t in STOP_TOKENS])
        request: dict[str, Any] = {"prompt_token_ids": prompt.input_ids}
        if prompt.images:
            request["multi_modal_data"] = {"image": prompt.images}
        with self._lock:
            result = self.llm.generate([request], params, use_tqdm=False)[0]
        out = result.outputs[0]
        token_ids = list(out.token_ids)
        logprobs = [float(step[token].logprob) for step, token in zip(out.logprobs or [], token_ids)]
        text = out.text
        for stop in STOP_TOKENS:
            text = text.removesuffix(stop)
        text = self.assistant_prefix + text
        return Generation(text, list(result.prompt_token_ids), token_ids, logprobs or None,
                          "length" if out.finish_reason == "length" else "stop")
