"""Cached sites as environments: tasks with `source.kind == "cache"` run against their recording.

One replay proxy serves every recording of a run (mitmproxy allows one engine per process); the
episode header tells the Replayer which recording answers, and `begin` starts the episode's
repeated-request counters over.
"""
from __future__ import annotations

import asyncio
import os
import threading
from pathlib import Path
from typing import Any, Iterable

from weblica.cache.addons import EpisodeHeader, Replayer, ReplaySource, Stubber
from weblica.cache.matcher import ReplayIndex
from weblica.cache.proxy import ProxyServer
from weblica.cache.rules import RuleBook
from weblica.cache.store import Store
from weblica.env.backend import EPISODE_HEADER, NetworkConfig
from weblica.env.task import Task

DEFAULT_RULES_DIR = "cache_rules"


def default_rules_dirs() -> list[Path]:
    """Project-wide curated rules: $WEBLICA_CACHE_RULES, else ./cache_rules when it exists."""
    env = os.environ.get("WEBLICA_CACHE_RULES")
    if env:
        return [Path(p) for p in env.split(os.pathsep) if p]
    return [Path(DEFAULT_RULES_DIR)] if Path(DEFAULT_RULES_DIR).is_dir() else []


def load_source(recording: str | Path, rules_dirs: Iterable[str | Path] = (), log_misses: bool = True,
                seed: int = 0) -> ReplaySource:
    """Open a recording for replay: its exchanges indexed under the rules of `rules_dirs` and of
    `REC/rules/`; with `log_misses`, a replay run is opened so misses are kept for inference."""
    store = Store.open_dir(recording)
    rules = RuleBook.load(*rules_dirs, Path(recording) / "rules")
    index = ReplayIndex(store.exchanges(run_ids=[r.id for r in store.runs()]), rules)
    run_id = store.new_run("replay", seed=seed) if log_misses else None
    return ReplaySource(store=store, index=index, run_id=run_id)


class CacheBackend:
    """SiteBackend for recordings: a shared replay proxy, one ReplaySource per recording."""

    def __init__(self, recordings: Iterable[str | Path] = (), rules_dirs: Iterable[str | Path] | None = None,
                 log_misses: bool = True):
        self.rules_dirs = list(rules_dirs) if rules_dirs is not None else default_rules_dirs()
        self.log_misses = log_misses
        self.sources: dict[str, ReplaySource] = {}
        self.episodes: dict[str, ReplaySource] = {}
        self._lock = threading.Lock()
        self.replayer = Replayer(self._resolve)
        self.proxy: ProxyServer | None = None
        for recording in recordings:
            self.source(recording)

    def _resolve(self, episode: str) -> ReplaySource | None:
        # runs on the proxy thread
        with self._lock:
            source = self.episodes.get(episode)
            if source is None and not episode and len(self.sources) == 1:
                source = next(iter(self.sources.values()))  # a plain browser pointed at `replay --serve`
            return source

    def source(self, recording: str | Path) -> ReplaySource:
        key = str(Path(recording).resolve())
        with self._lock:
            if key not in self.sources:
                self.sources[key] = load_source(recording, self.rules_dirs, self.log_misses)
            return self.sources[key]

    @property
    def stats(self) -> Any:
        return self.replayer.stats

    async def start(self) -> None:
        if self.proxy is None:
            proxy = ProxyServer([EpisodeHeader(), Stubber(self._resolve), self.replayer])
            await asyncio.to_thread(proxy.start)
            self.proxy = proxy

    async def stop(self) -> None:
        if self.proxy is not None:
            await asyncio.to_thread(self.proxy.stop)
            self.proxy = None
        for source in self.sources.values():
            if source.run_id is not None:
                source.store.finish_run(source.run_id, {"tiers": dict(self.stats.tiers)})
            source.store.close()
        self.sources.clear()

    async def begin(self, task: Task, episode_id: str, seed: int) -> NetworkConfig:
        if not task.source.recording:
            raise ValueError(f"task {task.id}: a cache task needs source.recording (a recording directory)")
        source = self.source(task.source.recording)
        await self.start()
        source.reset(episode_id)
        with self._lock:
            self.episodes[episode_id] = source
        assert self.proxy is not None
        return NetworkConfig(proxy=self.proxy.url, extra_headers={EPISODE_HEADER: episode_id},
                             ignore_https_errors=True, offline_hint="(replay: not recorded)", service_workers=True)

    async def state(self, task: Task, episode_id: str) -> dict[str, Any] | None:
        return None  # a recording has no server-side state; cache tasks use answer and URL checks

    async def end(self, task: Task, episode_id: str) -> None:
        with self._lock:
            source = self.episodes.pop(episode_id, None)
        if source is not None:
            source.reset(episode_id)


def create_backend(tasks: list[Task]) -> CacheBackend:
    """The backend `weblica run` uses for cache tasks (see weblica.env.sources)."""
    return CacheBackend([t.source.recording for t in tasks if t.source.recording])
