"""weblica: hermetic, reproducible training environments for visual web agents.

The public API, importable from here (each loads on first use, so `import weblica` stays light):

    from weblica import WebEnv, SyncWebEnv, EnvPool, load_tasks

    tasks = load_tasks("sites/forms-travel-2a9523da/tasks.jsonl")
    with SyncWebEnv() as env:
        obs = env.reset(tasks[0], seed=0)
        obs, reward, terminated, truncated, info = env.step(
            [{"name": "click", "arguments": {"x": 230, "y": 30}}])

| name | is |
|---|---|
| `WebEnv` | the async environment: `reset(task, seed)`, `step(actions)`, `close()` (weblica.env.browser_env) |
| `SyncWebEnv` | the same, synchronous (weblica.env.sync_env) |
| `EnvPool` | N environments, episodes mapped over them (weblica.env.pool) |
| `EnvConfig` | an environment's options (weblica.env.browser_env) |
| `Task`, `TaskSource`, `TaskError`, `load_tasks`, `save_tasks` | the task model and tasks.jsonl (weblica.env.task) |
| `Action`, `make_action` | one validated tool call (weblica.env.actions) |
| `Observation`, `Trajectory` | what an agent sees; what an episode did (weblica.env.observation, weblica.env.episode) |
| `make_policy`, `make_policy_factory` | a policy from a spec: oracle, random, hf:DIR, openai:URL, ... (weblica.policy.factory) |
"""
from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

_EXPORTS = {
    "WebEnv": "weblica.env.browser_env", "EnvConfig": "weblica.env.browser_env",
    "SyncWebEnv": "weblica.env.sync_env", "EnvPool": "weblica.env.pool",
    "Task": "weblica.env.task", "TaskSource": "weblica.env.task", "TaskError": "weblica.env.task",
    "load_tasks": "weblica.env.task", "save_tasks": "weblica.env.task",
    "Action": "weblica.env.actions", "make_action": "weblica.env.actions",
    "Observation": "weblica.env.observation", "Trajectory": "weblica.env.episode",
    "make_policy": "weblica.policy.factory", "make_policy_factory": "weblica.policy.factory",
}
__all__ = ["Action", "EnvConfig", "EnvPool", "Observation", "SyncWebEnv", "Task", "TaskError", "TaskSource",
           "Trajectory", "WebEnv", "load_tasks", "make_action", "make_policy", "make_policy_factory", "save_tasks"]

if TYPE_CHECKING:  # what a type checker and an IDE see; at run time each name loads on first use
    from weblica.env.actions import Action, make_action
    from weblica.env.browser_env import EnvConfig, WebEnv
    from weblica.env.episode import Trajectory
    from weblica.env.observation import Observation
    from weblica.env.pool import EnvPool
    from weblica.env.sync_env import SyncWebEnv
    from weblica.env.task import Task, TaskError, TaskSource, load_tasks, save_tasks
    from weblica.policy.factory import make_policy, make_policy_factory


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'weblica' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value   # loaded once
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
