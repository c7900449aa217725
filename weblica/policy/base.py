"""The policy interface: given the current observation and the episode so far, produce a response."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol, runtime_checkable

from weblica.env.actions import Action
from weblica.env.episode import StepRecord
from weblica.env.observation import Observation
from weblica.env.task import Task


@dataclass
class PolicyOutput:
    """A policy's turn. `text` is what a model said; scripted policies also give `actions` directly
    (then `text` is their rendering as tool calls). Local models add token ids and log-probs."""

    text: str
    actions: list[Action] | None = None
    prompt_token_ids: list[int] | None = None
    token_ids: list[int] | None = None
    logprobs: list[float] | None = None
    parse_errors: list[str] | None = None  # why a model's response broke the protocol; shown as feedback


@runtime_checkable
class Policy(Protocol):
    name: str

    async def act(self, obs: Observation, task: Task, history: list[StepRecord]) -> PolicyOutput:
        """The next turn. `history` holds the earlier steps of this episode, oldest first."""
        ...

    def reset(self, task: Task, seed: int) -> None:
        """Start a new episode; seeded policies reseed here so an episode depends only on (task, seed)."""
        ...


def render_tool_calls(actions: list[Action], thought: str = "") -> str:
    """Actions rendered as a model would write them: <think>…</think> then <tool_call> blocks."""
    import json

    calls = "\n".join(f"<tool_call>{json.dumps(a.to_dict(), sort_keys=True)}</tool_call>" for a in actions)
    return f"<think>{thought}</think>\n{calls}"
