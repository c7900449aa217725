"""weblica task sets as registered BrowserGym tasks, and as an AgentLab benchmark.

    from weblica.integrations.browsergym_tasks import register_tasks
    ids = register_tasks("sites/forms-travel-2a9523da/tasks.jsonl")   # ['browsergym/weblica.forms-travel-2a9523da.t01', ...]
    env = gymnasium.make(ids[0])                                     # a BrowserEnv playing that task

Each task of a synth or cache set becomes `browsergym/weblica.<site>.<task>` (the task id without its site's
prefix; characters a gym id cannot hold become `_`). Its site is served by the task source's own backend
(the synth site server, the cache replay proxy), started in this process when the first environment of
the set is made and stopped at exit (or by `TaskSet.close()`); each reset starts a fresh per-episode state
on it, so checks read the truth, as in weblica's own env. BrowserGym owns the browser: the adapter gives it
Debian's Chromium, weblica's determinism page script (not its fake clock) and the episode's network
settings (weblica.integrations.browsergym).

`agentlab_benchmark(...)` wraps the registered ids in browsergym-experiments' `Benchmark` (the object
AgentLab's `make_study` runs), with BrowserGym's high-level action set. browsergym-core and
browsergym-experiments pin Playwright 1.44, so they install beside weblica without their dependencies
(`.ci/setup` puts them in .browsergym/; see weblica.integrations.browsergym).
"""
from __future__ import annotations

import asyncio
import atexit
import re
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable

from weblica.env.task import Task, load_tasks

PREFIX = "weblica"
_GYM_NAME_UNSAFE = re.compile(r"[^\w.-]")


def gym_name(task: Task) -> str:
    """`weblica.<site>.<task>`: the site (source.site, else the start URL's host) and the task id without the
    site's prefix, each with what a gym id cannot hold replaced by `_`."""
    from urllib.parse import urlsplit

    site = task.source.site or urlsplit(task.start_url).hostname or "site"
    short = task.id[len(site) + 1:] if task.id.startswith(f"{site}-") and len(task.id) > len(site) + 1 else task.id
    name = f"{PREFIX}.{_GYM_NAME_UNSAFE.sub('_', site)}.{_GYM_NAME_UNSAFE.sub('_', short)}"
    # a name ending in -v<digits> would be read by gymnasium as a version of another name
    return name + "_" if re.search(r"-v\d+$", name) else name


@dataclass
class TaskSet:
    """Registered tasks and the backends that serve them (one per source kind, started on first use)."""

    tasks: dict[str, Task] = field(repr=False)   # gym id -> task
    allow_private: bool = False
    backends: dict[str, Any] = field(default_factory=dict, repr=False)

    def backend_for(self, task: Task) -> Any:
        """The started backend of `task`'s source; None for live and local tasks (BrowserGym opens them)."""
        from weblica.env.sources import SOURCE_MODULES

        kind = task.source.kind
        if kind not in SOURCE_MODULES:
            return None
        if kind not in self.backends:
            import importlib

            from weblica.integrations.browsergym import _run_async

            module = importlib.import_module(SOURCE_MODULES[kind])
            backend = module.create_backend([t for t in self.tasks.values() if t.source.kind == kind])
            if hasattr(backend, "start"):
                _run_async(backend.start())
            self.backends[kind] = backend
        return self.backends[kind]

    def close(self) -> None:
        """Stop the backends (the site server, the replay proxy); also run at exit."""
        from weblica.integrations.browsergym import _run_async

        for backend in self.backends.values():
            if hasattr(backend, "stop"):
                try:
                    asyncio.get_running_loop()
                except RuntimeError:   # no loop on this thread (at exit, after BrowserGym's Playwright stopped)
                    asyncio.run(backend.stop())
                else:
                    _run_async(backend.stop())
        self.backends.clear()

    def make_env(self, gym_id: str, **env_kwargs: Any) -> Any:
        """A BrowserEnv playing the task registered as `gym_id` (gymnasium.make's entry point); `env_kwargs`
        are BrowserEnv's (headless, action_mapping, ...); task_kwargs and pw_context_kwargs given here are
        merged into the task's own."""
        from browsergym.core.env import BrowserEnv

        from weblica.integrations.browsergym import browser_env_kwargs

        task = self.tasks[gym_id]
        kwargs = browser_env_kwargs(task, self.backend_for(task))
        for merged in ("task_kwargs", "pw_context_kwargs", "pw_chromium_kwargs"):
            kwargs[merged] = {**kwargs[merged], **env_kwargs.pop(merged, {})}
        return BrowserEnv(**kwargs, **env_kwargs)


def register_tasks(tasks: str | Path | Iterable[Task], allow_private: bool = False) -> list[str]:
    """Register every task (a tasks.jsonl, or Task objects) as `browsergym/weblica.<site>.<task>`; returns the
    gym ids, in order. Registering a task set again replaces its ids. Two tasks that would share an id are
    an error."""
    import gymnasium as gym

    listed = load_tasks(tasks) if isinstance(tasks, (str, Path)) else list(tasks)
    by_id: dict[str, Task] = {}
    for task in listed:
        gym_id = f"browsergym/{gym_name(task)}"
        if gym_id in by_id:
            raise ValueError(f"tasks {by_id[gym_id].id!r} and {task.id!r} would both be {gym_id}: give them "
                             "distinct ids")
        by_id[gym_id] = task
    task_set = TaskSet(by_id, allow_private)
    _at_exit(task_set.close)
    for gym_id in by_id:
        gym.registry.pop(gym_id, None)
        gym.register(id=gym_id, entry_point=_EntryPoint(task_set, gym_id), nondeterministic=True)
    return list(by_id)


def _at_exit(close: Any) -> None:
    """Run `close` when the program ends, while thread pools still take work: a backend's stop runs its
    blocking part on one (asyncio.to_thread), and at plain atexit time they refuse new work. Python's
    threading runs these callbacks, latest first, just before it stops the pools (it is how
    concurrent.futures shuts down); where it has no such hook, plain atexit."""
    import concurrent.futures.thread  # noqa: F401  (registers its own exit hook first, so it runs after ours)

    register = getattr(threading, "_register_atexit", None)
    (register or atexit.register)(close)


class _EntryPoint:
    """gymnasium.make's entry point for one registered task (a class, not a lambda: its repr names the task)."""

    def __init__(self, task_set: TaskSet, gym_id: str) -> None:
        self.task_set, self.gym_id = task_set, gym_id

    def __call__(self, **env_kwargs: Any) -> Any:
        return self.task_set.make_env(self.gym_id, **env_kwargs)

    def __repr__(self) -> str:
        return f"weblica task {self.task_set.tasks[self.gym_id].id}"


def agentlab_benchmark(name: str, tasks: str | Path | Iterable[Task], seeds: Iterable[int] = (0,),
                       max_steps: int | None = None, allow_private: bool = False) -> Any:
    """An AgentLab benchmark (browsergym-experiments' `Benchmark`) of the tasks, each played at each seed:
    `agentlab.experiments.study.make_study(benchmark=..., agent_args=...)` runs it. Registers the tasks."""
    from browsergym.experiments.benchmark import Benchmark, HighLevelActionSetArgs
    from browsergym.experiments.loop import EnvArgs

    ids = register_tasks(tasks, allow_private)
    import gymnasium as gym

    steps = {gym_id: max_steps or _task_of(gym, gym_id).max_steps for gym_id in ids}
    env_args = [EnvArgs(task_name=gym_id.removeprefix("browsergym/"), task_seed=seed, max_steps=steps[gym_id],
                        headless=True) for gym_id in ids for seed in seeds]
    return Benchmark(name=name, high_level_action_set_args=HighLevelActionSetArgs(subsets=("chat", "coord")),
                     is_multi_tab=True, supports_parallel_seeds=True, backends=[], env_args_list=env_args)


def _task_of(gym: Any, gym_id: str) -> Task:
    return gym.spec(gym_id).entry_point.task_set.tasks[gym_id]
