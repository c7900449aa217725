"""The instruction lint: what a person would not write, or what tells the agent how to do the task.

Generation drops every draft that fails it (`generate.write_unvalidated`), and the task-grammar
tests run it over every skill's instructions. A problem is a short string naming what is wrong.
"""
from __future__ import annotations

import re
from typing import Any, Iterable

# a/an before a vowel or consonant sound: "a event", "an gadget" (words read with another sound are
# listed: "a user", "an hour")
_A_VOWEL = re.compile(r"\b[Aa] ([aeiouAEIOU][\w-]*)")
_AN_CONSONANT = re.compile(r"\b[Aa]n ([b-df-hj-np-tv-zB-DF-HJ-NP-TV-Z][\w-]*)")
_A_OK = ("uni", "use", "usu", "one", "eu", "ute", "ufo")
_AN_OK = ("hour", "honest", "honor", "honour", "heir", "x-", "mri", "sms", "fbi", "nba", "rsvp", "lcd", "led ", "hdmi")
_DOUBLED = re.compile(r"\b(\w+)\s+\1\b", re.IGNORECASE)
_SLOT = re.compile(r"\{[a-z_][a-z0-9_]*\}|\{\}")
# how-to hints: phrases that say which control to use, or where on the page the thing is
HINTS = ("use the", "using the", "click", "scroll", "further down", "search box", "search bar", "the filters",
         "use filters", "with the filter", "via the", "hover", "drag the", "the dropdown", "tab ",
         "the sidebar", "type in", "press enter", "next page", "the load more", "the arrow")
_HINT = re.compile("|".join(r"\b" + re.escape(h).replace(r"\ ", r"\s+") for h in HINTS), re.IGNORECASE)
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
    for m in _AN_CONSONANT.finditer(text):
        if not m.group(1).lower().startswith(_AN_OK):
            found.append(f"'an' before a consonant: '{m.group(0)}'")
    for m in _DOUBLED.finditer(_quoted_out(text)):
        if m.group(1).lower() not in _DOUBLE_ALLOWED and not m.group(1).isdigit():
            found.append(f"doubled word: '{m.group(0)}'")
    if not guided:
        hint = _HINT.search(_quoted_out(text))
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
    return found


def _quoted_out(text: str) -> str:
    """The text with quoted values blanked: a to-do titled "Review Review" is the user's data."""
    return re.sub(r"\"[^\"]*\"|“[^”]*”", '""', text)


def passes(instruction: str, guided: bool = False) -> bool:
    return not problems(instruction, guided)


def lint_drafts(drafts: Iterable[Any]) -> tuple[list[Any], list[tuple[str, list[str]]]]:
    """Split task drafts into those that pass and (instruction, problems) of those that do not."""
    kept, dropped = [], []
    for draft in drafts:
        found = problems(draft.instruction, getattr(draft, "guided", False))
        if found:
            dropped.append((draft.instruction, found))
        else:
            kept.append(draft)
    return kept, dropped
