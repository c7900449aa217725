"""Validate a recording by replaying it with the network cut, and serve it to any browser."""
from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any, Iterable

from weblica.cache.backend import CacheBackend
from weblica.cache.dates import iso_time
from weblica.cache.matcher import ReplayIndex
from weblica.cache.play import load_screens, make_env, play, save_screens
from weblica.cache.rules import RuleBook
from weblica.cache.session import SessionHost
from weblica.cache.store import StoreError, load_actions, screens_dir
from weblica.env.task import TaskSource


async def check(recording: str | Path, actions: list[dict[str, Any]] | None = None, seed: int = 0,
                rules_dirs: Iterable[str | Path] | None = None, start_url: str | None = None,
                compare: bool = True, clock: float | None = None) -> dict[str, Any]:
    """Replay the recorded browse (or `actions`) offline and report tiers, screenshot identity and
    outbound connections. Screens are compared with the first recorded run's.

    With `compare`, the same browse is replayed a second time under no rules at all, and both are
    reported side by side (`with_rules`, `without_rules`): inferred rules must never serve less or
    match fewer screens than none. Where no rule applies, the second replay is skipped (identical).
    With `clock` (epoch seconds) the browser's virtual clock starts there and the recorded dates are
    shifted to it (`weblica.cache.dates`)."""
    recording = Path(recording)
    summary, rules = await _replay_once(recording, actions, seed, rules_dirs, start_url, no_rules=False, clock=clock)
    summary["with_rules"] = _side(summary, rules)
    if clock is not None:
        summary["clock"] = iso_time(clock)
    if not compare or summary.get("store_errors"):
        return summary
    if rules == 0:
        summary["without_rules"] = dict(summary["with_rules"])
        return summary
    without, _ = await _replay_once(recording, actions, seed, rules_dirs, start_url, no_rules=True, clock=clock)
    summary["without_rules"] = _side(without, 0)
    return summary


def _side(summary: dict[str, Any], rules: int) -> dict[str, Any]:
    tiers = summary["tiers"]
    return {"rules": rules, "requests": summary["requests"], "served": summary["requests"] - tiers.get("miss", 0),
            "misses": tiers.get("miss", 0), "tiers": dict(tiers), "screens_identical": summary["screens_identical"],
            "outbound_connections": summary["outbound_connections"], "error": summary.get("error")}


async def _replay_once(recording: Path, actions: list[dict[str, Any]] | None, seed: int,
                       rules_dirs: Iterable[str | Path] | None, start_url: str | None,
                       no_rules: bool, clock: float | None = None) -> tuple[dict[str, Any], int]:
    # the replay without rules logs no misses: inference learns from the replays the rules shape
    backend = CacheBackend([recording], rules_dirs, log_misses=not no_rules, clock=clock)  # the store opens first
    source = backend.source(recording)
    rules = len(source.index.rules)
    if no_rules:
        source.index = ReplayIndex(source.index.exchanges, RuleBook())
    try:
        recorded_url, recorded_actions = load_actions(recording)
        runs = source.store.runs()
        # an imported recording has no actions.json: its first run's first request is the start page
        start_url = start_url or recorded_url or (runs[0].start_url if runs else None)
        if not start_url:
            raise StoreError(f"{recording} names no start URL (no actions.json, no runs); pass --url")
    except StoreError:
        await backend.stop()  # the replay run it opened is closed, the store released
        raise
    actions = recorded_actions if actions is None else actions
    reference_run = next((r for r in source.store.runs(("record",)) if screens_dir(recording, r.id).is_dir()), None)
    host = SessionHost(epoch_ms=round(clock * 1000)) if clock is not None else None
    env = make_env({"cache": backend}, host)
    try:
        result = await play(env, start_url, actions, seed, source=TaskSource(kind="cache", recording=str(recording)))
    finally:
        await env.close()
        if host is not None:
            await host.close()
        replay_run = source.run_id
        stats = backend.stats
        await backend.stop()
    if replay_run is not None:
        save_screens(recording / "screens" / f"replay-{replay_run}", result.screenshots)
    reference = load_screens(screens_dir(recording, reference_run.id)) if reference_run else []
    # without recorded screens (an imported HAR or WARC) there is nothing to compare: 0/0
    total = max(len(reference), len(result.screenshots)) if reference else 0
    identical = sum(1 for a, b in zip(reference, result.screenshots) if a == b)
    return {
        "recording": str(recording),
        "requests": stats.requests,
        "tiers": dict(stats.tiers),
        "screens_identical": f"{identical}/{total}",
        "outbound_connections": stats.outbound_attempts,
        "misses": stats.misses[:50],
        "reference_run": reference_run.id if reference_run else None,
        "replay_run": replay_run,
        # a recording that could not answer (a body missing or corrupt) says so before anything else
        "error": stats.errors[0] if stats.errors else result.error,
        "store_errors": stats.errors[:50],
    }, rules


async def serve(recording: str | Path, port: int = 0, rules_dirs: Iterable[str | Path] | None = None,
                ready: Any = None, clock: float | None = None) -> None:
    """Run the replay proxy for `recording` until cancelled; `ready(url)` is called once it listens. With
    `clock`, the dates a plain browser is served are shifted to it."""
    backend = CacheBackend([recording], rules_dirs, clock=clock, port=port)
    if clock is not None:
        for source in backend.sources.values():
            source.clocks[""] = clock   # a plain browser's requests carry no episode
    try:
        await backend.start()
        assert backend.proxy is not None
        if ready is not None:
            ready(backend.proxy.url)
        while True:
            await asyncio.sleep(3600)
    finally:
        await backend.stop()
