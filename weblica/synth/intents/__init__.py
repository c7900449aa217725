"""The task grammar: intents (what a user wants), each with several phrasings (how people ask for it),
filled from a site's data with grammatical agreement. Skills and genre flows name an intent and its
slots; they never write instruction strings by hand. The skills' intents are declared by area in
`browse.py`, `catalog.py`, `forms.py`, `stateful.py` and `composed.py` (chains of skills); `lint.py`,
`dedupe.py`, `difficulty.py` and `skeleton.py` are what generation and the benches apply to them.

    ASK_PRICE = intent("ask-price", "What is the {price_word} of the {item}?", "How much is the {item}?", ...)
    site.task(TaskDraft(**say(site, ASK_PRICE, item=name), ...))   # instruction, intent, guided
    phrase(ASK_PRICE, rng, item=name, price_word="fare")           # the text alone, from any rng
"""
from __future__ import annotations

import random
import re
import string
import weakref
from dataclasses import dataclass
from typing import Any

MIN_PHRASINGS = 5
# the site's own words (`say` fills them from the site) and agreement words ({be}: "is"/"are"): a
# phrasing may use them or not
SITE_WORDS = frozenset({"noun", "nouns", "maker_word", "makers_word", "price_word"})
OPTIONAL_SLOTS = SITE_WORDS | {"be"}
INTENTS: dict[str, "Intent"] = {}


class GrammarError(ValueError):
    """An intent with too few phrasings, a slot its phrasings do not share, or a missing slot value."""


@dataclass(frozen=True)
class Intent:
    name: str
    phrasings: tuple[str, ...]
    guided: bool = False  # its phrasings say how to do it ("use the search box"): the task is marked guided

    @property
    def slots(self) -> set[str]:
        return {f for p in self.phrasings for _, f, _, _ in string.Formatter().parse(p) if f}


def intent(name: str, *phrasings: str, guided: bool = False) -> Intent:
    """Declare an intent with at least MIN_PHRASINGS phrasings (str.format templates over named slots,
    every phrasing using the same slots, apart from the OPTIONAL_SLOTS a phrasing may leave out). Declaring a name twice with other phrasings is an error.
    `guided` intents may tell how to do the task; their tasks are marked guided."""
    if len(set(phrasings)) < MIN_PHRASINGS:
        raise GrammarError(f"intent '{name}' has {len(set(phrasings))} distinct phrasings; "
                           f"give at least {MIN_PHRASINGS}")
    slot_sets = {frozenset(f for _, f, _, _ in string.Formatter().parse(p) if f) - OPTIONAL_SLOTS for p in phrasings}
    if len(slot_sets) > 1:
        raise GrammarError(f"intent '{name}': its phrasings use different slots {sorted(map(sorted, slot_sets))}")
    made = Intent(name, tuple(phrasings), guided)
    if name in INTENTS and INTENTS[name] != made:
        raise GrammarError(f"intent '{name}' is declared twice with different phrasings")
    INTENTS[name] = made
    return made


_AN = re.compile(r"\b([Aa]) ([aeiouAEIOU]\w*)")


def article(noun: str) -> str:
    """'a sneaker', 'an event' (by the first letter; 'an hour'/'a user' are rare in our vocabularies)."""
    return f"{'an' if noun[:1].lower() in 'aeiou' else 'a'} {noun}"


# per rng, the phrasings of each intent not used yet: a site asking one intent several times uses
# different phrasings before it repeats one (held weakly: it goes with the rng)
_UNUSED: "weakref.WeakKeyDictionary[random.Random, dict[str, list[str]]]" = weakref.WeakKeyDictionary()
_THE_THE = re.compile(r"\b(the|a|an) (?:the|a|an) ", re.IGNORECASE)
_TWICE = re.compile(r"\b(\w+) (\1)\b", re.IGNORECASE)
_QUOTED = re.compile(r"(\"[^\"]*\")")


def _once(text: str) -> str:
    """A word said twice in a row outside quotes ("the Hotel hotel" when a type is named like its
    noun) said once; quoted values are the user's and stay as they are."""
    return "".join(part if part.startswith('"') else _TWICE.sub(r"\1", part) for part in _QUOTED.split(text))


def phrase(which: Intent, rng: random.Random, **slots: object) -> str:
    """One phrasing of the intent, picked by `rng` (each phrasing once before any repeats, for the
    same rng), with its slots filled, articles agreeing with the word after them ("a event" -> "an
    event", "the the" -> "the", "Hotel hotel" -> "Hotel") and the first letter capitalized."""
    missing = which.slots - slots.keys()
    if missing:
        raise GrammarError(f"intent '{which.name}' needs slot(s) {', '.join(sorted(missing))}")
    unused = _UNUSED.setdefault(rng, {})
    if not unused.get(which.name):
        unused[which.name] = rng.sample(which.phrasings, len(which.phrasings))
    text = unused[which.name].pop().format(**slots)
    text = _once(_THE_THE.sub(lambda m: m.group(1) + " ", text))
    text = _AN.sub(lambda m: f"{m.group(1)}n {m.group(2)}", text)
    return text[:1].upper() + text[1:]


# ---- agreement -------------------------------------------------------------------------------------
_SINGULAR_S = ("ss", "us", "is", "ics", "news")


def is_plural(noun: str) -> bool:
    """Whether a noun (a fact label: "Languages", "Warranty", "Opening hours") reads as plural."""
    last = noun.strip().split()[-1].lower() if noun.strip() else ""
    return last.endswith("s") and not last.endswith(_SINGULAR_S) or last in ("people", "children")


def is_are(noun: str) -> str:
    """"is" or "are", agreeing with the noun."""
    return "are" if is_plural(noun) else "is"


_NOT_NOUN_END = ("for", "in", "open", "to", "from", "by", "with", "able", "ible")
# nouns that name a policy or a count, not a thing the entity has: "the pets of a flat" misleads
_FIELD_NOUNS = {"pets", "owners", "start", "power", "care", "fit", "room", "case", "strings"}


def is_noun(label: str) -> bool:
    """Whether a field label reads as a noun ("Warranty", "Opening hours") and so fits "the {label} of
    the X"; "Suitable for", "Doors open" and "Washable" do not, and are asked about by name."""
    last = label.strip().split()[-1].lower() if label.strip() else ""
    return not last.endswith(_NOT_NOUN_END) and label.strip().lower() not in _FIELD_NOUNS


def plural(noun: str) -> str:
    """The plural of an English noun ("class" -> "classes", "city" -> "cities", "Laptop" -> "Laptops");
    a noun already plural is kept."""
    if is_plural(noun) or not noun:
        return noun
    head, _, last = noun.rpartition(" ")
    lower = last.lower()
    if lower.endswith(("s", "x", "z", "ch", "sh")):
        last += "es"
    elif lower.endswith("y") and lower[-2:-1] not in ("a", "e", "i", "o", "u"):
        last = last[:-1] + "ies"
    else:
        last += "s"
    return f"{head} {last}" if head else last


def count_of(n: int, noun: str, nouns: str | None = None) -> str:
    """"1 gadget", "3 gadgets" (`nouns` when the plural is irregular)."""
    return f"{n} {noun if n == 1 else nouns or plural(noun)}"


def listing(parts: list[str], conjunction: str = "and") -> str:
    """"a", "a and b", "a, b and c"."""
    if len(parts) <= 1:
        return "".join(parts)
    return f"{', '.join(parts[:-1])} {conjunction} {parts[-1]}"


# ---- what skills and flows call --------------------------------------------------------------------
_PHRASING_RNG: "weakref.WeakKeyDictionary[Any, random.Random]" = weakref.WeakKeyDictionary()


def phrasing_rng(site: Any) -> random.Random:
    """The rng a site's phrasings are drawn from: its own stream (seeded by the site), so choosing a
    phrasing never shifts the site's data rng and the tasks stay the ones the data gives."""
    if site not in _PHRASING_RNG:
        _PHRASING_RNG[site] = random.Random(f"phrasing:{site.spec.site_id}:{site.spec.seed}")
    return _PHRASING_RNG[site]


# per site, what each instruction `say` made asks: (intent, its slot values), for de-duplication
_ASKED: "weakref.WeakKeyDictionary[Any, dict[str, str]]" = weakref.WeakKeyDictionary()


def asked(site: Any, instruction: str) -> str | None:
    """The intent and slot values (as one key) of an instruction `say` made for this site, else None."""
    return _ASKED.get(site, {}).get(instruction)


def say(site: Any, which: Intent, **slots: object) -> dict[str, Any]:
    """The TaskDraft fields of an intent asked on a site: `TaskDraft(**say(site, OPEN_ITEM, item=name), ...)`
    gives its instruction (phrased by the site's phrasing rng), intent id and guided flag. The genre
    words are slots too: {noun} and {nouns} (the site's entity nouns), {maker_word} and {makers_word} (its label
    for who offers an entity) and {price_word} unless the caller gives them."""
    words = {"noun": site.item_noun, "nouns": site.items_noun, "maker_word": site.labels["maker"],
             "makers_word": site.labels["makers"], "price_word": site.labels["price"]}
    filled = {**{k: v for k, v in words.items() if k in which.slots}, **slots}
    text = phrase(which, phrasing_rng(site), **filled)
    _ASKED.setdefault(site, {})[text] = repr((which.name, sorted((k, str(v)) for k, v in slots.items())))
    return {"instruction": text, "intent": which.name, "guided": which.guided}
