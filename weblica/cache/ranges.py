"""Byte ranges: a `Range: bytes=…` request answered from a recorded full body (206 + Content-Range).

Only single ranges are served (`bytes=0-99`, `bytes=100-`, `bytes=-500`); a multi-range or
unsatisfiable request is left to the matcher, which reports it as a miss rather than guess.
"""
from __future__ import annotations

import re
from typing import Any

_RANGE_RE = re.compile(r"^\s*bytes\s*=\s*(\d*)\s*-\s*(\d*)\s*$", re.IGNORECASE)


def parse_range(value: str, size: int) -> tuple[int, int] | None:
    """The inclusive (first, last) byte positions a single-range header asks of a `size`-byte body."""
    match = _RANGE_RE.match(value or "")
    if not match or size <= 0:
        return None
    first, last = match.groups()
    if not first and not last:
        return None
    if not first:  # a suffix: the last N bytes
        n = int(last)
        return (max(size - n, 0), size - 1) if n > 0 else None
    start = int(first)
    end = min(int(last), size - 1) if last else size - 1
    if start >= size or end < start:
        return None
    return start, end


def apply_range(response: Any, byte_range: tuple[int, int]) -> None:
    """Turn a full mitmproxy response into the 206 for `byte_range` (the body was recorded whole)."""
    body = response.content or b""
    first, last = byte_range
    response.status_code = 206
    response.reason = "Partial Content"
    response.content = body[first:last + 1]
    response.headers["Content-Range"] = f"bytes {first}-{last}/{len(body)}"
    response.headers["Content-Length"] = str(last - first + 1)
    response.headers["Accept-Ranges"] = "bytes"
