"""Reading the numbers of a free-text answer: digits in the site locale's notation, number words and
ordinals, with the currency and unit written beside them, and golds that are one quantity ("Three
owners"). Dates and clock times are `weblica.scoring.dates`, tokens and phrases `weblica.scoring.text`, how the
answer stands toward a value (denies, hedges, lists it) `weblica.scoring.assertion`.

Everything works on `normalize_answer(text)`; spans of the values found refer to that normalized text.
"""
from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from typing import Sequence

from weblica.scoring.dates import find_dates, find_times
from weblica.scoring.confusables import disguised_number
from weblica.scoring.text import FUNCTION_WORDS, LIST_WORDS, fold, normalize_answer, tokens

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
    # how it is written: digits | words | roman | cjk | disguised (letters that imitate digits: "l4")
    written: str = "digits"


@functools.lru_cache(maxsize=256)
def _symbols(locale: str) -> tuple[str, str] | None:
    """(decimal mark, group separator) of a locale from Babel's CLDR data ("de-CH" -> (".", "'")); None for
    a locale Babel does not know. Spaces of any width group alike (NFKC already made them plain)."""
    from babel import Locale, UnknownLocaleError
    from babel.numbers import get_decimal_symbol, get_group_symbol

    try:
        parsed = Locale.parse(locale.replace("-", "_"))
    except (ValueError, UnknownLocaleError):
        return None
    group = get_group_symbol(parsed)
    return get_decimal_symbol(parsed), " " if group.isspace() else group.replace("\u2019", "'")


def locale_decimal(locale: str | None) -> str | None:
    """The decimal mark of a locale ("de-DE" -> ",", "de-CH" -> "."), None when unknown."""
    symbols = _symbols(locale) if locale else None
    return symbols[0] if symbols else None


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
    for word in (t.text for t in tokens(text)):
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
_ONE_PRONOUN_BEFORE = {"the", "this", "that", "which", "each", "any", "every", "no", "another", "other",
                       "same", "right", "wrong", "last", "next", "first", "new", "old"}


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


def number_pattern(locale: str | None) -> re.Pattern[str]:
    # a space groups thousands where the locale writes it so ("1 234,50 €"), or where no locale is known
    symbols = _symbols(locale) if locale else None
    seps = ",.'" + (" " if symbols is None or symbols[1] == " " else "")
    sep = f"[{re.escape(seps)}]"
    return re.compile(
        rf"(?<![\w.,])(?P<sign>-(?=\d))?(?P<num>\d{{1,3}}(?P<sep>{sep})\d{{3}}(?:(?P=sep)\d{{3}})*(?:[.,]\d+)?(?!\d)"
        rf"|\d+(?:[.,]\d+)?)(?P<ord>st|nd|rd|th)?(?![\d])")


_DOLLAR_PREFIXES = {"R": "BRL", "US": "USD", "C": "CAD", "A": "AUD", "NZ": "NZD", "HK": "HKD", "S": "SGD", "MX": "MXN"}


def _currency_near(text: str, start: int, end: int) -> tuple[str | None, int, int]:
    """A currency written just before or after text[start:end], and the widened span."""
    lead = max(0, start - 5)  # "USD " at most: a bounded look keeps long answers linear
    before = re.search(r"(?:(?<![A-Za-z])(?P<dollar>R|US|C|A|NZ|HK|S|MX)\$|(?P<sym>[$£€¥₹₩₽₺₫฿₪₱])"
                       r"|(?<![A-Za-z])(?P<code>[A-Z]{3}))\s?$", text[lead:start])
    if before and before.group("dollar"):  # "R$ 1.234,50", "C$ 12": a dollar sign with its country
        return _DOLLAR_PREFIXES[before.group("dollar")], lead + before.start(), end
    if before and (before.group("sym") or before.group("code") in _CURRENCY_CODES):
        code = _CURRENCY_SYMBOLS.get(before.group("sym") or "") or before.group("code")
        return ("CNY" if code == "RMB" else code), lead + before.start(), end
    after = re.match(r"\s?(?:(?P<sym>[$£€¥₹₩₽₺₫฿₪₱円元])|(?P<word>[A-Za-z]+)\b)", text[end:end + 40])
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
    match = re.match(r"\s?(%|[^\W\d_]+)", text[end:end + 40])
    if not match or fold(match.group(1)) in LIST_WORDS or fold(match.group(1)) in FUNCTION_WORDS:
        return None
    return match.group(1)


def masked_spans(text: str, locale: str | None = None) -> list[tuple[int, int]]:
    """Spans of dates and clock times: their digits are not quantities."""
    spans = [(s, e) for _, s, e in find_times(text)]
    spans += [(d.start, d.end) for d in find_dates(text, locale)]
    return spans


def find_numbers(text: str, locale: str | None = None) -> list[Number]:
    """Every number stated in normalized `text`, in order: digits in the locale's notation (with None, a
    single separator before three digits groups thousands), number words, ordinals; dates and clock
    times are not read as numbers."""
    masks = masked_spans(text, locale)
    decimal = locale_decimal(locale)
    out: list[Number] = []
    read = bytearray(len(text) + 1)  # characters already read as a date, a time or a number
    for s, e in masks:
        read[s:e] = b"\x01" * (e - s)

    def free(start: int, end: int) -> bool:
        return not any(read[start:end])

    def take(start: int, end: int) -> None:
        read[start:end] = b"\x01" * (end - start)

    for m in _DISGUISED_RE.finditer(text):  # "l4", "$ll8.49": a number written with look-alike letters
        parts = [disguised_number(p) if not p.isdigit() else p for p in re.split(r"[.,]", m.group(0))]
        if any(p != q for p, q in zip(parts, re.split(r"[.,]", m.group(0)))) and None not in parts:
            seps = re.findall(r"[.,]", m.group(0))
            shown = parts[0] + "".join(sep + part for sep, part in zip(seps, parts[1:]))  # type: ignore[operator]
            hit = next(number_pattern(locale).finditer(shown), None)
            value = _digits_value(hit.group("num"), hit.group("sep"), decimal) if hit else None
            if value is not None and free(m.start(), m.end()):
                currency, start, end = _currency_near(text, m.start(), m.end())
                out.append(Number(value, start, end, currency, written="disguised"))
                take(m.start(), m.end())
    for m in number_pattern(locale).finditer(text):
        if not free(m.start(), m.end()):
            continue
        value = _digits_value(m.group("num"), m.group("sep"), decimal)
        if value is None:
            continue
        currency, start, end = _currency_near(text, m.start(), m.end())
        # a minus before the number or before its currency sign: "-12", "-$12", "- €12", "−12"
        if m.group("sign") or re.search(r"(?<![\w.,])-\s?$", text[max(0, start - 2):start]):
            value = -value
        unit = None if currency or m.group("ord") else _unit_after(text, m.end())
        out.append(Number(value, start, end, currency, unit, bool(m.group("ord"))))
        take(m.start(), m.end())
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
        out.append(Number(float(value), start, end, currency, unit, ordinal, written="words"))
        i += used
    for m in _ROMAN_RE.finditer(text):  # "CCXXXII", "XLIX": capitals only, two letters or more
        value = roman_value(m.group(0))
        if value is not None and free(m.start(), m.end()):
            out.append(Number(float(value), m.start(), m.end(), written="roman"))
            take(m.start(), m.end())
    for m in _CJK_RE.finditer(text):  # "二", "十五", "三百二十"
        value = cjk_value(m.group(0))
        if value is not None and free(m.start(), m.end()):
            currency, start, end = _currency_near(text, m.start(), m.end())
            out.append(Number(float(value), start, end, currency, written="cjk"))
            take(m.start(), m.end())
    return _with_cents(text, sorted(out, key=lambda n: n.start))


_DISGUISED_RE = re.compile(r"(?<![^\W_])[^\W_]*\d[^\W_]*(?:[.,][^\W_]+)*(?![^\W_])|(?<![^\W_])[^\W_]+(?:[.,][^\W_]*\d[^\W_]*)+(?![^\W_])"
                           r"|(?<![^\W_])(?<!\d\s)[lIO]+(?:[.,][lIO\d]+)*(?![^\W_])")
_ROMAN_RE = re.compile(r"(?<![^\W\d_])[IVXLCDM]{2,}(?![^\W\d_])")
_ROMAN = {"I": 1, "V": 5, "X": 10, "L": 50, "C": 100, "D": 500, "M": 1000}


def roman_value(text: str) -> int | None:
    """The value of a Roman numeral in its canonical spelling ("XLIX" -> 49), None for other capitals."""
    total = 0
    for i, c in enumerate(text):
        v = _ROMAN[c]
        total += -v if i + 1 < len(text) and _ROMAN[text[i + 1]] > v else v
    return total if 0 < total < 4000 and to_roman(total) == text else None


def to_roman(n: int) -> str:
    """A whole number from 1 to 3999 in Roman numerals, canonically spelled."""
    out = ""
    for v, s in ((1000, "M"), (900, "CM"), (500, "D"), (400, "CD"), (100, "C"), (90, "XC"), (50, "L"), (40, "XL"),
                 (10, "X"), (9, "IX"), (5, "V"), (4, "IV"), (1, "I")):
        while n >= v:
            out, n = out + s, n - v
    return out


_CJK_DIGITS = {"〇": 0, "零": 0, "一": 1, "二": 2, "两": 2, "兩": 2, "三": 3, "四": 4, "五": 5, "六": 6, "七": 7, "八": 8,
               "九": 9}
_CJK_UNITS = {"十": 10, "百": 100, "千": 1000, "万": 10_000, "萬": 10_000}
_CJK_RE = re.compile(f"[{''.join(_CJK_DIGITS)}{''.join(_CJK_UNITS)}]+")


def cjk_value(text: str) -> int | None:
    """A Chinese/Japanese numeral ("十五" -> 15, "三百二十" -> 320, "二〇二六" -> 2026), None if malformed."""
    if all(c in _CJK_DIGITS for c in text):
        return int("".join(str(_CJK_DIGITS[c]) for c in text))
    total = section = digit = 0
    for c in text:
        if c in _CJK_DIGITS:
            digit = _CJK_DIGITS[c]
        elif c in ("万", "萬"):
            total += (section + digit) * 10_000
            section = digit = 0
        else:
            section += (digit or 1) * _CJK_UNITS[c]
            digit = 0
    return total + section + digit


_CENTS_RE = re.compile(r"\s*(?:and\s+)?(\d{1,2}|[a-z]+(?:[- ][a-z]+)?)\s+cents?\b", re.I)


def _with_cents(text: str, numbers: list[Number]) -> list[Number]:
    """"162 dollars and 95 cents" as one amount, 162.95: a whole amount in a currency followed by cents."""
    out: list[Number] = []
    skip: set[int] = set()
    for i, n in enumerate(numbers):
        if i in skip:
            continue
        nxt = numbers[i + 1] if i + 1 < len(numbers) else None
        m = _CENTS_RE.match(text, n.end)
        if (n.currency and n.value == int(n.value) and nxt is not None and m
                and nxt.start == m.start(1) and 0 <= nxt.value < 100 and nxt.value == int(nxt.value)):
            out.append(Number(n.value + (nxt.value / 100 if n.value >= 0 else -nxt.value / 100), n.start, m.end(),
                              n.currency, None, False, n.written))
            skip.add(i + 1)
            continue
        out.append(n)
    return out


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
