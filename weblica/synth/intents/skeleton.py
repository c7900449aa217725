"""Instruction skeletons: an instruction with its entity names, numbers, prices, dates and quoted text
masked, so "What is the price of the Swift Pro?" and "What is the price of the Echo Max?" are one
skeleton. The share of distinct skeletons among a set of tasks says how varied its phrasings are
(issue #18 point 9 asks >= 0.6); `bench/synth.py` and the task-grammar tests measure it with these."""
from __future__ import annotations

import re
from typing import Any, Iterable

NAME, QUOTED, NUMBER, MONTH = "<name>", "<quoted>", "<n>", "<month>"

_MONTHS = ("January February March April May June July August September October November December "
           "Jan Feb Mar Apr Jun Jul Aug Sep Sept Oct Nov Dec Monday Tuesday Wednesday Thursday Friday "
           "Saturday Sunday").split()
_QUOTED = re.compile(r"\"[^\"]*\"|“[^”]*”|'[^']{2,}'(?!\w)")
_MONTH = re.compile(r"\b(?:" + "|".join(_MONTHS) + r")\b\.?")
# any token holding a digit (prices with their currency, dates, times, usernames, emails, passwords)
_DIGITS = re.compile(r"[^\s,;:!?()]*\d(?:,(?=\d)|[^\s,;:!?()])*(?<![.])")  # "1,005" is one number
_SPACES = re.compile(r"\s+")
_EMAIL = re.compile(r"[\w.+-]+@[\w.-]+\w")
# data.json keys whose string values are entity names (items, makers, sections, stores, people...)
_NAME_KEYS = {"name", "maker", "kind", "city", "district", "title", "first", "last", "street", "section",
              "site_name", "username", "email", "place", "dept", "venue", "specialty", "company"}


def skeleton(instruction: str, names: Iterable[str] = ()) -> str:
    """The instruction with every given name (longest first, whole words, any case), quoted text,
    month and day names and every token with a digit masked, spaces collapsed, lower-cased."""
    text = _QUOTED.sub(QUOTED, instruction)
    for name in sorted({n for n in names if n and len(n) > 1}, key=len, reverse=True):
        text = re.sub(rf"(?<!\w){re.escape(name)}(?!\w)", NAME, text, flags=re.IGNORECASE)
    text = _MONTH.sub(MONTH, text)
    text = _EMAIL.sub(NUMBER, text)
    text = _DIGITS.sub(NUMBER, text)
    return _SPACES.sub(" ", _capitalized(text)).strip().lower()


_WORD = re.compile(r"\S+")


def _capitalized(text: str) -> str:
    """Runs of capitalized words that do not start a sentence are names the list did not know (a
    person named only in the instruction): masked as one <name>."""
    out: list[str] = []
    sentence_start = True
    for token in _WORD.findall(text):
        core = token.strip("\"'“”‘’(")
        masked = not sentence_start and core[:1].isupper() and core not in ("I",)
        if masked:
            tail = token[len(token.rstrip(".,;:!?)\"'”’")):]
            if out and out[-1].startswith(NAME) and not out[-1][len(NAME):]:
                out[-1] = NAME + tail
            else:
                out.append(NAME + tail)
        else:
            out.append(token)
        sentence_start = token.endswith((".", "?", "!", ":"))
    return " ".join(out)


def names_in(data: Any, extra: Iterable[str] = ()) -> set[str]:
    """The entity names in a site's data (data.json: the values of name-like keys at any depth, and
    the short strings listed under them), plus `extra` (the genre's nouns and labels)."""
    found: set[str] = {e for e in extra if e}

    def walk(value: Any, named: bool) -> None:
        if isinstance(value, dict):
            for key, inner in value.items():
                walk(inner, key in _NAME_KEYS or key in ("kinds", "makers", "services", "tags"))
        elif isinstance(value, list):
            for inner in value:
                walk(inner, named)
        elif isinstance(value, str) and named and 1 < len(value) <= 80:
            found.add(value)

    walk(data, False)
    return found


def genre_words(cat: dict[str, Any], labels: dict[str, Any]) -> set[str]:
    """The words a genre puts into every instruction (its entity nouns, its label words): masked too,
    so "How many gadgets…" and "How many jobs…" count as one skeleton."""
    words = set(cat.get("item", [])) | set(cat.get("kinds", [])) | set(cat.get("makers", []))
    words |= {str(v) for v in labels.values() if isinstance(v, str)}
    words |= {str(v).lower() for v in labels.values() if isinstance(v, str)}
    for dept, sections in (cat.get("departments") or {}).items():
        words.add(dept)
        words.update(sections)
    return words


def skeleton_share(instructions: list[tuple[str, Iterable[str]]]) -> float:
    """Distinct skeletons / tasks over (instruction, names) pairs; 0.0 for no tasks."""
    if not instructions:
        return 0.0
    return len({skeleton(text, names) for text, names in instructions}) / len(instructions)


def site_names(site: Any) -> set[str]:
    """What to mask in a built site's instructions (a SiteBuilder): its data's names and genre words."""
    return names_in(site.data, genre_words(site.cat, site.labels))


def bundle_names(root: Any) -> set[str]:
    """What to mask in a written bundle's instructions (`<out>/<site_id>/`: its data.json and its
    category's genre words), for measuring bundles on disk (bench/synth.py)."""
    import json
    from pathlib import Path

    from weblica.synth.genres.registry import new_site  # the generator, which the grammar lies below
    from weblica.synth.spec import SiteSpec

    root = Path(root)
    data = json.loads((root / "data.json").read_text(encoding="utf-8"))
    site = new_site(SiteSpec.from_dict(json.loads((root / "site.json").read_text(encoding="utf-8"))["spec"]))
    return names_in(data, genre_words(site.cat, site.labels))
