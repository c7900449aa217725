"""gymnasium adapter: `gymnasium.make("weblica/Web-v0", tasks=...)`.

Observations are dicts with the screenshot as a uint8 array (720, 1280, 3), the URL and the feedback
text; actions are model text (tool calls) or a list of tool-call dicts. `reset(seed=…, options={"task_id": …})`
picks a task: by id when given, otherwise by the seed, so a seed fixes both the task and the page. The
reset's info names the instruction the episode plays (for a task with instances, that of this seed's data).
"""
from __future__ import annotations

import hashlib
from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium import spaces

from weblica.env.actions import VIEWPORT_HEIGHT, VIEWPORT_WIDTH
from weblica.env.backend import SiteBackend
from weblica.env.observation import Observation
from weblica.env.sync_env import SyncWebEnv
from weblica.env.task import Task, load_tasks

ENV_ID = "weblica/Web-v0"
_TEXT = 100_000
# page text reaches the feedback, so the text spaces admit every printable BMP character
_CHARSET = "\t\n" + "".join(chr(i) for i in range(32, 0xD800) if chr(i).isprintable())


class WeblicaGymEnv(gym.Env):
    metadata = {"render_modes": ["rgb_array"]}

    def __init__(self, tasks: list[Task] | str, backends: dict[str, SiteBackend] | None = None,
                 render_mode: str | None = None) -> None:
        self.tasks = load_tasks(tasks) if isinstance(tasks, str) else list(tasks)
        if not self.tasks:
            raise ValueError("WeblicaGymEnv needs at least one task")
        self.render_mode = render_mode
        self.observation_space = spaces.Dict({
            "screenshot": spaces.Box(0, 255, (VIEWPORT_HEIGHT, VIEWPORT_WIDTH, 3), np.uint8),
            "url": spaces.Text(_TEXT, min_length=0, charset=_CHARSET),
            "feedback": spaces.Text(_TEXT, min_length=0, charset=_CHARSET),
        })
        self.action_space = spaces.Text(_TEXT, min_length=0, charset=_CHARSET)
        self._env = SyncWebEnv(backends=backends)
        self._last: Observation | None = None
        self.task: Task | None = None

    def _obs(self, obs: Observation) -> dict[str, Any]:
        self._last = obs
        image = np.asarray(obs.image().convert("RGB"), dtype=np.uint8) if obs.screenshot else \
            np.zeros((VIEWPORT_HEIGHT, VIEWPORT_WIDTH, 3), np.uint8)
        return {"screenshot": image, "url": obs.url, "feedback": "\n".join(obs.feedback)}

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[dict, dict]:
        super().reset(seed=seed)
        options = options or {}
        if "task_id" in options:
            matches = [t for t in self.tasks if t.id == options["task_id"]]
            if not matches:
                raise KeyError(f"no task with id {options['task_id']!r}")
            task = matches[0]
        else:
            index = int(self.np_random.integers(len(self.tasks)))
            task = self.tasks[index]
        episode_seed = seed if seed is not None else int(hashlib.sha256(task.id.encode()).hexdigest()[:8], 16)
        obs = self._env.reset(task, episode_seed)
        # the task the episode plays: with instances, this seed's member (weblica.env.task.episode_task)
        self.task = self._env.task or task
        return self._obs(obs), {"task_id": self.task.id, "instruction": self.task.instruction,
                                "instance": int(self.task.metadata.get("instance", 0) or 0)}

    def step(self, action: Any) -> tuple[dict, float, bool, bool, dict]:
        obs, reward, terminated, truncated, info = self._env.step(action)
        return self._obs(obs), reward, terminated, truncated, info

    def render(self) -> Any:
        return None if self._last is None else self._obs(self._last)["screenshot"]

    def close(self) -> None:
        self._env.close()


def register() -> None:
    if ENV_ID not in gym.registry:
        gym.register(id=ENV_ID, entry_point="weblica.integrations.gym:WeblicaGymEnv")


register()
