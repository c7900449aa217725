"""Rule inference: which request fields are volatile, which are semantic, which endpoints are beacons.

From K >= 2 recorded runs of the same browse (and the misses of replays), requests to one endpoint
(method, host, path template) are compared pairwise, across runs and within a run:

- a field whose value changes while the response stays the same is *volatile* (ignore it);
- a field that alone differs while the response changes is *semantic* (require it; never fuzz it);
- when several fields differ and the response changes, values that look random (epoch times near the
  capture, UUIDs, long hex, random floats, JSONP callbacks) are counted as volatile, the rest as
  semantic, both as weak evidence.

Responses are compared after masking random-looking tokens, so a page that embeds a fresh CSRF token
or request id still counts as "the same response". Beacons (tiny constant answers to requests that
carry fresh random ids every time) become stub rules. No LLM is involved.
"""
from __future__ import annotations

import json
import re
import time
from collections import defaultdict
from dataclasses import dataclass, field
from itertools import combinations
from typing import Any, Iterable

from weblica.cache.exchange import Exchange, header
from weblica.cache.rules import Rule, RuleBook, RuleSet, registrable_domain
from weblica.cache.store import Store

MAX_PAIRS_PER_ENDPOINT = 400
EPOCH_WINDOW_S = 5 * 365 * 86400   # timestamps within five years of the capture count as "now"
BEACON_MAX_BYTES = 64
BEACON_PATH_RE = re.compile(r"collect|beacon|track|pixel|analytics|telemetry|/log\b|/event|ping|metrics|stats",
                            re.IGNORECASE)

_UUID_RE = re.compile(r"^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$")
_HEX_RE = re.compile(r"^[0-9a-fA-F]{8,}$")
_FLOAT_RE = re.compile(r"^0?\.\d{6,}$")
_JSONP_RE = re.compile(r"^jQuery\d+_\d+$")
_TOKEN_RE = re.compile(r"^[A-Za-z0-9_\-]{20,}={0,2}$")
# the same detectors, unanchored, for masking response bodies
_MASK_RE = re.compile(r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}"
                      r"|jQuery\d+_\d+|\b1[5-9]\d{8}(?:\d{3})?(?:\.\d+)?\b|\b0\.\d{6,}\b"
                      r"|\b(?=[0-9a-fA-F]*\d)(?=[0-9a-fA-F]*[a-fA-F])[0-9a-fA-F]{8,}\b")


def detect(value: Any, capture_time: float | None = None) -> str | None:
    """The kind of random or time-based value `value` looks like, or None."""
    if not isinstance(value, str):
        return None
    now = capture_time or time.time()
    if re.fullmatch(r"\d{9,10}(\.\d+)?", value) and abs(float(value) - now) < EPOCH_WINDOW_S:
        return "epoch_s"
    if re.fullmatch(r"\d{12,13}", value) and abs(int(value) / 1000 - now) < EPOCH_WINDOW_S:
        return "epoch_ms"
    if _UUID_RE.match(value):
        return "uuid"
    if _JSONP_RE.match(value):
        return "jsonp_callback"
    if _FLOAT_RE.match(value):
        return "random_float"
    if _HEX_RE.match(value) and re.search(r"\d", value) and (len(value) >= 12 or re.search(r"[a-fA-F]", value)):
        return "hex"
    if _TOKEN_RE.match(value) and re.search(r"\d", value) and re.search(r"[A-Za-z]", value):
        return "token"
    return None


def mask(text: str) -> str:
    return _MASK_RE.sub("<*>", text)


def _mask_json(value: Any, capture_time: float | None) -> Any:
    if isinstance(value, dict):
        return {k: _mask_json(v, capture_time) for k, v in value.items()}
    if isinstance(value, list):
        return [_mask_json(v, capture_time) for v in value]
    if isinstance(value, float) or (isinstance(value, str) and detect(value, capture_time)):
        return "<*>"  # floats in API answers are timestamps and scores far more often than prices
    if isinstance(value, int) and not isinstance(value, bool) and detect(str(value), capture_time):
        return "<*>"
    return value


class ResponseComparer:
    """Says whether two recorded responses are the same content, random tokens aside."""

    def __init__(self, store: Store | None, capture_time: float | None = None):
        self.store = store
        self.capture_time = capture_time
        self._cache: dict[int, str] = {}

    def normalized(self, ex: Exchange) -> str:
        if ex.id is not None and ex.id in self._cache:
            return self._cache[ex.id]
        location = mask(header(ex.response_headers, "location"))
        if not ex.response_body_digest or self.store is None:
            out = f"{ex.response_identity()}|{location}"
        else:
            body = self.store.bodies.get(ex.response_body_digest)
            text = body.decode("utf-8", "replace")
            if "json" in ex.content_type:
                try:
                    text = json.dumps(_mask_json(json.loads(body), self.capture_time), sort_keys=True)
                except ValueError:
                    text = mask(text)
            elif ex.content_type.startswith(("text/", "application/javascript", "application/xml")):
                text = mask(text)
            out = f"{ex.status}|{location}|{text}"
        if ex.id is not None:
            self._cache[ex.id] = out
        return out

    def same(self, a: Exchange, b: Exchange) -> bool:
        if a.response_identity() == b.response_identity():
            return True
        return self.normalized(a) == self.normalized(b)


@dataclass
class FieldEvidence:
    volatile: int = 0
    volatile_weak: int = 0
    semantic: int = 0
    semantic_weak: int = 0
    values: set[str] = field(default_factory=set)
    runs: set[int] = field(default_factory=set)
    detectors: set[str] = field(default_factory=set)

    def add_values(self, values: Iterable[Any], capture_time: float | None) -> None:
        for value in values:
            if value is None:
                continue
            for v in value if isinstance(value, list) else [value]:
                self.values.add(str(v))
                kind = detect(str(v), capture_time)
                if kind:
                    self.detectors.add(kind)

    @property
    def random_looking(self) -> bool:
        return bool(self.detectors) and all(detect(v) for v in self.values if v)

    def evidence(self) -> dict[str, Any]:
        return {"runs": sorted(self.runs), "values": sorted(self.values)[:4],
                "changed_same_response": self.volatile, "changed_other_response": self.semantic,
                "weak": {"volatile": self.volatile_weak, "semantic": self.semantic_weak},
                "detectors": sorted(self.detectors)}


Endpoint = tuple[str, str, str]   # method, host, path template


def path_template(path: str, capture_time: float | None = None) -> str:
    """Random-looking path segments become `{token}` (`/cart/9f3a…/items` -> `/cart/{token}/items`)."""
    return "/".join("{token}" if seg and detect(seg, capture_time) else seg for seg in path.split("/"))


def _template_rule(host: str, template: str) -> Rule:
    pattern = "^" + "/".join(r"[^/]+" if seg == "{token}" else re.escape(seg) for seg in template.split("/")) + "$"
    return Rule(kind="path", host=host, pattern=pattern, replace=template, source="inferred", confidence=0.9,
                note="random-looking path segment")


class Inference:
    """Collects evidence over a recording and turns it into rule sets, one per registrable domain."""

    def __init__(self, store: Store, capture_time: float | None = None):
        self.store = store
        runs = store.runs(("record", "import"))
        self.capture_time = capture_time or (min(r.started for r in runs) if runs else time.time())
        self.exchanges = store.exchanges(run_ids=[r.id for r in runs])
        self.compare = ResponseComparer(store, self.capture_time)
        self.fields: dict[tuple[Endpoint, str], FieldEvidence] = defaultdict(FieldEvidence)
        self.endpoints: dict[Endpoint, list[Exchange]] = defaultdict(list)
        self.templates: set[tuple[str, str]] = set()
        for ex in self.exchanges:
            template = path_template(ex.view.path, self.capture_time)
            if template != ex.view.path:
                self.templates.add((ex.view.host, template))
            self.endpoints[(ex.view.method, ex.view.host, template)].append(ex)

    def collect(self) -> None:
        for endpoint, exchanges in self.endpoints.items():
            for a, b in list(combinations(exchanges, 2))[:MAX_PAIRS_PER_ENDPOINT]:
                self._compare_pair(endpoint, a, b)
        self._collect_misses()

    def _compare_pair(self, endpoint: Endpoint, a: Exchange, b: Exchange) -> None:
        fa, fb = a.view.field_dict(), b.view.field_dict()
        differing = [n for n in set(fa) | set(fb) if fa.get(n) != fb.get(n)]
        if not differing:
            return
        same = self.compare.same(a, b)
        for name in differing:
            ev = self.fields[(endpoint, name)]
            ev.add_values([fa.get(name), fb.get(name)], self.capture_time)
            ev.runs.update({a.run_id, b.run_id})
            looks_random = all(detect(v, self.capture_time) for vs in (fa.get(name), fb.get(name)) if vs for v in vs)
            if same:
                ev.volatile += 1
            elif len(differing) == 1:
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
            endpoint = (closest.view.method, closest.view.host, path_template(closest.view.path, self.capture_time))
            for name, (asked, recorded) in miss.differing.items():
                if name == "path":
                    continue
                ev = self.fields[(endpoint, name)]
                ev.add_values([asked, recorded], self.capture_time)
                ev.runs.add(miss.run_id)
                if asked is not None and recorded is not None and all(
                        detect(str(v), self.capture_time) for v in (asked, recorded)):
                    ev.volatile_weak += 1

    # ---- rules ------------------------------------------------------------------------------------

    def beacons(self) -> dict[Endpoint, Rule]:
        out = {}
        for endpoint, exchanges in self.endpoints.items():
            method, host, template = endpoint
            small = all(ex.response_body_size <= BEACON_MAX_BYTES and ex.status in (200, 202, 204) for ex in exchanges)
            constant = len({ex.response_identity() for ex in exchanges}) == 1
            if not (small and constant):
                continue
            keyword = BEACON_PATH_RE.search(template) is not None
            # a request that carries a fresh random value every single time is tracking, not content
            fresh = len(exchanges) >= 2 and any(
                len({tuple(ex.view.field_dict().get(n, [])) for ex in exchanges}) == len(exchanges)
                and all(detect(v, self.capture_time) for ex in exchanges for v in ex.view.field_dict().get(n, []))
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
                    import base64
                    response["body_b64"] = base64.b64encode(body).decode()
            glob = template.replace("{token}", "*")
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

        for host, template in sorted(self.templates):
            ruleset(host).add(_template_rule(host, template))
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
        random_like = ev.random_looking
        if ev.semantic and not random_like:
            confidence = min(0.99, 0.7 + 0.1 * ev.semantic)
            return Rule(kind="require", field=name, source="inferred", confidence=confidence,
                        evidence=ev.evidence(), note="the response changes with this value", **scope)
        if ev.volatile or ev.volatile_weak or (ev.semantic and random_like):
            total = ev.volatile + ev.volatile_weak + ev.semantic + ev.semantic_weak
            confidence = (ev.volatile + 0.5 * ev.volatile_weak) / total
            confidence = min(0.99, confidence + (0.2 if random_like else 0.0))
            note = "changes while the response stays the same"
            if ev.semantic:
                # the page changed too, but the value is a random token: most likely both are per visit
                confidence, note = min(confidence, 0.6), "random-looking value; the response changed too"
            if ev.semantic_weak and not random_like:
                return Rule(kind="require", field=name, source="inferred", confidence=0.6, evidence=ev.evidence(),
                            note="changed together with other fields and the response", **scope)
            return Rule(kind="ignore", field=name, source="inferred", confidence=round(max(confidence, 0.5), 3),
                        evidence=ev.evidence(), note=note, **scope)
        if ev.semantic_weak:
            return Rule(kind="require", field=name, source="inferred", confidence=0.6, evidence=ev.evidence(),
                        note="changed together with other fields and the response", **scope)
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
