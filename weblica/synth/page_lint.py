"""The page lint: what a person would see as broken in a generated site's text, read as the instruction
lint reads instructions (weblica/synth/intents/lint.py), over every rendered page and every phrasing its
pop-ups may say (the distractors' texts travel in the page as JSON and are drawn per episode).

It finds the gaps a template leaves when a slot is empty ("Need a hand finding the right ?"), articles
that disagree with their noun ("a account"), doubled words, and values that leaked from code ("undefined",
"NaN", "{name}"). A problem is (page, text, what is wrong)."""
from __future__ import annotations

import json
import re
from html import unescape
from typing import Any, Iterable, Iterator

from weblica.synth.content_metrics import text_lines
from weblica.synth.intents import CONSONANT_SOUND

_DISTRACTORS = re.compile(r'<script type="application/json" id="weblica-distractors">(.*?)</script>', re.S)
# a word that needs a noun after it, followed by punctuation or the end of its block: the slot was empty
# (capital "A" is left alone: "Plan A", "Ivo A.")
_GAP = re.compile(r"\b(the|a|an|your|our|their|its)\s*([?!.,:;)]|$)|\b(The|An|Your|Our|Their|Its)\s*$")
# English puts no space before these; a space there is where an empty value was
_SPACE_BEFORE = re.compile(r"\w \s*[?!,;:](?!\w)")
_A_VOWEL = re.compile(r"\b[Aa] ([aeiouAEIOU][\w-]*)")
_AN_CONSONANT = re.compile(r"\b[Aa]n ([b-df-hj-np-tv-zB-DF-HJ-NP-TV-Z][a-z][\w-]*)")
_AN_OK = ("hour", "honest", "honor", "honour", "heir")
_DOUBLED = re.compile(r"\b([A-Za-z]+)\s+\1\b")
_DOUBLE_ALLOWED = {"that", "had", "is", "no", "bye", "very", "so", "really", "knock"}
# ("None" is left alone: "Minimum deposit: None" is English)
_LEAK = re.compile(r"\b(undefined|NaN|null)\b|\{[a-z_]*\}|\[object Object\]")


# where an inline element starts or ends: "Silent Laptop" followed by its "Laptop" badge is two things
# side by side, not a doubled word
TAG_EDGE = "\u2063"


def text_problems(marked: str) -> list[str]:
    """Everything wrong with one line of page text (inline tag edges marked with TAG_EDGE); [] when it
    reads right."""
    text = " ".join(marked.replace(TAG_EDGE, " ").split())
    joined = " ".join(marked.replace(TAG_EDGE, "").split())   # "<b>Format</b>:" reads "Format:"
    found = []
    for m in _GAP.finditer(text):
        found.append(f"a gap after '{m.group(1) or m.group(3)}': '{text[max(0, m.start() - 20):m.end()]}'")
    for m in _SPACE_BEFORE.finditer(joined):
        found.append(f"a space before punctuation: '{joined[max(0, m.start() - 20):m.end()]}'")
    for m in _A_VOWEL.finditer(text):
        if not m.group(1).lower().startswith(CONSONANT_SOUND) and len(m.group(1)) > 1:
            found.append(f"'a' before a vowel: '{m.group(0)}'")
    for m in _AN_CONSONANT.finditer(text):
        if not m.group(1).lower().startswith(_AN_OK):
            found.append(f"'an' before a consonant: '{m.group(0)}'")
    for m in _DOUBLED.finditer(marked):
        if m.group(1).lower() not in _DOUBLE_ALLOWED:
            found.append(f"doubled word: '{m.group(0)}'")
    found += [f"a value leaked from code: '{m.group(0)}'" for m in _LEAK.finditer(text)]
    return found


def _strings(value: Any) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for v in value.values():
            yield from _strings(v)
    elif isinstance(value, list):
        for v in value:
            yield from _strings(v)


def page_texts(html: str) -> list[str]:
    """The text a person may read on a page: its lines (inline tag edges marked), and every phrasing its
    pop-ups may show."""
    texts = text_lines(html, inline_mark=TAG_EDGE)
    for blob in _DISTRACTORS.findall(html):
        texts += list(_strings(json.loads(unescape(blob)).get("texts", {})))
    return texts


def lint_pages(pages: dict[str, str] | Iterable[tuple[str, str]]) -> list[tuple[str, str, str]]:
    """(page, text, problem) for every problem on the pages (path -> HTML); each distinct text once."""
    seen: set[str] = set()
    found = []
    for path, html in (pages.items() if isinstance(pages, dict) else pages):
        for text in page_texts(html):
            if text in seen:
                continue
            seen.add(text)
            found += [(path, text, problem) for problem in text_problems(text)]
    return found
