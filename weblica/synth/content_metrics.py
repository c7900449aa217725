"""What a person reading a set of synth sites would notice, measured from their written bundles (no browser):
text stamped out across sites, headings repeated across start pages, the languages the sites speak, the
web mechanics their pages use, how many tasks chain skills and how long their oracles are. `bench/synth.py`
prints these beside genre_metrics' design systems, shop phrases and shared names (issue 38, point 9)."""
from __future__ import annotations

import json
import re
import statistics
from collections import Counter
from html import unescape
from pathlib import Path
from typing import Any

from weblica.synth.intents.composed import COMPOSED

_SCRIPT_STYLE = re.compile(r"<(script|style)\b.*?</\1>", re.S | re.I)
_TAG = re.compile(r"<[^>]+>")
_BLOCK = re.compile(r"</?(p|div|h[1-6]|li|ul|ol|dl|dt|dd|td|th|tr|table|thead|tbody|section|article|header|footer|nav|"
                    r"aside|main|form|fieldset|legend|label|button|option|select|textarea|input|br|hr|figure|"
                    r"figcaption|title|blockquote|summary|details|dialog|body|head|html|img|svg|iframe)\b[^>]*>", re.I)
_INLINE = re.compile(r"<[^>]+>")
_HEADING = re.compile(r"<h([1-3])\b[^>]*>(.*?)</h\1>", re.S | re.I)
# what language a text is in, read from its words (a page's <html lang> follows the site's locale even
# where every word is English, which is what a person notices): the most frequent function words of each
FUNCTION_WORDS = {
    "en": {"the", "and", "of", "to", "your", "with", "for", "is", "on", "in", "you", "our", "a"},
    "de": {"der", "die", "und", "das", "mit", "für", "ihr", "ihre", "ist", "den", "von", "zu", "sie"},
    "fr": {"le", "la", "les", "et", "des", "pour", "votre", "vos", "avec", "est", "du", "une", "un"},
    "es": {"el", "los", "las", "y", "para", "con", "su", "tu", "es", "del", "una", "por", "sus"},
}
_KANA = re.compile(r"[\u3040-\u30ff]")
# a line of text as people read it: 5+ words; shorter ones ("Sign in", "Next page") are the UI's own words
MIN_WORDS = 5
# what an agent has to cope with on the modern web, found in the pages' markup (what each site's HTML holds;
# the shared runtime scripts are the same on every site and tell nothing about one)
MECHANICS: dict[str, re.Pattern[str]] = {
    "iframe": re.compile(r"<iframe\b", re.I),
    "web component": re.compile(r"<[a-z][a-z0-9]*-[a-z0-9-]+[\s>]|shadowrootmode=", re.I),
    "inline svg": re.compile(r"<svg\b", re.I),
    "canvas": re.compile(r"<canvas\b", re.I),
    "video": re.compile(r"<video\b", re.I),
    "srcset": re.compile(r"\bsrcset=", re.I),
    "new tab": re.compile(r"target=\"_blank\"|window\.open\(|data-new-tab", re.I),
    "file upload": re.compile(r"type=\"file\"", re.I),
    "toast": re.compile(r"\btoast\b|role=\"status\"", re.I),
    "spa routing": re.compile(r"pushState|data-spa-route", re.I),
    "combobox": re.compile(r"role=\"combobox\"", re.I),
    "login form": re.compile(r"type=\"password\"", re.I),
    "login wall": re.compile(r"data-login-wall|data-wall=\"login\"", re.I),
    "consent wall": re.compile(r"data-consent-wall|data-wall=\"consent\"", re.I),
    "paywall or age gate": re.compile(r"data-paywall|data-age-gate|data-wall=\"(pay|age)\"", re.I),
    "pre-ticked opt-in": re.compile(r"<input\b(?=[^>]*type=\"checkbox\")(?=[^>]*\bchecked\b)"
                                    r"(?=[^>]*(newsletter|marketing|offers|opt))[^>]*>", re.I),
}
_IMG = re.compile(r"<img\b[^>]*>", re.I)
_ALT = re.compile(r"\balt=\"([^\"]*)\"", re.I)
# actions that carry no decision: scrolling an element into view, waiting, and saying done
NOT_COUNTED = frozenset({"scroll", "wait", "done"})


def text_lines(html: str, inline_mark: str = "") -> list[str]:
    """The page's visible text as lines: one per block (a paragraph, a heading, a list item, a cell, a
    button), inline markup (links, emphasis) kept inside its line, where `inline_mark` stands for each
    inline tag; whitespace collapsed."""
    text = _INLINE.sub(inline_mark, _BLOCK.sub("\n", _SCRIPT_STYLE.sub(" ", html)))
    return [" ".join(unescape(line).split()) for line in text.splitlines() if line.strip()]


def long_lines(html: str) -> set[str]:
    return {line for line in text_lines(html) if len(line.split()) >= MIN_WORDS}


def headings(html: str) -> list[str]:
    """The h1-h3 texts of a page."""
    return [" ".join(unescape(_TAG.sub(" ", h)).split()) for _, h in _HEADING.findall(html)]


def language(html: str) -> str:
    """The language a page's text is written in ("en", "de", "fr", "es", "ja"), from its words; "" for a
    page with too few words to tell."""
    text = " ".join(text_lines(html))
    if len(_KANA.findall(text)) >= 20:
        return "ja"
    words = Counter(w for w in re.findall(r"[^\W\d_]+", text.lower()))
    hits = {lang: sum(words[w] for w in common) for lang, common in FUNCTION_WORDS.items()}
    best = max(hits, key=lambda lang: hits[lang])
    return best if hits[best] >= 10 else ""


def oracle_length(task: dict[str, Any]) -> int:
    """The oracle's actions, scrolls, waits and `done` left out."""
    return sum(1 for a in task.get("oracle") or [] if a.get("name") not in NOT_COUNTED)


def _pages(bundle: Path) -> dict[str, str]:
    return {p.relative_to(bundle / "public").as_posix(): p.read_text(encoding="utf-8")
            for p in sorted((bundle / "public").rglob("*.html"))}


def _tasks(bundle: Path) -> list[dict[str, Any]]:
    path = bundle / "tasks.jsonl"
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()] \
        if path.exists() else []


def content_figures(bundles: list[Path]) -> dict[str, Any]:
    """The figures of written bundles: cross-site shared lines (per site, the share of its 5+-word lines
    that 2 or more other sites also show: median and max), the distinct share of start-page headings, the
    language share (sites per language; `non_english`), mechanics coverage (sites whose pages use each),
    the composed share of tasks and the distribution of oracle lengths."""
    lines_of = {b: set().union(*(long_lines(html) for html in _pages(b).values())) for b in bundles}
    seen_on: Counter[str] = Counter(line for lines in lines_of.values() for line in lines)
    shared = [sum(1 for line in lines if seen_on[line] >= 3) / len(lines) for lines in lines_of.values() if lines]
    start_headings: list[str] = []
    languages: Counter[str] = Counter()
    mechanics: Counter[str] = Counter()
    for bundle in bundles:
        pages = _pages(bundle)
        home = pages.get("index.html", "")
        start_headings += headings(home)
        languages[language(home) or "?"] += 1
        markup = "\n".join(pages.values())
        mechanics.update(name for name, pattern in MECHANICS.items() if pattern.search(markup))
    # content images: not the logo beside the site's name, not an image marked decorative
    images = [tag for b in bundles for html in _pages(b).values() for tag in _IMG.findall(html)
              if "logo-img" not in tag and 'role="presentation"' not in tag]
    described = sum(1 for tag in images if (m := _ALT.search(tag)) and m.group(1).strip())
    tasks = [t for b in bundles for t in _tasks(b)]
    lengths = sorted(oracle_length(t) for t in tasks)
    composed = sum(1 for t in tasks if (t.get("metadata") or {}).get("intent") in COMPOSED)
    n = len(bundles)
    return {
        "sites": n,
        "shared_lines": {"median": round(statistics.median(shared), 3) if shared else 0.0,
                         "max": round(max(shared), 3) if shared else 0.0},
        "distinct_start_headings": {"distinct": len(set(start_headings)), "total": len(start_headings)},
        "languages": dict(sorted(languages.items())),
        "non_english_share": round(sum(c for lang, c in languages.items() if lang not in ("en", "?")) / n, 3) if n else 0.0,
        "mechanics": {name: f"{mechanics[name]}/{n}" for name in MECHANICS},
        "alt_text": f"{described}/{len(images)}",
        "composed_share": round(composed / len(tasks), 3) if tasks else 0.0,
        "oracle_length": {"tasks": len(tasks), "mean": round(statistics.mean(lengths), 2) if lengths else 0.0,
                          "median": statistics.median(lengths) if lengths else 0,
                          "share_11_or_more": round(sum(1 for x in lengths if x >= 11) / len(lengths), 3) if lengths else 0.0,
                          "histogram": dict(sorted(Counter(min(x, 20) for x in lengths).items()))},
    }
