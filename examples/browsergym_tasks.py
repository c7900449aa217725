"""weblica tasks in BrowserGym (and AgentLab): register a task set, play each task's oracle in BrowserGym's
own BrowserEnv, and build the AgentLab benchmark of the set.

    pip install --no-deps browsergym-core==0.14.3 browsergym-experiments==0.14.3   # see .ci/setup
    python examples/browsergym_tasks.py [TASKS_JSONL]

With no argument it plays the shipped synth site sites/forms-travel-2a9523da, served by weblica's site
server, which the registration starts and stops by itself. An agent of your own replaces `cheat`: it
answers BrowserGym's observations (screenshot, AXTree, goal) with BrowserGym actions.
"""
from __future__ import annotations

import sys
from pathlib import Path

import gymnasium as gym

from weblica.integrations.browsergym import stop_playwright
from weblica.integrations.browsergym_tasks import agentlab_benchmark, register_tasks

ROOT = Path(__file__).resolve().parents[1]


def main(tasks_file: Path) -> None:
    ids = register_tasks(tasks_file)
    print(f"registered {len(ids)} BrowserGym tasks, e.g. {ids[0]}")
    for gym_id in ids:
        env = gym.make(gym_id, headless=True)
        try:
            obs, info = env.reset(seed=0)
            env.unwrapped.task.cheat(env.unwrapped.page, env.unwrapped.chat.messages)  # the task's oracle
            obs, reward, terminated, truncated, info = env.step("noop()")
            print(f"{gym_id}: reward {reward}")
        finally:
            env.close()
    try:
        benchmark = agentlab_benchmark("weblica-example", tasks_file)
    except ImportError:
        print("browsergym-experiments is not installed: no AgentLab benchmark")
    else:
        print(f"AgentLab benchmark {benchmark.name}: {len(benchmark.env_args_list)} episodes; run it with "
              "agentlab.experiments.study.make_study(benchmark=benchmark, agent_args=[...])")
    stop_playwright()


if __name__ == "__main__":
    main(Path(sys.argv[1]) if len(sys.argv) > 1 else ROOT / "sites" / "forms-travel-2a9523da" / "tasks.jsonl")
