"""Live evaluation: benchmark tasks on the real web, judged by a model, with faults attributed.

The live web fails in ways that are not the agent's doing: sites that do not load, block bots or go
down mid-run. So live mode (1) checks at once that the sites answer at all and stops with the fix when
the machine is offline; (2) plays a site's episodes one at a time until it has loaded once, blocking it after
`block_after` load failures in a row so a dead site does not eat the run; (3) names, per episode, whose
fault an unsuccessful episode was (agent, site, environment, policy backend or judge); only the agent's
count against the abort-excluded figure.
"""
from __future__ import annotations

import asyncio
import json
import socket
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable
from urllib.parse import urlsplit

from weblica.env.browser_env import WebEnv, episode_id_for
from weblica.env.episode import Trajectory
from weblica.env.task import Task
from weblica.scoring.benchmark_judges import ChatProvider, Evidence, Judge, JudgeError
from weblica.eval.runner import finish_report, samples_per_task
from weblica.env.pool import EnvPool
from weblica.rollout import PolicyFactory, ScreenshotStore, episode_seed, run_episode, summarize

FAULTS = ("none", "agent", "site", "environment", "policy_backend", "judge")


class OfflineError(RuntimeError):
    """No benchmark site can be reached: live mode cannot run here."""


def site_of(task: Task) -> str:
    """host:port of a task's start page: the unit a blocklist blocks."""
    parts = urlsplit(task.start_url)
    port = parts.port or (443 if parts.scheme == "https" else 80)
    return f"{(parts.hostname or '').lower()}:{port}"


def _connect(site: str, timeout_s: float) -> str | None:
    host, _, port = site.rpartition(":")
    try:
        with socket.create_connection((host, int(port)), timeout=timeout_s):
            return None
    except OSError as exc:
        return exc.strerror or str(exc) or type(exc).__name__


def probe_sites(sites: list[str], timeout_s: float = 5.0,
                connect: Callable[[str, float], str | None] = _connect) -> dict[str, str | None]:
    """site -> None when a TCP connection opens, else the error. Probed concurrently: offline, DNS fails
    in milliseconds, and online a slow host should not hold up the others."""
    if not sites:
        return {}
    with ThreadPoolExecutor(max_workers=min(16, len(sites))) as pool:
        return dict(zip(sites, pool.map(lambda s: connect(s, timeout_s), sites)))


def offline_message(probes: dict[str, str | None]) -> str:
    examples = "; ".join(f"{site}: {err}" for site, err in list(probes.items())[:3])
    return (f"live mode needs the internet, and none of the {len(probes)} benchmark site(s) answered ({examples}). "
            "This machine looks offline: evaluate on synth or recorded tasks instead "
            "(`weblica eval --tasks TASKS.jsonl`), or record the sites where there is a network "
            "(`weblica record`) and replay them here.")


class HostBlocklist:
    """Blocks a site after `threshold` load failures in a row; a successful load resets its count."""

    def __init__(self, threshold: int = 2) -> None:
        self.threshold = threshold
        self.failures: Counter[str] = Counter()
        self.blocked: dict[str, str] = {}

    def block(self, site: str, reason: str) -> None:
        self.blocked.setdefault(site, reason)

    def record(self, site: str, loaded: bool, error: str | None = None) -> None:
        if loaded:
            self.failures[site] = 0
            return
        self.failures[site] += 1
        if self.failures[site] >= self.threshold:
            self.block(site, f"{self.failures[site]} load failures in a row (last: {error or 'unknown'})")

    def is_blocked(self, site: str) -> bool:
        return site in self.blocked


def load_failed(traj: Trajectory) -> bool:
    """The start page never loaded: reset failed before the first screenshot."""
    return traj.removed and not traj.steps and not traj.start_screenshot_sha256 and not (
        traj.error or "").startswith("policy failed")


def attribute_fault(traj: Trajectory) -> str:
    """Whose fault an episode's outcome is; 'none' for a success."""
    if traj.success:
        return "none"
    if "judge_error" in traj.metadata:
        return "judge"
    if traj.metadata.get("blocked") or load_failed(traj):
        return "site"
    if traj.removed:
        return "policy_backend" if (traj.error or "").startswith("policy failed") else "environment"
    return "agent"  # judged a failure, or format errors / ran out of steps


def _skipped(task: Task, seed: int, repeat: int, site: str, reason: str) -> Trajectory:
    ep_seed = episode_seed(seed, task, repeat)
    return Trajectory(task_id=task.id, seed=ep_seed, episode_id=episode_id_for(task, ep_seed, repeat),
                      start_url=task.start_url, start_screenshot_sha256="", termination_reason="env_error",
                      removed=True, error=f"skipped: site {site} is blocked ({reason})", metadata={"blocked": True})


@dataclass
class LiveConfig:
    benchmark: str
    k: int = 1
    samples: int | None = None
    parallel: int = 4
    seed: int = 0
    block_after: int = 2
    probe_timeout_s: float = 5.0
    allow_private: bool = False   # reach link-local and private addresses (refused by default)


async def play_with_blocklist(tasks: list[Task], policy_factory: PolicyFactory, out: Path, config: LiveConfig,
                              blocklist: HostBlocklist, backends: dict[str, Any] | None = None) -> list[Trajectory]:
    """Every task's n episodes in one env pool, trajectories in task order as `run_tasks` gives them.

    Until a site has loaded once, its episodes run one at a time, so a dead site costs `block_after`
    failed loads rather than a pool's worth; once blocked, its remaining episodes are skipped."""
    n = samples_per_task(config.k, config.samples)
    screens = ScreenshotStore(out / "screens")
    locks: dict[str, asyncio.Lock] = {}
    proven: set[str] = set()

    async def attempt(env: WebEnv, task: Task, repeat: int, site: str) -> Trajectory:
        if blocklist.is_blocked(site):
            return _skipped(task, config.seed, repeat, site, blocklist.blocked[site])
        traj = await run_episode(env, task, policy_factory(), episode_seed(config.seed, task, repeat), screens, repeat)
        loaded = not load_failed(traj)
        blocklist.record(site, loaded, traj.error)
        if loaded:
            proven.add(site)
        return traj

    async def play(env: WebEnv, job: tuple[Task, int]) -> Trajectory:
        task, repeat = job
        site = site_of(task)
        if site not in proven:
            async with locks.setdefault(site, asyncio.Lock()):
                if site not in proven:  # still unproven after the wait: this episode is the next probe
                    return await attempt(env, task, repeat, site)
        return await attempt(env, task, repeat, site)

    jobs = [(task, r) for task in tasks for r in range(n)]
    async with EnvPool(config.parallel, None, backends) as pool:
        results = await pool.map(jobs, play)
    return [r for r in results if r is not None]


async def judge_all(trajectories: list[Trajectory], tasks: list[Task], judge: Judge, screens: Path,
                    parallel: int) -> None:
    """Set each playable episode's success from the judge; a judge failure removes the episode."""
    by_id = {t.id: t for t in tasks}
    limit = asyncio.Semaphore(max(1, parallel))

    async def one(traj: Trajectory) -> None:
        async with limit:
            evidence = Evidence.from_trajectory(traj, by_id[traj.task_id], screens)
            try:
                verdict = await asyncio.to_thread(judge.judge, evidence)
            except JudgeError as exc:
                traj.success, traj.reward, traj.removed = False, 0.0, True
                traj.metadata["judge_error"] = str(exc)
                return
        traj.success, traj.reward = verdict.success, 1.0 if verdict.success else 0.0
        traj.metadata["judge"] = verdict.to_dict()

    await asyncio.gather(*(one(t) for t in trajectories if not t.removed))


async def run_live(tasks: list[Task], policy_factory: PolicyFactory, provider: ChatProvider, out: str | Path,
                   config: LiveConfig, meta: dict[str, Any] | None = None,
                   probe: Callable[..., dict[str, str | None]] = probe_sites,
                   judge_prompts: Path | None = None) -> dict[str, Any]:
    """Play, judge and report a live benchmark run into `out`. Raises OfflineError before starting a
    browser when no site answers."""
    from weblica.env.sources import open_backends

    sites = list(dict.fromkeys(site_of(t) for t in tasks))
    probes = probe(sites, config.probe_timeout_s)
    if all(err is not None for err in probes.values()):
        raise OfflineError(offline_message(probes))
    blocklist = HostBlocklist(config.block_after)
    for site, err in probes.items():
        if err is not None:
            blocklist.block(site, f"unreachable before the run: {err}")
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    async with open_backends(tasks, allow_private=config.allow_private) as backends:
        trajectories = await play_with_blocklist(tasks, policy_factory, out, config, blocklist, backends)
    judge = Judge(provider, judge_prompts) if judge_prompts else Judge(provider)
    await judge_all(trajectories, tasks, judge, out / "screens", config.parallel)
    for traj in trajectories:
        traj.metadata["fault"] = attribute_fault(traj)
    with (out / "episodes.jsonl").open("w", encoding="utf-8") as f:
        for traj in trajectories:
            f.write(json.dumps(traj.to_dict(), sort_keys=True, ensure_ascii=False) + "\n")
    (out / "summary.json").write_text(json.dumps(summarize(trajectories).to_dict(), indent=2, sort_keys=True) + "\n")
    faults = Counter(t.metadata["fault"] for t in trajectories)
    sections = {"faults": {f: faults[f] for f in FAULTS if faults[f]},
                "blocked sites": dict(blocklist.blocked)}
    return finish_report(out, tasks, trajectories, [1, config.k],
                         {**(meta or {}), "benchmark": config.benchmark, "mode": "live", "k": config.k,
                          "n": samples_per_task(config.k, config.samples), "seed": config.seed}, sections)
