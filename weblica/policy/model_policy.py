"""A policy backed by a model: context in, response out, actions converted to viewport pixels."""
from __future__ import annotations

import hashlib
from dataclasses import dataclass, field

from weblica.env.episode import StepRecord
from weblica.env.observation import Observation
from weblica.env.task import Task
from weblica.policy.backends.base import Backend
from weblica.policy.base import PolicyOutput
from weblica.policy.context import ContextBuilder, check_response
from weblica.policy.coords import CoordinateFrame


@dataclass
class ModelOutput(PolicyOutput):
    """A model's turn. `actions` holds the response's calls in viewport pixels when the response follows
    the protocol, and is empty otherwise (never None: the engine must not re-parse the text, whose
    coordinates are in the model's frame); `parse_errors` says what was wrong, for feedback and the
    format gate."""

    parse_errors: list[str] = field(default_factory=list)
    format_ok: bool = True
    finish_reason: str = "stop"


def turn_seed(seed: int, task_id: str, turn: int) -> int:
    """A per-turn sampling seed that depends only on (seed, task, turn), not on scheduling order."""
    digest = hashlib.sha256(f"{seed}:{task_id}:{turn}".encode()).digest()
    return int.from_bytes(digest[:8], "little") & 0x7FFF_FFFF_FFFF_FFFF


class ModelPolicy:
    """One episode at a time: it remembers the screenshots of earlier turns (for keep_images > 1).
    `spawn()` gives another policy over the same backend (model weights, HTTP client) for a concurrent
    episode."""

    def __init__(self, backend: Backend, keep_images: int = 1, frame: CoordinateFrame | None = None,
                 seed: int = 0) -> None:
        self.backend = backend
        self.name = backend.name
        self.frame = frame or backend.frame
        self.context = ContextBuilder(self.frame, keep_images)
        self.seed = seed
        self._screens: dict[int, bytes] = {}

    def spawn(self) -> "ModelPolicy":
        return ModelPolicy(self.backend, self.context.keep_images, self.frame, self.seed)

    def reset(self, task: Task, seed: int) -> None:
        self.seed = seed
        self._screens.clear()

    async def act(self, obs: Observation, task: Task, history: list[StepRecord]) -> PolicyOutput:
        turn = len(history)
        if turn == 0:
            self._screens.clear()
        # drop screenshots from turns this history does not have (a new episode without reset)
        self._screens = {t: s for t, s in self._screens.items() if t < turn}
        self._screens[turn] = obs.screenshot
        keep = self.context.keep_images
        self._screens = {t: s for t, s in self._screens.items() if t > turn - keep}
        messages = self.context.build(task, history, obs, self._screens)
        generation = await self.backend.generate(messages, turn_seed(self.seed, task.id, turn))
        check = check_response(generation.text, self.frame)
        return ModelOutput(text=generation.text, actions=check.actions if check.ok else [],
                           prompt_token_ids=generation.prompt_token_ids, token_ids=generation.token_ids,
                           logprobs=generation.logprobs, parse_errors=check.errors, format_ok=check.ok,
                           finish_reason=generation.finish_reason)
