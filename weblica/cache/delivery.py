"""Replayed responses reach the page in the order they reached it while recording.

A page's scripts can depend on which of two parallel answers lands first: a loader that batches the
modules asked for before a timer runs (`/load?modules=b,a`), `Promise.race`, "whichever came last
wins" rendering. Live, that order is the servers' latency; a replay that answers each request as
soon as it matched gives it the order the requests happened to reach the proxy in, which changes
from replay to replay, and so do the requests the page makes next.

So each recorded response names its predecessors: the responses of the same recorded run that
completed while it was in flight (recorded `started < F.ended < ended`), beacons the rules stub left
out. A replayed response is held until a response for each predecessor (the same normalized request,
the same occurrence) has been released in its episode, then released after a short gap so the browser
reads them in that order. Responses that were not concurrent in the recording are not held at all.

The other half is the env's: it advances the page's virtual clock only once no request is in flight
(`weblica.env.tabs`), so every answer lands before the timers that would batch on it run, and the
latency a page sees is deterministic in virtual time (zero) however slow the machine is.

A predecessor the replay never asks for (the browse diverged from the recording, or its request
missed) holds a response at most `max_wait_s` real seconds: a divergent replay is slower, never stuck.
"""
from __future__ import annotations

import asyncio
import threading
import time
from collections import Counter, defaultdict
from typing import Callable, Iterable

from weblica.cache.exchange import Exchange

Predecessor = tuple[str, int]   # (normalized key, occurrence of that key in its run, from 0)
MAX_WAIT_S = 1.0                # a predecessor never asked for holds a response no longer than this
GAP_S = 0.005                   # after a predecessor's release: its bytes leave before the next response's
POLL_S = 0.002


class DeliveryOrder:
    """Recorded completion order of one recording's responses, and each episode's releases so far."""

    def __init__(self, exchanges: Iterable[Exchange], key_of: Callable[[Exchange], str],
                 skip: Callable[[Exchange], bool] = lambda ex: False,
                 max_wait_s: float = MAX_WAIT_S, gap_s: float = GAP_S):
        self.max_wait_s = max_wait_s
        self.gap_s = gap_s
        self._lock = threading.Lock()
        self._released: dict[str, Counter] = defaultdict(Counter)
        self._key: dict[int, Predecessor] = {}
        self._before: dict[int, list[Predecessor]] = {}
        runs: dict[int, list[Exchange]] = defaultdict(list)
        for ex in exchanges:
            if ex.id is not None:
                runs[ex.run_id].append(ex)
        for members in runs.values():
            seen: Counter = Counter()
            for ex in sorted(members, key=lambda e: e.seq):
                key = key_of(ex)
                self._key[ex.id] = (key, seen[key])   # type: ignore[index]
                seen[key] += 1
            by_end = sorted((ex for ex in members if ex.ended), key=lambda e: e.ended)
            for i, ex in enumerate(by_end):
                before = []
                for other in reversed(by_end[:i]):
                    if other.ended <= ex.started:
                        break   # done before this one was asked: never a race
                    if not skip(other):
                        before.append(self._key[other.id])   # type: ignore[index]
                if before:
                    self._before[ex.id] = before   # type: ignore[index]

    def predecessors(self, exchange: Exchange) -> list[Predecessor]:
        return list(self._before.get(exchange.id or -1, ()))

    def reset(self, episode: str = "") -> None:
        with self._lock:
            self._released.pop(episode, None)

    def _pending(self, episode: str, before: list[Predecessor]) -> bool:
        with self._lock:
            released = self._released[episode]
            return any(released[key] <= occurrence for key, occurrence in before)

    def release(self, episode: str, exchange: Exchange) -> None:
        """Note that the response recorded as `exchange` was released in `episode`."""
        key = self._key.get(exchange.id or -1)
        if key is not None:
            with self._lock:
                self._released[episode][key[0]] += 1

    async def turn(self, episode: str, exchange: Exchange) -> float:
        """Wait until every recorded predecessor of `exchange` has been released in `episode` (at most
        max_wait_s), then note its own release; returns the seconds held."""
        before = self._before.get(exchange.id or -1)
        held = 0.0
        if before and self._pending(episode, before):
            start = time.monotonic()
            deadline = start + self.max_wait_s
            while self._pending(episode, before) and time.monotonic() < deadline:
                await asyncio.sleep(POLL_S)
            await asyncio.sleep(self.gap_s)
            held = time.monotonic() - start
        self.release(episode, exchange)
        return held
