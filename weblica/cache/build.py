"""Agent-driven cache building, as Weblica builds its cache: live tasks in, replayable cache tasks out.

For each live task:

1. the policy plays it K times through the recording proxy (run k: episode seed `seed + k + 1`), each
   episode a recorded run with its screenshots; the actions of the first solving episode become the
   recording's `actions.json`;
2. with `crawl_depth` D, same-site links and GET form targets visible on the recorded pages are
   opened through the recorder too, level by level up to D (one recorded run per level), so that
   exploration stays inside the cache (see `crawl.py`); each with the session (cookies, storage) the
   episode that links it left, so a logged-in episode's pages are crawled logged in (`crawl_session`),
   and never a link or form that would log out, delete or otherwise act;
3. rules are inferred and tried on the recorded runs themselves (`rulecheck.py`: rules never hurt),
   written to `REC/rules/`, which every replay of the recording reads;
4. with the network cut (the replay proxy never dials out) the policy plays the task again at a seed
   no recorded run used, then the recorded actions are replayed and their screens compared;
5. the task is kept when the policy solves it under the cache (its checks, else the judge's verdict
   when a judge is configured, as in every recorded episode), its answer checks then given the
   recorded pages' other values of the gold's shape as confusers (`confusers.py`); otherwise it is dropped
   with the reason: `recording failed`, `website failure` (the start page never opened or answered
   5xx), `not solved live` (no recorded episode solved it: the policy, not the cache), `essential
   request missed` (the cached replay missed requests and failed), `unsolvable under cache` (all served,
   still not solved).

This module builds one task (`build_task`); `weblica.pipelines.cache_build` builds many, in worker
processes or on Ray actors, resumably, and writes `OUT/tasks.jsonl` and `OUT/report.json`.

Each recording keeps its rows in its own SQLite file, or, with `store_url` and `store_bodies`, in a
shared database (any SQLAlchemy URL) under the name `<store_prefix>/<task>`, bodies in a shared
directory, the recording directory holding a `store.json` pointer to them.
"""
from __future__ import annotations

import asyncio
import hashlib
import re
import shutil
from collections import Counter
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any, Awaitable, Callable

from weblica.env.task import Task, TaskSource

REASONS = ("recording failed", "website failure", "not solved live", "essential request missed",
           "unsolvable under cache")
REPLAY_SEED_OFFSET = 100     # the cached replay's episode seed: seed + 100, which no recorded run uses


@dataclass
class BuildOptions:
    policy: str
    runs: int = 2
    crawl_depth: int = 0
    resolve: tuple[str, ...] = ()
    seed: int = 0
    max_crawl_pages: int = 30    # per task and level: a crawl is coverage, not a mirror of the site
    crawl_session: bool = True   # the crawl carries each episode's session (cookies, storage) as it was left
    judge: str | None = None     # openai:URL#MODEL or anthropic:MODEL: decides tasks that have no checks
    allow_private: bool = False  # the browse may reach private and link-local addresses (as `record --allow-private`)
    store_url: str | None = None     # a shared database (SQLAlchemy URL) for every recording's rows
    store_bodies: str | None = None  # the body directory every worker reaches, with store_url
    store_prefix: str = ""           # this build's recordings are named <store_prefix>/<task> there


def build_prefix(out: str | Path) -> str:
    """The name this build's recordings get in a shared database: two builds never share one."""
    resolved = str(Path(out).resolve())
    return f"{Path(resolved).name[:40]}-{hashlib.sha256(resolved.encode()).hexdigest()[:8]}"


@dataclass
class EpisodeRecord:
    run_id: int
    seed: int
    success: bool
    termination_reason: str | None
    steps: int
    error: str | None = None
    answer: str | None = None


@dataclass
class Recorded:
    """What recording a task's episodes produced."""

    recording: str
    episodes: list[EpisodeRecord] = field(default_factory=list)
    exchanges: int = 0
    failures: list[str] = field(default_factory=list)     # the recorder could not write an exchange
    crawled: list[dict[str, Any]] = field(default_factory=list)
    refused: list[str] = field(default_factory=list)      # upstreams the navigation policy kept the browse from
    start_status: int | None = None                        # the start page's HTTP status, first run

    @property
    def solving(self) -> EpisodeRecord | None:
        return next((e for e in self.episodes if e.success), None)

    def to_dict(self) -> dict[str, Any]:
        return {"recording": self.recording, "episodes": [asdict(e) for e in self.episodes],
                "exchanges": self.exchanges, "failures": self.failures[:10], "crawled": self.crawled,
                "refused": self.refused[:10], "start_status": self.start_status}


def task_slug(task_id: str) -> str:
    """A directory name for a task id: readable, and unique even when two ids differ only in odd characters."""
    readable = re.sub(r"[^A-Za-z0-9._-]+", "-", task_id).strip("-.")[:60] or "task"
    return f"{readable}-{hashlib.sha256(task_id.encode()).hexdigest()[:8]}"


# ---- solved? ----------------------------------------------------------------------------------------

Judged = Callable[[Task, Any, Path], Awaitable[bool]]


def make_solved(judge_spec: str | None) -> Judged:
    """Whether an episode solved its task: its checks; for a task without checks, the judge's verdict on
    the episode (answer, steps, screenshots) when one is configured, else unsolved."""
    judge = None
    if judge_spec:
        from weblica.scoring.judge import make_judge

        judge = make_judge(judge_spec)

    async def solved(task: Task, traj: Any, shots: Path) -> bool:
        if task.checks or judge is None:
            return bool(traj.success)
        if traj.termination_reason != "done":
            return False
        shas = [traj.start_screenshot_sha256] + [s.screenshot_sha256 for s in traj.steps]
        screenshots = [(shots / f"{sha}.png").read_bytes() for sha in shas if (shots / f"{sha}.png").exists()]
        try:
            verdict = await judge(task, traj.answer, traj.steps, screenshots)
        except Exception as exc:   # a judge that cannot answer decides nothing: unsure is unsolved
            traj.error = f"judge failed: {exc}"
            return False
        traj.metadata["judge"] = verdict.verdict
        return verdict.verdict == "success"

    return solved


# ---- record -----------------------------------------------------------------------------------------

async def record_policy(task: Task, policy_factory: Callable[[], Any], out: str | Path, runs: int = 2,
                        resolve: tuple[str, ...] | list[str] = (), seed: int = 0, crawl_depth: int = 0,
                        max_crawl_pages: int = 30, solved: Judged | None = None,
                        allow_private: bool = False, crawl_session: bool = True, progress: bool = False) -> Recorded:
    """Record `runs` episodes of the policy on `task` (live, through the recording proxy) into `out`.
    The browse may reach what `weblica record` lets it reach (`recording_policy`): private and link-local
    addresses other than the start URL's server and the --resolve targets only with `allow_private`.
    With `progress`, a bar of the episodes on stderr."""
    from weblica.cache.addons import EpisodeHeader, HostMapper, Recorder, parse_resolve
    from weblica.cache.crawl import crawl
    from weblica.cache.egress import EgressGuard
    from weblica.cache.record import recording_policy
    from weblica.cache.play import PROXY_SOURCE, ProxyBackend, make_env
    from weblica.cache.proxy import ProxyServer
    from weblica.cache.session import SessionHost
    from weblica.cache.store import Store, save_actions
    from weblica.progress import OptionalBar
    from weblica.rollout import ScreenshotStore, run_episode

    out = Path(out)
    mapping = parse_resolve(list(resolve))  # a bad --resolve fails before anything is written
    host_mapper = HostMapper(mapping)
    policy = recording_policy(task.start_url, mapping, allow_private)
    policy.check(task.start_url)
    egress = EgressGuard(policy)
    store = Store.open_dir(out, create=True)
    recorder = Recorder(store, run_id=0)
    result = Recorded(str(out))
    live_task = replace(task, source=TaskSource(kind=PROXY_SOURCE))
    solving_actions: list[dict[str, Any]] | None = None
    host = SessionHost()   # keeps the session each episode leaves, for the crawl
    sessions: dict[int, dict[str, Any] | None] = {}
    try:
        with ProxyServer([EpisodeHeader(), host_mapper, egress, recorder]) as proxy, \
                OptionalBar(runs, f"record: {runs} episode(s) of the policy", progress) as bar:
            env = make_env({PROXY_SOURCE: ProxyBackend(proxy.url, policy)}, host)
            try:
                for k in range(runs):
                    episode_seed = seed + k + 1
                    run_id = store.new_run("record", seed=episode_seed, start_url=task.start_url,
                                           info={"task": task.id, "policy_episode": k, "resolve": list(resolve)},
                                           in_progress=True)
                    recorder.begin_run(run_id)
                    shots = out / "screens" / f".by-sha-{run_id}"
                    host.left = None
                    traj = await run_episode(env, live_task, policy_factory(), episode_seed, ScreenshotStore(shots))
                    await env.close_episode()   # ended already unless the policy failed; its session is read here
                    sessions[run_id] = host.left
                    traj.success = await (solved or make_solved(None))(task, traj, shots)
                    _save_episode_screens(out, run_id, shots, traj)
                    episode = EpisodeRecord(run_id, episode_seed, traj.success, traj.termination_reason,
                                            len(traj.steps), traj.error, traj.answer)
                    result.episodes.append(episode)
                    actions = [a for step in traj.steps for a in step.actions if a.get("name") != "done"]
                    if solving_actions is None and (traj.success or k == runs - 1):
                        solving_actions = actions
                    store.finish_run(run_id, {"task": task.id, "success": traj.success,
                                              "termination_reason": traj.termination_reason,
                                              "steps": len(traj.steps), "error": traj.error})
                    bar.advance(f"record: episode {k + 1}/{runs} {'solved' if traj.success else 'unsolved'}")
                if crawl_depth > 0:
                    result.crawled = await crawl(env, store, recorder, task.start_url, crawl_depth,
                                                 seed + runs + 1, max_crawl_pages,
                                                 sessions if crawl_session else None, host)
            finally:
                await env.close()
                await host.close()
        save_actions(out, solving_actions or [], task.start_url)
        first = store.runs(("record",))[0].id if store.runs(("record",)) else None
        starts = [ex for ex in store.exchanges(run_ids=[first] if first else [], with_request_bodies=False)
                  if ex.method == "GET"]
        result.start_status = starts[0].status if starts else None
        result.exchanges = store.count_exchanges()
        result.failures = list(recorder.failures)
        result.refused = list(egress.refused)
        return result
    finally:
        store.close()


def _save_episode_screens(out: Path, run_id: int, shots: Path, traj: Any) -> None:
    """The episode's screenshots as REC/screens/run-N/step-K.png (what `replay --check` compares with):
    the start page, then one after each step that did something."""
    from weblica.cache.store import screens_dir

    target = screens_dir(out, run_id)
    target.mkdir(parents=True, exist_ok=True)
    # a step that only says done changes nothing on screen, and actions.json leaves it out too
    shas = [traj.start_screenshot_sha256] + [s.screenshot_sha256 for s in traj.steps
                                             if any(a.get("name") != "done" for a in s.actions)]
    for i, sha in enumerate(shas):
        path = shots / f"{sha}.png"
        if sha and path.exists():
            shutil.copyfile(path, target / f"step-{i}.png")
    shutil.rmtree(shots, ignore_errors=True)


# ---- infer and verify -------------------------------------------------------------------------------

def infer_into(recording: str | Path) -> dict[str, Any]:
    """Infer rules (each tried on the recorded runs) and write them to REC/rules/."""
    from weblica.cache.infer import summarize
    from weblica.cache.rulecheck import infer_checked_rules, summarize_decisions
    from weblica.cache.rules import save_rules
    from weblica.cache.store import Store

    with Store.open_dir(recording, readonly=True) as store:
        rulesets, decisions = infer_checked_rules(store)
    rules_dir = Path(recording) / "rules"
    shutil.rmtree(rules_dir, ignore_errors=True)
    for ruleset in rulesets.values():
        if ruleset.rules:
            save_rules(ruleset, rules_dir)
    return {**summarize(rulesets), "never_hurt": summarize_decisions(decisions)}


async def verify_cached(task: Task, recording: str | Path, policy_factory: Callable[[], Any], seed: int,
                        reference_run: int | None, solved: Judged | None = None) -> dict[str, Any]:
    """Play the policy on the cached task with the network cut, then the recorded actions."""
    from weblica.cache.backend import CacheBackend
    from weblica.cache.play import load_screens, make_env, play
    from weblica.cache.store import load_actions, screens_dir
    from weblica.rollout import ScreenshotStore, run_episode

    recording = Path(recording)
    cache_task = cache_task_for(task, recording)
    backend = CacheBackend([recording], rules_dirs=[])   # REC/rules is always read
    env = make_env({"cache": backend})
    try:
        shots = recording / "screens" / f".cached-{seed}"
        traj = await run_episode(env, cache_task, policy_factory(), seed, ScreenshotStore(shots))
        traj.success = await (solved or make_solved(None))(task, traj, shots)
        shutil.rmtree(shots, ignore_errors=True)
        stats = backend.stats
        policy = {"success": traj.success, "judge": traj.metadata.get("judge"), "termination_reason": traj.termination_reason, "answer": traj.answer,
                  "error": traj.error, "tiers": dict(stats.tiers), "misses": list(stats.misses[:20]),
                  "outbound_connections": stats.outbound_attempts}
        before = Counter(stats.tiers)
        misses_before = len(stats.misses)
        _, actions = load_actions(recording)
        played = await play(env, task.start_url, actions, seed, source=cache_task.source)
        tiers = Counter(stats.tiers)
        tiers.subtract(before)
        reference = load_screens(screens_dir(recording, reference_run)) if reference_run is not None else []
        identical = sum(1 for a, b in zip(reference, played.screenshots) if a == b)
        recorded = {"tiers": dict(tiers), "misses": list(stats.misses[misses_before:misses_before + 20]),
                    "screens_identical": f"{identical}/{max(len(reference), len(played.screenshots))}",
                    "outbound_connections": stats.outbound_attempts - policy["outbound_connections"]}
    finally:
        await env.close()
        await backend.stop()
    return {"policy": policy, "recorded_actions": recorded}


def cache_task_for(task: Task, recording: str | Path) -> Task:
    """The live task, answered from its recording (`source.kind = cache`)."""
    metadata = {**task.metadata, "live_source": task.source.to_dict()}
    return replace(task, source=TaskSource(kind="cache", site=task.source.site,
                                           recording=str(Path(recording).resolve())), metadata=metadata)


# ---- one task ---------------------------------------------------------------------------------------

async def build_task(task: Task, options: BuildOptions, out: Path) -> dict[str, Any]:
    """Record, infer, verify one task; the outcome says kept or dropped and why."""
    from weblica.cache.confusers import with_page_confusers
    from weblica.policy.factory import make_policy_factory

    recording = out / "recordings" / task_slug(task.id)
    shutil.rmtree(recording, ignore_errors=True)    # a half-built recording from an interrupted run
    if options.store_url:
        from weblica.cache.store import SharedStore, Store, write_store_pointer

        write_store_pointer(recording, SharedStore(options.store_url, options.store_bodies or "",
                                                   f"{options.store_prefix}/{task_slug(task.id)}"))
        with Store.open_dir(recording, create=True) as store:
            store.clear()       # the rows an interrupted build of this task left in the shared database
    factory = make_policy_factory(options.policy, options.seed)
    solved = make_solved(options.judge)
    outcome: dict[str, Any] = {"id": task.id, "start_url": task.start_url, "recording": str(recording)}
    try:
        recorded = await record_policy(task, factory, recording, options.runs, options.resolve, options.seed,
                                       options.crawl_depth, options.max_crawl_pages, solved,
                                       allow_private=options.allow_private, crawl_session=options.crawl_session)
    except Exception as exc:   # the proxy, the store or the browser failed while recording
        return {**outcome, "kept": False, "reason": "recording failed", "detail": f"{type(exc).__name__}: {exc}"}
    outcome["record"] = recorded.to_dict()
    if options.crawl_depth > 0:
        from weblica.cache.crawl import summarize

        outcome["crawl"] = summarize(recorded.crawled)
    if recorded.failures:
        return {**outcome, "kept": False, "reason": "recording failed", "detail": recorded.failures[0]}
    opened = [e for e in recorded.episodes if e.termination_reason != "env_error"]
    if not opened or recorded.start_status is None or recorded.start_status >= 500:
        if recorded.start_status is not None and recorded.start_status >= 500:
            detail = f"the start page answered {recorded.start_status}"
        elif not opened:
            detail = recorded.episodes[0].error if recorded.episodes else "no episode ran"
        else:
            detail = "the site answered nothing (no exchange was recorded)"
        return {**outcome, "kept": False, "reason": "website failure", "detail": detail}
    solving = recorded.solving
    if solving is None:
        detail = "no recorded episode solved the task" + (
            "" if task.checks or options.judge else " (the task has no checks and no --judge was given)")
        return {**outcome, "kept": False, "reason": "not solved live", "detail": detail}
    outcome["rules"] = infer_into(recording)
    verified = await verify_cached(task, recording, factory, options.seed + REPLAY_SEED_OFFSET, solving.run_id,
                                   solved)
    outcome["replay"] = verified
    if verified["policy"]["success"]:   # kept: its answer checks get the recorded pages' other values
        kept, outcome["confusers"] = with_page_confusers(cache_task_for(task, recording), recording, solving.run_id,
                                                         [solving.answer or "", verified["policy"].get("answer") or ""])
        return {**outcome, "kept": True, "task": kept.to_dict()}
    misses = verified["policy"]["misses"]
    if misses:
        return {**outcome, "kept": False, "reason": "essential request missed",
                "detail": f"{len(misses)} request(s) missed, e.g. {misses[0]['method']} {misses[0]['url']}"}
    return {**outcome, "kept": False, "reason": "unsolvable under cache",
            "detail": f"every request served, but the episode ended {verified['policy']['termination_reason']} "
                      f"unsolved (answer {verified['policy']['answer']!r})"}


def build_in_worker(task_data: dict[str, Any], options: dict[str, Any], out: str) -> dict[str, Any]:
    """One task in a worker process (a process of its own: one mitmproxy per process), from and to JSON-able
    values (`weblica.pipelines.cache_build` runs many)."""
    options["resolve"] = tuple(options.get("resolve") or ())
    return asyncio.run(build_task(Task.from_dict(task_data), BuildOptions(**options), Path(out)))


def failed_worker_result(task: Task, exc: BaseException) -> dict[str, Any]:
    """The outcome of a task whose build worker died under it."""
    return {"id": task.id, "start_url": task.start_url, "kept": False, "reason": "recording failed",
            "detail": f"the build worker failed: {type(exc).__name__}: {str(exc)[:500]}"}
