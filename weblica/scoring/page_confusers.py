"""Confusers for tasks without a data model (cache, imported): the values of the gold's shape that the
recorded pages show, stored on the check with `confusers_from="page"`.

Two harvests: `page_confusers` reads a page that shows the gold (the other numbers, dates or name-like
lines near it), `same_frame_confusers` reads every recorded page for the value in the frame the gold is
shown in ("By Anna Berg" on one article, "By Olle Lind" on another: the same field of another entity).
`check_confusers` puts them together for one `answer_match` check, never keeping the gold or a value the
instruction states.
"""
from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any, Callable, Sequence

import regex

from weblica.scoring import numbers as A
from weblica.scoring import dates as D
from weblica.scoring import text as T
from weblica.scoring.answer import Question
from weblica.scoring.assertion import shape
from weblica.scoring.registry import kind_of

if TYPE_CHECKING:
    from weblica.scoring.model import Check

MAX_FRAME_TOKENS = 4    # a frame is a label ("By", "Price:", "Author"), not the rest of a sentence
LINE_SPLIT = r"[\n\t|•·]+"


def _quantity(gold: Any) -> tuple[float, str | None] | None:
    if isinstance(gold, (int, float)) and not isinstance(gold, bool):
        return float(gold), None
    return A.quantity(str(gold))


def _lines(norm: str) -> list[tuple[int, str]]:
    """(start, line) of the page's lines (table cells and list entries are lines of their own)."""
    out, pos = [], 0
    for line in regex.split(LINE_SPLIT, norm):
        start = norm.find(line, pos)
        pos = start + len(line)
        out.append((start, line))
    return out


def _name_like(gold: str) -> Callable[[str], bool]:
    """Whether a line reads as another value of a name-like gold: as many words give or take one, the
    same first token class, written in the same case (a capitalized name's are capitalized lines)."""
    keys = T.phrase_keys(gold)
    titled = gold[:1].isupper()

    def like(line: str) -> bool:
        line_keys = T.phrase_keys(line)
        return bool(line_keys) and abs(len(line_keys) - len(keys)) <= 1 and shape(line_keys[:1]) == shape(keys[:1]) \
            and (not titled or all(t.text[:1].isupper() for t in T.tokens(line) if not t.key.isdigit()))

    return like


def page_confusers(page_text: str, gold: Any, locale: str | None = None, limit: int = 20) -> list[Any]:
    """The values of the gold's shape that `page_text` shows, nearest to where it shows the gold first. A
    number's are the page's other numbers, a date's its other dates, a name's the other lines (table
    cells, list entries) that read as a name of the same kind (`_name_like`). A page that does not show
    the gold gives none."""
    norm = T.normalize_answer(page_text)
    text = str(gold)
    q = _quantity(gold)
    iso = D.parse_iso_date(text) if q is None else None
    found: list[tuple[int, Any]] = []  # (position, value)
    if q is not None:
        numbers = A.find_numbers(norm, locale)
        at = [n.start for n in numbers if math.isclose(n.value, q[0], abs_tol=1e-9)]
        found = [(n.start, n.value) for n in numbers if not math.isclose(n.value, q[0], abs_tol=1e-9)]
    elif iso is not None:
        dates = D.find_dates(norm, locale)
        at = [d.start for d in dates if D.date_matches(d, iso)]
        found = [(d.start, "%04d-%02d-%02d" % next(iter(d.readings))) for d in dates
                 if len(d.readings) == 1 and not D.date_matches(d, iso) and next(iter(d.readings))[0]]
    else:
        keys, like = T.phrase_keys(text), _name_like(text)
        at = []
        for start, line in _lines(norm):
            if not T.phrase_keys(line):
                continue
            if T.find_phrase(T.tokens(line), keys):
                at.append(start)
            elif like(line):
                found.append((start, line.strip()))
    if not at:
        return []
    found.sort(key=lambda f: min(abs(f[0] - a) for a in at))
    return list(dict.fromkeys(value for _, value in found))[:limit]


def _gold_occurrences(line: str, gold: Any, locale: str | None) -> list[tuple[int, int]]:
    """Character spans of the gold in one normalized line."""
    q = _quantity(gold)
    if q is not None:
        return [(n.start, n.end) for n in A.find_numbers(line, locale) if math.isclose(n.value, q[0], abs_tol=1e-9)]
    iso = D.parse_iso_date(str(gold))
    if iso is not None:
        return [(d.start, d.end) for d in D.find_dates(line, locale) if D.date_matches(d, iso)]
    toks = T.tokens(line)
    return [(toks[i].start, toks[j - 1].end) for i, j in T.find_phrase(toks, T.phrase_keys(str(gold)))]


def _reader(gold: Any, locale: str | None) -> Callable[[str], Any]:
    """The value of the gold's shape that a frame's middle states, or None."""
    q = _quantity(gold)
    if q is not None:
        def number(middle: str) -> Any:
            found = A.find_numbers(middle, locale)
            return found[0].value if len(found) == 1 else None
        return number
    if D.parse_iso_date(str(gold)) is not None:
        def date(middle: str) -> Any:
            found = D.find_dates(middle, locale)
            if len(found) != 1 or len(found[0].readings) != 1 or not next(iter(found[0].readings))[0]:
                return None
            return "%04d-%02d-%02d" % next(iter(found[0].readings))
        return date
    like = _name_like(str(gold))
    return lambda middle: middle if like(middle) else None


def same_frame_confusers(gold_pages: Sequence[str], pages: Sequence[str], gold: Any, locale: str | None = None,
                         limit: int = 20) -> list[Any]:
    """Values the `pages` show in a frame `gold_pages` show the gold in: a line that is the gold between
    a short label ("By Anna Berg", "Price: ¥316") makes every line of `pages` with the same label around
    another value of the gold's shape a confuser ("By Olle Lind"), in page order. A gold shown alone on
    its line gives no frame (every line would fit it)."""
    frames: set[tuple[tuple[str, ...], tuple[str, ...]]] = set()
    for page in gold_pages:
        for _, line in _lines(T.normalize_answer(page)):
            for s, e in _gold_occurrences(line, gold, locale):
                before = tuple(t.key for t in T.tokens(line[:s]))
                after = tuple(t.key for t in T.tokens(line[e:]))
                label = before + after
                if label and len(label) <= MAX_FRAME_TOKENS and any(not k.isdigit() for k in label):
                    frames.add((before, after))
    if not frames:
        return []
    read = _reader(gold, locale)
    found: list[Any] = []
    for page in pages:
        for _, line in _lines(T.normalize_answer(page)):
            toks = T.tokens(line)
            keys = tuple(t.key for t in toks)
            for before, after in frames:
                n = len(keys) - len(before) - len(after)
                if n <= 0 or keys[:len(before)] != before or keys[len(keys) - len(after):] != after:
                    continue
                middle_toks = toks[len(before):len(toks) - len(after)]
                # a number's frame keeps its sign and currency: read from the label's end to the suffix's start
                start = toks[len(before) - 1].end if before else 0
                end = toks[len(toks) - len(after)].start if after else len(line)
                middle = line[start:end].strip() if _quantity(gold) is not None else \
                    line[middle_toks[0].start:middle_toks[-1].end]
                value = read(middle)
                if value is not None:
                    found.append(value)
    return list(dict.fromkeys(found))[:limit]


def _same_value(a: Any, b: Any) -> bool:
    qa, qb = _quantity(a), _quantity(b)
    if qa is not None and qb is not None:
        return math.isclose(qa[0], qb[0], abs_tol=1e-9)
    da, db = D.parse_iso_date(str(a)), D.parse_iso_date(str(b))
    if da is not None and db is not None:
        return da == db
    return T.phrase_keys(str(a)) == T.phrase_keys(str(b))


def check_confusers(check: "Check", instruction: str, gold_pages: Sequence[str], pages: Sequence[str],
                    limit: int = 20) -> list[Any]:
    """Page confusers for one `answer_match` check: the values in the gold's frame on any recorded page
    (`pages`) first, then those near the gold on the pages the solving run saw (`gold_pages`); never the
    gold (or an alias of it) and never a value the instruction states. Empty for modes with no one value."""
    kind = kind_of(check)
    if kind is None or kind.type != "answer_match" or not kind.single_value or check.expected in (None, ""):
        return []
    golds = list(check.expected) if isinstance(check.expected, (list, tuple)) else [check.expected]
    question = Question(instruction, check.locale)
    found: list[Any] = []
    for gold in golds:
        found += same_frame_confusers(gold_pages, pages, gold, check.locale, limit)
    for gold in golds:
        for page in gold_pages:
            found += page_confusers(page, gold, check.locale, limit)

    def stated(value: Any) -> bool:
        q = _quantity(value)
        if q is not None:
            return question.states_number(q[0])
        iso = D.parse_iso_date(str(value))
        if iso is not None:
            return any(r[1:] == iso[1:] and r[0] in (None, iso[0]) for r in question.dates)
        return question.states_phrase(T.phrase_keys(str(value)))

    kept = [v for v in found if not any(_same_value(v, g) for g in golds) and not stated(v)]
    unique: list[Any] = []
    for value in kept:
        if not any(_same_value(value, u) for u in unique):
            unique.append(value)
    return unique[:limit]
