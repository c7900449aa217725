"""The oracle policy: plays a task's `oracle` actions, one per step, then `done`."""
from __future__ import annotations

from weblica.env.actions import Action
from weblica.env.episode import StepRecord
from weblica.env.observation import Observation
from weblica.env.task import Task
from weblica.policy.base import PolicyOutput, render_tool_calls


class OraclePolicy:
    name = "oracle"

    def reset(self, task: Task, seed: int) -> None:
        if task.oracle is None:
            raise ValueError(f"task {task.id} has no oracle actions; the oracle policy cannot play it")

    async def act(self, obs: Observation, task: Task, history: list[StepRecord]) -> PolicyOutput:
        plan = list(task.oracle or [])
        thoughts = list(task.oracle_thoughts or [])
        if len(thoughts) != len(plan):  # none recorded (or a hand-edited plan): say nothing specific
            thoughts = ["Following the oracle plan."] * len(plan)
        if not plan or plan[-1].name != "done":
            plan.append(Action("done", {"answer": ""}))
            thoughts.append("The task is complete.")
        turn = min(len(history), len(plan) - 1)
        return PolicyOutput(text=render_tool_calls([plan[turn]], thoughts[turn]), actions=[plan[turn]])
