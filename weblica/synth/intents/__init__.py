"""The task grammar: intents (what a user wants), each with several phrasings (how people ask for it),
filled from a site's data with grammatical agreement. Skills and genre flows name an intent and its
slots; they never write instruction strings by hand.

    ASK_PRICE = intent("ask-price", "What does the {item} cost?", "How much is the {item}?", ...)
    site.task(TaskDraft(instruction=phrase(ASK_PRICE, site.rng, item=name), intent=ASK_PRICE.name, ...))
"""
from __future__ import annotations

import random
import re
import string
from dataclasses import dataclass

MIN_PHRASINGS = 5
INTENTS: dict[str, "Intent"] = {}


class GrammarError(ValueError):
    """An intent with too few phrasings, a slot its phrasings do not share, or a missing slot value."""


@dataclass(frozen=True)
class Intent:
    name: str
    phrasings: tuple[str, ...]

    @property
    def slots(self) -> set[str]:
        return {f for p in self.phrasings for _, f, _, _ in string.Formatter().parse(p) if f}


def intent(name: str, *phrasings: str) -> Intent:
    """Declare an intent with at least MIN_PHRASINGS phrasings (str.format templates over named slots,
    every phrasing using the same slots). Declaring a name twice with other phrasings is an error."""
    if len(set(phrasings)) < MIN_PHRASINGS:
        raise GrammarError(f"intent '{name}' has {len(set(phrasings))} distinct phrasings; "
                           f"give at least {MIN_PHRASINGS}")
    slot_sets = {frozenset(f for _, f, _, _ in string.Formatter().parse(p) if f) for p in phrasings}
    if len(slot_sets) > 1:
        raise GrammarError(f"intent '{name}': its phrasings use different slots {sorted(map(sorted, slot_sets))}")
    made = Intent(name, tuple(phrasings))
    if name in INTENTS and INTENTS[name] != made:
        raise GrammarError(f"intent '{name}' is declared twice with different phrasings")
    INTENTS[name] = made
    return made


_AN = re.compile(r"\b([Aa]) ([aeiouAEIOU]\w*)")


def article(noun: str) -> str:
    """'a sneaker', 'an event' (by the first letter; 'an hour'/'a user' are rare in our vocabularies)."""
    return f"{'an' if noun[:1].lower() in 'aeiou' else 'a'} {noun}"


def phrase(which: Intent, rng: random.Random, **slots: object) -> str:
    """One phrasing of the intent, picked by `rng`, with its slots filled, articles agreeing with the
    word after them ("a event" -> "an event") and the first letter capitalized."""
    missing = which.slots - slots.keys()
    if missing:
        raise GrammarError(f"intent '{which.name}' needs slot(s) {', '.join(sorted(missing))}")
    text = rng.choice(which.phrasings).format(**slots)
    text = _AN.sub(lambda m: f"{m.group(1)}n {m.group(2)}", text)
    return text[:1].upper() + text[1:]
