"""What surrounds the gold in an answer, for the `answer_match` check (weblica.env.answer_check): the
question's own values (echoing them is context, not a competing value), the confusers an answer asserts
(values of the same field the site shows for other entities, unless denied or inside the gold), and the
rest of the answer that spoils it (a hedge, a refusal on a feasible task). Shared by every answer mode.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Sequence

from weblica.env import answers as A
from weblica.env import dates as D
from weblica.env import text as T
from weblica.env.assertion import hedge, is_negated
from weblica.env.refusal import refusal_phrase


def word_before(norm: str, start: int) -> str:
    words = T.tokens(norm[max(0, start - 40):start])
    return words[-1].key if words else ""


@dataclass
class Question:
    """What the instruction itself states: echoing it is context, not a competing value."""

    text: str = ""
    locale: str | None = None
    numbers: list[float] = field(init=False)
    contexts: set[tuple[float, str]] = field(init=False)
    dates: set[tuple[int | None, int, int]] = field(init=False)
    toks: list[T.Token] = field(init=False)

    def __post_init__(self) -> None:
        norm = T.normalize_answer(self.text)
        found = A.find_numbers(norm, self.locale)
        self.numbers = [n.value for n in found]
        # each number with the word before it: "rating of 4.0" echoed is not an answer of 4
        self.contexts = {(n.value, word_before(norm, n.start)) for n in found}
        self.dates = {r for d in D.find_dates(norm, self.locale) for r in d.readings}
        self.toks = T.tokens(norm)

    @property
    def keys(self) -> frozenset[str]:
        return frozenset(t.key for t in self.toks)

    def states_number(self, value: float) -> bool:
        return any(math.isclose(value, v, abs_tol=1e-9) for v in self.numbers)

    def states_phrase(self, keys: Sequence[str]) -> bool:
        return bool(T.find_phrase(self.toks, keys))


@dataclass
class Outcome:
    passed: bool
    reason: str


def fmt_number(value: float) -> str:
    return f"{value:g}" if value == int(value) else f"{value:.6g}"


def confuser_parts(confusers: Sequence[Any] | None) -> tuple[list[float], list[str]]:
    """Confusers as numbers (where they are one quantity: 17, "¥17", "Two owners") and as phrases."""
    numbers, phrases = [], []
    for c in confusers or []:
        if isinstance(c, (int, float)) and not isinstance(c, bool):
            numbers.append(float(c))
            continue
        q = A.quantity(str(c))
        if q is not None:
            numbers.append(q[0])
        elif T.phrase_keys(str(c)):
            phrases.append(str(c))
    return numbers, phrases


def token_span(norm: str, toks: list[T.Token], occ: tuple[int, int]) -> tuple[int, int]:
    return toks[occ[0]].start, toks[occ[1] - 1].end


def blanked(norm: str, spans: Sequence[tuple[int, int]]) -> str:
    """`norm` with the spans replaced by spaces, so the words around the gold are read without it."""
    chars = list(norm)
    for s, e in spans:
        chars[s:e] = " " * (e - s)
    return "".join(chars)


def named_confusers(norm: str, phrases: Sequence[str], gold_spans: Sequence[tuple[int, int]],
                      question: Question, gold_keys: Sequence[Sequence[str]]) -> list[str]:
    """The confusers the answer asserts: present, not inside the gold, not denied, not from the question."""
    toks = T.tokens(norm)
    present = {t.key for t in toks}
    # the gold's own words are not a denial of what follows it: "Non-refundable or free cancellation"
    # names the confuser, whose "non" belongs to the gold
    around = blanked(norm, gold_spans)
    named = []
    for phrase in phrases:
        keys = T.phrase_keys(phrase)
        if not keys or not set(keys) <= present:  # most confusers are not in the answer at all: cheap skip
            continue
        if list(keys) in [list(k) for k in gold_keys] or question.states_phrase(keys):
            continue
        for occ in T.find_phrase(toks, keys):
            s, e = token_span(norm, toks, occ)
            if any(gs <= s and e <= ge for gs, ge in gold_spans):
                continue
            if not is_negated(around[:s], around[e:], question.keys):
                named.append(phrase)
                break
    return named


def spoiler(norm: str, gold_spans: Sequence[tuple[int, int]], question: Question) -> str | None:
    """Why the rest of the answer spoils it (a hedge, a refusal), or None."""
    rest = blanked(norm, gold_spans)
    h = hedge(rest, question.text)
    if h:
        return f"hedges ('{h}')"
    r = refusal_phrase(rest)
    # "X is not available" answers "Which one is not available?": the question's own words are no refusal
    if r and T.fold(r) not in T.fold(T.normalize_answer(question.text)):
        return f"refuses ('{r}') on a feasible task"
    return None
