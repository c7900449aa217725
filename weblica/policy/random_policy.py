"""A seeded random-action policy: the floor every trained agent must beat, and a negative control
for task validation. Its choices depend only on (task id, seed, step), never on wall-clock time."""
from __future__ import annotations

import hashlib
import random

from weblica.env.actions import VIEWPORT_HEIGHT, VIEWPORT_WIDTH, Action
from weblica.env.episode import StepRecord
from weblica.env.observation import Observation
from weblica.env.task import Task
from weblica.policy.base import PolicyOutput, render_tool_calls

WORDS = ("hello", "test", "2025", "blue", "search", "alpha", "42", "new york", "cheap", "open")
KEYS = ("Enter", "Tab", "Escape", "ArrowDown", "ArrowUp", "PageDown", "Space")


class RandomPolicy:
    name = "random"

    def __init__(self, seed: int = 0, done_probability: float = 0.08) -> None:
        self.seed = seed
        self.done_probability = done_probability
        self._rng = random.Random(seed)

    def reset(self, task: Task, seed: int) -> None:
        digest = hashlib.sha256(f"{task.id}\0{seed}\0{self.seed}".encode()).digest()
        self._rng = random.Random(int.from_bytes(digest[:8], "big"))

    def _sample(self) -> Action:
        rng = self._rng
        x, y = rng.randrange(VIEWPORT_WIDTH), rng.randrange(VIEWPORT_HEIGHT)
        roll = rng.random()
        if roll < self.done_probability:
            return Action("done", {"answer": rng.choice(WORDS)})
        if roll < 0.50:
            return Action("click", {"x": float(x), "y": float(y), "button": "left", "clicks": 1})
        if roll < 0.62:
            return Action("write", {"text": rng.choice(WORDS)})
        if roll < 0.74:
            return Action("scroll", {"direction": rng.choice(["up", "down"]), "amount": 0.5})
        if roll < 0.84:
            return Action("press_keys", {"keys": [rng.choice(KEYS)]})
        if roll < 0.92:
            return Action("hover", {"x": float(x), "y": float(y)})
        if roll < 0.96:
            return Action("go_back", {})
        return Action("wait", {"seconds": 0.5})

    async def act(self, obs: Observation, task: Task, history: list[StepRecord]) -> PolicyOutput:
        action = self._sample()
        return PolicyOutput(text=render_tool_calls([action], "Acting at random."), actions=[action])
