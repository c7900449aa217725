"""BrowserGym adapter: a weblica task as a BrowserGym `AbstractBrowserTask`.

BrowserGym owns the browser and hands the task a (sync) Playwright page: `setup` opens the start URL
and returns the goal, `validate` scores the agent's last chat message with the task's checks, and
`cheat` plays the oracle. browsergym-core pins an old Playwright (1.44) that cannot be installed beside
the one weblica uses, so the base class is used when importable and the same interface otherwise.
"""
from __future__ import annotations

import asyncio
from typing import Any

from weblica.env.backend import SiteBackend
from weblica.env.task import Task, evaluate_checks

try:  # pragma: no cover - depends on an optional, conflicting install
    from browsergym.core.task import AbstractBrowserTask as _Base
except ImportError:
    class _Base:  # type: ignore[no-redef]
        """The interface of browsergym.core.task.AbstractBrowserTask."""

        def __init__(self, seed: int) -> None:
            import numpy as np

            self.random = np.random.RandomState(seed)
            self.viewport = {"width": 1280, "height": 720}
            self.slow_mo = 0
            self.timeout = 5000
            self.locale = None
            self.timezone_id = None


class WeblicaBrowserTask(_Base):
    """Wraps one weblica Task. The backend (when the task's source has server-side state) is used
    only to read that state in `validate`."""

    def __init__(self, seed: int, task: Task, backend: SiteBackend | None = None,
                 episode_id: str | None = None) -> None:
        super().__init__(seed)
        self.task = task
        self.backend = backend
        self.episode_id = episode_id or f"bgym-{task.id}-{seed}"
        self.locale = "en-US"
        self.timezone_id = "UTC"

    @classmethod
    def get_task_id(cls) -> str:
        return "weblica"

    def setup(self, page: Any) -> tuple[str, dict]:
        page.goto(self.task.start_url, wait_until="load")
        return self.task.instruction, {"task_id": self.task.id, "skill": self.task.skill}

    def _state(self) -> dict | None:
        if self.backend is None:
            return None
        return asyncio.run(self.backend.state(self.task, self.episode_id))

    def validate(self, page: Any, chat_messages: list[Any]) -> tuple[float, bool, str, dict]:
        answers = [m.get("message", "") if isinstance(m, dict) else str(m) for m in chat_messages
                   if not isinstance(m, dict) or m.get("role") == "assistant"]
        if not answers:
            return 0.0, False, "", {}
        reward, results = evaluate_checks(self.task, answers[-1], page.url, self._state())
        return reward, True, "", {"check_results": [r.to_dict() for r in results]}

    def cheat(self, page: Any, chat_messages: list[Any]) -> None:
        """Play the oracle with the env's own gestures (run on BrowserGym's sync page)."""
        from weblica.env import gestures

        for action in self.task.oracle or []:
            gesture = gestures.for_action(action)
            if gesture is not None:
                gestures.perform_sync(page, gesture)
            elif action.name == "goto_url":
                page.goto(action.args["url"])
            elif action.name in ("go_back", "go_forward"):
                (page.go_back if action.name == "go_back" else page.go_forward)()
            elif action.name == "done":
                chat_messages.append({"role": "assistant", "message": action.args.get("answer", "")})
            # a click or Enter may start a navigation a moment later; BrowserGym paces actions the same way
            page.wait_for_timeout(self.slow_mo or 250)
            page.wait_for_load_state("load")

    def teardown(self) -> None:
        pass
