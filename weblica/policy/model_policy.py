"""A policy backed by a model: context in, response out, actions converted to viewport pixels."""
from __future__ import annotations

import hashlib
from dataclasses import dataclass

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
                 seed: int = 0, prompt_format: str = "weblica", observation: str = "screenshot") -> None:
        self.backend = backend
        self.keep_images = keep_images
        self.seed = seed
        self.prompt_format = prompt_format
        self.observation = observation
        self._frame = frame
        self._screens: dict[int, bytes] = {}
        self.context  # validate keep_images and the format now, not at the first turn

    @property
    def name(self) -> str:
        return self.backend.name

    @property
    def frame(self) -> CoordinateFrame:
        """The override if one was given, else the backend's (a server's model may only be known after
        its first request, so this is read each turn)."""
        return self._frame or self.backend.frame

    @property
    def context(self) -> ContextBuilder:
        return ContextBuilder(self.frame, self.keep_images, prompt_format=self.prompt_format,
                              observation=self.observation)

    @property
    def reads_axtree(self) -> bool:
        """Whether the rollout must read the page's accessibility tree into each observation."""
        return self.observation != "screenshot"

    def spawn(self) -> "ModelPolicy":
        return ModelPolicy(self.backend, self.keep_images, self._frame, self.seed, self.prompt_format,
                           self.observation)

    def reset(self, task: Task, seed: int) -> None:
        self.seed = seed
        self._screens.clear()

    async def act(self, obs: Observation, task: Task, history: list[StepRecord]) -> PolicyOutput:
        prepare = getattr(self.backend, "prepare", None)
        if prepare is not None:
            await prepare()
        turn = len(history)
        # keep the screenshots still in the window; drop later turns too (a new episode without reset)
        self._screens = {t: s for t, s in self._screens.items() if turn - self.keep_images < t < turn}
        self._screens[turn] = obs.screenshot
        frame = self.frame
        messages = self.context.build(task, history, obs, self._screens)
        generation = await self.backend.generate(messages, turn_seed(self.seed, task.id, turn))
        pointer = None
        if self.prompt_format == "computer_use":
            from weblica.policy.computer_use import last_pointer

            pointer = last_pointer(history, frame)
        check = check_response(generation.text, frame, self.prompt_format, pointer)
        return ModelOutput(text=generation.text, actions=check.actions if check.ok else [],
                           prompt_token_ids=generation.prompt_token_ids, token_ids=generation.token_ids,
                           logprobs=generation.logprobs, parse_errors=check.errors, format_ok=check.ok,
                           finish_reason=generation.finish_reason)
