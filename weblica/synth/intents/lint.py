"""The instruction lint: what a person would not write, or what tells the agent how to do the task.

Generation drops every draft that fails it (`generate.write_unvalidated`), and the task-grammar
tests run it over every skill's instructions. A problem is a short string naming what is wrong.
Besides articles, doubled words, hints and punctuation it knows the wrong fills seen in generated
tasks (tests/synth/test_synth_wording.py): a type named with the genre's generic noun ("Laptop gadget"), a
field label that is no noun filled in as one ("what is its documents needed?"), "is"/"are" not
agreeing with the noun after them, "the" before a person's title, the user's own things called
"your", an option's capital kept inside a sentence ("pay by Card"), a word said twice in two forms
("the last listing listed"), an offerer named with the genre's word twice ("the clinic Central
Clinic"), "Helpers's", a branch, venue or seller "founded" (it opened, they joined). With the site (`lint_drafts(drafts, site)`) it also drops shopping words on a
genre whose "price" is earned (a salary: "the cheapest job").
"""
from __future__ import annotations

import re
from functools import lru_cache
from typing import Any, Iterable

from weblica.synth.intents import CONSONANT_SOUND, is_noun, is_plural

# a/an before a vowel or consonant sound: "a event", "an gadget" (words read with another sound are
# listed: "a user", "an hour")
_A_VOWEL = re.compile(r"\b[Aa] ([aeiouAEIOU][\w-]*)")
_AN_CONSONANT = re.compile(r"\b[Aa]n ([b-df-hj-np-tv-zB-DF-HJ-NP-TV-Z][\w-]*)")
_A_OK = CONSONANT_SOUND
_AN_OK = ("hour", "honest", "honor", "honour", "heir", "x-", "mri", "sms", "fbi", "nba", "rsvp", "lcd", "led ", "hdmi")
_DOUBLED = re.compile(r"\b(\w+)\s+\1\b", re.IGNORECASE)
_SLOT = re.compile(r"\{[a-z_][a-z0-9_]*\}|\{\}")
# how-to hints: phrases that say which control to use, or where on the page the thing is
HINTS = ("use the", "using the", "click", "scroll", "further down", "search box", "search bar", "the filters",
         "use filters", "with the filter", "via the", "hover", "drag the", "the dropdown",
         "the sidebar", "type in", "press enter", "next page", "the load more", "the arrow")
_HINT = re.compile("|".join(r"\b" + re.escape(h).replace(r"\ ", r"\s+") + r"\b" for h in HINTS), re.IGNORECASE)
# "the Specs tab" is a hint, "the Prime Tab" (a tablet's name) is not: this one is matched in lower case only
_TAB_HINT = re.compile(r"\btabs?\b")
_DOUBLE_ALLOWED = {"that", "had", "is", "bye", "no"}  # "that that" and the like can be correct English


def problems(instruction: str, guided: bool = False) -> list[str]:
    """Everything wrong with one instruction; [] when it passes."""
    text = instruction.strip()
    found: list[str] = []
    if not text:
        return ["empty instruction"]
    for m in _A_VOWEL.finditer(text):
        if not m.group(1).lower().startswith(_A_OK):
            found.append(f"'a' before a vowel: '{m.group(0)}'")
    for m in re.finditer(r"\b[Aa]n ([\w-]+)", text):
        if m.group(1).lower().startswith(_A_OK):
            found.append(f"'an' before a consonant sound: '{m.group(0)}'")
    for m in _AN_CONSONANT.finditer(text):
        acronym = m.group(1).rstrip("s").isupper() and len(m.group(1)) > 1 and m.group(1)[0] in "FHLMNRSX"  # "an SUV"
        if not m.group(1).lower().startswith(_AN_OK) and not acronym:
            found.append(f"'an' before a consonant: '{m.group(0)}'")
    for m in _DOUBLED.finditer(_quoted_out(text)):
        if m.group(1).lower() not in _DOUBLE_ALLOWED and not m.group(1).isdigit():
            found.append(f"doubled word: '{m.group(0)}'")
    if not guided:
        hint = _HINT.search(_quoted_out(text)) or _TAB_HINT.search(_quoted_out(text))
        if hint:
            found.append(f"how-to hint in an unguided instruction: '{hint.group(0)}'")
    if text.count('"') % 2 or text.count("“") != text.count("”") or text.count("(") != text.count(")"):
        found.append("unbalanced quotes or brackets")
    if not re.search(r"[.?!][\"”')]?$", text):
        found.append("no final punctuation")
    if _SLOT.search(text):
        found.append(f"unfilled slot: '{_SLOT.search(text).group(0)}'")
    if text[:1].islower():
        found.append("starts lower-case")
    if re.search(r"\s[,.?!]", text) or "  " in text:
        found.append("space before punctuation or doubled space")
    found += _wording(_quoted_out(text))
    return found


# ---- wrong fills ------------------------------------------------------------------------------------
# the field asked about (up to three lower-case words): "its X?", "what is the X of the Y", "I need the X for the Y"
_FIELD = r"((?:[a-z][a-z-]* ){0,2}[a-z][a-z-]*)"
_FIELD_ASKED = re.compile(rf"\b(?:[Ii]ts|[Tt]heir) {_FIELD}(?=[?.]$| of\b)|\b(?:is|are|me|out) the {_FIELD}(?= of (?:the )?[A-Z])"
                          rf"|\bneed the {_FIELD}(?= for (?:the )?[A-Z])")
_PLACE_TAIL = {"in", "based", "is", "from", "at"}
_AGREES = re.compile(r"\b(is|are|was|were) (?:its|their|the) ([a-z]+)(?=\?| of\b| for\b)")
_TITLE_ARTICLE = re.compile(r"\b[Tt]he (?:Dr|Mr|Mrs|Ms|Prof)\.")
_YOUR_OWN = re.compile(r"\byour (cart|wishlist|preferences|display name|location|saved \w+|reading list|watchlist)\b")
_OPTION_CAPITAL = re.compile(r"\b(?:pay|paying|paid|payment) by ([A-Z][a-z]+)\b")
_POSSESSIVE = re.compile(r"\b\w+s's\b")
_WORD_PAIR = re.compile(r"\b([a-z]{4,}) (?=([a-z]{4,})\b)")
_FORMS = ("", "s", "es", "ed", "ing", "er", "ers")
_NAMED_TWICE = re.compile(r"\b([a-z]{4,}) ((?:[A-Z][\w&'-]* )*)([A-Z][a-z]+)\b")
_COUNTED_NAME = re.compile(r"\b(?:two|three|four|five|six|seven|eight|nine|ten) ((?:[A-Z][\w-]* )*[A-Z][\w-]*)"
                           r"(?= (?:to|in|into|and|for)\b|[,.?])")
# a place that opens said to be founded: "the branch of the Gold Saver founded", "the venue ... founded"
# (or a classifieds seller, who joined the site)
_PLACE_FOUNDED = re.compile(r"\b(?:branch|branches|venue|venues|seller|sellers)\b(?:(?![.?!]).)*\bfound(?:ed|ing)\b|"
                            r"\bfound(?:ed|ing)\b(?:(?![.?!]).)*\b(?:branch|branches|venue|venues|seller|sellers)\b", re.IGNORECASE)
_SHOP_WORDS = re.compile(r"\b(cheap\w*|(?:less|more|most|least) expensive|expensive|pric(?:ed|ey|ier|iest)|costs?|"
                         r"go for|spend|how much (?:is|are))\b", re.IGNORECASE)


@lru_cache(maxsize=1)
def _type_nouns() -> re.Pattern[str] | None:
    """"Laptop gadget(s)", "Coupe car(s)": every genre's types that are nouns themselves (`kind_words`)
    followed by that genre's generic noun."""
    from weblica.synth.spec import CatalogError, categories
    try:
        cats = categories()
    except CatalogError:
        return None
    # a kind said as "<kind> <noun>" anyway ("Clothing" -> "clothing listing") is only lower-cased, not joined
    pairs = {rf"{re.escape(kind)} (?:{re.escape(cat['item'][0])}|{re.escape(cat['item'][1])})"
             for cat in cats.values() for kind, words in (cat.get("kind_words") or {}).items()
             if str(words[0]).lower() != f"{kind} {cat['item'][0]}".lower()}
    return re.compile(r"\b(?:" + "|".join(sorted(pairs)) + r")\b") if pairs else None


def _wording(text: str) -> list[str]:
    """The wrong fills in a text whose quoted values are blanked."""
    found: list[str] = []
    types = _type_nouns()
    if types is not None:
        found += [f"type named with the generic noun: '{m.group(0)}'" for m in types.finditer(text)]
    for m in _FIELD_ASKED.finditer(text):
        words = next(g for g in m.groups() if g).split()
        while len(words) > 1 and words[-1] in _PLACE_TAIL:  # "which city is its brand (based) in?"
            words.pop()
        if not is_noun(" ".join(words)):
            found.append(f"field label that is no noun asked as one: '{m.group(0)}'")
    for m in _AGREES.finditer(text):
        if is_plural(m.group(2)) != (m.group(1) in ("are", "were")):
            found.append(f"verb does not agree with its noun: '{m.group(0)}'")
    if _TITLE_ARTICLE.search(text):
        found.append(f"'the' before a person's title: '{_TITLE_ARTICLE.search(text).group(0)}'")
    if _YOUR_OWN.search(text):
        found.append(f"the user's own things called 'your': '{_YOUR_OWN.search(text).group(0)}'")
    if _OPTION_CAPITAL.search(text) and not _OPTION_CAPITAL.search(text).group(1).isupper():
        found.append(f"capital inside a sentence: '{_OPTION_CAPITAL.search(text).group(0)}'")
    if _POSSESSIVE.search(text):
        found.append(f"possessive of a name ending in s: '{_POSSESSIVE.search(text).group(0)}'")
    for m in _WORD_PAIR.finditer(text):
        a, b = m.group(1), m.group(2)
        if a != b and _one_word_two_forms(a, b):
            found.append(f"a word said twice in two forms: '{m.group(0)}'")
    for m in _NAMED_TWICE.finditer(text):
        if m.group(1) == m.group(3).lower():
            found.append(f"offerer named with the genre's word twice: '{m.group(0)}'")
    for m in _COUNTED_NAME.finditer(text):
        if not m.group(1).endswith("s"):
            found.append(f"a count before a singular name: '{m.group(0)}'")
    if _PLACE_FOUNDED.search(text):
        found.append(f"a branch or venue said to be founded (it opened; a seller joined): "
                     f"'{_PLACE_FOUNDED.search(text).group(0)}'")
    return found


def _one_word_two_forms(a: str, b: str) -> bool:
    """"listing listed", "open opening": two forms of one stem side by side."""
    for n in range(min(len(a), len(b)), 3, -1):
        if a[:n] == b[:n]:
            return a[n:] in _FORMS and b[n:] in _FORMS
    return False


def genre_problems(instruction: str, site: Any) -> list[str]:
    """What is wrong with an instruction on this site's genre: shopping words where the "price" is earned
    (a salary) or is a fee for a service ("the cheapest cardiologist", "which doctor costs the least")."""
    if not (site.labels.get("pays") or site.labels.get("fee")):
        return []
    m = _SHOP_WORDS.search(_quoted_out(instruction))
    if not m:
        return []
    what = "earned" if site.labels.get("pays") else "a fee for a service"
    return [f"shopping word on a genre whose price is {what}: '{m.group(0)}'"]


def _quoted_out(text: str) -> str:
    """The text with quoted values blanked: a to-do titled "Review Review" is the user's data."""
    return re.sub(r"\"[^\"]*\"|“[^”]*”", '""', text)


def passes(instruction: str, guided: bool = False) -> bool:
    return not problems(instruction, guided)


def lint_drafts(drafts: Iterable[Any], site: Any = None) -> tuple[list[Any], list[tuple[str, list[str]]]]:
    """Split task drafts into those that pass and (instruction, problems) of those that do not; with
    the `site` they were made for, its genre's rules apply too."""
    kept, dropped = [], []
    for draft in drafts:
        found = problems(draft.instruction, getattr(draft, "guided", False))
        if site is not None:
            found += genre_problems(draft.instruction, site)
        if found:
            dropped.append((draft.instruction, found))
        else:
            kept.append(draft)
    return kept, dropped
