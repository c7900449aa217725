"""The coding agent's conversation with a model: Anthropic Messages (`tool_use`/`tool_result`) or any
OpenAI-compatible chat-completions server (`tool_calls`/`tool` messages).

Each client keeps one site's conversation and returns a provider-neutral `Reply`: tool calls, token
usage, and how the reply ended (`tool_use`, `end`, `truncated` — cut at the output limit, maybe inside a
tool call — or `refused`). Transient provider failures (429, 5xx, Anthropic's 529 overloaded, dropped
connections) are retried with a deterministic exponential backoff that honours `retry-after`; the
sleep is injectable so tests run instantly. Only the last `keep_images` screenshots stay in the
conversation; older ones become a one-line text placeholder.
"""
from __future__ import annotations

import asyncio
import base64
import json
import os
from dataclasses import dataclass, field
from typing import Any, Awaitable, Callable, Protocol

from weblica.synth.agent_tools import ToolCall, ToolOutput, anthropic_tools, openai_tools

Sleep = Callable[[float], Awaitable[None]]
RETRY_STATUSES = frozenset({408, 409, 429, 500, 502, 503, 504, 529})
IMAGE_PLACEHOLDER = "[an earlier screenshot, removed to save context; take a new one if needed]"


class ProviderError(RuntimeError):
    """The provider kept failing (retries spent) or answered with a non-retryable error."""


@dataclass
class RetryPolicy:
    attempts: int = 5  # tries in all, the first included
    base_s: float = 1.0
    max_s: float = 60.0

    def delay(self, attempt: int, retry_after: float | None) -> float:
        """Seconds before try `attempt + 1`: the server's retry-after when it gives one, else base·2^attempt."""
        if retry_after is not None:
            return min(max(retry_after, 0.0), self.max_s)
        return min(self.base_s * 2 ** attempt, self.max_s)


def retry_after_seconds(headers: Any) -> float | None:
    """`retry-after-ms` or `retry-after` (seconds) from response headers; an HTTP date is ignored."""
    if headers is None:
        return None
    for name, scale in (("retry-after-ms", 0.001), ("retry-after", 1.0)):
        value = headers.get(name)
        if value is not None:
            try:
                return float(value) * scale
            except ValueError:
                continue
    return None


async def with_retries(call: Callable[[], Awaitable[Any]], policy: RetryPolicy, sleep: Sleep,
                       on_retry: Callable[[str], None] | None = None) -> Any:
    """Run `call`, retrying transient provider failures; other errors and the last failure raise
    ProviderError with the provider's message."""
    for attempt in range(policy.attempts):
        try:
            return await call()
        except Exception as exc:  # the SDKs' error classes differ; classify by status and kind
            status = getattr(exc, "status_code", None)
            response = getattr(exc, "response", None)
            headers = getattr(response, "headers", None)
            transient = status in RETRY_STATUSES or (status is None and _is_connection_error(exc))
            should = (headers.get("x-should-retry") or "").lower() if headers is not None else ""
            transient = (transient or should == "true") and should != "false"  # the server's word wins, as in the SDKs
            if not transient or attempt == policy.attempts - 1:
                raise ProviderError(f"{type(exc).__name__}"
                                    f"{f' (HTTP {status})' if status else ''}: {exc}"[:500]) from exc
            wait = policy.delay(attempt, retry_after_seconds(headers))
            if on_retry:
                on_retry(f"HTTP {status or 'connection'}: retry {attempt + 1} in {wait:g}s")
            await sleep(wait)
    raise AssertionError("unreachable")


def _is_connection_error(exc: Exception) -> bool:
    return any(c.__name__ in ("APIConnectionError", "APITimeoutError") for c in type(exc).__mro__)


@dataclass
class Reply:
    text: str
    tool_calls: list[ToolCall]
    stop: str  # tool_use | end | truncated | refused
    cut_call: bool = False  # truncated inside the last tool call (its arguments are incomplete)
    tokens_in: int = 0
    tokens_out: int = 0
    detail: str = ""  # the provider's own words for a refusal


@dataclass
class ChatOptions:
    max_tokens: int = 16384
    temperature: float = 0.0
    keep_images: int = 2
    prompt_cache: bool = True  # Anthropic cache_control breakpoints (ignored by OpenAI-compatible servers)
    retry: RetryPolicy = field(default_factory=RetryPolicy)
    sleep: Sleep = asyncio.sleep


class ChatClient(Protocol):
    """One site's conversation."""

    def start(self, system: str, user: str) -> None: ...
    async def turn(self) -> Reply: ...
    def tool_results(self, calls: list[ToolCall], outputs: list[ToolOutput]) -> None: ...
    def say(self, text: str) -> None: ...


def _png_b64(png: bytes) -> str:
    return base64.b64encode(png).decode()


class AnthropicClient:
    """Messages API. Every tool_use block is answered by a tool_result (Anthropic requires it), so a
    call cut by max_tokens gets an error result rather than disappearing."""

    def __init__(self, model: str, base_url: str | None = None, api_key: str | None = None,
                 options: ChatOptions | None = None, timeout_s: float = 600.0) -> None:
        import anthropic

        self.client = anthropic.AsyncAnthropic(
            base_url=base_url or os.environ.get("ANTHROPIC_BASE_URL") or None,
            api_key=api_key or os.environ.get("ANTHROPIC_API_KEY", "unset"), max_retries=0, timeout=timeout_s)
        self.model, self.options = model, options or ChatOptions()
        self.system, self.messages = "", []  # type: ignore[var-annotated]
        self.retries: list[str] = []

    def start(self, system: str, user: str) -> None:
        self.system, self.messages = system, [{"role": "user", "content": user}]

    async def turn(self) -> Reply:
        _prune_images(self.messages, self.options.keep_images, _anthropic_images)
        opts = self.options
        system: Any = self.system
        if opts.prompt_cache:
            system = [{"type": "text", "text": self.system, "cache_control": {"type": "ephemeral"}}]
            self._mark_cache_breakpoint()
        response = await with_retries(lambda: self.client.messages.create(
            model=self.model, max_tokens=opts.max_tokens, system=system, messages=self.messages,
            tools=anthropic_tools(), temperature=opts.temperature), opts.retry, opts.sleep, self.retries.append)
        content = [block.model_dump(exclude_none=True) for block in response.content]
        self.messages.append({"role": "assistant", "content": content or [{"type": "text", "text": "(empty)"}]})
        text = "".join(b.get("text", "") for b in content if b["type"] == "text")
        calls = [ToolCall(b["id"], b["name"], dict(b.get("input") or {})) for b in content if b["type"] == "tool_use"]
        reason = response.stop_reason
        usage = response.usage
        tokens = dict(tokens_in=(usage.input_tokens or 0) + (getattr(usage, "cache_read_input_tokens", 0) or 0)
                      + (getattr(usage, "cache_creation_input_tokens", 0) or 0), tokens_out=usage.output_tokens or 0)
        if reason == "refusal":
            details = getattr(response, "stop_details", None)
            return Reply(text, calls, "refused", detail=" ".join(filter(None, [text, str(details or "")]))
                         or "stop_reason refusal", **tokens)
        if reason in ("max_tokens", "model_context_window_exceeded"):
            return Reply(text, calls, "truncated", cut_call=bool(content) and content[-1]["type"] == "tool_use",
                         **tokens)
        return Reply(text, calls, "tool_use" if calls else "end", **tokens)

    def _mark_cache_breakpoint(self) -> None:
        """Prompt caching: one rolling breakpoint on the newest block (the API allows four), so each
        turn reads the conversation so far from the cache instead of paying for it again."""
        for message in self.messages:
            if isinstance(message["content"], list):
                for block in message["content"]:
                    block.pop("cache_control", None)
        last = self.messages[-1]
        if isinstance(last["content"], str):
            last["content"] = [{"type": "text", "text": last["content"]}]
        last["content"][-1]["cache_control"] = {"type": "ephemeral"}

    def tool_results(self, calls: list[ToolCall], outputs: list[ToolOutput]) -> None:
        blocks = []
        for call, out in zip(calls, outputs):
            inner: list[dict[str, Any]] = [{"type": "text", "text": out.text}]
            if out.image_png:
                inner.append({"type": "image", "source": {"type": "base64", "media_type": "image/png",
                                                          "data": _png_b64(out.image_png)}})
            block = {"type": "tool_result", "tool_use_id": call.id, "content": inner}
            if out.is_error:
                block["is_error"] = True
            blocks.append(block)
        self.messages.append({"role": "user", "content": blocks})

    async def aclose(self) -> None:
        await self.client.close()

    def say(self, text: str) -> None:
        last = self.messages[-1] if self.messages else None
        if last and last["role"] == "user" and isinstance(last["content"], list):  # after tool results: one turn
            last["content"].append({"type": "text", "text": text})
        else:
            self.messages.append({"role": "user", "content": [{"type": "text", "text": text}]})


class OpenAIClient:
    """Chat completions. Tool messages carry text only, so screenshots follow as one user message."""

    def __init__(self, model: str, base_url: str | None = None, api_key: str | None = None,
                 options: ChatOptions | None = None, timeout_s: float = 600.0) -> None:
        import openai

        self.client = openai.AsyncOpenAI(base_url=base_url or os.environ.get("OPENAI_BASE_URL") or None,
                                         api_key=api_key or os.environ.get("OPENAI_API_KEY", "EMPTY"),
                                         max_retries=0, timeout=timeout_s)
        self.model, self.options = model, options or ChatOptions()
        self.messages: list[dict[str, Any]] = []
        self.retries: list[str] = []

    def start(self, system: str, user: str) -> None:
        self.messages = [{"role": "system", "content": system}, {"role": "user", "content": user}]

    async def turn(self) -> Reply:
        _prune_images(self.messages, self.options.keep_images, _openai_images)
        opts = self.options
        response = await with_retries(lambda: self.client.chat.completions.create(
            model=self.model, messages=self.messages, tools=openai_tools(), max_tokens=opts.max_tokens,
            temperature=opts.temperature), opts.retry, opts.sleep, self.retries.append)
        if not response.choices:
            raise ProviderError(f"{self.model}: the reply has no choices")
        choice = response.choices[0]
        message = choice.message
        usage = response.usage
        tokens = dict(tokens_in=getattr(usage, "prompt_tokens", 0) or 0,
                      tokens_out=getattr(usage, "completion_tokens", 0) or 0)
        calls, stored = [], []
        raw_calls = message.tool_calls or []
        for index, call in enumerate(raw_calls):
            arguments = call.function.arguments or "{}"
            try:
                args = json.loads(arguments)
                if not isinstance(args, dict):
                    raise json.JSONDecodeError("not an object", arguments, 0)
            except json.JSONDecodeError:
                cut = choice.finish_reason == "length" and index == len(raw_calls) - 1
                args = {"_error": "the arguments were cut off" if cut else
                        f"arguments are not a JSON object: {arguments[:200]}"}
                arguments = "{}"  # a server re-templating history may parse it; keep it valid JSON
            calls.append(ToolCall(call.id, call.function.name, args))
            stored.append({"id": call.id, "type": "function",
                           "function": {"name": call.function.name, "arguments": arguments}})
        entry: dict[str, Any] = {"role": "assistant", "content": message.content or ""}
        if stored:
            entry["tool_calls"] = stored
        self.messages.append(entry)
        refusal = getattr(message, "refusal", None)
        if refusal or choice.finish_reason == "content_filter":
            return Reply(message.content or "", calls, "refused", tokens_in=tokens["tokens_in"],
                         tokens_out=tokens["tokens_out"], detail=refusal or "finish_reason content_filter")
        if choice.finish_reason == "length":
            return Reply(message.content or "", calls, "truncated", cut_call=bool(calls), **tokens)
        return Reply(message.content or "", calls, "tool_use" if calls else "end", **tokens)

    def tool_results(self, calls: list[ToolCall], outputs: list[ToolOutput]) -> None:
        images: list[dict[str, Any]] = []
        for call, out in zip(calls, outputs):
            self.messages.append({"role": "tool", "tool_call_id": call.id, "content": out.text})
            if out.image_png:
                url = "data:image/png;base64," + _png_b64(out.image_png)
                images.append({"type": "image_url", "image_url": {"url": url}})
        if images:
            self.messages.append({"role": "user", "content": [{"type": "text", "text": "Screenshots:"}] + images})

    async def aclose(self) -> None:
        await self.client.close()

    def say(self, text: str) -> None:
        self.messages.append({"role": "user", "content": text})


def _anthropic_images(messages: list[dict[str, Any]]) -> list[tuple[list[Any], int]]:
    """(list, index) of every image block, oldest first, inside tool_result contents too."""
    found = []
    for message in messages:
        if not isinstance(message.get("content"), list):
            continue
        for block in message["content"]:
            if block.get("type") == "tool_result" and isinstance(block.get("content"), list):
                found += [(block["content"], i) for i, p in enumerate(block["content"]) if p.get("type") == "image"]
        found += [(message["content"], i) for i, b in enumerate(message["content"]) if b.get("type") == "image"]
    return found


def _openai_images(messages: list[dict[str, Any]]) -> list[tuple[list[Any], int]]:
    return [(m["content"], i) for m in messages if isinstance(m.get("content"), list)
            for i, p in enumerate(m["content"]) if p.get("type") == "image_url"]


def _prune_images(messages: list[dict[str, Any]], keep: int,
                  find: Callable[[list[dict[str, Any]]], list[tuple[list[Any], int]]]) -> None:
    images = find(messages)
    for holder, index in images[:max(len(images) - max(keep, 0), 0)]:
        holder[index] = {"type": "text", "text": IMAGE_PLACEHOLDER}


def parse_model_spec(spec: str) -> tuple[str, str | None, str, dict[str, str]]:
    """`anthropic:MODEL`, `openai:URL#MODEL` or `openai:MODEL` (base URL from $OPENAI_BASE_URL), with
    `;key=value` options as in policy specs -> (provider, base_url, model, options)."""
    from weblica.policy.factory import PolicySpecError, parse_spec

    try:
        kind, target, options = parse_spec(spec)
    except PolicySpecError as exc:
        raise ValueError(f"{exc} (the generator takes anthropic:MODEL or openai:URL#MODEL)") from None
    if kind == "anthropic":
        return kind, options.pop("base_url", None), target, options
    if kind != "openai":
        raise ValueError(f"--model '{spec}' is not a chat model: use anthropic:MODEL or openai:URL#MODEL")
    if target.startswith(("http://", "https://")):
        url, sep, model = target.partition("#")
        if not sep or not model:
            raise ValueError(f"--model '{spec}' names no model: use openai:{url}#MODEL")
        return kind, url, model, options
    return kind, options.pop("base_url", None), target, options


_CLIENT_OPTIONS = {"max_tokens": int, "temperature": float, "keep_images": int,
                   "prompt_cache": lambda v: {"true": True, "false": False}[v.lower()]}


def make_client(spec: str, options: ChatOptions | None = None) -> ChatClient:
    """A fresh conversation with the model a spec names (one per site: each keeps its own history)."""
    import dataclasses

    provider, base_url, model, extra = parse_model_spec(spec)
    opts = dataclasses.replace(options or ChatOptions())
    api_key, timeout = extra.pop("api_key", None), float(extra.pop("timeout_s", 600.0))
    try:
        for key, cast in _CLIENT_OPTIONS.items():
            if key in extra:
                setattr(opts, key, cast(extra.pop(key)))
    except (ValueError, KeyError) as exc:
        raise ValueError(f"bad option in --model '{spec}': {exc}") from None
    if extra:
        raise ValueError(f"unknown option(s) in --model '{spec}': {', '.join(sorted(extra))}; known: "
                         f"{', '.join(sorted([*_CLIENT_OPTIONS, 'api_key', 'base_url', 'timeout_s']))}")
    cls = AnthropicClient if provider == "anthropic" else OpenAIClient
    return cls(model, base_url=base_url, api_key=api_key, options=opts, timeout_s=timeout)
