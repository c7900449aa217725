"""Reading a site's state and URL for the `state_match` and `url_match` checks: paths into the state, and
what each mode compares (one function per mode, registered in weblica.scoring.registry)."""
from __future__ import annotations

import math
import re
import unicodedata
from typing import Any
from urllib.parse import parse_qsl, urlsplit

import regex

from weblica.scoring.answer import MAX_ANSWER_CHARS, safe_search
from weblica.scoring.numbers import find_numbers
from weblica.scoring.text import normalize_answer

MISSING = object()  # what `lookup_path` returns for a path the state does not have


def normalize_text(value: Any) -> str:
    """Case- and space-normalized text: NFKC, lower case, runs of whitespace collapsed, ends trimmed."""
    text = unicodedata.normalize("NFKC", str(value)).casefold()
    return re.sub(r"\s+", " ", text).strip().rstrip(".")


def parse_number(value: Any) -> float | None:
    """The first number in a value ('$1,234.50' -> 1234.5, 'twelve' -> 12), or None."""
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return float(value)
    numbers = find_numbers(normalize_answer(str(value)[:MAX_ANSWER_CHARS]))
    return numbers[0].value if numbers else None


def lookup_path(state: Any, path: str) -> Any:
    """Follow a dotted path ('orders.0.total', 'cart[1].sku') into nested dicts and lists; MISSING if absent."""
    node = state
    for part in re.findall(r"[^.\[\]]+", path):
        if isinstance(node, dict):
            node = node.get(part, MISSING)
        elif isinstance(node, list) and part.lstrip("-").isdigit() and -len(node) <= int(part) < len(node):
            node = node[int(part)]
        else:
            return MISSING
        if node is MISSING:
            return MISSING
    return node


# ---- state modes: (actual, expected, tol) -> bool ------------------------------------------------------

def _as_set(value: Any) -> set[str]:
    if isinstance(value, (list, tuple, set)):
        items = value
    else:
        items = re.split(r"\s*(?:,|;|\n|\band\b)\s*", str(value))
    return {normalize_text(i) for i in items if normalize_text(i)}


def state_exact(actual: Any, expected: Any, tol: float = 0.0) -> bool:
    if isinstance(expected, (list, tuple)):
        return any(state_exact(actual, e) for e in expected)
    if isinstance(expected, bool) or expected is None:
        return actual == expected or normalize_text(actual) == normalize_text(expected)
    return normalize_text(actual) == normalize_text(expected)


def state_numeric(actual: Any, expected: Any, tol: float = 0.0) -> bool:
    a, e = parse_number(actual), parse_number(expected)
    return a is not None and e is not None and math.isclose(a, e, abs_tol=max(tol, 1e-9))


def state_set(actual: Any, expected: Any, tol: float = 0.0) -> bool:
    return _as_set(actual) == _as_set(expected)


def state_regex(actual: Any, expected: Any, tol: float = 0.0) -> bool:
    return safe_search(str(expected), str(actual), regex.IGNORECASE | regex.DOTALL) is not None


def state_contains(actual: Any, expected: Any, tol: float = 0.0) -> bool:
    if isinstance(actual, (list, tuple)):
        return any(state_exact(a, expected) for a in actual)
    return normalize_text(expected) in normalize_text(actual)


def state_count(actual: Any, expected: Any, tol: float = 0.0) -> bool:
    try:
        return len(actual) == int(expected)
    except (TypeError, ValueError):
        return False


def state_password(actual: Any, expected: Any, tol: float = 0.0) -> bool:
    """The site stores a hash; `expected` is the password in clear, checked through the site's verifier."""
    from weblica.serve.passwords import verify_password

    return verify_password(expected, actual)


# ---- URL modes: (actual, expected) -> bool ------------------------------------------------------------

def _url_parts(url: str) -> tuple[str, str, list[tuple[str, str]]]:
    parts = urlsplit(url)
    return parts.netloc.lower(), parts.path.rstrip("/") or "/", sorted(parse_qsl(parts.query, keep_blank_values=True))


def url_exact(actual: str, expected: str) -> bool:
    return _url_parts(actual) == _url_parts(expected)


def url_prefix(actual: str, expected: str) -> bool:
    return actual.startswith(expected)


def url_contains(actual: str, expected: str) -> bool:
    return expected in actual


def url_regex(actual: str, expected: str) -> bool:
    return safe_search(expected, actual) is not None
