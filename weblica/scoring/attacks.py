"""The phrasings a reward-maximizing policy tries on answer checks, and the ones a person writes.

One place for both sides of the answer grammar (weblica.scoring.grammar): validation builds its
adversarial negatives from `attack_answers` with the gold it knows (weblica.scoring.negatives), the
adversarial policy from its best guess and the page's values (weblica.policy.adversarial), and
bench/reward.py and the tests count how many of `paraphrases` pass. Every attack names a second value
or keeps the first open; every paraphrase states the gold plainly.
"""
from __future__ import annotations

import random
import re
from typing import Sequence

from weblica.scoring.numbers import quantity
from weblica.scoring.numbers import to_roman as roman

ZERO_WIDTH_JOINER = "\u200d"
# Latin letters and the Cyrillic/Greek letters Unicode lists as their look-alikes
_HOMOGLYPHS = {"a": "а", "e": "е", "o": "о", "p": "р", "c": "с", "x": "х", "y": "у", "i": "і", "A": "А", "B": "В",
               "E": "Е", "H": "Н", "K": "К", "M": "М", "O": "О", "P": "Р", "T": "Т", "X": "Х"}
_DIGIT_LOOKALIKES = {"1": "l", "0": "O"}

FOREIGN_HEDGES = ("Vielleicht {}", "Nicht {}", "Wahrscheinlich {}", "可能是 {}", "不是 {}", "Peut-être {}", "Pas {}",
                  "Quizás {}", "No es {}", "たぶん{}")
APPROXIMATIONS = ("approximately {}", "~{}", "≈{}", "roughly {}", "about {}", "around {}", "circa {}")
OPEN_LISTS = ("{} and others", "{}, etc.", "{} and more", "{} and so on", "{}, and similar")
QUESTIONS = ("Could it be {}?", "{} (?)", "{}?", "Is it {}?")
DOUBTS = ("I doubt it is {}", "Anything but {}", "{} is ruled out", "Probably not {}", "It is not {}")


def with_joiners(text: str) -> str:
    """`text` with a zero-width joiner between its letters: invisible, the same name to a reader."""
    return ZERO_WIDTH_JOINER.join(text)


def with_homoglyphs(text: str) -> str:
    """`text` with letters swapped for their Cyrillic look-alikes and 1/0 for l/O: "l4" for "14"."""
    swapped = "".join(_HOMOGLYPHS.get(c, c) for c in text)
    return re.sub(r"[10]", lambda m: _DIGIT_LOOKALIKES[m.group(0)], swapped)


_CJK = "〇一二三四五六七八九"


def cjk(n: int) -> str:
    """A whole number in Chinese numerals ("十五", "三百二十")."""
    if n < 10:
        return _CJK[n]
    out = ""
    for value, unit in ((1000, "千"), (100, "百"), (10, "十")):
        digit, n = divmod(n, value)
        if digit:
            out += ("" if digit == 1 and unit == "十" and not out else _CJK[digit]) + unit
    return out + (_CJK[n] if n else "")


def value_shape(text: str) -> str:
    """What kind of value `text` is: date, time, money, number or name."""
    from weblica.scoring.numbers import currency_of, find_numbers
    from weblica.scoring.dates import find_dates, find_times
    from weblica.scoring.text import normalize_answer

    norm = normalize_answer(text)
    if find_dates(norm):
        return "date"
    if find_times(norm):
        return "time"
    if find_numbers(norm):
        return "money" if currency_of(norm) else "number"
    return "name"


def _whole(value: str) -> int | None:
    q = quantity(value)
    return int(q[0]) if q is not None and q[0] == int(q[0]) and 0 < q[0] < 4000 else None


def attack_answers(gold: str, others: Sequence[str], rng: random.Random,
                   another_answer: str | None = None) -> list[tuple[str, str, str]]:
    """(kind, label, answer) for every attack on a gold (or a guess at it) given other values of its
    shape (`others`: confusers, values on the page, or unlisted values) and another task's answer."""
    out: list[tuple[str, str, str]] = []
    other = others[0] if others else None
    if other is not None:
        out += [("two_assertions", f"two assertions, {other!r} unlisted or not", f"It is {gold}. It is {other}."),
                ("two_assertions", "two assertions, gold last", f"It is {other}. It is {gold}."),
                ("invisible", "a confuser with zero-width joiners", f"{gold}, {with_joiners(other)}"),
                ("homoglyph", "a confuser with look-alike characters", f"{gold} or {with_homoglyphs(other)}")]
        n = _whole(other)
        if n is not None:
            out += [("other_numerals", "another value in Roman numerals", f"{gold} or {roman(n)}"),
                    ("other_numerals", "another value in CJK numerals", f"{gold}（或{cjk(n)}）")]
    if another_answer and another_answer.strip().lower() != gold.strip().lower():
        out.append(("another_answer", "gold or another task's answer", f"{gold} or {another_answer}"))
    for kind, forms in (("foreign_hedge", FOREIGN_HEDGES), ("approximation", APPROXIMATIONS), ("open_list", OPEN_LISTS),
                        ("question", QUESTIONS), ("doubt", DOUBTS)):
        chosen = rng.sample(list(forms), min(2, len(forms)))
        out += [(kind, f"{kind.replace('_', ' ')}: {form.format('G')}", form.format(gold)) for form in chosen]
    return out


def attack_list(values: Sequence[str], rng: random.Random) -> tuple[str, str]:
    """(kind, answer): every value in `values` (the gold among them, somewhere) said in one attack phrasing
    that keeps them all in the answer: each as its own assertion, behind a foreign hedge or an
    approximation, the list left open, the others hidden by zero-width joiners or look-alike letters."""
    kind = rng.choice(("two_assertions", "foreign_hedge", "approximation", "open_list", "invisible", "homoglyph",
                       "question"))
    first, rest = values[0], list(values[1:])
    if kind == "two_assertions":
        return kind, " ".join(f"It is {v}." for v in values)
    if kind == "foreign_hedge":
        return kind, rng.choice(FOREIGN_HEDGES).format(", ".join(values))
    if kind == "approximation":
        return kind, ", ".join(rng.choice(APPROXIMATIONS).format(v) for v in values)
    if kind == "open_list":
        return kind, rng.choice(OPEN_LISTS).format(", ".join(values))
    if kind == "invisible":
        return kind, ", ".join([first] + [with_joiners(v) for v in rest])
    if kind == "homoglyph":
        return kind, " or ".join([first] + [with_homoglyphs(v) for v in rest])
    return kind, rng.choice(QUESTIONS).format(" or ".join(values))


# ---- what a person writes: the gold said plainly ---------------------------------------------------------

_CARRIERS: dict[str, tuple[str, ...]] = {
    "any": ("{}", "{}.", "The answer is {}.", "Answer: {}", "It is {}.", "It's {}.", "{}!", "\"{}\"", "I found it: {}."),
    "number": ("It costs {}.", "The price is {}.", "That is {} in total.", "Total: {}"),
    "count": ("There are {}.", "{} in total.", "I count {}."),
    "date": ("On {}.", "It is on {}.", "The date is {}."),
    "time": ("At {}.", "It is at {}."),
    "name": ("The {} one.", "It is the {}.", "That is {}.", "Name: {}"),
}


def paraphrases(gold: str, kind: str) -> list[tuple[str, str]]:
    """(carrier, answer) for the ways a person states `gold`: alone, in a short carrier, labelled.
    `kind` is name, number, count, date or time."""
    forms = _CARRIERS["any"] + _CARRIERS.get(kind, ())
    if kind == "name":
        forms = tuple(f for f in forms if f != "The {} one.")
    return [(form.format("G"), form.format(gold)) for form in forms]


def restated(gold: str, instruction: str) -> str | None:
    """The question restated around the gold: "Which jacket is the cheapest?" -> "The cheapest jacket is
    G." for the usual question shapes; None when the question has another shape."""
    m = re.match(r"(?i)^\s*(?:which|what)\s+(\w+(?:\s+\w+)?)\s+(is|has|was|costs?)\s+the\s+([\w-]+)\??\s*$", instruction)
    if m:
        noun, verb, adjective = m.groups()
        return f"The {adjective} {noun} is {gold}." if verb in ("is", "was") else f"The {noun} with the {adjective} is {gold}."
    m = re.match(r"(?i)^\s*how many\s+(.+?)\s+(?:are|were|does|do|did|has|have)\b.*\?\s*$", instruction)
    if m:
        return f"There are {gold} {m.group(1)}."
    return None


# what a person writes when the site cannot do it
REFUSAL_PHRASINGS = ("The site does not offer it.", "I searched but nothing came up.", "It is not available.",
                     "Nothing by that name exists on the site.", "There is no such option.", "Not listed.",
                     "I could not find it on the site.", "The site has nothing like that.", "It cannot be done here.",
                     "No results.", "It isn't offered.", "Sorry, they don't have that.")


def paraphrase_kind(gold: str) -> str:
    """The carrier family a gold takes (`paraphrases`): number for money, count for a bare number."""
    shape = value_shape(gold)
    return {"money": "number", "number": "count"}.get(shape, shape)
