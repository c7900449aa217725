"""How an answer stands toward a value it mentions: denies it ("not X", "X? No"), gives a bound instead
("at least 2"), hedges ("maybe", "either", "between ... and"), or lists it among others ("X, Y or Z").
Reads `weblica.scoring.text.normalize_answer` text."""
from __future__ import annotations

import re
from typing import Sequence

from weblica.scoring.text import BOUNDARY_CHARS, LIST_WORDS, Token, is_boundary, normalize_answer, tokens

_CLAUSE_WORDS = {"but", "however", "whereas", "although", "though", "yet", "instead", "rather"}
# the one list of the words that deny what follows them ("not X", "hardly X", "all except X", "non-X");
# those of them that can deny a verb or a comparison ("X is not", "A is hardly cheaper than B", read by
# weblica.scoring.context.ranked_below_gold) are all but the prepositions and the prefix: "A is
# cheaper without breakfast than B" denies breakfast, not the ranking
NEGATIONS = frozenset({"not", "no", "never", "neither", "nor", "hardly", "except", "excluding", "without", "non"})
VERB_DENIALS = NEGATIONS - {"except", "excluding", "without", "non"}
_NEG_PAIRS = {("other", "than"), ("rather", "than"), ("instead", "of"), ("apart", "from"), ("no", "longer"),
              ("anything", "but"), ("everything", "but"), ("all", "but"), ("any", "but")}
_BOUND_BEFORE = [("at", "least"), ("at", "most"), ("more", "than"), ("less", "than"), ("fewer", "than"),
                 ("up", "to"), ("over",), ("under",), ("nearly",), ("almost",), ("below",), ("above",),
                 ("greater", "than"), ("lower", "than"), ("higher", "than"), ("exceeds",)]


WINDOW = 120  # characters either side of a value that are read for a denial or a bound


def clause_before(text: str, limit: int = 6) -> list[str]:
    """The last words of the clause that ends where `text` ends."""
    cut = max((text.rfind(c) for c in BOUNDARY_CHARS), default=-1)
    words = [t.key for t in tokens(text[cut + 1:])]
    for i in range(len(words) - 1, -1, -1):
        if words[i] in _CLAUSE_WORDS:
            # "A rather than B", "A instead of B": the clause word starts the denial of what follows, so
            # it stays with it ("A, not B" reads the same)
            denies = tuple(words[i:i + 2]) in _NEG_PAIRS
            # "anything but B": the clause word ends the denial that starts before it
            denied_by_pair = i > 0 and (words[i - 1], words[i]) in _NEG_PAIRS
            words = words[i - 1:] if denied_by_pair else words[i:] if denies else words[i + 1:]
            break
    return words[-limit:]


# a value's own clause denies it after a verb: "X is not / is never / is by no means / does not ..."
_AUXILIARIES = frozenset({"is", "was", "are", "were", "does", "do", "did", "can", "could", "will", "would"})
_LEADING_DENIALS = frozenset({"never", "hardly"})  # "X never costs less", "X hardly ..."


def _denied_before(words: list[str]) -> bool:
    """Whether the clause before a value denies it. A denial before "than" scopes over the comparison,
    not the value after it: "A is not cheaper than B" / "A never costs less than B" deny that A is
    cheaper and do not deny B (read as denying B, they scored the wrong option), where "rather than B"
    and "other than B" deny B."""
    if "than" in words:
        at = len(words) - 1 - words[::-1].index("than")
        if at and (words[at - 1], "than") in _NEG_PAIRS:
            return True
        words = words[at + 1:]
    return any(w in NEGATIONS for w in words) or any(p in zip(words, words[1:]) for p in _NEG_PAIRS)


def _denied_after(tail: list[str], asked: frozenset[str]) -> bool:
    """Whether the words after a value deny it as the subject of a denied verb ("X is not", "X is never",
    "X is by no means", "X does not", "X never"); a denial the question asks ("X is not available" for
    "Which one is not available?") is none."""
    if any(w in ("wrong", "incorrect", "false") for w in tail):
        return True
    if tail and tail[0] in _LEADING_DENIALS:
        return True
    if len(tail) < 2 or tail[0] not in _AUXILIARIES:
        return False
    for j in (1, 2):  # "is not", "is by no means", "is in no way"
        if j < len(tail) and tail[j] in VERB_DENIALS:
            asked_too = tail[j] in asked and j + 1 < len(tail) and tail[j + 1] in asked
            return not asked_too
    return False


def is_negated(before: str, after: str, asked: frozenset[str] = frozenset()) -> bool:
    """Whether the words around a value deny it: "not X", "it is not X", "no X", "X is wrong", "X? No",
    "X is not / never ... than Y" (but not Y there, see `_denied_before`).
    `asked` are the question's words: "X is not available" answers "Which one is not available?".
    Both texts are normalized (`normalize_answer`)."""
    # the words that can scope over a value are near it; a bounded window keeps a long answer linear
    before, after = before[-WINDOW:], after[:WINDOW]
    if _denied_before(clause_before(before)):
        return True
    if re.match(r"\s*\?+\s*(?:no|nope|not)\b", after, re.I):
        return True
    cut = min([i for i, c in enumerate(after) if c in BOUNDARY_CHARS] or [len(after)])
    return _denied_after([t.key for t in tokens(after[:cut])][:4], asked)


def is_bound(before: str) -> bool:
    """Whether the words just before a number make it a bound ("at least 2", "over ¥300"), not a value."""
    before = before[-WINDOW:]  # normalized text
    words = clause_before(before, 3)
    return any(tuple(words[-len(p):]) == p for p in _BOUND_BEFORE if len(words) >= len(p)) or \
        bool(re.search(r"[<>≤≥]\s*=?\s*$", before))


_HEDGE_RE = re.compile(r"\b(?:either|whether|maybe|perhaps|possibly|probably|presumably|likely|unsure|uncertain|"
                       r"not (?:sure|certain)|i guess|my guess|best guess|i suppose|i think|i believe|might be|could be|may be|"
                       # "A if not B", "A, or the other one": the answer keeps the other option open
                       r"if not|or (?:the |that |this )?other|"
                       r"between(?=.*\b(?:and|or)\b))\b", re.I | re.S)


def hedges(norm: str, question: str = "") -> list[re.Match[str]]:
    """The words of normalized `norm` that make it a guess or a choice between alternatives, as matches
    (positions in `norm`). Words the question itself uses ("the difference between A and B") are none."""
    asked = normalize_answer(question).casefold()
    return [m for m in _HEDGE_RE.finditer(norm) if m.group(0).casefold() not in asked]


def hedge(text: str, question: str = "") -> str | None:
    """The first hedge of `text` (see `hedges`), or None."""
    found = hedges(normalize_answer(text), question)
    return found[0].group(0) if found else None


def list_items(text: str) -> list[list[Token]]:
    """The items of normalized `text` read as a list: split at commas, semicolons, slashes, sentence ends,
    line breaks and the words and/or/nor/vs (a '.', ':' or '/' between digits belongs to a number)."""
    toks = tokens(text)
    items: list[list[Token]] = [[]]
    prev: Token | None = None
    for tok in toks:
        gap = text[prev.end:tok.start] if prev else ""
        joined = gap.strip() in (".", ":", "/", ",") and prev is not None and prev.key.isdigit() and tok.key.isdigit()
        if prev is not None and is_boundary(gap) and not joined:
            items.append([])
        if tok.key in LIST_WORDS:
            items.append([])
        else:
            items[-1].append(tok)
        prev = tok
    return [item for item in items if item]


def shape(keys: Sequence[str]) -> tuple[str, ...]:
    """A phrase's token classes: 'n' for digits, 'w' for words."""
    return tuple("n" if k.isdigit() else "w" for k in keys)
