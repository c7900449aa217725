"""Which recorded exchange answers a request: exact -> normalized by rules -> scored -> miss.

- exact: the canonical key (method, host, path, every query/body field, and the request's key
  context fields) was recorded.
- normalized: equal once the rules' ignored fields are dropped and paths normalized to templates.
- scored: the nearest recorded request under hard constraints (same method, host and path template,
  required fields equal, key context fields equal), by the share of fields that agree, and only at a
  similarity of at least MIN_SIMILARITY. A field whose name says it carries content (`q`, `id`,
  `page`, `sort`, a filter: see `weblica.cache.volatile.semantic_name`) is required unless a rule
  ignores it: a search recorded with one query never answers another query.
- miss: nothing qualifies; the closest recorded request is reported with the fields that differ, so
  inference can learn from it. A miss beats a wrong page.

Key context fields of an endpoint (method, host, path template): `header:range` always, every header
a recorded response's `Vary` names, and every `header:`/`cookie:` field a `require` rule names; an
`ignore` rule takes one out. A Range request is answered from a recorded identical range, else from
a recorded full body (the match carries `byte_range`, and the response becomes a 206), else a miss.

Repeated identical requests get the recorded responses in recorded order (a polled endpoint answers
"pending", then "done"), counted per episode; `reset(episode)` starts an episode over.

What the request implies about the answer is kept (a miss beats a wrong page):

- status class: a request without validators never gets a recorded 304; a conditional request
  (If-None-Match, If-Modified-Since) gets a recorded answer to the same revalidation when there is
  one, else the full response, as a 304 (`not_modified`) when its validator is the one asked (the
  server would say "not modified"); a recorded 304 never answers another validator. Where the
  recorded answers of a normalized key, or the scored tier's candidates, disagree on the status class
  (a 200 in one run, a redirect in another), what decides it is not in the request: a miss.
- media and ranges (`weblica.cache.ranges`): a recorded 206 answers only the exact bytes asked; media
  answers are served only where the recording agrees on the resource's length; a range is cut only from
  a full body the recording holds.
- paths: a path segment or a path parameter (`;ord=`) is never fuzzed by the scored tier; it varies
  only through a rule, which takes cross-run evidence (`templates.py`, `infer.py`).
"""
from __future__ import annotations

import threading
from collections import defaultdict
from dataclasses import dataclass, field, replace
from typing import Any

from weblica.cache.canonical import RequestView, canonical_key
from weblica.cache.exchange import Exchange, header
from weblica.cache.ranges import fits, parse_range, same_length
from weblica.cache.rules import RuleBook
from weblica.cache.volatile import detect, semantic_name

TIERS = ("exact", "normalized", "scored", "stub", "miss")
# the scored tier's floor: below it, the nearest recorded request is too different to stand in for
# the one asked (one field of one differing is 0.25; two fields, one volatile-looking one differing, 0.95)
MIN_SIMILARITY = 0.5
RANGE = "header:range"
# Vary names that never make a key field: bodies are stored decoded, cookies are judged one by one,
# and the replaying browser is whichever one replays (a HAR from another browser still replays)
_VARY_SKIP = frozenset({"accept-encoding", "cookie", "user-agent", "*", ""})


@dataclass
class Match:
    tier: str
    exchange: Exchange | None = None
    score: float = 0.0
    closest: Exchange | None = None
    differing: dict[str, list[Any]] = field(default_factory=dict)
    byte_range: tuple[int, int] | None = None   # serve these bytes of the recorded full body as a 206
    not_modified: bool = False                  # the browser holds this version: answer 304, no body


@dataclass(frozen=True)
class Validators:
    """What a conditional request says it holds: If-None-Match and If-Modified-Since."""

    etag: str = ""
    modified: str = ""

    @classmethod
    def of(cls, headers: list[tuple[str, str]]) -> "Validators":
        return cls(header(headers, "if-none-match").strip(), header(headers, "if-modified-since").strip())

    def __bool__(self) -> bool:
        return bool(self.etag or self.modified)

    def hold(self, ex: Exchange) -> bool:
        """Whether the recorded response is the version these validators name (an ETag decides when
        both sides have one, as a server decides)."""
        etag = header(ex.response_headers, "etag").strip()
        if self.etag and etag:
            return etag in {t.strip() for t in self.etag.split(",")} or self.etag == "*"
        modified = header(ex.response_headers, "last-modified").strip()
        return bool(self.modified and modified and self.modified == modified)


def revalidates(ex: Exchange, asked: Validators | None) -> bool:
    """Whether a recorded exchange answered a revalidation of the version `asked` names (None: any)."""
    recorded = Validators.of(ex.request_headers)
    if not recorded and ex.status != 304:
        return False
    return asked is None or recorded == asked or (ex.status == 304 and asked.hold(ex))


def _status_class(ex: Exchange) -> int:
    return ex.status // 100


def one_status_class(candidates: list[Exchange]) -> bool:
    """Whether recorded answers agree on the status class (a 304 counts with the full answers' class)."""
    return len({_status_class(c) for c in candidates if c.status != 304}) <= 1


def _differing(a: dict[str, list[str]], b: dict[str, list[str]], skip: set[str] = frozenset()) -> dict[str, list[Any]]:
    out = {}
    for name in sorted(set(a) | set(b)):
        if name in skip:
            continue
        va, vb = a.get(name), b.get(name)
        if va != vb:
            out[name] = [va[0] if va and len(va) == 1 else va, vb[0] if vb and len(vb) == 1 else vb]
    return out


def _context_lists(view: RequestView, names: set[str]) -> dict[str, list[str]]:
    values = view.context_dict()
    return {n: [values[n]] for n in names if n in values}


def vary_fields(ex: Exchange) -> set[str]:
    """The request headers a recorded response says it varies on, as `header:` field names."""
    names = {n.strip().lower() for n in header(ex.response_headers, "vary").split(",")}
    return {f"header:{n}" for n in names - _VARY_SKIP}


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
        self._keyed: dict[tuple[str, str, str], set[str]] = defaultdict(lambda: {RANGE})
        for ex in exchanges:  # already in recorded order: run, then seq
            endpoint = self.endpoint(ex.view)
            self._by_endpoint[endpoint].append(ex)
            self._by_host[(ex.view.method, ex.view.host)].append(ex)
            self._keyed[endpoint] |= vary_fields(ex) | self._required_context(ex.view)
        for endpoint, members in self._by_endpoint.items():
            ignored = set().union(*(self._ignored_context(ex.view, self._keyed[endpoint]) for ex in members))
            self._keyed[endpoint] -= ignored - {RANGE}
        for ex in exchanges:
            view = ex.view
            keyed = self._keyed[self.endpoint(view)]
            self._exact[canonical_key(view, context=keyed)].append(ex)
            self._normalized[self.normalized_key(view, keyed)].append(ex)
        self._served: dict[str, dict[Any, int]] = defaultdict(lambda: defaultdict(int))

    # ---- keys -------------------------------------------------------------------------------------

    def template(self, view: RequestView) -> str:
        return self.rules.path_template(view.method, view.host, view.path)

    def endpoint(self, view: RequestView) -> tuple[str, str, str]:
        return (view.method, view.host, self.template(view))

    def ignored(self, view: RequestView) -> set[str]:
        return self.rules.ignored(view.method, view.host, view.path, {n for n, _ in view.fields})

    def _required_context(self, view: RequestView) -> set[str]:
        return self.rules.required(view.method, view.host, view.path, {n for n, _ in view.context})

    def _ignored_context(self, view: RequestView, names: set[str]) -> set[str]:
        return self.rules.ignored(view.method, view.host, view.path, names)

    def keyed_context(self, view: RequestView) -> set[str]:
        """The header and cookie fields that are part of this request's key (see the module doc)."""
        return self._keyed[self.endpoint(view)] if self.endpoint(view) in self._keyed else {RANGE}

    def normalized_key(self, view: RequestView, keyed: set[str] | None = None) -> str:
        keyed = self.keyed_context(view) if keyed is None else keyed
        return canonical_key(view, drop=self.ignored(view), path=self.template(view), context=keyed)

    def required(self, view: RequestView, fields: dict[str, list[str]], ignored: set[str]) -> set[str]:
        """Fields that must be equal for a scored match: the rules' own, and every semantic-looking
        field no rule ignores (seen with one value, it is never to be fuzzed)."""
        named = self.rules.required(view.method, view.host, view.path, fields)
        return (named | {n for n in fields if semantic_name(n)}) - ignored

    # ---- episodes ---------------------------------------------------------------------------------

    def reset(self, episode: str = "") -> None:
        """Forget what an episode was served, so its repeated requests start from the first response."""
        with self._lock:
            self._served.pop(episode, None)

    @staticmethod
    def _answering(candidates: list[Exchange], conditional: bool, validators: Validators | None) -> list[Exchange]:
        """The recorded answers of the status class the request implies (see the module doc)."""
        full = [c for c in candidates if c.status != 304]
        if not conditional:
            # a 304 answers a revalidation; a request without validators (a fresh context has no cache)
            # needs the full response
            return full or (candidates if validators is None else [])
        if validators is None:   # a conditional request whose validators were not given: recorded order
            return candidates
        revalidations = [c for c in candidates if revalidates(c, validators)]
        return revalidations or full

    def _in_order(self, episode: str, tier: str, key: str, candidates: list[Exchange]) -> Exchange:
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

    def match(self, view: RequestView, episode: str = "", conditional: bool = True,
              validators: Validators | None = None) -> Match:
        """The recorded exchange for a request; `conditional` says whether it carries validators
        (If-None-Match, If-Modified-Since), without which a recorded 304 is never the answer, and
        `validators` what they are, when known (see the module doc)."""
        if validators is not None:
            conditional = bool(validators)
        with self._lock:
            found = self._match(view, episode, conditional, validators=validators)
            if found.exchange is not None and validators and found.exchange.status == 200:
                found.not_modified = validators.hold(found.exchange)
            asked = view.context_dict().get(RANGE)
            if found.tier != "miss" or asked is None:
                return found
            # no recorded identical range: cut the bytes out of a recorded full body, else miss
            whole = self._match(replace(view, context=tuple(c for c in view.context if c[0] != RANGE)),
                                episode, conditional=False, full_only=True)
            held = whole.exchange is not None and whole.exchange.response_body_digest is not None
            byte_range = parse_range(asked, whole.exchange.response_body_size) if held and whole.exchange else None
            if whole.exchange is None or byte_range is None:
                return found
            whole.byte_range = byte_range
            return whole

    def _match(self, view: RequestView, episode: str, conditional: bool, full_only: bool = False,
               validators: Validators | None = None) -> Match:
        keyed = self.keyed_context(view)
        # a required header or cookie that no recorded request of this endpoint carried: only the
        # scored tier can say (it compares them one by one), and it will say miss
        unrecorded = self._required_context(view) - keyed
        asked = view.context_dict().get(RANGE)
        if not unrecorded:
            key = canonical_key(view, context=keyed)
            candidates = self._usable(self._exact.get(key), full_only, asked)
            if candidates:
                chosen = self._answering(candidates, conditional, validators)
                if chosen:
                    return Match("exact", self._in_order(episode, "exact", key, chosen), 1.0)
            nkey = self.normalized_key(view, keyed)
            candidates = self._usable(self._normalized.get(nkey), full_only, asked)
            # the fields the rules dropped decide the status class when the recorded answers disagree on it
            if candidates and one_status_class(candidates):
                chosen = self._answering(candidates, conditional, validators)
                if chosen:
                    return Match("normalized", self._in_order(episode, "normalized", nkey, chosen), 1.0)
        return self._scored(view, episode, conditional, keyed | unrecorded, full_only, validators)

    @staticmethod
    def _usable(candidates: list[Exchange] | None, full_only: bool, asked_range: str | None = None
                ) -> list[Exchange] | None:
        """The candidates that can answer at all: full bodies only when a range is to be cut; a partial
        answer only for exactly the bytes asked; media only where the recording agrees on its length."""
        if not candidates:
            return candidates
        if full_only:
            candidates = [c for c in candidates if c.status == 200]
        candidates = [c for c in candidates if fits(asked_range, c)]
        return candidates if same_length(candidates) else []

    def _scored(self, view: RequestView, episode: str, conditional: bool, keyed: set[str],
                full_only: bool = False, validators: Validators | None = None) -> Match:
        fields = view.field_dict()
        ignored = self.ignored(view)
        # a path parameter is part of the path: it varies only by a rule's cross-run evidence
        required = self.required(view, fields, ignored) | {n for n in fields if n.startswith("path:")} - ignored
        context = _context_lists(view, keyed)
        asked_range = view.context_dict().get(RANGE)
        served = self._served[episode]
        best: tuple[float, int, int] | None = None
        best_ex: Exchange | None = None
        qualified: list[Exchange] = []
        nearest: tuple[float, Exchange] | None = None   # under no constraint, for the miss report
        for ex in self._by_endpoint.get(self.endpoint(view), []):
            if (ex.status == 304 and not (conditional and revalidates(ex, validators))) or (
                    full_only and ex.status != 200) or not fits(asked_range, ex):
                continue
            other = ex.view.field_dict()
            other_ignored = self.ignored(ex.view)
            score = _similarity(fields, other, ignored | other_ignored)
            if nearest is None or score > nearest[0]:
                nearest = (score, ex)
            must_equal = required | self.required(ex.view, other, other_ignored)
            if any(fields.get(n) != other.get(n) for n in must_equal):
                continue  # a required field (query, id, page) must never be fuzzed
            if context != _context_lists(ex.view, keyed):
                continue  # nor a key header or cookie (a range, a language, being logged in)
            if score < MIN_SIMILARITY:
                continue
            qualified.append(ex)
            # ties go to the response this episode has been served least, then to recorded order
            rank = (score, -served[("exchange", ex.id)], -(ex.id or 0))
            if best is None or rank > best:
                best, best_ex = rank, ex
        if not (one_status_class(qualified) and same_length(qualified)):
            best_ex = None   # the near requests were answered differently: nothing in this one decides which
        if best_ex is not None and best is not None:
            served[("exchange", best_ex.id)] += 1
            return Match("scored", best_ex, best[0],
                         differing=_differing(fields, best_ex.view.field_dict(), ignored))
        if nearest is not None:
            closest, score = nearest[1], nearest[0]
            differing = _differing(fields, closest.view.field_dict(), ignored)
            differing.update(_differing(context, _context_lists(closest.view, keyed)))
            if closest.view.path != view.path:
                differing["path"] = [view.path, closest.view.path]
            return Match("miss", None, score, closest=closest, differing=differing)
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
    """Share of fields (names and values) the two requests agree on, ignored fields left out. A value
    that differs counts a little when the field is present on both sides, and nearly fully when both
    values look random (a nonce no rule named yet is still a nonce)."""
    names = (set(a) | set(b)) - ignored
    if not names:
        return 1.0
    agree = 0.0
    for name in names:
        va, vb = a.get(name), b.get(name)
        if va == vb:
            agree += 1
        elif va is not None and vb is not None:
            random_both = all(detect(v, name=name) for v in va + vb)
            agree += 0.9 if random_both and not semantic_name(name) else 0.25
    return agree / len(names)


def _path_similarity(a: str, b: str) -> float:
    sa, sb = a.strip("/").split("/"), b.strip("/").split("/")
    same = 0
    for x, y in zip(sa, sb):
        if x != y:
            break
        same += 1
    return same / max(len(sa), len(sb))
