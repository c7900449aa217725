"""Rule inference: which request fields are volatile, which are semantic, which endpoints are beacons.

From K >= 2 recorded runs of the same browse (and the misses of replays), requests to one endpoint
(method, host, path template; templates only from cross-run evidence, see `templates.py`) are
compared in pairs, across runs and within a run:

- a field whose value changes while the response stays the same is *volatile* (ignore it);
- a random-looking field whose values are fresh in every run (no value in two runs: a cache-buster
  on a rotating ad) is volatile too, even when the response changes with it: a replay can never send a
  recorded value, so the right rule is "ignore it and serve the recorded responses in order";
- a field is *semantic* (require it; never fuzz it) when it alone differs while the response
  changes *and* the same value gave the same response (or its name says it carries content: `q`,
  `id`, `page`...); without that second piece of evidence no require rule is written, and the
  matcher's floor and name defaults decide;
- when several fields differ and the response changes, values that look random count as volatile,
  the rest as semantic, both as weak evidence.

Headers named by a response's `Vary`, `Accept-Language` and every cookie are compared the same way
(`header:accept-language`, `cookie:sid`): one that changes the response becomes a `require` rule, and
the matcher then keys on it (logged in is not logged out). Responses are compared by
`identity.ResponseComparer`. Pairs are sampled per endpoint in O(n log n): the k-th request of each
run against the k-th of the next run, neighbours within a run, and for each field the requests that
agree on everything else sorted by that field's value. Beacons (tiny constant answers to requests that
carry fresh random ids every time) become stub rules. No LLM is involved.
"""
from __future__ import annotations

import base64
import hashlib
import re
import time
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any, Iterable, Iterator

from weblica.cache.canonical import is_context
from weblica.cache.exchange import Exchange, header
from weblica.cache.identity import ResponseComparer
from weblica.cache.matcher import vary_fields
from weblica.cache.rules import Rule, RuleBook, RuleSet, registrable_domain
from weblica.cache.store import Store
from weblica.cache.templates import TemplateBook, infer_templates
from weblica.cache.volatile import detect, mask, semantic_name  # noqa: F401  (mask: re-exported)

MAX_PAIRS_PER_ENDPOINT = 20000   # a safety bound; sampling stays spread over every run below it
BEACON_MAX_BYTES = 64
BEACON_PATH_RE = re.compile(r"collect|beacon|track|pixel|analytics|telemetry|/log\b|/event|ping|metrics|stats",
                            re.IGNORECASE)
CONTEXT_HEADERS = ("header:accept-language",)
INTRINSICALLY_VOLATILE = frozenset({"epoch_s", "epoch_ms", "random_float", "jsonp_callback", "client_id",
                                    "cache_buster", "visit_id"})   # compared on every endpoint; others only when Vary names them


@dataclass
class FieldEvidence:
    volatile: int = 0
    volatile_weak: int = 0
    semantic: int = 0
    semantic_weak: int = 0
    consistent: int = 0          # the same value, the same response, in two runs
    values: set[str] = field(default_factory=set)
    runs: set[int] = field(default_factory=set)
    detectors: set[str] = field(default_factory=set)
    fresh: bool = False          # each run its own values, none seen in two runs

    def add_values(self, name: str, values: Iterable[Any], capture_time: float | None) -> None:
        for value in values:
            if value is None:
                continue
            for v in value if isinstance(value, list) else [value]:
                self.values.add(str(v))
                kind = detect(str(v), capture_time, name)
                if kind:
                    self.detectors.add(kind)

    def random_looking(self, name: str) -> bool:
        return bool(self.detectors) and all(detect(v, name=name) for v in self.values if v)

    def evidence(self) -> dict[str, Any]:
        return {"runs": sorted(self.runs), "values": sorted(self.values)[:4],
                "changed_same_response": self.volatile, "changed_other_response": self.semantic,
                "same_value_same_response": self.consistent, "fresh_every_run": self.fresh,
                "weak": {"volatile": self.volatile_weak, "semantic": self.semantic_weak},
                "detectors": sorted(self.detectors)}


Endpoint = tuple[str, str, str]   # method, host, path template
Fields = dict[str, list[str]]


def sample_pairs(exchanges: list[Exchange], fields: list[Fields], names: Iterable[str],
                 limit: int = MAX_PAIRS_PER_ENDPOINT) -> Iterator[tuple[int, int]]:
    """Index pairs worth comparing, each once, O(n log n) per field and never all n² of them."""
    seen: set[tuple[int, int]] = set()

    def emit(i: int, j: int) -> Iterator[tuple[int, int]]:
        pair = (min(i, j), max(i, j))
        if i != j and pair not in seen and len(seen) < limit:
            seen.add(pair)
            yield pair

    by_run: dict[int, list[int]] = defaultdict(list)
    for i, ex in enumerate(exchanges):
        by_run[ex.run_id].append(i)
    runs = sorted(by_run)
    for r, s in zip(runs, runs[1:]):             # the k-th request of a run against the next run's k-th
        for i, j in zip(by_run[r], by_run[s]):
            yield from emit(i, j)
    for r in runs:                               # neighbours within a run
        for i, j in zip(by_run[r], by_run[r][1:]):
            yield from emit(i, j)
    # requests that agree on all but `name`, sorted by its value: "rest" signatures as XOR of per-field
    # hashes, so leaving one field out costs O(1)
    hashes = [{n: _digest(n, v) for n, v in f.items() if not is_context(n)} for f in fields]
    totals = [_xor(h.values()) for h in hashes]
    for name in sorted(names):
        if len({repr(f.get(name)) for f in fields}) < 2:
            continue  # one value everywhere: no pair differs in it
        rest = [totals[i] ^ hashes[i].get(name, 0) for i in range(len(exchanges))]
        order = sorted(range(len(exchanges)), key=lambda i: (rest[i], repr(fields[i].get(name)), exchanges[i].run_id))
        for i, j in zip(order, order[1:]):
            if rest[i] == rest[j]:
                yield from emit(i, j)


def _digest(name: str, values: list[str]) -> int:
    # not hash(): string hashes change per process, and inference must be the same every time
    return int.from_bytes(hashlib.blake2b(repr((name, values)).encode(), digest_size=8).digest(), "big")


def _xor(values: Iterable[int]) -> int:
    out = 0
    for v in values:
        out ^= v
    return out


class Inference:
    """Collects evidence over a recording and turns it into rule sets, one per registrable domain."""

    def __init__(self, store: Store, capture_time: float | None = None):
        self.store = store
        runs, self.cut_runs = store.finished_runs()  # a run cut by a kill is no evidence
        self.capture_time = capture_time or (min(r.started for r in runs) if runs else time.time())
        self.exchanges = store.exchanges(run_ids=[r.id for r in runs])
        self.compare = ResponseComparer(store, self.capture_time)
        self.fields: dict[tuple[Endpoint, str], FieldEvidence] = defaultdict(FieldEvidence)
        self.endpoints: dict[Endpoint, list[Exchange]] = defaultdict(list)
        self.templates = infer_templates(self.exchanges, self.compare.same)
        self.template_book = TemplateBook(self.templates)
        for ex in self.exchanges:
            self.endpoints[self.endpoint_of(ex)].append(ex)

    def endpoint_of(self, ex: Exchange) -> Endpoint:
        view = ex.view
        return (view.method, view.host, self.template_book.template(view.method, view.host, view.path))

    def _fields(self, exchanges: list[Exchange]) -> list[Fields]:
        """Each request's fields plus its candidate context fields (cookies, Vary-named headers)."""
        keyed = set(CONTEXT_HEADERS).union(*(vary_fields(ex) for ex in exchanges))
        out = []
        for ex in exchanges:
            fields = ex.view.field_dict()
            fields.update({n: [v] for n, v in ex.view.context if n in keyed or n.startswith("cookie:")})
            out.append(fields)
        return out

    def collect(self) -> None:
        for endpoint, exchanges in self.endpoints.items():
            fields = self._fields(exchanges)
            names = set().union(*fields)
            for i, j in sample_pairs(exchanges, fields, names):
                self._compare_pair(endpoint, exchanges[i], exchanges[j], fields[i], fields[j])
            self._freshness(endpoint, exchanges, fields, names)
        self._collect_misses()

    def _freshness(self, endpoint: Endpoint, exchanges: list[Exchange], fields: list[Fields], names: set[str]) -> None:
        for name in names:
            ev = self.fields.get((endpoint, name))
            if ev is None:
                continue
            runs_of: dict[str, set[int]] = defaultdict(set)
            for ex, f in zip(exchanges, fields):
                for value in f.get(name, []):
                    runs_of[value].add(ex.run_id)
            # fresh in every run: each run (each seed) has its own values, and no value is in two runs
            runs = set().union(*runs_of.values()) if runs_of else set()
            ev.fresh = len(runs) >= 2 and all(len(r) == 1 for r in runs_of.values())

    def _compare_pair(self, endpoint: Endpoint, a: Exchange, b: Exchange, fa: Fields, fb: Fields) -> None:
        differing = [n for n in set(fa) | set(fb) if fa.get(n) != fb.get(n)]
        same = self.compare.same(a, b)
        if same and a.run_id != b.run_id:   # reproducible: another run sent this value and got this answer
            for name in set(fa) & set(fb):
                if fa[name] == fb[name]:
                    self.fields[(endpoint, name)].consistent += 1
        if not differing:
            return
        plain = [n for n in differing if not is_context(n)]
        for name in differing:
            ev = self.fields[(endpoint, name)]
            ev.add_values(name, [fa.get(name), fb.get(name)], self.capture_time)
            ev.runs.update({a.run_id, b.run_id})
            looks_random = all(detect(v, self.capture_time, name) for vs in (fa.get(name), fb.get(name)) if vs
                               for v in vs)
            if is_context(name):
                # a cookie or header is judged only where the URL and body agree: sessions differ in
                # every run, and that alone must not look like it decides the page
                if plain:
                    continue
                alone = len(differing) == 1
            else:
                alone = len(plain) == 1
            if same:
                ev.volatile += 1
            elif alone:
                ev.semantic += 1
            elif looks_random:
                ev.volatile_weak += 1
            else:
                ev.semantic_weak += 1

    def _collect_misses(self) -> None:
        by_id = {ex.id: ex for ex in self.exchanges}
        for miss in self.store.misses():
            closest = by_id.get(miss.closest_exchange_id)
            if closest is None:
                continue
            endpoint = self.endpoint_of(closest)
            for name, (asked, recorded) in miss.differing.items():
                if name == "path":
                    continue
                ev = self.fields[(endpoint, name)]
                ev.add_values(name, [asked, recorded], self.capture_time)
                ev.runs.add(miss.run_id)
                if asked is not None and recorded is not None and all(
                        detect(str(v), self.capture_time, name) for v in (asked, recorded)):
                    ev.volatile_weak += 1

    # ---- rules ------------------------------------------------------------------------------------

    def beacons(self) -> dict[Endpoint, Rule]:
        out = {}
        for endpoint, exchanges in self.endpoints.items():
            method, host, template = endpoint
            small = all(ex.response_body_size <= BEACON_MAX_BYTES and ex.status in (200, 202, 204) for ex in exchanges)
            constant = all(self.compare.same(exchanges[0], ex) for ex in exchanges[1:])
            if not (small and constant):
                continue
            keyword = BEACON_PATH_RE.search(template) is not None
            # a request that carries a fresh random value every single time is tracking, not content
            fresh = len(exchanges) >= 2 and any(
                len({tuple(ex.view.field_dict().get(n, [])) for ex in exchanges}) == len(exchanges)
                and all(detect(v, self.capture_time, n) for ex in exchanges for v in ex.view.field_dict().get(n, []))
                for n in exchanges[0].view.field_dict())
            # without a telling path, only answers that carry no content (204, empty, a pixel) count:
            # a small script or JSON behind a cache-buster is content, not tracking
            contentless = all(ex.status == 204 or ex.response_body_size == 0 or ex.content_type.startswith("image/")
                              for ex in exchanges)
            if not (keyword or (fresh and contentless)):
                continue
            sample = exchanges[0]
            body = self.store.bodies.get(sample.response_body_digest)
            response: dict[str, Any] = {"status": sample.status}
            if sample.content_type:
                response["headers"] = {"Content-Type": header(sample.response_headers, "content-type")}
            if body:
                try:
                    response["body"] = body.decode("utf-8")
                except UnicodeDecodeError:
                    response["body_b64"] = base64.b64encode(body).decode()
            glob = re.sub(r"\{token\}", "*", template)
            out[endpoint] = Rule(kind="stub", method=method, host=host, path=glob, response=response,
                                 source="inferred", confidence=0.95 if keyword and fresh else 0.8,
                                 evidence={"requests": len(exchanges), "path_keyword": keyword,
                                           "fresh_random_ids": fresh},
                                 note="analytics beacon")
        return out

    def rulesets(self) -> dict[str, RuleSet]:
        self.collect()
        stubs = self.beacons()
        rulesets: dict[str, RuleSet] = {}

        def ruleset(host: str) -> RuleSet:
            domain = registrable_domain(host)
            return rulesets.setdefault(domain, RuleSet(domain))

        for template in self.templates:
            ruleset(template.host).add(template.rule())
        for endpoint, rule in stubs.items():
            ruleset(endpoint[1]).add(rule)
        for (endpoint, name), ev in sorted(self.fields.items()):
            if endpoint in stubs:
                continue
            rule = self._classify(endpoint, name, ev)
            if rule is not None:
                ruleset(endpoint[1]).add(rule)
        return rulesets

    def _classify(self, endpoint: Endpoint, name: str, ev: FieldEvidence) -> Rule | None:
        method, host, template = endpoint
        scope = {"method": method, "host": host, "path": template.replace("{token}", "*")}
        random_like = ev.random_looking(name)
        semantic = ev.semantic or ev.semantic_weak

        def require(confidence: float, note: str) -> Rule:
            return Rule(kind="require", field=name, source="inferred", confidence=round(min(confidence, 0.99), 3),
                        evidence=ev.evidence(), note=note, **scope)

        def ignore(confidence: float, note: str) -> Rule:
            return Rule(kind="ignore", field=name, source="inferred", confidence=round(max(confidence, 0.5), 3),
                        evidence=ev.evidence(), note=note, **scope)

        if is_context(name):
            # a header or cookie is keyed only when it changes the response and the same value gave the
            # same response in two runs (a per-visit session id never repeats, however random it looks)
            if semantic and ev.consistent:
                return require(0.7 + 0.1 * ev.semantic, "the response changes with this header or cookie")
            if name.startswith("header:") and ev.volatile and not semantic:
                return ignore(0.9, "named by Vary, but the response stays the same")
            return None
        if name.startswith("path:") and not ev.volatile:
            return None   # a path parameter (`;ord=`) is part of the path: ignored on same-response evidence only
        # a semantic name (`start`, `id`) is fresh-volatile only with values that are times or random by
        # nature: a hex or base36 value under such a name may be an id the next replay asks for again
        time_or_random = random_like and ev.detectors <= INTRINSICALLY_VOLATILE
        # under a name that says nothing, a long number fresh in every run is a cache-buster too
        long_numbers = bool(ev.values) and all(re.fullmatch(r"\d{8,}", v) for v in ev.values)
        if semantic and ev.fresh and not ev.consistent and (
                time_or_random if semantic_name(name) else random_like or long_numbers):
            return ignore(0.85 if random_like else 0.7,
                          "fresh in every run, never repeated across runs: ignored, and the recorded "
                          "responses are served in order")
        if ev.semantic and not random_like and (ev.consistent or semantic_name(name)):
            return require(0.7 + 0.1 * ev.semantic, "the response changes with this value" +
                           ("" if ev.consistent else " (a semantic name; one value was never seen twice)"))
        if ev.volatile or ev.volatile_weak or (ev.semantic and random_like):
            if semantic_name(name) and semantic:
                return require(0.6, "a semantic name that changed with the response")
            total = ev.volatile + ev.volatile_weak + ev.semantic + ev.semantic_weak
            confidence = (ev.volatile + 0.5 * ev.volatile_weak) / max(total, 1)
            confidence = min(0.99, confidence + (0.2 if random_like else 0.0))
            note = "changes while the response stays the same"
            if ev.semantic:
                # the page changed too, but the value is a random token: most likely both are per visit
                confidence, note = min(confidence, 0.6), "random-looking value; the response changed too"
            if ev.semantic_weak and not random_like and ev.consistent:
                return require(0.6, "changed together with other fields and the response")
            return ignore(confidence, note)
        if ev.semantic_weak and not random_like and (ev.consistent or semantic_name(name)):
            return require(0.6, "changed together with other fields and the response")
        return None


def infer_rules(store: Store, capture_time: float | None = None) -> dict[str, RuleSet]:
    """Rule sets inferred from a recording, by registrable domain."""
    return Inference(store, capture_time).rulesets()


def merge_with_existing(inferred: RuleSet, existing: RuleSet | None) -> RuleSet:
    """Keep the hand-written rules of an existing file; inferred rules are replaced by the new ones."""
    if existing is None:
        return inferred
    manual = [r for r in existing.rules if r.source != "inferred"]
    return RuleSet(inferred.domain, manual + inferred.rules)


def summarize(rulesets: dict[str, RuleSet]) -> dict[str, int]:
    counts = {kind: 0 for kind in ("ignore", "require", "path", "stub")}
    for ruleset in rulesets.values():
        for rule in ruleset.rules:
            counts[rule.kind] += 1
    return counts


def rulebook(rulesets: dict[str, RuleSet]) -> RuleBook:
    return RuleBook(rulesets.values())
