"""The text an answer checker reads: one normalized spelling of an answer (NFKC, one apostrophe, "isn't"
spelled "is not"), its tokens, phrases as token sequences, and the word lists that say which words are
not values. `weblica.scoring.numbers` reads numbers from it, `weblica.scoring.dates` dates and clock times."""
from __future__ import annotations

import functools
import re
import unicodedata
from dataclasses import dataclass
from typing import Sequence

from weblica.scoring.confusables import latin_prototype

# ---- normalization ----------------------------------------------------------------------------------

_CONTRACTIONS = [(re.compile(r"\bcan't\b|\bcannot\b", re.I), "can not"), (re.compile(r"\bwon't\b", re.I), "will not"),
                 (re.compile(r"\bshan't\b", re.I), "shall not"), (re.compile(r"n't\b", re.I), " not"),
                 (re.compile(r"\bit's\b", re.I), "it is"), (re.compile(r"\bthere's\b", re.I), "there is"),
                 (re.compile(r"\bthat's\b", re.I), "that is"), (re.compile(r"\bi'm\b", re.I), "I am"),
                 (re.compile(r"'re\b", re.I), " are"), (re.compile(r"'ve\b", re.I), " have"),
                 (re.compile(r"'ll\b", re.I), " will"), (re.compile(r"\b(i|you|we|they|he|she)'d\b", re.I), r"\1 would")]


def _visible(text: str) -> str:
    """`text` without format characters (Unicode category Cf: zero-width spaces and joiners, bidi marks,
    soft hyphens): invisible, they would split "V\u200dera" into letters no list of names holds."""
    return "".join(c for c in text if unicodedata.category(c) != "Cf") if not text.isascii() else text


def normalize_answer(text: str) -> str:
    """The text every reader below works on (see the module docstring)."""
    text = _visible(unicodedata.normalize("NFKC", str(text)))
    text = re.sub(r"[\u2018\u2019\u02bc`´]", "'", text)
    text = re.sub(r"[\u2010\u2011\u2012\u2212]", "-", text)  # hyphens and the minus sign; en/em dashes stay
    for pattern, repl in _CONTRACTIONS:
        text = pattern.sub(repl, text)
    return text


def fold(word: str) -> str:
    """A token's comparison key: case-folded, accents dropped from Latin letters ("Zürich" = "zurich"),
    look-alikes of Latin letters read as those letters (a Cyrillic "е" in "Vеra" is "e")."""
    if word.isascii():
        return word.lower()
    word = "".join(latin_prototype(c) for c in word).casefold()
    if all(ord(c) < 0x250 for c in word):
        word = "".join(c for c in unicodedata.normalize("NFKD", word) if not unicodedata.combining(c))
    return word


# ---- tokens and phrases -----------------------------------------------------------------------------

@dataclass(frozen=True)
class Token:
    key: str    # folded
    text: str   # as written
    start: int
    end: int


_TOKEN_RE = re.compile(r"\d+|[^\W\d_]+")
# what ends a clause or a list item between two tokens (a '.' or ':' between digits is part of a number)
BOUNDARY_CHARS = set(".;:!?,()[]{}\n\u2013\u2014|/&\"")
ARTICLES = {"the", "a", "an"}


def tokens(text: str) -> list[Token]:
    """Word and digit runs ("12kg" -> "12", "kg"; "A-1234" -> "a", "1234") of normalized text."""
    return [Token(fold(m.group(0)), m.group(0), m.start(), m.end()) for m in _TOKEN_RE.finditer(text)]


@functools.lru_cache(maxsize=65536)  # the same golds and confusers are checked in every episode of a task
def phrase_keys(text: str) -> tuple[str, ...]:
    """A phrase as the token keys to look for: hyphens, punctuation and case do not matter, a leading
    article does not either ("the Cropped Cardigan" = "Cropped-cardigan")."""
    keys = tuple(t.key for t in tokens(normalize_answer(text)))
    if len(keys) > 1 and keys[0] in ARTICLES:
        keys = keys[1:]
    # "from 14:00", "until 18:00": the preposition is not what the question asks for
    if len(keys) > 1 and keys[0] in ("from", "at", "until", "by", "on") and keys[1].isdigit():
        keys = keys[1:]
    return keys


def find_phrase(toks: Sequence[Token], keys: Sequence[str]) -> list[tuple[int, int]]:
    """Token index ranges [i, j) where `keys` occur in order, as whole tokens."""
    n = len(keys)
    if not n:
        return []
    keys = list(keys)
    return [(i, i + n) for i in range(len(toks) - n + 1)
            if toks[i].key == keys[0] and [t.key for t in toks[i:i + n]] == keys]


def is_boundary(gap: str) -> bool:
    """Whether the text between two tokens separates clauses or list items."""
    return any(c in BOUNDARY_CHARS for c in gap)


# ---- words that are not values ---------------------------------------------------------------------

LIST_WORDS = {"and", "or", "nor", "vs", "versus", "plus"}
# words that start a phrase that is not a name: "at ¥316", "which is the cheapest", "sorry"
FUNCTION_WORDS = set("""a an the as at in on of for with which that this these those it its is are was were be been
being to by from per see listed shown according i we you he she they so because since if when where who whose what
there here their our my your no not only just also about around over under than then both all each every other
others one costs cost priced price at answer cheapest yes sorry definitely obviously clearly indeed certainly
thanks thank done ok okay sure again too very most least more less item items product products""".split())
