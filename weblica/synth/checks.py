"""Check builders for synth tasks. Answer checks accept what a person would write: a number in any of
the site's notations (1,234.50 / 1.234,50 / 1 234,50), a name as a whole phrase in any case."""
from __future__ import annotations

import re
from typing import Any

from weblica.env.task import Check

INFEASIBLE_PATTERN = (r"\b(cannot|can ?not|can't|unable|impossible|infeasible|not (?:possible|available|found|exist\w*|"
                      r"listed|offered|sold|shown|there|carried|in the catalog\w*)|no (?:such|results?|information|matching|"
                      r"way)|doesn't exist|does not exist|don't (?:have|sell|offer|carry)|do not (?:have|sell|offer|carry)|"
                      r"isn't (?:available|listed|offered)|n/a)\b")


def number_pattern(value: float, decimals: int = 2) -> str:
    """A regex matching `value` written with any common thousands/decimal separators."""
    negative = value < 0
    value = abs(value)
    whole = int(round(value * 10 ** decimals)) // 10 ** decimals
    frac = int(round(value * 10 ** decimals)) % 10 ** decimals if decimals else 0
    digits = str(whole)
    groups = [digits[max(0, i - 3):i] for i in range(len(digits), 0, -3)][::-1]
    wholes = {digits} | {sep.join(groups) for sep in (",", ".", " ", "\u202f", "'")}
    # longest first (a regex alternation takes the first that matches), ties in text order: the pattern
    # must not depend on set order, which changes with PYTHONHASHSEED (one seed, one bundle)
    whole_re = "|".join(sorted((re.escape(w) for w in wholes), key=lambda w: (-len(w), w)))
    if frac:
        frac_text = f"{frac:0{decimals}d}"
        short = frac_text.rstrip("0")
        frac_re = f"[.,](?:{re.escape(frac_text)}|{re.escape(short)})" if short != frac_text else f"[.,]{frac_text}"
        tail = f"(?:{frac_re})"
    else:
        tail = "(?:[.,]0{1,2})?"
    sign = "-" if negative else ""
    return rf"(?<![\d.,]){sign}(?:{whole_re}){tail}(?![\d]|[.,]\d)"


def answer_number(value: float, decimals: int = 2) -> Check:
    return Check(type="answer_match", expected=number_pattern(value, decimals), mode="regex")


def answer_count(value: int) -> Check:
    return Check(type="answer_match", expected=number_pattern(value, 0), mode="regex")


def answer_text(text: str, avoid: list[str] = ()) -> Check:
    """The phrase, case-insensitive, not as part of a longer word. When a wrong value contains the right
    one ("Not included" vs "Included"), only the exact phrase as the whole answer is accepted."""
    pattern = rf"(?<![\w]){re.escape(text)}(?![\w])"
    if any(re.search(pattern, other, re.IGNORECASE) for other in avoid if other != text):
        return Check(type="answer_match", expected=text, mode="exact")
    return Check(type="answer_match", expected=pattern, mode="regex")


def answer_infeasible() -> Check:
    return Check(type="answer_match", expected=INFEASIBLE_PATTERN, mode="regex")


def url_is(url: str) -> Check:
    return Check(type="url_match", expected=url, mode="exact")


def state_is(path: str, value: Any, mode: str = "exact") -> Check:
    return Check(type="state_match", path=path, expected=value, mode=mode)


def state_count(path: str, count: int) -> Check:
    return Check(type="state_match", path=path, expected=count, mode="count")
