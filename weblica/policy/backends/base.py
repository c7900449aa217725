"""The backend interface: a conversation in, one sampled response out."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol, Sequence

from weblica.policy.context import Message
from weblica.policy.coords import CoordinateFrame


class BackendError(RuntimeError):
    """A backend could not produce a response (server error, bad reply); the step counts as an env-side
    failure, not as the model's fault."""


@dataclass
class Generation:
    """One response. Local backends fill the token fields: `prompt_token_ids` is exactly what the model
    was conditioned on, `token_ids` what it sampled (ending in the stop token when it stopped) and
    `logprobs` their log-probabilities under the sampling distribution (logits / temperature)."""

    text: str
    prompt_token_ids: list[int] | None = None
    token_ids: list[int] | None = None
    logprobs: list[float] | None = None
    finish_reason: str = "stop"  # stop | length
    usage: dict[str, Any] = field(default_factory=dict)


@dataclass
class SamplingOptions:
    temperature: float = 1.0
    top_p: float = 1.0
    top_k: int = 0
    max_new_tokens: int = 1024


class Backend(Protocol):
    """Optionally also `async def prepare(self) -> None`, awaited before each turn (idempotent), for
    backends that learn what they serve — and so their coordinate frame — from the server."""

    name: str
    frame: CoordinateFrame  # the coordinate convention this model answers in

    async def generate(self, messages: Sequence[Message], seed: int) -> Generation:
        """Sample one response to `messages`; the same (messages, seed) gives the same response where the
        backend allows it."""
        ...
