"""Rollouts: play tasks with a policy in a pool of environments and write what happened.

A run directory holds `episodes.jsonl` (one trajectory a line, in task order), `screens/<sha256>.png`
(content-addressed screenshots), `summary.json` and `run.json` (what the run plays). Episodes are appended
to `episodes.jsonl` as they end, so a killed run keeps them and `resume=True` plays only the rest
(weblica/run_log.py); the directory is locked while a run writes it.
"""
from __future__ import annotations

import asyncio
import hashlib
import json
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

from weblica.env.backend import SiteBackend
from weblica.env.browser_env import EnvConfig, WebEnv, episode_id_for
from weblica.env.episode import ENV_FAILURES, StepRecord, Trajectory
from weblica.env.observation import Observation
from weblica.env.pool import EnvPool
from weblica.env.task import Task, episode_task, save_tasks
from weblica.policy.base import Policy
from weblica.progress import progress_bar
from weblica.run_log import CUT_OFF, RunLog, tasks_digest

PolicyFactory = Callable[[], Policy]


def episode_seed(run_seed: int, task: Task, repeat: int = 0) -> int:
    """Each episode's seed derives from the run seed and the task, never from scheduling order."""
    digest = hashlib.sha256(f"{run_seed}\0{task.id}\0{repeat}".encode()).digest()
    return int.from_bytes(digest[:4], "big")


class ScreenshotStore:
    """Writes each distinct screenshot once, named by its sha256."""

    def __init__(self, directory: Path | None) -> None:
        self.directory = directory
        if directory is not None:
            directory.mkdir(parents=True, exist_ok=True)

    def save(self, obs: Observation) -> str:
        sha = obs.screenshot_sha256
        if self.directory is not None and obs.screenshot:
            path = self.directory / f"{sha}.png"
            if not path.exists():
                tmp = path.with_suffix(".tmp")
                tmp.write_bytes(obs.screenshot)
                tmp.replace(path)
        return sha


async def run_episode(env: WebEnv, task: Task, policy: Policy, seed: int,
                      screens: ScreenshotStore | None = None, repeat: int = 0) -> Trajectory:
    """One episode of `policy` on `task`. Environment failures end it with their reason and mark it removed."""
    screens = screens or ScreenshotStore(None)
    task = episode_task(task, seed)  # a task with instances: the policy and the env see this seed's one
    episode_id = episode_id_for(task, seed, repeat)
    traj = Trajectory(task_id=task.id, seed=seed, episode_id=episode_id, start_url=task.start_url,
                      start_screenshot_sha256="")
    try:
        obs = await env.reset(task, seed, episode_id=episode_id)
    except Exception as exc:
        traj.termination_reason, traj.removed, traj.error = "env_error", True, str(exc).splitlines()[0]
        return traj
    traj.start_screenshot_sha256 = screens.save(obs)
    traj.start_tabs = _tabs(obs)
    policy.reset(task, seed)
    reads_page = getattr(policy, "reads_page", False)  # a scripted policy that reads the page's text
    reads_axtree = getattr(policy, "reads_axtree", False)  # a policy shown the accessibility tree
    if reads_axtree:
        obs.axtree = await env.axtree()
        traj.metadata["start_axtree"] = obs.axtree
    while True:
        try:
            if reads_page:
                obs.page = await env.page_snapshot()
            output = await policy.act(obs, task, traj.steps)
        except Exception as exc:  # a policy backend failing (server down) is not the agent's fault
            traj.termination_reason, traj.removed, traj.error = "env_error", True, f"policy failed: {exc}"
            await env.close_episode()
            break
        step_input: Any = output.actions if output.actions is not None else output.text
        obs, reward, terminated, truncated, info = await env.step(step_input, parse_errors=output.parse_errors)
        if reads_axtree and not (terminated or truncated):
            obs.axtree = await env.axtree()
        traj.steps.append(StepRecord(
            step=info["step"], response=output.text,
            # a model policy's actions are already in viewport pixels (empty when its response broke the
            # protocol); only plain text is parsed here
            actions=[a.to_dict() for a in output.actions] if output.actions is not None
            else _parsed_actions(output.text),
            feedback=list(obs.feedback), url=obs.url, screenshot_sha256=screens.save(obs), reward=reward,
            parse_errors=list(info["parse_errors"]), tabs=_tabs(obs), active_tab=obs.active_tab,
            prompt_token_ids=output.prompt_token_ids,
            token_ids=output.token_ids, logprobs=output.logprobs, axtree=obs.axtree))
        if terminated or truncated:
            traj.termination_reason = info["termination_reason"]
            traj.reward = reward
            traj.answer = info.get("answer")
            traj.check_results = info.get("check_results", [])
            traj.success = traj.termination_reason == "done" and reward > 0
            traj.removed = traj.termination_reason in ENV_FAILURES
            traj.error = info.get("error")
            break
    return traj


def _tabs(obs: Observation) -> list[dict[str, Any]]:
    return [{"index": t.index, "url": t.url, "title": t.title} for t in obs.tabs]


def _cut_off(task: Task, run_seed: int, repeat: int) -> Trajectory:
    seed = episode_seed(run_seed, task, repeat)
    return Trajectory(task_id=task.id, seed=seed, episode_id=episode_id_for(task, seed, repeat),
                      start_url=task.start_url, start_screenshot_sha256="", termination_reason="timeout",
                      removed=True, error=CUT_OFF)


def _parsed_actions(text: str) -> list[dict[str, Any]]:
    from weblica.env.actions import parse_tool_calls

    return [a.to_dict() for a in parse_tool_calls(text).actions]


@dataclass
class RunSummary:
    episodes: int
    success_rate: float
    termination_reasons: dict[str, int]
    removed: int

    def to_dict(self) -> dict[str, Any]:
        return {"episodes": self.episodes, "success_rate": self.success_rate,
                "termination_reasons": self.termination_reasons, "removed": self.removed}


def summarize(trajectories: list[Trajectory]) -> RunSummary:
    n = len(trajectories)
    reasons = Counter(t.termination_reason or "unknown" for t in trajectories)
    success = sum(t.success for t in trajectories)
    return RunSummary(n, round(success / n, 6) if n else 0.0, dict(sorted(reasons.items())),
                      sum(t.removed for t in trajectories))


def job_key(task: Task, run_seed: int, repeat: int) -> tuple[str, str]:
    """(task id, episode id) of a run's episode: what its trajectory records, known before it is played."""
    seed = episode_seed(run_seed, task, repeat)
    played = episode_task(task, seed)
    return played.id, episode_id_for(played, seed, repeat)


async def run_tasks(tasks: list[Task], policy_factory: PolicyFactory, out: str | Path | None, *,
                    parallel: int = 1, seed: int = 0, repeats: int = 1,
                    backends: dict[str, SiteBackend] | None = None, config: EnvConfig | None = None,
                    progress: bool = False, completion_threshold: float | None = None,
                    grace_s: float = 30.0, resume: bool = False,
                    identity: dict[str, Any] | None = None) -> tuple[list[Trajectory], RunSummary]:
    """Play every task (`repeats` times each) with a fresh policy per episode; write the run directory.

    Each episode is appended to `out/episodes.jsonl` as it ends; with `resume`, the episodes already
    there are kept and only the others are played (`identity`, e.g. the policy, must match the run's
    as `run.json` names it). With `completion_threshold`, episodes still running `grace_s` seconds after
    that fraction finished are cut off and recorded as removed with termination reason `timeout`."""
    out_dir = Path(out) if out is not None else None
    jobs = [(task, r) for task in tasks for r in range(repeats)]
    if out_dir is None:
        return await _play_jobs(tasks, jobs, {}, None, policy_factory, None, parallel, seed, backends, config,
                                progress, completion_threshold, grace_s)
    run_identity = {"seed": seed, "repeats": repeats, "tasks": tasks_digest(t.to_dict() for t in tasks),
                    **(identity or {})}
    with RunLog(out_dir, run_identity, resume) as log:
        kept = {(t.task_id, t.episode_id): t for t in log.kept}
        trajectories, summary = await _play_jobs(tasks, jobs, kept, log, policy_factory, out_dir, parallel, seed,
                                                 backends, config, progress, completion_threshold, grace_s)
        log.finish(trajectories)
        (out_dir / "summary.json").write_text(json.dumps(summary.to_dict(), indent=2, sort_keys=True) + "\n")
        save_tasks(tasks, out_dir / "tasks.jsonl")  # the viewer and reports read instructions and skills here
    return trajectories, summary


async def _play_jobs(tasks: list[Task], jobs: list[tuple[Task, int]], kept: dict[tuple[str, str], Trajectory],
                     log: RunLog | None, policy_factory: PolicyFactory, out_dir: Path | None, parallel: int,
                     seed: int, backends: dict[str, SiteBackend] | None, config: EnvConfig | None, progress: bool,
                     completion_threshold: float | None, grace_s: float) -> tuple[list[Trajectory], RunSummary]:
    screens = ScreenshotStore(out_dir / "screens" if out_dir else None)
    keys = [job_key(task, seed, repeat) for task, repeat in jobs]
    todo = [i for i, key in enumerate(keys) if key not in kept]

    async def play(env: WebEnv, i: int) -> Trajectory:
        task, repeat = jobs[i]
        return await run_episode(env, task, policy_factory(), episode_seed(seed, task, repeat), screens, repeat)

    def ended(_index: int, traj: Trajectory) -> None:
        if log is not None:
            log.append(traj)
        if bar is not None:
            bar.advance(tid)

    bar = progress_bar(len(jobs)) if progress else None
    tid = None
    results: list[Trajectory | None] = []
    if todo:
        async with EnvPool(parallel, config, backends) as pool:
            kwargs: dict[str, Any] = {"completion_threshold": completion_threshold, "grace_s": grace_s}
            if bar is not None:
                with bar:
                    tid = bar.add_task("episodes", total=len(jobs), completed=len(jobs) - len(todo))
                    results = await pool.map(todo, play, ended, **kwargs)
            else:
                results = await pool.map(todo, play, ended, **kwargs)
    played = dict(zip(todo, results))
    trajectories = []
    for i, ((task, repeat), key) in enumerate(zip(jobs, keys)):
        traj = kept.get(key) if i not in played else played[i]
        trajectories.append(traj if traj is not None else _cut_off(task, seed, repeat))
    return trajectories, summarize(trajectories)


def load_trajectories(run_dir: str | Path) -> list[Trajectory]:
    path = Path(run_dir) / "episodes.jsonl"
    return [Trajectory.from_dict(json.loads(line)) for line in path.read_text().splitlines() if line.strip()]


def run_sync(coro: Any) -> Any:
    return asyncio.run(coro)
