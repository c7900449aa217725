"""A policy backend over any token-in/token-out engine (SGLang's `/generate`, verl's server manager).

External RL frameworks own generation; weblica owns the context, the environment and the reward. This
backend encodes the conversation exactly as `hf:` does (Qwen template, sampled turns spliced as ids) and
asks the engine for the continuation, so the ids and log-probs the framework trains on are the ones
its engine produced.
"""
from __future__ import annotations

import base64
import io
from typing import Any, Awaitable, Callable, Sequence

from weblica.policy.backends.base import Generation, SamplingOptions
from weblica.policy.backends.hf import EncodedPrompt, detect_assistant_prefix, encode_qwen_prompt
from weblica.policy.context import Message
from weblica.policy.coords import CoordinateFrame
from weblica.tls import tls_context

# engine(prompt, sampling, seed) -> (token_ids, logprobs, finish_reason)
TokenEngine = Callable[[EncodedPrompt, SamplingOptions, int], Awaitable[tuple[list[int], list[float], str]]]


class TokenEngineBackend:
    def __init__(self, engine: TokenEngine, tokenizer: Any, image_processor: Any, frame: CoordinateFrame,
                 sampling: SamplingOptions | None = None, name: str = "engine") -> None:
        self.engine = engine
        self.tokenizer = tokenizer
        self.image_processor = image_processor
        self.frame = frame
        self.sampling = sampling or SamplingOptions()
        self.name = name
        self.assistant_prefix = detect_assistant_prefix(tokenizer)

    async def generate(self, messages: Sequence[Message], seed: int) -> Generation:
        prompt = encode_qwen_prompt(messages, self.tokenizer, self.image_processor,
                                    assistant_prefix=self.assistant_prefix)
        token_ids, logprobs, finish = await self.engine(prompt, self.sampling, seed)
        text = self.assistant_prefix + self.tokenizer.decode(token_ids, skip_special_tokens=False)
        for stop in ("<|im_end|>", "<|endoftext|>"):
            text = text.removesuffix(stop)
        return Generation(text, list(prompt.input_ids), list(token_ids), list(logprobs), finish,
                          {"prompt_tokens": len(prompt.input_ids), "completion_tokens": len(token_ids)})


def png_b64(image: Any) -> str:
    buffer = io.BytesIO()
    image.save(buffer, "PNG")
    return base64.b64encode(buffer.getvalue()).decode("ascii")


def sglang_engine(url: str, timeout_s: float = 300.0) -> TokenEngine:
    """An engine over SGLang's native `/generate` (input_ids in; output ids and log-probs out)."""
    import httpx

    async def generate(prompt: EncodedPrompt, sampling: SamplingOptions, seed: int) -> tuple[list[int], list[float], str]:
        payload = {
            "input_ids": prompt.input_ids,
            "image_data": [png_b64(img) for img in prompt.images or []],
            "sampling_params": {"temperature": sampling.temperature, "top_p": sampling.top_p,
                                "top_k": sampling.top_k if sampling.top_k > 0 else -1,
                                "max_new_tokens": sampling.max_new_tokens, "sampling_seed": seed},
            "return_logprob": True,
        }
        async with httpx.AsyncClient(timeout=timeout_s, verify=tls_context()) as client:
            response = await client.post(url.rstrip("/") + "/generate", json=payload)
            response.raise_for_status()
            body = response.json()
        pairs = body["meta_info"]["output_token_logprobs"]  # [[logprob, token_id, text], ...]
        finish = body["meta_info"].get("finish_reason") or {}
        return ([int(p[1]) for p in pairs], [float(p[0]) for p in pairs],
                "length" if finish.get("type") == "length" else "stop")

    return generate
