"""Look-alike characters, read through Unicode's confusables table (UTS #39 `confusables.txt`, as the
`confusable_homoglyphs` package ships it, one entry a pair of look-alikes): a Cyrillic "е" in "Vеra"
is the Latin "e", and "l4" is "14" written with a letter. An answer checker that compared code points would let a policy dodge every list of
values by swapping one character.

Two readings, both data-driven:
- `latin_prototype(ch)`: a non-ASCII character that Unicode maps to one ASCII letter or digit, that
  character ("е" -> "e", "ⅼ" -> "l"); ASCII is left alone (the table maps the digit "1" to the letter
  "l", which must not turn every 1 into an l).
- `disguised_number(chunk)`: a run of letters and digits in which every letter is a look-alike of a
  digit ("l4", "ll8", "I5", "2O"), read as the number it imitates; None for anything else ("12kg", "CO2").
"""
from __future__ import annotations

import functools
import json
import string
from importlib import resources


@functools.lru_cache(maxsize=1)
def _lookalikes() -> dict[str, frozenset[str]]:
    """Each character -> the characters Unicode lists as its look-alikes (both ways round)."""
    try:
        table = json.loads((resources.files("confusable_homoglyphs") / "confusables.json").read_text("utf-8"))
    except (ModuleNotFoundError, FileNotFoundError) as exc:  # pragma: no cover - a core dependency
        raise RuntimeError("the `confusable_homoglyphs` package (Unicode's confusables) is missing: "
                           "pip install -e . (or bash .ci/setup)") from exc
    return {ch: frozenset(entry["c"] for entry in entries) for ch, entries in table.items()}


@functools.lru_cache(maxsize=4096)
def latin_prototype(ch: str) -> str:
    """The one ASCII letter or digit a non-ASCII character imitates, else the character itself."""
    if ch.isascii():
        return ch
    ascii_alikes = {c for c in _lookalikes().get(ch, ()) if len(c) == 1 and c.isascii() and c.isalnum()}
    return ascii_alikes.pop() if len(ascii_alikes) == 1 else ch


@functools.lru_cache(maxsize=1)
def _digit_lookalikes() -> dict[str, str]:
    """ASCII letters that Unicode lists as look-alikes of a digit: {"l": "1", "I": "1", "O": "0"}."""
    table = _lookalikes()
    out = {}
    for digit in string.digits:
        for c in table.get(digit, ()):
            if len(c) == 1 and c in string.ascii_letters:
                out[c] = digit
                # "I" imitates "l", which imitates "1": one class of look-alikes
                out.update({o: digit for o in table.get(c, ()) if len(o) == 1 and o in string.ascii_letters})
    return out


def disguised_number(chunk: str) -> str | None:
    """The digits `chunk` imitates when it mixes digits with digit look-alike letters ("l4", "2O") or is
    made of look-alikes only with one that is no word on its own ("lO", "l", "Il"; not the pronoun "I"),
    else None."""
    if not chunk or not any(c.isalpha() for c in chunk):
        return None
    if not any(c.isdigit() for c in chunk) and (chunk in ("I", "O") or not set(chunk) <= {"l", "I", "O"}):
        return None
    lookalikes = _digit_lookalikes()
    digits = []
    for c in chunk:
        if c.isdigit():
            digits.append(c)
        elif c in lookalikes:
            digits.append(lookalikes[c])
        else:
            return None
    return "".join(digits)
