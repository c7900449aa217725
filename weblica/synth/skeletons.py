"""Instruction skeletons: an instruction with its names, numbers and quoted text masked, so "What does
the Pine Retreat cost?" and "What does the Cliff Court cost?" are one skeleton. The share of distinct
skeletons among a set of tasks says how varied its phrasings are (issue 18 point 9 asks >= 0.6).

A stand-in: the task grammar (weblica/synth/intents) is getting its own `skeleton(instruction, names)`
and `names_in(data)`; this module has the same two signatures so that `bench/synth.py` swaps to it by
changing one import, and this file can then go.
"""
from __future__ import annotations

import re
from typing import Any, Iterable

NAME, QUOTED, NUMBER = "<name>", "<quoted>", "<n>"
# data.json keys whose string values are entity names (items, makers, people, places, sections)
NAME_KEYS = {"name", "maker", "makers", "kind", "kinds", "title", "city", "street", "first", "last", "section",
             "site_name", "username", "email", "dept", "venue", "company", "author", "store"}
_QUOTED = re.compile(r"\"[^\"]*\"|“[^”]*”")
# a price with its currency, a date, a time, an email with digits (its closing punctuation kept)
_DIGITS = re.compile(r"[^\s\"“”(]*\d(?:[^\s]*[^\s.,;:!?)\"”])?")
_WORDS = re.compile(r"\S+")


def names_in(data: Any) -> set[str]:
    """String values (2-80 characters) under name-like keys of a site's data, at any depth."""
    found: set[str] = set()

    def walk(value: Any, named: bool) -> None:
        if isinstance(value, dict):
            for key, inner in value.items():
                walk(inner, key in NAME_KEYS)
        elif isinstance(value, list):
            for inner in value:
                walk(inner, named)
        elif isinstance(value, str) and named and 1 < len(value) <= 80:
            found.add(value)

    walk(data, False)
    return found


def skeleton(instruction: str, names: Iterable[str] = ()) -> str:
    """Quoted text, the given names (longest first, whole words, any case), tokens with a digit and
    capitalized words inside a sentence (names the data did not list) masked; lower-cased."""
    text = _QUOTED.sub(QUOTED, instruction)
    for name in sorted({n for n in names if n}, key=len, reverse=True):
        text = re.sub(rf"(?<!\w){re.escape(name)}(?!\w)", NAME, text, flags=re.IGNORECASE)
    text = _DIGITS.sub(NUMBER, text)
    out: list[str] = []
    starts = True
    for word in _WORDS.findall(text):
        if not starts and word[:1].isupper() and word != "I":
            word = NAME + word[len(word.rstrip(".,;:!?")):]
        if word.startswith(NAME) and out and out[-1] == NAME:
            out[-1] = word  # a run of masked words is one name
        else:
            out.append(word)
        starts = word.endswith((".", "?", "!", ":"))
    return " ".join(out).lower()


def skeleton_share(instructions: list[tuple[str, Iterable[str]]]) -> float:
    """Distinct skeletons / instructions over (instruction, names) pairs; 0.0 for none."""
    if not instructions:
        return 0.0
    return len({skeleton(text, names) for text, names in instructions}) / len(instructions)
