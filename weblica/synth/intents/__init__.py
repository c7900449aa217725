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

from weblica.synth.entities import is_person_named

MIN_PHRASINGS = 5
# the site's own words (`say` fills them from the site) and agreement words ({be}: "is"/"are"): a
# phrasing may use them or not
SITE_WORDS = frozenset({"noun", "nouns", "maker_word", "makers_word", "price_word", "place", "places", "saved",
                        "request_what", "founded"})
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


_AN = re.compile(r"\b([Aa]) ([aeiouAEIOU]\w*|[FHLMNRSX][A-Z]+s?\b)")
# words spelled with a vowel but said with a consonant sound: "a one-way flight", "a user"
CONSONANT_SOUND = ("uni", "use", "usu", "one", "eu", "ute", "ufo")
# an acronym read letter by letter takes "an" when its first letter's name starts with a vowel ("an SUV")
_VOWEL_LETTER = "FHLMNRSX"


def article(noun: str) -> str:
    """'a sneaker', 'an event', 'an SUV' (by the first letter, and by the sound of an acronym's first
    letter; 'an hour'/'a user' are rare in our vocabularies)."""
    word = noun.split(" ")[0]
    acronym = len(word) > 1 and word.rstrip("s").isupper() and word[:1] in _VOWEL_LETTER
    return f"{'an' if noun[:1].lower() in 'aeiou' or acronym else 'a'} {noun}"


# per rng, the phrasings of each intent not used yet: a site asking one intent several times uses
# different phrasings before it repeats one (held weakly: it goes with the rng)
_UNUSED: "weakref.WeakKeyDictionary[random.Random, dict[str, list[str]]]" = weakref.WeakKeyDictionary()
_THE_THE = re.compile(r"\b(the|a|an) (?:the|a|an) ", re.IGNORECASE)
_TWICE = re.compile(r"\b(\w+) (\1)\b", re.IGNORECASE)
_QUOTED = re.compile(r"(\"[^\"]*\")")
_POSSESSIVE_S = re.compile(r"\b(\w*s)'s\b")


def _once(text: str) -> str:
    """A word said twice in a row outside quotes ("the Hotel hotel" when a type is named like its
    noun) said once, and a possessive of a name ending in s written with the apostrophe alone
    ("Handy Helpers's" -> "Handy Helpers'"); quoted values are the user's and stay as they are."""
    return _outside_quotes(text, lambda part: _POSSESSIVE_S.sub(r"\1'", _TWICE.sub(r"\1", part)))


def phrase(which: Intent, rng: random.Random, rewrite: tuple[tuple[str, str], ...] = (), **slots: object) -> str:
    """One phrasing of the intent, picked by `rng` (each phrasing once before any repeats, for the
    same rng), with its slots filled, articles agreeing with the word after them ("a event" -> "an
    event", "the the" -> "the", "Hotel hotel" -> "Hotel") and the first letter capitalized.
    `rewrite` holds (regex, replacement) pairs applied to the picked template before it is filled:
    how `say` joins "{kind} {noun}" into one noun or drops "the" before a person's name."""
    missing = which.slots - slots.keys()
    if missing:
        raise GrammarError(f"intent '{which.name}' needs slot(s) {', '.join(sorted(missing))}")
    unused = _UNUSED.setdefault(rng, {})
    if not unused.get(which.name):
        unused[which.name] = rng.sample(which.phrasings, len(which.phrasings))
    template = unused[which.name].pop()
    for pattern, replacement in rewrite:
        template = re.sub(pattern, replacement, template)
    text = template.format(**slots)
    text = _once(_THE_THE.sub(lambda m: m.group(1) + " ", text))
    text = _AN.sub(lambda m: m.group(0) if m.group(2).lower().startswith(CONSONANT_SOUND)
                   else f"{m.group(1)}n {m.group(2)}", text)
    return text[:1].upper() + text[1:]


# ---- agreement -------------------------------------------------------------------------------------
_SINGULAR_S = ("ss", "us", "is", "ics", "news", "series")


def is_plural(noun: str) -> bool:
    """Whether a noun (a fact label: "Languages", "Warranty", "Opening hours") reads as plural."""
    last = noun.strip().split()[-1].lower() if noun.strip() else ""
    return last.endswith("s") and not last.endswith(_SINGULAR_S) or last in ("people", "children")


def is_are(noun: str) -> str:
    """"is" or "are", agreeing with the noun."""
    return "are" if is_plural(noun) else "is"


_NOT_NOUN_END = ("for", "in", "open", "to", "from", "by", "with", "able", "ible")
# a label ending in a participle ("Documents needed", "Tools required") is a phrase, not a noun
_PARTICIPLE = re.compile(r"[a-z]{2,}(?<!e)ed$|(?:needed|required|included|allowed|accepted)$")
_NOT_NOUN_START = ("how", "what", "when", "where", "who", "which", "is", "can", "do", "does")
# nouns that name a policy, a count or a rule, not a thing the entity has ("the pets of a flat", "its
# bikes" mislead), and adjectives that label a field ("Dietary")
_FIELD_NOUNS = {"pets", "owners", "start", "power", "care", "fit", "room", "case", "strings", "bikes", "comments",
                "dietary", "delivery", "support", "access", "storage", "card", "parking", "payment", "pricing",
                "accessibility"}


def is_noun(label: str) -> bool:
    """Whether a field label reads as a noun ("Warranty", "Opening hours") and so fits "the {label} of
    the X"; "Suitable for", "Doors open", "Washable", "Documents needed" and "How to apply" do not,
    and are asked about by name."""
    words = label.strip().lower().split()
    if not words:
        return False
    return (not words[-1].endswith(_NOT_NOUN_END) and not _PARTICIPLE.search(words[-1])
            and words[0] not in _NOT_NOUN_START and " ".join(words) not in _FIELD_NOUNS)


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
    for who offers an entity), {founded} (how that one began: "founded", "opened"), {price_word},
    {place} / {places} (its physical places: "store", "branch"),
    {saved} (the user's saved list: "wishlist", "saved doctors list") and {request_what} (what its date
    request asks for: "a stay", "a statement") unless the caller gives them.

    The genre's words shape the sentence too (`fitted`): a type that is itself a noun is said alone
    ("the cheapest laptop", not "the cheapest Laptop gadget"), a person's name takes no "the", an
    offerer named with the genre's word is not named twice ("the hotel group Meridian Group"), and on
    a genre whose "price" is earned (a salary) the shopping words become pay words."""
    labels = site.labels
    words = {"noun": site.item_noun, "nouns": site.items_noun, "maker_word": labels["maker"],
             "makers_word": labels["makers"], "price_word": labels["price"], "place": labels["place"],
             "places": labels["places"], "saved": saved_list(labels["saved"]),
             "request_what": request_what(labels["request"]), "founded": labels["founded"]}
    filled = {**{k: v for k, v in words.items() if k in which.slots}, **slots}
    rewrite, extra = fitted(site, which, filled)
    text = phrase(which, phrasing_rng(site), rewrite, **{**filled, **extra})
    if labels.get("pays"):
        text = pay_words(text)
    if labels.get("fee"):
        text = fee_once(text, str(labels["price"]))
    if _named_people(site):  # the entity is a person: "their clinic", not "its clinic"
        text = _outside_quotes(text, lambda part: re.sub(r"\bits\b", "their", part))
    _ASKED.setdefault(site, {})[text] = repr((which.name, sorted((k, str(v)) for k, v in slots.items())))
    return {"instruction": text, "intent": which.name, "guided": which.guided}


def saved_list(label: str) -> str:
    """The user's saved list as said in a sentence: "Wishlist" -> "wishlist", "Saved doctors" ->
    "saved doctors list", "My classes" -> "classes list" ("my" is the sentence's)."""
    text = label[:1].lower() + label[1:]
    text = re.sub(r"^my ", "", text)
    return text if re.search(r"(list|favourites|favorites)$", text) else f"{text} list"


def request_what(label: str) -> str:
    """What a date-range request form asks for, from its title: "Request a stay" -> "a stay",
    "Request catering" -> "catering"."""
    text = re.sub(r"^request\s+", "", label.strip(), flags=re.IGNORECASE)
    return text[:1].lower() + text[1:]


def kind_noun(cat: dict[str, Any], kind: str) -> tuple[str, str] | None:
    """(singular, plural) of a type that is itself a noun ("Laptop" -> laptop, laptops; "Headphones" ->
    pair of headphones, pairs of headphones), from the genre file's `kind_words`; None for a type that
    qualifies the genre's noun ("Fantasy" book, "Italian" dish)."""
    words = (cat.get("kind_words") or {}).get(kind)
    if not words:
        return None
    one, *many = [str(w) for w in words]
    return one, (many[0] if many else plural(one))


def kind_said(cat: dict[str, Any], kind: str) -> str:
    """A type as said inside a sentence: in lower case ("the cheapest night bus route", "automation
    apps"), unless it is an acronym ("HIIT") or a proper adjective the genre file lists under
    `proper_kinds` ("Italian dishes")."""
    if kind.split(" ")[0].isupper() or kind in (cat.get("proper_kinds") or []):
        return kind
    return kind[:1].lower() + kind[1:]


def kinds_said(cat: dict[str, Any], kind: str, items_noun: str) -> str:
    """The entities of a type, as a page names them: "coupes" (a type that is a noun), else the type
    and the genre's noun ("poetry books", "Italian dishes")."""
    joined = kind_noun(cat, kind)
    return joined[1] if joined else f"{kind_said(cat, kind)} {items_noun}"


def names_take_article(site: Any) -> bool:
    """Whether the site's entity names take "the" in a sentence ("the Nimbus Ultrabook"); a person's
    name and a genre with `name_article: false` (course titles) do not."""
    return not _named_people(site) and site.cat.get("name_article") is not False


def the_name(site: Any, name: str) -> str:
    """An entity's name as said inside a sentence: "the Nimbus Ultrabook", "Dr. Ana Dubois"."""
    return f"the {name}" if names_take_article(site) else name


def _named_people(site: Any) -> bool:
    return is_person_named(site.cat)


# slots that hold an entity's name (a person's name takes no article: "Dr. Ana Dubois", not "the Dr. ...")
NAME_SLOTS = ("item", "a", "b")


def fitted(site: Any, which: Intent, slots: dict[str, object]) -> tuple[tuple[tuple[str, str], ...], dict[str, str]]:
    """The template rewrites (for `phrase`) and extra slot values that fit an intent to the site's genre."""
    rewrite: list[tuple[str, str]] = []
    extra: dict[str, str] = {}
    kind = slots.get("kind")
    joined = kind_noun(site.cat, str(kind)) if kind is not None else None
    if joined:
        extra["kind_noun"], extra["kind_nouns"] = joined
        rewrite += [(r"\{kind\} \{noun\}", "{kind_noun}"), (r"\{kind\} \{nouns\}", "{kind_nouns}"),
                    (r"the \{kind\} ones", "the {kind_nouns}")]
    if kind is not None:
        extra["kind"] = kind_said(site.cat, str(kind))
    if not names_take_article(site):
        rewrite += [(r"\b[Tt]he \{(%s)\}" % slot, r"{\1}") for slot in NAME_SLOTS if slot in slots]
    if site.labels.get("fee"):
        # a fee for a service (a consultation, an application) is not what a thing "costs": "the
        # cardiologist with the lowest consultation fee", not "the cheapest cardiologist"
        rewrite += FEE_REWRITES
        extra["price_word"] = str(slots.get("price_word", site.labels["price"]))
        extra.update({slot: fee_said(slots[slot], extra["price_word"]) for slot in ("extreme", "order")
                      if isinstance(slots.get(slot), str)})
    if "item" in slots and site.labels.get("sold_as"):
        # what is sold is a ticket for the event, not the event: "How much is a ticket for X?"
        rewrite.append((r"What does ((?:the )?)\{item\} go for\?", r"How much is %s for \1{item}?"
                        % article(str(site.labels["sold_as"]))))
    if "item" in slots and not site.labels["sells"] and not site.labels.get("pays"):
        # nothing is sold: a doctor, a bank account or a bus route does not "go for" a price
        rewrite.append((r"What does ((?:the )?)\{item\} go for\?", r"What is the {price_word} for \1{item}?"))
    if "item" in slots and is_plural(str(slots["item"])) and ":" not in str(slots["item"]):
        # a name that is a plural noun takes a plural verb: "What do the Honeyed Carrots go for?"
        rewrite.append((r"What does ((?:the )?)\{item\} go for\?", r"What do \1{item} go for?"))
    maker, maker_word = str(slots.get("maker", "")), str(slots.get("maker_word", site.labels["maker"]))
    if maker and maker_word.split()[-1].lower() in maker.lower().split():
        rewrite.append((r"\b[Tt]he \{maker_word\} \{maker\}", "{maker}"))
    return tuple(rewrite), extra


# the entity (template slots after the kind rewrites) a price comparison is said of
_PRICED = r"(\{kind\} \{nouns?\}|\{kind_nouns?\}|\{nouns?\}|entry|one|result|match)"
# a genre whose "price" is a fee for a service (`fee: true` in its labels): price comparisons said
# through the fee's own name; {extreme} and {order} are filled as "lowest consultation fee (first)"
FEE_REWRITES = ((r"\b(?:[Cc]heapest|[Ll]east expensive|[Ll]owest-priced) " + _PRICED, r"\1 with the lowest {price_word}"),
                (r"\b(?:[Mm]ost expensive|[Pp]riciest|[Hh]ighest-priced|[Dd]earest) " + _PRICED, r"\1 with the highest {price_word}"),
                (r"\{extreme\} " + _PRICED, r"\1 with the {extreme}"), (r"\bis the \{extreme\}", "has the {extreme}"),
                (r"\bis the (?:cheapest|least expensive)\b", "has the lowest {price_word}"),
                (r"\bis the most expensive\b", "has the highest {price_word}"),
                (r"\bcosts? the least\b", "has the lowest {price_word}"),
                (r"\bcosts? the most\b", "has the highest {price_word}"),
                (r"\bcosts less\b", "has the lower {price_word}"), (r"\bcosts more\b", "has the higher {price_word}"),
                (r"\b(?:cheaper|less expensive)\b", "with the lower {price_word}"),
                (r"\bWhat does ([^?]+?) (?:cost|go for)\?", r"What is the {price_word} for \1?"),
                (r"\bwhat does ([^?]+?) (?:cost|go for)\?", r"what is the {price_word} for \1?"),
                (r"\bHow much (is|are) ([^?]+)\?", r"What \1 the {price_word} of \2?"),
                (r"\bhow much (is|are) ([^?]+)\?", r"what \1 the {price_word} of \2?"))
_FEE_EXTREMES = ((r"\b(?:cheapest|least expensive)\b", "lowest {}"), (r"\bmost expensive\b", "highest {}"))


def fee_once(text: str, price_word: str) -> str:
    """A fee named once: "the monthly fee of the account with the lowest monthly fee in X" -> "the
    lowest monthly fee of any account in X"."""
    fee = re.escape(price_word)
    return re.sub(rf"\b([Tt]he) {fee} (?:of|for) (?:the|your) ([\w' -]+?) with the (lowest|highest) {fee}\b",
                  rf"\1 \3 {price_word} of any \2", text)


def fee_said(value: str, price_word: str) -> str:
    """A sort or extreme said through a fee's name: "cheapest first" -> "lowest consultation fee first"."""
    for pattern, said in _FEE_EXTREMES:
        value = re.sub(pattern, said.format(price_word), value)
    return value


# a genre whose "price" is paid to the user (a salary): shopping words said as pay words
_PAY_WORDS = [(r"\bcheapest\b", "lowest-paid"),
              (r"\bleast expensive\b", "lowest-paid"), (r"\blowest-priced\b", "lowest-paid"),
              (r"\bmost expensive\b", "best-paid"), (r"\bpriciest\b", "best-paid"),
              (r"\bcosts the least\b", "pays the least"), (r"\bcosts less\b", "pays less"),
              (r"\bless expensive\b", "lower-paid"), (r"\bcheaper\b", "lower-paid"),
              (r"\bpriced at\b", "paying"), (r"\bdoes (.+?) (?:cost|go for)\?", r"does \1 pay?"),
              (r"\bhow much is (the|your) ([^?]+)\?", r"what does \1 \2 pay?")]


def _outside_quotes(text: str, change: Any) -> str:
    """`change` applied to the text outside quoted values (those are the user's and stay as they are)."""
    return "".join(part if part.startswith('"') else change(part) for part in _QUOTED.split(text))


def pay_words(text: str) -> str:
    """Shopping words ("cheapest", "most expensive", "costs less") as pay words ("lowest-paid",
    "best-paid", "pays less"), outside quotes; what has no pay word stays and the lint drops it."""
    def change(part: str) -> str:
        for pattern, replacement in _PAY_WORDS:
            part = re.sub(pattern, replacement, part, flags=re.IGNORECASE)
        return part
    out = _outside_quotes(text, change)
    return out[:1].upper() + out[1:]
