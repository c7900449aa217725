"""Path templates from cross-run evidence: `/cart/9f3a…/items` and `/cart/c01d…/items` are one endpoint.

A path segment becomes a template slot only when the recording shows the *same logical request*
(same method, host, other segments and field names) with different values in that segment in
different runs and the *same response* (a session id or cart token in the path). One sighting never
makes a template, a readable slug (`how-to-cook-pasta-in-2019`) never does, and an error, a redirect or
an empty answer proves nothing (every unknown path gets the same 404, every ad id the same redirect or
the same empty 200). Without bodies (a HAR written without content) "the same response" takes the same
size to the byte, not the size band identity allows: two ad calls answered 417 and 419 bytes are two
answers. The slot's pattern keeps the shape of the
values seen (character classes and length), so a hex slot never swallows an article slug.
"""
from __future__ import annotations

import re
from collections import defaultdict
from dataclasses import dataclass
from itertools import islice
from typing import Any, Callable, Iterable

from weblica.cache.exchange import Exchange
from weblica.cache.rules import Rule
from weblica.cache.volatile import looks_slug

SLOT = "{token}"
MAX_VALUES_COMPARED = 8   # per run and slot, when looking for two runs that got the same answer
MAX_PASSES = 3   # slots found per pass; a path with several token segments needs one pass per slot


@dataclass(frozen=True)
class PathTemplate:
    host: str
    method: str
    template: str        # `/cart/{token}/items`
    pattern: str         # full-path regex with each slot's shape
    evidence: tuple[tuple[str, ...], ...] = ()   # values seen in each slot

    def rule(self) -> Rule:
        return Rule(kind="path", host=self.host, method=self.method, pattern=self.pattern, replace=self.template,
                    source="inferred", confidence=0.9,
                    evidence={"values": [sorted(v)[:4] for v in self.evidence]},
                    note="segment value changed across runs, the response did not")


def slot_shape(values: Iterable[str]) -> str:
    """A regex for one slot from the values seen in it: their character classes and lengths."""
    values = list(values)
    text = "".join(values)
    if re.fullmatch(r"\d+", text):
        cls = "0-9"
    elif re.fullmatch(r"[0-9a-f]+", text):
        cls = "0-9a-f"
    elif re.fullmatch(r"[0-9A-F]+", text):
        cls = "0-9A-F"
    else:
        cls = "".join(c for c, probe in (("a-z", "[a-z]"), ("A-Z", "[A-Z]"), ("0-9", r"\d"))
                      if re.search(probe, text))
        cls += "".join(re.escape(c) for c in sorted(set(re.sub(r"[A-Za-z0-9]", "", text))))
    lengths = [len(v) for v in values]
    low, high = min(lengths), max(lengths)
    low, high = max(1, low - low // 4), high + high // 4   # the next run's token may be a little longer
    return f"[{cls}]{{{low},{high}}}"


def _pattern(segments: list[str], shapes: dict[int, str]) -> str:
    return "^" + "/".join(shapes[i] if i in shapes else re.escape(s) for i, s in enumerate(segments)) + "$"


def infer_templates(exchanges: list[Exchange], same: Callable[[Exchange, Exchange], bool]) -> list[PathTemplate]:
    """The path templates the recording gives evidence for (see the module doc)."""
    # current segments of every exchange; slots found so far are written as SLOT
    segments: dict[int, list[str]] = {i: ex.view.path.split("/") for i, ex in enumerate(exchanges)}
    slot_values: dict[tuple[str, str, tuple[str, ...]], dict[int, set[str]]] = defaultdict(lambda: defaultdict(set))
    for _ in range(MAX_PASSES):
        found = False
        groups: dict[tuple[Any, ...], list[int]] = defaultdict(list)
        for i, ex in enumerate(exchanges):
            segs = segments[i]
            names = tuple(sorted({n for n, _ in ex.view.fields}))
            for pos in range(1, len(segs)):
                if segs[pos] in ("", SLOT):
                    continue
                groups[(ex.view.method, ex.view.host, pos, tuple(segs[:pos]), tuple(segs[pos + 1:]), names)].append(i)
        for (method, host, pos, *_), members in groups.items():
            if not _evidence(exchanges, segments, members, pos, same):
                continue
            values = {segments[i][pos] for i in members}
            for i in members:
                old = tuple(segments[i])
                segments[i][pos] = SLOT
                known = slot_values.pop((method, host, old), {})
                entry = slot_values[(method, host, tuple(segments[i]))]
                for k, v in known.items():
                    entry[k] |= v
                entry[pos] |= values
            found = True
        if not found:
            break
    out = []
    for (method, host, segs), slots in sorted(slot_values.items()):
        shapes = {pos: slot_shape(values) for pos, values in slots.items()}
        out.append(PathTemplate(host=host, method=method, template="/".join(segs), pattern=_pattern(list(segs), shapes),
                                evidence=tuple(tuple(sorted(slots[p])) for p in sorted(slots))))
    return out


def _evidence(exchanges: list[Exchange], segments: dict[int, list[str]], members: list[int], pos: int,
              same: Callable[[Exchange, Exchange], bool]) -> bool:
    """Two runs asked this request with different values in `pos` and got the same, non-error answer."""
    by_run: dict[int, dict[str, int]] = defaultdict(dict)
    for i in members:
        by_run[exchanges[i].run_id].setdefault(segments[i][pos], i)
    if len(by_run) < 2:
        return False
    values = {v for firsts in by_run.values() for v in firsts}
    if len(values) < 2 or any(looks_slug(v) for v in values):
        return False
    runs = sorted(by_run)
    for r, s in zip(runs, runs[1:]):   # neighbouring runs: every run is compared, a bounded number of times
        for va, ia in islice(by_run[r].items(), MAX_VALUES_COMPARED):
            for vb, ib in islice(by_run[s].items(), MAX_VALUES_COMPARED):
                a, b = exchanges[ia], exchanges[ib]
                if va != vb and _telling(a) and _telling(b) and same(a, b) and (
                        a.response_body_digest or a.response_body_size == b.response_body_size):
                    return True
    return False


def _telling(ex: Exchange) -> bool:
    """An answer that can show two paths are one endpoint: content (a 2xx with a body), not an error,
    a redirect or an empty answer, which any path may get."""
    return 200 <= ex.status < 300 and ex.status != 204 and ex.response_body_size > 0


class TemplateBook:
    """Applies inferred templates to paths (the same substitution the rules do on replay)."""

    def __init__(self, templates: list[PathTemplate]):
        self.templates = [(t.method, t.host, re.compile(t.pattern), t.template) for t in templates]

    def template(self, method: str, host: str, path: str) -> str:
        for t_method, t_host, pattern, template in self.templates:
            if t_method == method and t_host == host and pattern.match(path):
                return template
        return path
