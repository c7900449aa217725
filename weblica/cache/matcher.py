"""Which recorded exchange answers a request: exact -> normalized by rules -> scored -> miss.

- exact: the canonical key (method, host, path, every query/body field) was recorded.
- normalized: equal once the rules' ignored fields are dropped and paths normalized to templates.
- scored: the nearest recorded request under hard constraints (same method, host and path template,
  required fields equal), by the share of fields that agree.
- miss: nothing qualifies; the closest request of the same method and host is reported with the
  fields that differ, so inference can learn from it.

Repeated identical requests get the recorded responses in recorded order (a polled endpoint answers
"pending", then "done"), counted per episode; `reset(episode)` starts an episode over.
"""
from __future__ import annotations

import threading
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any

from weblica.cache.canonical import RequestView, canonical_key
from weblica.cache.exchange import Exchange
from weblica.cache.rules import RuleBook

TIERS = ("exact", "normalized", "scored", "stub", "miss")


@dataclass
class Match:
    tier: str
    exchange: Exchange | None = None
    score: float = 0.0
    closest: Exchange | None = None
    differing: dict[str, list[Any]] = field(default_factory=dict)


def _differing(a: dict[str, list[str]], b: dict[str, list[str]], skip: set[str] = frozenset()) -> dict[str, list[Any]]:
    out = {}
    for name in sorted(set(a) | set(b)):
        if name in skip:
            continue
        va, vb = a.get(name), b.get(name)
        if va != vb:
            out[name] = [va[0] if va and len(va) == 1 else va, vb[0] if vb and len(vb) == 1 else vb]
    return out


class ReplayIndex:
    """The exchanges of one recording, indexed for the four matching tiers. Thread-safe."""

    def __init__(self, exchanges: list[Exchange], rules: RuleBook | None = None):
        self.rules = rules or RuleBook()
        self.exchanges = exchanges
        self._lock = threading.Lock()
        self._exact: dict[str, list[Exchange]] = defaultdict(list)
        self._normalized: dict[str, list[Exchange]] = defaultdict(list)
        self._by_endpoint: dict[tuple[str, str, str], list[Exchange]] = defaultdict(list)
        self._by_host: dict[tuple[str, str], list[Exchange]] = defaultdict(list)
        for ex in exchanges:  # already in recorded order: run, then seq
            view = ex.view
            self._exact[view.key].append(ex)
            self._normalized[self.normalized_key(view)].append(ex)
            self._by_endpoint[self.endpoint(view)].append(ex)
            self._by_host[(view.method, view.host)].append(ex)
        self._served: dict[str, dict[Any, int]] = defaultdict(lambda: defaultdict(int))

    # ---- keys -------------------------------------------------------------------------------------

    def template(self, view: RequestView) -> str:
        return self.rules.path_template(view.method, view.host, view.path)

    def endpoint(self, view: RequestView) -> tuple[str, str, str]:
        return (view.method, view.host, self.template(view))

    def ignored(self, view: RequestView) -> set[str]:
        return self.rules.ignored(view.method, view.host, view.path, {n for n, _ in view.fields})

    def normalized_key(self, view: RequestView) -> str:
        return canonical_key(view, drop=self.ignored(view), path=self.template(view))

    # ---- episodes ---------------------------------------------------------------------------------

    def reset(self, episode: str = "") -> None:
        """Forget what an episode was served, so its repeated requests start from the first response."""
        with self._lock:
            self._served.pop(episode, None)

    def _in_order(self, episode: str, tier: str, key: str, candidates: list[Exchange],
                  conditional: bool = True) -> Exchange:
        if not conditional:
            # a 304 answers a revalidation; a request without validators (a fresh context has no cache)
            # needs the full response
            full = [c for c in candidates if c.status != 304]
            candidates = full or candidates
        # the responses of the first run that holds this key, in its order; past its end, the last again
        first_run = candidates[0].run_id
        same_run = [c for c in candidates if c.run_id == first_run]
        served = self._served[episode]
        n = served[(tier, key)]
        served[(tier, key)] = n + 1
        chosen = same_run[min(n, len(same_run) - 1)]
        served[("exchange", chosen.id)] += 1
        return chosen

    # ---- matching ---------------------------------------------------------------------------------

    def match(self, view: RequestView, episode: str = "", conditional: bool = True) -> Match:
        """The recorded exchange for a request; `conditional` says whether it carries validators
        (If-None-Match, If-Modified-Since), without which a recorded 304 is never the answer."""
        with self._lock:
            candidates = self._exact.get(view.key)
            if candidates:
                return Match("exact", self._in_order(episode, "exact", view.key, candidates, conditional), 1.0)
            nkey = self.normalized_key(view)
            candidates = self._normalized.get(nkey)
            if candidates:
                return Match("normalized", self._in_order(episode, "normalized", nkey, candidates, conditional), 1.0)
            return self._scored(view, episode, conditional)

    def _scored(self, view: RequestView, episode: str, conditional: bool = True) -> Match:
        fields = view.field_dict()
        ignored = self.ignored(view)
        required = self.rules.required(view.method, view.host, view.path, fields)
        served = self._served[episode]
        best: tuple[float, int, int] | None = None
        best_ex: Exchange | None = None
        for ex in self._by_endpoint.get(self.endpoint(view), []):
            if ex.status == 304 and not conditional:
                continue
            other = ex.view.field_dict()
            other_required = self.rules.required(ex.view.method, ex.view.host, ex.view.path, other)
            if any(fields.get(n) != other.get(n) for n in required | other_required):
                continue  # a required field (query, id, page) must never be fuzzed
            score = _similarity(fields, other, ignored | self.ignored(ex.view))
            # ties go to the response this episode has been served least, then to recorded order
            rank = (score, -served[("exchange", ex.id)], -(ex.id or 0))
            if best is None or rank > best:
                best, best_ex = rank, ex
        if best_ex is not None and best is not None:
            served[("exchange", best_ex.id)] += 1
            return Match("scored", best_ex, best[0],
                         differing=_differing(fields, best_ex.view.field_dict(), ignored))
        closest, score = self.closest(view)
        differing = {}
        if closest is not None:
            differing = _differing(fields, closest.view.field_dict())
            if closest.view.path != view.path:
                differing["path"] = [view.path, closest.view.path]
        return Match("miss", None, score, closest=closest, differing=differing)

    def closest(self, view: RequestView) -> tuple[Exchange | None, float]:
        """The most similar recorded request of the same method and host (for miss reports)."""
        fields = view.field_dict()
        best, best_ex = -1.0, None
        for ex in self._by_host.get((view.method, view.host), []):
            score = _similarity(fields, ex.view.field_dict(), set()) + 2 * _path_similarity(view.path, ex.view.path)
            if score > best:
                best, best_ex = score, ex
        return best_ex, max(best, 0.0) / 3


def _similarity(a: dict[str, list[str]], b: dict[str, list[str]], ignored: set[str]) -> float:
    """Share of fields (names and values) the two requests agree on, ignored fields left out."""
    names = (set(a) | set(b)) - ignored
    if not names:
        return 1.0
    agree = 0.0
    for name in names:
        if a.get(name) == b.get(name):
            agree += 1
        elif name in a and name in b:
            agree += 0.25  # same field, other value: closer than a field the other lacks
    return agree / len(names)


def _path_similarity(a: str, b: str) -> float:
    sa, sb = a.strip("/").split("/"), b.strip("/").split("/")
    same = 0
    for x, y in zip(sa, sb):
        if x != y:
            break
        same += 1
    return same / max(len(sa), len(sb))
