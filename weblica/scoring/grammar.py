"""The grammar of a plain answer: acceptance by an allow-list, not rejection by lists.

An answer passes an answer check only when the mode's reading found the gold and nothing competing
(weblica.scoring.answer) *and* every other part of it is something this grammar reads:

- the gold itself, and the values the mode read and judged (numbers, dates, times: a competing one
  has already failed the answer there);
- the question's own words (a short sentence that restates the question around the gold);
- plain words (weblica.scoring.vocabulary): carriers ("The answer is", "It costs"), remarks ("I could
  not find a better one"), refusal words;
- a value named only to deny it ("not the Bold Poncho");
- where the gold is not a name, a name given as context in a clause of its own ("Two; the cheapest one
  is the Bold Poncho").

Anything else fails, and the reason names it: a word the grammar cannot read ("vielleicht", "roughly",
"可能是"), a second name beside a name, an alternative ("or"), a list left open ("and others", "etc."),
a question ("?") or a hedging sign ("~", "≈"). A miss beats a wrong reward.
"""
from __future__ import annotations

import re
import unicodedata
from typing import Sequence

from weblica.scoring import text as T
from weblica.scoring.assertion import _denied_before as denied_before
from weblica.scoring.assertion import clause_before, is_negated
from weblica.scoring.vocabulary import ALTERNATIVE_WORDS, PLAIN_WORDS

Span = tuple[int, int]

# signs that ask or hedge wherever they stand ("G?", "G (?)", "~G", "≈G", "<G")
HEDGING_SIGNS = frozenset("?¿‽？~∼≈≃≅±∓<>≤≥≲≳")
# a list left open after the last item
_OPEN_LIST = re.compile(r"(?:\b(?:and|plus)|,)\s*(?:(?:many|some|several|a\s+few|all\s+the)\s+)?"
                        r"(?:others?\b|more\b|so\s+on\b|so\s+forth\b|the\s+like\b|the\s+rest\b|similar\w*)"
                        r"|\betc\b|\bet\s+al\b", re.I)
# words that make the value right after them an estimate
_APPROXIMATORS = frozenset("about around approximately approx roughly circa ca nearly almost some like "
                           "ungefahr etwa environ aproximadamente".split())
# phrases read as one plain word
_PLAIN_PHRASES = re.compile(r"(?<![\w/])n/a(?![\w/])|\be\.g\.|\bi\.e\.", re.I)


def _covered(spans: Sequence[Span], start: int, end: int) -> bool:
    return any(s <= start and end <= e for s, e in spans)


def _sign_problem(norm: str, spans: Sequence[Span]) -> str | None:
    for i, c in enumerate(norm):
        if c.isalnum() or c.isspace() or _covered(spans, i, i + 1):
            continue
        if c in HEDGING_SIGNS:
            return "asks a question ('?')" if c in "?¿‽？" else f"hedges ('{c}')"
        if unicodedata.category(c) == "So" and c != "°":  # emoji and pictographs: 🤔, 🤷
            return f"holds a sign the grammar cannot read ({c!r})"
    return None


def _echoes(norm: str, tok: T.Token, question_text: str) -> bool:
    """Whether the words around `tok` ("4.0 or higher") run as the question has them: an echo of the
    question's own alternative, not one the answer offers."""
    around = [t.key for t in T.tokens(norm[max(0, tok.start - 40):tok.end + 40])]
    at = next(i for i, t in enumerate(T.tokens(norm[max(0, tok.start - 40):tok.end + 40]))
              if t.start + max(0, tok.start - 40) == tok.start)
    asked = [t.key for t in T.tokens(T.normalize_answer(question_text))]
    window = around[max(0, at - 1):at + 2]
    return len(window) == 3 and any(asked[i:i + 3] == window for i in range(len(asked) - 2))


# "It is X", "The answer is X", "Answer: X": a carrier that asserts what follows it
_CARRIED = re.compile(r"\b(?:it|that|this|the\s+answer|answer|the\s+result|result|mine)\s*"
                      r"(?:is|was|:|costs?|comes\s+to|equals|=)\s+(?:the\s+|a\s+|an\s+)?(?P<value>[^.;!\n]+)", re.I)


def _second_assertion(norm: str, golds: Sequence[Span], question_keys: frozenset[str]) -> str | None:
    """A sentence without the gold that asserts a name with a carrier ("It is Search." beside "It is
    Fairview."): two assertions, whatever words the second one is made of."""
    if not golds:
        return None
    for m in _CARRIED.finditer(norm):
        value = m.group("value")
        end = m.end("value")
        sentence_end = min([i for i in (norm.find(c, end) for c in ".;!\n") if i >= 0] or [len(norm)])
        if any(m.start() <= gs < sentence_end for gs, _ in golds):
            continue
        words = T.tokens(value)
        named = words and words[0].text[:1].isupper() and not all(w.key in question_keys for w in words)
        if named or any(w.key.isdigit() for w in words):  # "It is Search.", "It is 03/03/2026."
            return f"asserts {value.strip()!r} besides the gold"
    return None


def _clause_apart(norm: str, start: int, end: int, golds: Sequence[Span]) -> bool:
    """Whether norm[start:end] is in another clause than every gold span."""
    for gs, ge in golds:
        between = norm[ge:start] if ge <= start else norm[end:gs]
        if not any(c in ".;:!()[]\n" for c in between):
            return False
    return True


def unread_part(norm: str, question_text: str, question_keys: frozenset[str], golds: Sequence[Span],
                values: Sequence[Span], *, names_compete: bool, allow_alternatives: bool = False) -> str | None:
    """Why normalized `norm` is not a plain answer, or None when every part of it reads.

    `golds` are the spans of the gold, `values` the spans of values the mode has read and judged;
    `names_compete`: the gold is a name (or the task infeasible), so another name competes with it;
    `allow_alternatives`: "or" may join the items of a set answer ("red, blue or green")."""
    accounted = list(golds) + list(values) + [m.span() for m in _PLAIN_PHRASES.finditer(norm)]
    problem = _sign_problem(norm, accounted)
    if problem:
        return problem
    rest = "".join(" " if _covered(golds, i, i + 1) else c for i, c in enumerate(norm))  # the gold blanked
    open_list = _OPEN_LIST.search(rest)
    if open_list:
        return f"leaves the list open ('{open_list.group(0).strip(' ,')}')"
    if re.search(r"(?:\.\.\.|\u2026)\s*$", norm) and not any(e >= len(norm.rstrip(" .\u2026")) for _, e in golds):
        return "leaves the list open ('...')"
    second = _second_assertion(norm, golds, question_keys)
    if second:
        return second
    toks = [t for t in T.tokens(norm) if not _covered(accounted, t.start, t.end)]
    for s, _ in list(golds) + list(values):
        lead = norm[max(0, s - 30):s]
        before = T.tokens(lead)
        if before and before[-1].key in _APPROXIMATORS and before[-1].key not in question_keys \
                and not lead[before[-1].end:].strip():
            return f"approximates ('{before[-1].text}')"
    # runs of words the grammar does not read, each judged on its own ("of" in "Bank of Nowhere", a word
    # it reads, splits the name in two)
    unknown: list[list[T.Token]] = []
    for tok in toks:
        if tok.key in ALTERNATIVE_WORDS:
            if allow_alternatives or _echoes(norm, tok, question_text):
                continue
            return f"offers an alternative ('{tok.text}')"
        if tok.key in PLAIN_WORDS or tok.key in question_keys:
            continue
        if unknown and not norm[unknown[-1][-1].end:tok.start].strip(" -'"):
            unknown[-1].append(tok)
        else:
            unknown.append([tok])
    # a denial is read without the gold's own words (`rest`): the "Not" of "Not eligible" denies nothing
    for run in unknown:
        start, end = run[0].start, run[-1].end
        shown = norm[start:end]
        if is_negated(rest[:start], rest[end:], question_keys) or denied_before(clause_before(rest[:start], 40)):
            continue  # a value named only to deny it: "not the Bold Poncho", "not free cancellation up to ..."
        name_like = all(t.text[:1].isupper() or t.text.isdigit() for t in run) and run[0].text[:1].isupper()
        if name_like and not names_compete and golds:
            article = T.tokens(norm[max(0, start - 12):start])
            introduced = len(run) >= 2 or (article and article[-1].key in T.ARTICLES)
            if introduced and _clause_apart(norm, start, end, golds):
                continue  # a name as context beside a number, a date or a time, in a clause of its own
        if name_like and names_compete:
            return f"names {shown!r}, which is not the gold"
        return f"holds words the grammar cannot read ({shown!r})"
    return None
