"""The oracle policy: plays a task's `oracle` actions, one per step, then `done`.

Pop-ups differ between episodes of one site (weblica/synth/distractors.py: the episode seed picks them),
while the oracle was compiled in one episode. So the policy reads the page (`reads_page`): it skips
the dismissals recorded with the oracle and dismisses, before a click, hover or drag, whatever pop-up
is in its way in this episode (weblica.env.popups), and scrolls back to a sticky header this episode
does not keep in view where the recording clicked it (weblica.env.sticky_header). Without a page
reading it replays the recording as it is.
"""
from __future__ import annotations

from weblica.env.actions import Action
from weblica.env.episode import StepRecord
from weblica.env.observation import Observation
from weblica.env.popups import dismissal_before, is_dismissal
from weblica.env.sticky_header import SCROLL_TO_HEADER, header_fix_before
from weblica.env.task import Task
from weblica.policy.base import PolicyOutput, render_tool_calls


class OraclePolicy:
    name = "oracle"
    reads_page = True

    def __init__(self) -> None:
        self._next = 0  # the next recorded action to play

    def reset(self, task: Task, seed: int) -> None:
        if task.oracle is None:
            raise ValueError(f"task {task.id} has no oracle actions; the oracle policy cannot play it")
        self._next = 0

    @staticmethod
    def _plan(task: Task) -> tuple[list[Action], list[str]]:
        plan = list(task.oracle or [])
        thoughts = list(task.oracle_thoughts or [])
        if len(thoughts) != len(plan):  # none recorded (or a hand-edited plan): say nothing specific
            thoughts = ["Following the oracle plan."] * len(plan)
        if not plan or plan[-1].name != "done":
            plan.append(Action("done", {"answer": ""}))
            thoughts.append("The task is complete.")
        return plan, thoughts

    async def act(self, obs: Observation, task: Task, history: list[StepRecord]) -> PolicyOutput:
        plan, thoughts = self._plan(task)
        page = getattr(obs, "page", None)
        if not page:  # no reading of the page: the recording, step by step
            turn = min(len(history), len(plan) - 1)
            return PolicyOutput(text=render_tool_calls([plan[turn]], thoughts[turn]), actions=[plan[turn]])
        while self._next < len(plan) - 1 and is_dismissal(thoughts[self._next]):
            self._next += 1  # this episode's pop-ups are dismissed as they come, below
        turn = min(self._next, len(plan) - 1)
        action = plan[turn]
        dismissal = dismissal_before(page.get("popups") or [], action)
        if dismissal is not None:
            return PolicyOutput(text=render_tool_calls([dismissal[0]], dismissal[1]), actions=[dismissal[0]])
        back = header_fix_before(page.get("header"), action)  # aimed at a stuck header that is not there
        if back is not None:
            return PolicyOutput(text=render_tool_calls([back], SCROLL_TO_HEADER), actions=[back])
        self._next = turn + 1
        return PolicyOutput(text=render_tool_calls([action], thoughts[turn]), actions=[action])
