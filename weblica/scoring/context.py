"""What surrounds the gold in an answer, for the `answer_match` check (weblica.scoring.answer): the
question's own values (echoing them is context, not a competing value), the confusers an answer asserts
(values of the same field the site shows for other entities, unless denied or inside the gold), and the
rest of the answer that spoils it (a hedge, a refusal on a feasible task). Shared by every answer mode.
"""
from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass, field
from typing import Any, Sequence

from weblica.scoring import numbers as A
from weblica.scoring import dates as D
from weblica.scoring import text as T
from weblica.scoring.assertion import VERB_DENIALS, clause_before, hedge, hedges, is_negated
from weblica.scoring.refusal import refusal_phrase


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
    """A mode's reading of an answer. A pass carries what the grammar (weblica.scoring.grammar) needs to
    read the rest: where the gold is, which values the mode judged, and whether names compete."""

    passed: bool
    reason: str
    golds: tuple[tuple[int, int], ...] = ()
    values: tuple[tuple[int, int], ...] = ()
    names_compete: bool = False
    alternatives: bool = False  # "or" may join the items (a set answer)
    plain: bool = True  # the grammar reads the rest; False where the task asks for no value (a "." pattern)


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
    """The confusers the answer asserts: present, not inside the gold, not denied, and not context from
    the question. A confuser the question states beside the gold is one of the options it offers
    ("Which is cheaper: the A or the B?"), not context: naming it asserts it unless the answer denies it
    ("A, not B") or ranks the gold above it in the question's own words ("A is cheaper than B"). So "A
    or B", "A, B" and the question echoed fail, and so do "B is cheaper than A", "A is dearer than B" and
    "A (B is dearer)": a comparison in other words than the question's is not read (an unsure check fails)."""
    toks = T.tokens(norm)
    present = {t.key for t in toks}
    # the gold's own words are not a denial of what follows it: "Non-refundable or free cancellation"
    # names the confuser, whose "non" belongs to the gold
    around = blanked(norm, gold_spans)
    offers_choice = any(question.states_phrase(k) for k in gold_keys)
    named = []
    for phrase in phrases:
        keys = T.phrase_keys(phrase)
        if not keys or not set(keys) <= present:  # most confusers are not in the answer at all: cheap skip
            continue
        if list(keys) in [list(k) for k in gold_keys] or (question.states_phrase(keys) and not offers_choice):
            continue
        option = offers_choice and question.states_phrase(keys)
        for occ in T.find_phrase(toks, keys):
            s, e = token_span(norm, toks, occ)
            if any(gs <= s and e <= ge for gs, ge in gold_spans):
                continue
            # an option named after the question's own words ("I can't decide between the B ...") is
            # echoed, not denied: the "not" is the question's
            echoed = option and echoes_question(clause_before(around[:s]), question)
            if option and ranked_below_gold(norm[:s], gold_spans, question):
                continue
            if echoed or not is_negated(around[:s], around[e:], question.keys):
                named.append(phrase)
                break
    return named


_LINKS = frozenset({"is", "are", "was", "were", "one", "it", "has", "a", "the"})  # "A is the cheaper one than"
# the words of "costs less" in a question that asks it in any of them ("cheaper", "less expensive",
# "costs less", "a lower price"): an answer may rank the options in another of them, never in "dearer"
_CHEAPER = frozenset({"cheaper", "less", "expensive", "costs", "cost", "lower", "price", "priced", "fee", "fare"})


def ranked_below_gold(before: str, gold_spans: Sequence[tuple[int, int]], question: Question) -> bool:
    """Whether an option right after `before` follows "<gold> <the question's comparative> than":
    "the A is cheaper than the" for "Which is cheaper: the A or the B?" ("costs less than" where the
    question says "costs less"); every word between the gold and "than" is the question's or a link
    word, and none denies."""
    for gs, ge in gold_spans:
        between = before[ge:]
        if ge > len(before) or any(c in T.BOUNDARY_CHARS for c in between):
            continue
        words = [t.key for t in T.tokens(between)]
        while words and words[-1] in T.ARTICLES:
            words.pop()
        said = words[:-1]
        allowed = question.keys | _LINKS | (_CHEAPER if _asks_cheaper(question) else frozenset())
        if len(said) >= 1 and words[-1] == "than" and any(w not in _LINKS for w in said) and \
                all(w in allowed for w in said) and not any(w in VERB_DENIALS for w in said):
            return True
    return False


def _asks_cheaper(question: Question) -> bool:
    keys = question.keys
    return "cheaper" in keys or bool({"less", "lower"} & keys and {"expensive", "costs", "cost", "price"} & keys)


ECHO_WORDS = 3  # words in a row, as the question has them, that are the question echoed


def echoes_question(words: Sequence[str], question: Question) -> bool:
    """Whether `words` (an answer's clause before a value) run as in the question, ECHO_WORDS or more."""
    if len(words) < ECHO_WORDS:
        return False
    asked = [t.key for t in question.toks]
    n = len(words)
    return any(asked[i:i + n] == list(words) for i in range(len(asked) - n + 1))


def gold_word_hedge(norm: str, gold_spans: Sequence[tuple[int, int]], question: Question) -> str | None:
    """A hedge made of the gold's own words ("I believe it is Believe", "Maybe it is Maybe" for the gold
    "Believe" / "Maybe"), which blanking the gold hides: a hedge is the gold only when it lies wholly
    inside one occurrence of the gold that the answer does not repeat ("Maybe", "I Think Therefore I Am")."""
    said = Counter(T.fold(norm[s:e]) for s, e in gold_spans)
    for match in hedges(norm, question.text):
        inside = [(s, e) for s, e in gold_spans if s <= match.start() and match.end() <= e]
        if not inside or said[T.fold(norm[inside[0][0]:inside[0][1]])] > 1:
            return match.group(0)
    return None


def spoiler(norm: str, gold_spans: Sequence[tuple[int, int]], question: Question) -> str | None:
    """Why the rest of the answer spoils it (a hedge, a refusal), or None."""
    rest = blanked(norm, gold_spans)
    h = hedge(rest, question.text) or gold_word_hedge(norm, gold_spans, question)
    if h:
        return f"hedges ('{h}')"
    r = refusal_phrase(rest)
    # "X is not available" answers "Which one is not available?": the question's own words are no refusal
    if r and T.fold(r) not in T.fold(T.normalize_answer(question.text)) and not _remark_after(rest, r, gold_spans):
        return f"refuses ('{r}') on a feasible task"
    return None


# words that make a refusal after the answer a remark about something else: "G; I could not find a
# better one", "G. Nothing else matched."
_OTHER_THING = frozenset("better other another else cheaper more alternative alternatives different additional "
                         "second further closer newer".split())


def _remark_after(rest: str, phrase: str, gold_spans: Sequence[tuple[int, int]]) -> bool:
    """Whether the refusal `phrase` stands after every gold, in a clause about another thing: the answer
    is the gold plus a remark, not a refusal (one before the gold, "I could not find the price, but it
    is ¥316", takes back what follows and stays a refusal)."""
    at = rest.find(phrase)
    if at < 0 or any(e > at for _, e in gold_spans):
        return False
    cut = min([i for i, c in enumerate(rest[at:], at) if c in T.BOUNDARY_CHARS] or [len(rest)])
    clause = {t.key for t in T.tokens(rest[at:cut])}
    return bool(clause & _OTHER_THING)
