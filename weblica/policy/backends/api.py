"""Remote models over HTTP: `openai:URL[#model]` (any OpenAI-compatible chat-completions server — vLLM,
SGLang, OpenAI) and `anthropic:MODEL` (the Messages API).

Both send the same conversation (system prompt with the tool schema, screenshots as base64 images) and
read the response as text in the `<think>`/`<tool_call>` protocol, so one parser serves every backend.
Provider errors and timeouts become `BackendError`: they are the environment's failure, not the model's.
"""
from __future__ import annotations

import os
import re
from typing import Any, Sequence

from weblica.policy.backends.base import BackendError, Generation, SamplingOptions
from weblica.policy.context import Message, to_anthropic_messages, to_openai_messages
from weblica.policy.coords import CoordinateFrame, frame_for_model_type

DEFAULT_TIMEOUT_S = 120.0


def frame_for_model_name(model: str) -> CoordinateFrame:
    """Guess the coordinate frame from a served model's name (Qwen checkpoints keep their family in it)."""
    name = model.lower().replace("_", "-").replace(".", "")
    if re.search(r"qwen3-?vl", name):
        return frame_for_model_type("qwen3_vl")
    if re.search(r"qwen2(5)?-?vl", name):
        return frame_for_model_type("qwen2_5_vl")
    return frame_for_model_type(None)


def _missing(package: str) -> BackendError:
    return BackendError(f"the '{package}' package is not installed: pip install 'weblica[llm]'")


class OpenAIBackend:
    """Chat completions against `base_url` (e.g. http://127.0.0.1:8000/v1). The model name defaults to
    the first one the server lists under /models, as vLLM and SGLang serve exactly one."""

    def __init__(self, base_url: str, model: str | None = None, api_key: str | None = None,
                 sampling: SamplingOptions | None = None, frame: CoordinateFrame | None = None,
                 timeout_s: float = DEFAULT_TIMEOUT_S, max_retries: int = 2) -> None:
        try:
            import openai
        except ImportError:
            raise _missing("openai") from None
        self.base_url = base_url.rstrip("/")
        self.model = model
        self.sampling = sampling or SamplingOptions(temperature=0.0)
        self._frame = frame
        self.client = openai.AsyncOpenAI(base_url=self.base_url, api_key=api_key or os.environ.get(
            "OPENAI_API_KEY", "EMPTY"), timeout=timeout_s, max_retries=max_retries)
        self._errors = (openai.APIError, openai.APITimeoutError, openai.APIConnectionError)

    @property
    def name(self) -> str:
        return f"openai:{self.base_url}#{self.model}" if self.model else f"openai:{self.base_url}"

    @property
    def frame(self) -> CoordinateFrame:
        if self._frame is not None:
            return self._frame
        return frame_for_model_name(self.model or "")

    async def prepare(self) -> None:
        await self.resolve_model()

    async def resolve_model(self) -> str:
        if self.model is None:
            try:
                models = await self.client.models.list()
            except self._errors as exc:
                raise BackendError(f"{self.base_url}: cannot list models ({exc}); name one as openai:URL#MODEL") from exc
            if not models.data:
                raise BackendError(f"{self.base_url} serves no models; name one as openai:URL#MODEL")
            self.model = models.data[0].id
        return self.model

    async def generate(self, messages: Sequence[Message], seed: int) -> Generation:
        model = await self.resolve_model()
        opts = self.sampling
        request: dict[str, Any] = {"model": model, "messages": to_openai_messages(messages),
                                   "max_tokens": opts.max_new_tokens, "temperature": opts.temperature,
                                   "seed": seed & 0x7FFF_FFFF}
        if opts.top_p < 1.0:
            request["top_p"] = opts.top_p
        if opts.top_k > 0:
            request["extra_body"] = {"top_k": opts.top_k}  # vLLM / SGLang extension
        try:
            response = await self.client.chat.completions.create(**request)
        except self._errors as exc:
            raise BackendError(f"{self.name}: {type(exc).__name__}: {exc}") from exc
        if not response.choices:
            raise BackendError(f"{self.name}: the reply has no choices")
        choice = response.choices[0]
        text = choice.message.content or ""
        # reasoning servers (vLLM --reasoning-parser) split the thought out; put it back in protocol form
        reasoning = getattr(choice.message, "reasoning_content", None)
        if reasoning and "</think>" not in text:
            text = f"<think>{reasoning}</think>\n{text}"
        usage = response.usage.model_dump() if response.usage else {}
        return Generation(text, finish_reason="length" if choice.finish_reason == "length" else "stop", usage=usage)


class AnthropicBackend:
    """The Messages API. `base_url` defaults to $ANTHROPIC_BASE_URL, then the SDK's default."""

    def __init__(self, model: str, base_url: str | None = None, api_key: str | None = None,
                 sampling: SamplingOptions | None = None, frame: CoordinateFrame | None = None,
                 timeout_s: float = DEFAULT_TIMEOUT_S, max_retries: int = 2) -> None:
        try:
            import anthropic
        except ImportError:
            raise _missing("anthropic") from None
        self.model = model
        self.name = f"anthropic:{model}"
        self.sampling = sampling or SamplingOptions(temperature=0.0)
        self.frame = frame or frame_for_model_type(None)
        self.client = anthropic.AsyncAnthropic(
            base_url=base_url or os.environ.get("ANTHROPIC_BASE_URL") or None,
            api_key=api_key or os.environ.get("ANTHROPIC_API_KEY", "EMPTY"), timeout=timeout_s,
            max_retries=max_retries)
        self._errors = (anthropic.APIError, anthropic.APITimeoutError, anthropic.APIConnectionError)

    async def generate(self, messages: Sequence[Message], seed: int) -> Generation:
        # The Messages API has no seed; temperature 0 is as repeatable as it gets.
        system, chat = to_anthropic_messages(messages)
        opts = self.sampling
        request: dict[str, Any] = {"model": self.model, "max_tokens": opts.max_new_tokens, "messages": chat,
                                   "temperature": min(max(opts.temperature, 0.0), 1.0)}
        if system:
            request["system"] = system
        if opts.top_p < 1.0:
            request["top_p"] = opts.top_p
        if opts.top_k > 0:
            request["top_k"] = opts.top_k
        try:
            response = await self.client.messages.create(**request)
        except self._errors as exc:
            raise BackendError(f"{self.name}: {type(exc).__name__}: {exc}") from exc
        text = "".join(block.text for block in response.content if getattr(block, "type", "") == "text")
        thinking = "".join(getattr(b, "thinking", "") for b in response.content if getattr(b, "type", "") == "thinking")
        if thinking and "</think>" not in text:
            text = f"<think>{thinking}</think>\n{text}"
        usage = response.usage.model_dump() if response.usage else {}
        return Generation(text, finish_reason="length" if response.stop_reason == "max_tokens" else "stop",
                          usage=usage)
