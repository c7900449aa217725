"""Cached sites as environments: tasks with `source.kind == "cache"` run against their recording.

One replay proxy serves every recording of a run (mitmproxy allows one engine per process); the
episode header tells the Replayer which recording answers, and `begin` starts the episode's
repeated-request counters over. An episode's dates move to the replay's virtual clock when the backend
is given one (`weblica replay --shift-dates`) or the task asks (`source.dates: "shift"`: the env's
clock); see `weblica.cache.dates`.
"""
from __future__ import annotations

import asyncio
import os
import threading
from pathlib import Path
from typing import Any, Iterable

from weblica.cache.addons import EpisodeHeader, OrphanEpisode, Replayer, ReplaySource, Stubber, origin_of
from weblica.cache.dates import VIRTUAL_CLOCK
from weblica.cache.matcher import ReplayIndex
from weblica.cache.proxy import ProxyServer
from weblica.cache.rules import RuleBook
from weblica.cache.store import Store
from weblica.env.backend import EPISODE_HEADER, NetworkConfig
from weblica.env.task import Task

DEFAULT_RULES_DIR = "cache_rules"
DATES = (None, "shift")   # a cache task's `source.dates`
ORPHAN = "orphan:"   # episodes made up for requests that came without the episode header


def _origins(source: ReplaySource) -> set[tuple[str, str, int]]:
    """The (scheme, host, port) of every recorded request of a recording, computed once."""
    if source.origins is None:
        source.origins = {origin_of(ex.url) for ex in source.index.exchanges}
    return source.origins


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
                 log_misses: bool = True, clock: float | None = None, port: int = 0):
        self.rules_dirs = list(rules_dirs) if rules_dirs is not None else default_rules_dirs()
        self.log_misses = log_misses
        self.clock = clock   # every episode's dates move to this virtual clock (epoch seconds); None: as the task says
        self.port = port     # the replay proxy's port (0: any free one)
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

    def _orphan_episode(self, origin: tuple[str, str, int]) -> str | None:
        """The episode a request without the episode header belongs to (a service worker's script fetch
        carries none), found by its origin: when exactly one recording of the live episodes holds that
        origin, that recording's episode (its own orphan episode when several episodes replay it, so no
        episode's repeated-request counters move); else None, and the request misses."""
        with self._lock:
            live = {id(source): source for source in self.episodes.values()}
            holding = [s for s in live.values() if origin in _origins(s)]
            if len(holding) != 1:
                return None
            source = holding[0]
            users = [e for e, s in self.episodes.items() if s is source and not e.startswith(ORPHAN)]
            if len(users) == 1:
                return users[0]
            orphan = f"{ORPHAN}{id(source)}"
            self.episodes[orphan] = source
            return orphan

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
            proxy = ProxyServer([EpisodeHeader(), OrphanEpisode(self._orphan_episode), Stubber(self._resolve),
                                 self.replayer], port=self.port)
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
        if task.source.dates not in DATES:
            raise ValueError(f"task {task.id}: source.dates {task.source.dates!r} is unknown; give \"shift\" "
                             "(dates move to the replay's clock) or leave it out")
        source = self.source(task.source.recording)
        await self.start()
        source.reset(episode_id)
        with self._lock:
            self.episodes[episode_id] = source
            clock = self.clock if self.clock is not None else VIRTUAL_CLOCK if task.source.dates == "shift" else None
            if clock is not None:
                source.clocks[episode_id] = clock
        assert self.proxy is not None
        return NetworkConfig(proxy=self.proxy.url, extra_headers={EPISODE_HEADER: episode_id},
                             ignore_https_errors=True, offline_hint="(replay: not recorded)", service_workers=True)

    async def state(self, task: Task, episode_id: str) -> dict[str, Any] | None:
        return None  # a recording has no server-side state; cache tasks use answer and URL checks

    async def end(self, task: Task, episode_id: str) -> None:
        with self._lock:
            source = self.episodes.pop(episode_id, None)
            if source is not None and not any(s is source for e, s in self.episodes.items() if not e.startswith(ORPHAN)):
                self.episodes.pop(f"{ORPHAN}{id(source)}", None)   # its last episode ended
        if source is not None:
            source.reset(episode_id)
            source.clocks.pop(episode_id, None)


def create_backend(tasks: list[Task]) -> CacheBackend:
    """The backend `weblica run` uses for cache tasks (see weblica.env.sources)."""
    return CacheBackend([t.source.recording for t in tasks if t.source.recording])
