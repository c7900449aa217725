"""Reading dates and clock times out of normalized answer text (`weblica.scoring.text.normalize_answer`):
ISO, Y/M/D, D.M.Y, a/b/Y per locale, month names in the languages of MONTH_LANGUAGES (Babel's CLDR data),
"7 de junio de 2026", Japanese 年月日."""
from __future__ import annotations

import datetime as dt
import re
from dataclasses import dataclass
from typing import Iterable

from weblica.scoring.text import fold, normalize_answer, tokens

_TIME_RE = re.compile(r"(?<![\d:])\d{1,2}(?::\d{2}){1,2}(?:\s?[ap]\.?m\b\.?)?(?![\d:])|(?<!\d)\d{1,2}h\d{2}(?!\d)"
                      r"|(?<![\d:.,])\d{1,2}\s?[ap]\.?m\b\.?", re.I)


def clock_time(text: str) -> int | None:
    """A value that is one clock time ("18:00", "from 14:00", "6 pm") in minutes after midnight, or None."""
    norm = normalize_answer(text).strip()
    times = find_times(norm)
    if len(times) != 1:
        return None
    rest = [t.key for t in tokens(norm[:times[0][1]] + " " + norm[times[0][2]:])]
    return times[0][0] if rest in ([], ["from"], ["at"], ["until"], ["by"], ["after"], ["before"]) else None


def find_times(text: str) -> list[tuple[int, int, int]]:
    """Clock times in normalized `text` as (minutes after midnight, start, end): "18:00", "6:30 pm", "6pm",
    "18h30"."""
    out = []
    for m in _TIME_RE.finditer(text):
        raw = m.group(0).lower()
        parts = re.findall(r"\d+", raw)
        hour, minute = int(parts[0]), int(parts[1]) if len(parts) > 1 else 0
        if "p" in raw and hour < 12:
            hour += 12
        elif "a" in raw and hour == 12:
            hour = 0
        if hour < 24 and minute < 60:
            out.append((hour * 60 + minute, m.start(), m.end()))
    return out


# month names, wide and abbreviated, in the languages sites are written in (Babel's CLDR data), folded as
# answers are ("März" -> "marz"); a name that means two months in two languages is left out
MONTH_LANGUAGES = ("en", "de", "fr", "es", "it", "pt", "nl", "sv", "da", "nb", "fi", "pl", "cs")


def _month_names() -> dict[str, int]:
    from babel.dates import get_month_names

    seen: dict[str, set[int]] = {}
    for language in MONTH_LANGUAGES:
        for width in ("wide", "abbreviated"):
            for month, name in get_month_names(width, locale=language).items():
                key = fold(str(name).strip(".").lower())
                if key.isalpha() and len(key) >= 3:
                    seen.setdefault(key, set()).add(int(month))
    for extra, month in (("sept", 9), ("maerz", 3)):  # spellings people write that CLDR does not list
        seen.setdefault(extra, set()).add(month)
    return {name: months.pop() for name, months in seen.items() if len(months) == 1}


_MONTHS: dict[str, int] = _month_names()
_MONTH_ALT = "|".join(sorted(_MONTHS, key=len, reverse=True))


@dataclass(frozen=True)
class DateMention:
    """A date the answer states, with every reading its notation allows ((year or None, month, day))."""

    readings: frozenset[tuple[int | None, int, int]]
    start: int
    end: int


def _valid(y: int | None, m: int, d: int) -> bool:
    try:
        dt.date(y or 2000, m, d)
        return True
    except ValueError:
        return False


def _year(text: str | None) -> int | None:
    if not text:
        return None
    y = int(text)
    return y + 2000 if y < 100 else y


def find_dates(text: str, locale: str | None = None) -> list[DateMention]:
    """Dates in normalized `text`: ISO and Y/M/D, D.M.Y, a/b/Y (month first for en-US, day first for other
    locales, both readings without one), "7 June 2026", "June 7, 2026", "7. Juni 2026", "2026年6月7日"."""
    folded = "".join(fold(c) if c.isalpha() else c for c in text)  # same length: "März" -> "marz"
    if len(folded) != len(text):
        folded = text.lower()
    found: list[DateMention] = []
    month_first = (locale or "").replace("_", "-") in ("en-US", "en-PH", "en-CA")

    def add(start: int, end: int, readings: Iterable[tuple[int | None, int, int]]) -> None:
        valid = frozenset(r for r in readings if _valid(*r))
        if valid and not any(f.start < end and start < f.end for f in found):
            found.append(DateMention(valid, start, end))

    for m in re.finditer(r"(?<![\d/.-])(\d{4})([-/.])(\d{1,2})\2(\d{1,2})(?![\d/.-]?\d)", text):
        add(m.start(), m.end(), [(int(m.group(1)), int(m.group(3)), int(m.group(4)))])
    for m in re.finditer(r"(\d{4})\s?年\s?(\d{1,2})\s?月\s?(\d{1,2})\s?日", text):
        add(m.start(), m.end(), [(int(m.group(1)), int(m.group(2)), int(m.group(3)))])
    for m in re.finditer(r"(?<![\d/.-])(\d{1,2})([-/.])(\d{1,2})\2(\d{4}|\d{2})(?![\d/.-]?\d)", text):
        a, b, y = int(m.group(1)), int(m.group(3)), _year(m.group(4))
        if m.group(2) == "." or (locale and not month_first):
            readings = [(y, b, a)]
        elif month_first:
            readings = [(y, a, b)]
        else:
            readings = [(y, a, b), (y, b, a)]
        add(m.start(), m.end(), readings)
    for m in re.finditer(rf"(?<!\d)(\d{{1,2}})(?:st|nd|rd|th|er|º)?\.?\s+(?:of\s+|de\s+)?({_MONTH_ALT})\b\.?,?"
                         rf"(?:\s+(?:de\s+)?(\d{{4}}))?(?!\d)", folded):
        add(m.start(), m.end(), [(_year(m.group(3)), _MONTHS[m.group(2)], int(m.group(1)))])
    for m in re.finditer(rf"\b({_MONTH_ALT})\b\.?\s+(\d{{1,2}})(?:st|nd|rd|th)?(?!\d)(?:,?\s+(\d{{4}})(?!\d))?", folded):
        add(m.start(), m.end(), [(_year(m.group(3)), _MONTHS[m.group(1)], int(m.group(2)))])
    return sorted(found, key=lambda f: f.start)


def parse_iso_date(value: str) -> tuple[int, int, int] | None:
    try:
        d = dt.date.fromisoformat(str(value).strip()[:10])
    except ValueError:
        return None
    return d.year, d.month, d.day


def date_matches(mention: DateMention, gold: tuple[int, int, int]) -> bool:
    """Whether a stated date can only be read as `gold` (a date without a year matches any year)."""
    return all(r[1:] == gold[1:] and r[0] in (None, gold[0]) for r in mention.readings)
