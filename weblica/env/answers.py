"""Reading a free-text answer into values: numbers (digits in the site locale's notation, number words,
ordinals, with their currency and unit), dates in common notations, clock times, phrases as token
sequences. How the answer stands toward those values (denies, hedges, lists them) is
`weblica.env.assertion`.

Everything works on `normalize_answer(text)`: NFKC (full-width digits, narrow no-break spaces), one kind
of apostrophe and dash, contractions spelled out ("isn't" -> "is not"), so every later pattern has one
spelling to look for. Spans of the values found refer to that normalized text.
"""
from __future__ import annotations

import datetime as dt
import functools
import re
import unicodedata
from dataclasses import dataclass
from typing import Iterable, Sequence

# ---- normalization ----------------------------------------------------------------------------------

_CONTRACTIONS = [(re.compile(r"\bcan't\b|\bcannot\b", re.I), "can not"), (re.compile(r"\bwon't\b", re.I), "will not"),
                 (re.compile(r"\bshan't\b", re.I), "shall not"), (re.compile(r"n't\b", re.I), " not"),
                 (re.compile(r"\bit's\b", re.I), "it is"), (re.compile(r"\bthere's\b", re.I), "there is"),
                 (re.compile(r"\bthat's\b", re.I), "that is")]


def normalize_answer(text: str) -> str:
    """The text every reader below works on (see the module docstring)."""
    text = unicodedata.normalize("NFKC", str(text))
    text = re.sub(r"[\u2018\u2019\u02bc`´]", "'", text)
    text = re.sub(r"[\u2010\u2011\u2012\u2212]", "-", text)  # hyphens and the minus sign; en/em dashes stay
    for pattern, repl in _CONTRACTIONS:
        text = pattern.sub(repl, text)
    return text


def fold(word: str) -> str:
    """A token's comparison key: case-folded, accents dropped from Latin letters ("Zürich" = "zurich")."""
    if word.isascii():
        return word.lower()
    word = word.casefold()
    if all(ord(c) < 0x250 for c in word):
        word = "".join(c for c in unicodedata.normalize("NFKD", word) if not unicodedata.combining(c))
    return word


# ---- tokens and phrases -----------------------------------------------------------------------------

@dataclass(frozen=True)
class Token:
    key: str    # folded
    text: str   # as written
    start: int
    end: int


_TOKEN_RE = re.compile(r"\d+|[^\W\d_]+")
# what ends a clause or a list item between two tokens (a '.' or ':' between digits is part of a number)
BOUNDARY_CHARS = set(".;:!?,()[]{}\n\u2013\u2014|/&\"")
ARTICLES = {"the", "a", "an"}


def tokens(text: str) -> list[Token]:
    """Word and digit runs ("12kg" -> "12", "kg"; "A-1234" -> "a", "1234") of normalized text."""
    return [Token(fold(m.group(0)), m.group(0), m.start(), m.end()) for m in _TOKEN_RE.finditer(text)]


@functools.lru_cache(maxsize=65536)  # the same golds and confusers are checked in every episode of a task
def phrase_keys(text: str) -> tuple[str, ...]:
    """A phrase as the token keys to look for: hyphens, punctuation and case do not matter, a leading
    article does not either ("the Cropped Cardigan" = "Cropped-cardigan")."""
    keys = tuple(t.key for t in tokens(normalize_answer(text)))
    if len(keys) > 1 and keys[0] in ARTICLES:
        keys = keys[1:]
    # "from 14:00", "until 18:00": the preposition is not what the question asks for
    if len(keys) > 1 and keys[0] in ("from", "at", "until", "by", "on") and keys[1].isdigit():
        keys = keys[1:]
    return keys


def find_phrase(toks: Sequence[Token], keys: Sequence[str]) -> list[tuple[int, int]]:
    """Token index ranges [i, j) where `keys` occur in order, as whole tokens."""
    n = len(keys)
    if not n:
        return []
    keys = list(keys)
    return [(i, i + n) for i in range(len(toks) - n + 1)
            if toks[i].key == keys[0] and [t.key for t in toks[i:i + n]] == keys]


def is_boundary(gap: str) -> bool:
    """Whether the text between two tokens separates clauses or list items."""
    return any(c in BOUNDARY_CHARS for c in gap)


# ---- numbers ----------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Number:
    """One number the answer states: its value and where, with the currency and unit written beside it."""

    value: float
    start: int
    end: int
    currency: str | None = None
    unit: str | None = None
    ordinal: bool = False


_COMMA_DECIMAL_LANGS = {"de", "fr", "es", "it", "pt", "nl", "ru", "pl", "sv", "da", "nb", "no", "fi", "cs", "sk",
                        "tr", "id", "ro", "hu", "el", "uk", "bg", "hr", "sl", "lt", "lv", "et", "ca"}
_SPACE_GROUP_LANGS = {"fr", "ru", "pl", "sv", "nb", "no", "fi", "cs", "sk", "uk", "bg", "et", "lt", "lv", "hu"}


def locale_decimal(locale: str | None) -> str | None:
    """The decimal mark of a locale ("de-DE" -> ","), None when unknown."""
    if not locale:
        return None
    return "," if locale.split("-")[0].split("_")[0].lower() in _COMMA_DECIMAL_LANGS else "."


_CURRENCY_SYMBOLS = {"$": "USD", "£": "GBP", "€": "EUR", "¥": "JPY", "₹": "INR", "₩": "KRW", "₽": "RUB", "₺": "TRY",
                     "₫": "VND", "฿": "THB", "₪": "ILS", "₱": "PHP", "円": "JPY", "元": "CNY"}
_CURRENCY_CODES = {"USD", "EUR", "GBP", "JPY", "CNY", "RMB", "INR", "KRW", "CHF", "CAD", "AUD", "NZD", "SEK", "NOK",
                   "DKK", "PLN", "CZK", "HUF", "RUB", "TRY", "BRL", "MXN", "ZAR", "HKD", "SGD"}
_CURRENCY_WORDS = {"dollar": "USD", "dollars": "USD", "euro": "EUR", "euros": "EUR", "pound": "GBP", "pounds": "GBP",
                   "yen": "JPY", "yuan": "CNY", "rupee": "INR", "rupees": "INR", "franc": "CHF", "francs": "CHF"}
_DOLLARS = {"USD", "CAD", "AUD", "NZD", "HKD", "SGD"}
_REGION_CURRENCY = {"US": "USD", "GB": "GBP", "UK": "GBP", "JP": "JPY", "CN": "CNY", "IN": "INR", "KR": "KRW",
                    "CH": "CHF", "CA": "CAD", "AU": "AUD", "NZ": "NZD", "SE": "SEK", "NO": "NOK", "DK": "DKK",
                    "PL": "PLN", "CZ": "CZK", "BR": "BRL", "MX": "MXN", "RU": "RUB", "TR": "TRY"}
_EURO_REGIONS = {"DE", "FR", "ES", "IT", "NL", "BE", "AT", "PT", "FI", "IE", "GR", "LU", "SK", "SI", "EE", "LV", "LT"}


def locale_currency(locale: str | None) -> str | None:
    """The currency a locale's region uses ("ja-JP" -> "JPY"), None when unknown."""
    region = (locale or "").replace("_", "-").split("-")[-1].upper() if locale and "-" in locale.replace("_", "-") else ""
    return "EUR" if region in _EURO_REGIONS else _REGION_CURRENCY.get(region)


def currency_of(text: str) -> str | None:
    """The currency written in a value such as "$24.99" or "316 yen", or None."""
    for sym, code in _CURRENCY_SYMBOLS.items():
        if sym in text:
            return code
    for word in _TOKEN_RE.findall(text):
        if word.upper() in _CURRENCY_CODES and word.isupper():
            return "CNY" if word.upper() == "RMB" else word.upper()
        if word.lower() in _CURRENCY_WORDS:
            return _CURRENCY_WORDS[word.lower()]
    return None


def same_currency(a: str, b: str) -> bool:
    return a == b or (a in _DOLLARS and b in _DOLLARS and "USD" in (a, b)) or {a, b} == {"JPY", "CNY"}


# units: alias -> canonical; a unit outside the table is compared by its word (singular = plural)
_UNITS = {}
for _canon, _aliases in {
    "hour": "h hr hrs hour hours", "minute": "min mins minute minutes", "second": "s sec secs second seconds",
    "day": "d day days", "week": "wk wks week weeks", "month": "mo mos month months", "year": "y yr yrs year years",
    "kg": "kg kgs kilogram kilograms kilo kilos", "g": "g gram grams", "lb": "lb lbs", "km": "km kilometre kilometres kilometer kilometers",
    "m": "m metre metres meter meters", "cm": "cm", "mm": "mm", "mile": "mi mile miles", "l": "l litre litres liter liters",
    "ml": "ml", "gb": "gb", "tb": "tb", "mb": "mb", "inch": "in inch inches", "percent": "percent %",
    "star": "star stars", "night": "night nights", "person": "person persons people guest guests",
}.items():
    for _alias in _aliases.split():
        _UNITS[_alias] = _canon


def unit_key(word: str | None) -> str | None:
    """A unit word's canonical form ("hrs" -> "hour", "owners" -> "owner")."""
    if not word:
        return None
    word = fold(word)
    if word in _UNITS:
        return _UNITS[word]
    return word[:-1] if len(word) > 3 and word.endswith("s") else word


def units_compatible(written: str | None, expected: str | None) -> bool:
    """A number's unit as written may be left out; a different known unit ("2 days" for "2 hours") is not it."""
    if not written or not expected:
        return True
    a, b = unit_key(written), unit_key(expected)
    if a == b:
        return True
    # "3 previous owners" keeps the unit in view; "3 days" for "3 owners" names another one
    return not (fold(written) in _UNITS or fold(expected) in _UNITS)


_SMALL = {w: i for i, w in enumerate("zero one two three four five six seven eight nine ten eleven twelve thirteen "
                                      "fourteen fifteen sixteen seventeen eighteen nineteen".split())}
_TENS = {w: 10 * i for i, w in enumerate("_ _ twenty thirty forty fifty sixty seventy eighty ninety".split()) if i >= 2}
_ORD_SMALL = {w: i for i, w in enumerate("zeroth first second third fourth fifth sixth seventh eighth ninth tenth "
                                          "eleventh twelfth thirteenth fourteenth fifteenth sixteenth seventeenth "
                                          "eighteenth nineteenth".split())}
_ORD_TENS = {w: 10 * i for i, w in enumerate("_ _ twentieth thirtieth fortieth fiftieth sixtieth seventieth "
                                              "eightieth ninetieth".split()) if i >= 2}
# "one" is a pronoun after these ("the cheapest one", "this one") and before "of" ("one of them")
_ONE_PRONOUN_BEFORE = {"the", "this", "that", "which", "each", "any", "every", "no", "another", "other", "only",
                       "same", "right", "wrong", "last", "next", "first", "new", "old", "blue", "red"}


def _below_100(keys: Sequence[str], i: int) -> tuple[int, int, bool] | None:
    """(value, tokens used, ordinal) of a number word below 100 at keys[i]."""
    if i >= len(keys):
        return None
    w = keys[i]
    if w in _TENS:
        nxt = keys[i + 1] if i + 1 < len(keys) else ""
        if nxt in _SMALL and 0 < _SMALL[nxt] < 10:
            return _TENS[w] + _SMALL[nxt], 2, False
        if nxt in _ORD_SMALL and 0 < _ORD_SMALL[nxt] < 10:
            return _TENS[w] + _ORD_SMALL[nxt], 2, True
        return _TENS[w], 1, False
    if w in _ORD_TENS:
        return _ORD_TENS[w], 1, True
    if w in _SMALL:
        return _SMALL[w], 1, False
    if w in _ORD_SMALL:
        return _ORD_SMALL[w], 1, True
    return None


def _below_1000(keys: Sequence[str], i: int) -> tuple[int, int, bool] | None:
    if i < len(keys) and keys[i] == "a":
        head = 1  # "a hundred and five"
    else:
        small = _below_100(keys, i)
        if small is None or not (small[1] == 1 and not small[2] and 1 <= small[0] <= 9):
            return small
        head = small[0]
    if i + 1 < len(keys) and keys[i + 1] in ("hundred", "hundredth"):
        if keys[i + 1] == "hundredth":
            return head * 100, 2, True
        j = i + 2 + (1 if i + 2 < len(keys) and keys[i + 2] == "and" else 0)
        rest = _below_100(keys, j)
        if rest and rest[0] > 0:
            return head * 100 + rest[0], j - i + rest[1], rest[2]
        return head * 100, 2, False
    return None if keys[i] == "a" else (head, 1, False)


def _number_words(keys: Sequence[str], i: int) -> tuple[int, int, bool] | None:
    """(value, tokens used, ordinal) of an English number phrase at keys[i], zero to the thousands."""
    if keys[i] == "a" and i + 1 < len(keys) and keys[i + 1] in ("thousand", "thousandth"):
        first: tuple[int, int, bool] | None = (1, 1, False)
    else:
        first = _below_1000(keys, i)
    if first is None:
        return None
    value, used, ordinal = first
    if not ordinal and i + used < len(keys) and keys[i + used] in ("thousand", "thousandth"):
        value, used = value * 1000, used + 1
        if keys[i + used - 1] == "thousandth":
            return value, used, True
        j = i + used + (1 if i + used < len(keys) and keys[i + used] == "and" else 0)
        rest = _below_1000(keys, j)
        if rest and rest[0] > 0:
            return value + rest[0], j - i + rest[1], rest[2]
    return value, used, ordinal


def _digits_value(text: str, sep: str | None, decimal: str | None) -> float | None:
    """The value of a digit run such as "1.234,50" given its grouping separator and the locale's decimal mark."""
    if sep is None:
        return float(text.replace(",", "."))
    head, tail = text, ""
    match = re.search(r"[.,](\d+)$", text)
    if match and text[match.start()] != sep:
        head, tail = text[:match.start()], match.group(1)
    elif match and len(match.group(1)) != 3:
        return None
    parts = head.split(sep)
    if not tail and len(parts) == 2 and sep == decimal:
        return float(parts[0] + "." + parts[1])  # "1,234" in de-DE is 1.234
    return float("".join(parts) + ("." + tail if tail else ""))


_TIME_RE = re.compile(r"(?<![\d:])\d{1,2}(?::\d{2}){1,2}(?:\s?[ap]\.?m\.?)?(?![\d:])|(?<!\d)\d{1,2}h\d{2}(?!\d)", re.I)


def number_pattern(locale: str | None) -> re.Pattern[str]:
    # a space groups thousands where the locale writes it so ("1 234,50 €"), or where no locale is known
    lang = (locale or "").split("-")[0].lower()
    seps = ",.'" + (" " if not lang or lang in _SPACE_GROUP_LANGS else "")
    sep = f"[{re.escape(seps)}]"
    return re.compile(
        rf"(?<![\w.,])(?P<sign>-(?=\d))?(?P<num>\d{{1,3}}(?P<sep>{sep})\d{{3}}(?:(?P=sep)\d{{3}})*(?:[.,]\d+)?(?!\d)"
        rf"|\d+(?:[.,]\d+)?)(?P<ord>st|nd|rd|th)?(?![\d])")


def _currency_near(text: str, start: int, end: int) -> tuple[str | None, int, int]:
    """A currency written just before or after text[start:end], and the widened span."""
    before = re.search(r"(?:(?P<sym>[$£€¥₹₩₽₺₫฿₪₱])|\b(?P<code>[A-Z]{3}))\s?$", text[:start])
    if before and (before.group("sym") or before.group("code") in _CURRENCY_CODES):
        code = _CURRENCY_SYMBOLS.get(before.group("sym") or "") or before.group("code")
        return ("CNY" if code == "RMB" else code), before.start(), end
    after = re.match(r"\s?(?:(?P<sym>[$£€¥₹₩₽₺₫฿₪₱円元])|(?P<word>[A-Za-z]+)\b)", text[end:])
    if after:
        if after.group("sym"):
            return _CURRENCY_SYMBOLS[after.group("sym")], start, end + after.end()
        word = after.group("word")
        if word in _CURRENCY_CODES:
            return ("CNY" if word == "RMB" else word), start, end + after.end()
        if word.lower() in _CURRENCY_WORDS:
            return _CURRENCY_WORDS[word.lower()], start, end + after.end()
    return None, start, end


def _unit_after(text: str, end: int) -> str | None:
    match = re.match(r"\s?(%|[^\W\d_]+)", text[end:])
    if not match or fold(match.group(1)) in LIST_WORDS or fold(match.group(1)) in FUNCTION_WORDS:
        return None
    return match.group(1)


def masked_spans(text: str, locale: str | None = None) -> list[tuple[int, int]]:
    """Spans of dates and clock times: their digits are not quantities."""
    spans = [(m.start(), m.end()) for m in _TIME_RE.finditer(text)]
    spans += [(d.start, d.end) for d in find_dates(text, locale)]
    return spans


def find_numbers(text: str, locale: str | None = None) -> list[Number]:
    """Every number stated in normalized `text`, in order: digits in the locale's notation (with None, a
    single separator before three digits groups thousands), number words, ordinals; dates and clock
    times are not read as numbers."""
    masks = masked_spans(text, locale)
    decimal = locale_decimal(locale)
    out: list[Number] = []
    taken: list[tuple[int, int]] = []

    def free(start: int, end: int) -> bool:
        return not any(s < end and start < e for s, e in masks + taken)

    for m in number_pattern(locale).finditer(text):
        if not free(m.start(), m.end()):
            continue
        value = _digits_value(m.group("num"), m.group("sep"), decimal)
        if value is None:
            continue
        if m.group("sign"):
            value = -value
        currency, start, end = _currency_near(text, m.start(), m.end())
        unit = None if currency or m.group("ord") else _unit_after(text, m.end())
        out.append(Number(value, start, end, currency, unit, bool(m.group("ord"))))
        taken.append((m.start(), m.end()))
    toks = tokens(text)
    keys = [t.key for t in toks]
    i = 0
    while i < len(toks):
        parsed = _number_words(keys, i) if toks[i].key[0].isalpha() else None
        if parsed is None or not free(toks[i].start, toks[i + parsed[1] - 1].end):
            i += 1
            continue
        value, used, ordinal = parsed
        last = toks[i + used - 1]
        if keys[i] == "one" and used == 1 and ((i and keys[i - 1] in _ONE_PRONOUN_BEFORE or
                                                 (i and keys[i - 1].endswith("est"))) or
                                                (i + 1 < len(keys) and keys[i + 1] in ("of", "another"))):
            i += 1
            continue
        if keys[i] == "second" and used == 1 and i and keys[i - 1].isdigit():
            i += 1
            continue  # "1 second" is a unit
        currency, start, end = _currency_near(text, toks[i].start, last.end)
        unit = None if currency or ordinal else _unit_after(text, last.end)
        out.append(Number(float(value), start, end, currency, unit, ordinal))
        i += used
    return sorted(out, key=lambda n: n.start)


def quantity(text: str) -> tuple[float, str | None] | None:
    """A value that is one number with an optional unit ("Three owners", "90 minutes", "1,000", "16+")
    as (value, unit), or None for anything else ("Book 1 of 3", "18:00", "Bluetooth 5.3")."""
    norm = normalize_answer(text).strip()
    numbers = find_numbers(norm)
    if len(numbers) != 1 or numbers[0].ordinal or masked_spans(norm):
        return None
    num = numbers[0]
    head = [t.key for t in tokens(norm[:num.start])]
    rest = tokens(norm[num.end:])
    if head not in ([], ["the"]) or len(rest) > 3 or any(t.key.isdigit() for t in rest):
        return None
    return num.value, (" ".join(t.text for t in rest) if rest else num.unit)


# ---- dates ------------------------------------------------------------------------------------------

_MONTHS: dict[str, int] = {}
for _i, _names in enumerate([
        "january jan januar janvier", "february feb februar fevrier", "march mar marz maerz mars",
        "april apr avril", "may mai", "june jun juni juin", "july jul juli juillet", "august aug aout",
        "september sep sept septembre", "october oct oktober octobre", "november nov novembre",
        "december dec dezember decembre"], 1):
    for _name in _names.split():
        _MONTHS[_name] = _i
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
    for m in re.finditer(rf"(?<!\d)(\d{{1,2}})(?:st|nd|rd|th|er)?\.?\s+(?:of\s+)?({_MONTH_ALT})\b\.?,?(?:\s+(\d{{4}}))?(?!\d)",
                         folded):
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


# ---- words that are not values ---------------------------------------------------------------------

LIST_WORDS = {"and", "or", "nor", "vs", "versus", "plus"}
# words that start a phrase that is not a name: "at ¥316", "which is the cheapest", "sorry"
FUNCTION_WORDS = set("""a an the as at in on of for with which that this these those it its is are was were be been
being to by from per see listed shown according i we you he she they so because since if when where who whose what
there here their our my your no not only just also about around over under than then both all each every other
others one costs cost priced price at answer cheapest yes sorry definitely obviously clearly indeed certainly
thanks thank done ok okay sure again too very most least more less item items product products""".split())
