"""Byte ranges and media: what a recorded partial or media response may answer.

- A `Range: bytes=…` request is answered from a recorded identical range, or cut from a recorded full
  body (206 + Content-Range). Only single ranges are served (`bytes=0-99`, `bytes=100-`, `bytes=-500`);
  a multi-range or unsatisfiable request is left to the matcher, which reports it as a miss.
- A recorded 206 answers a range only when its bytes are exactly the ones asked (`fits`): the span its
  Content-Range names is the asked range resolved against the resource's length (an open range runs to
  the end), and its body holds that many bytes. A server that sent less for an open range, or a body cut
  short, would make the player ask for bytes the recording never had.
- A media or range response is served only where the recording agrees on the resource's length
  (`same_length`): a video recorded at 52,787 bytes in one run and 47,082 in another changed between
  runs, and either answer may be the wrong one.
"""
from __future__ import annotations

from typing import Any, Iterable

from werkzeug.http import parse_content_range_header, parse_range_header

from weblica.cache.exchange import Exchange, header

MEDIA_TYPES = ("video/", "audio/")


def _single_range(value: str | None) -> tuple[int, int | None] | None:
    """The one byte range a Range header asks (werkzeug's reading: `start` from 0, `stop` exclusive or None
    for an open range, a suffix as a negative `start`); None for anything but one range of bytes."""
    asked = parse_range_header(value)
    if asked is None or asked.units != "bytes" or len(asked.ranges) != 1:
        return None
    return asked.ranges[0]


def parse_range(value: str, size: int) -> tuple[int, int] | None:
    """The inclusive (first, last) byte positions a single-range header asks of a `size`-byte body."""
    asked = _single_range(value)
    if asked is None or size <= 0:
        return None
    start, stop = asked
    if start < 0:  # a suffix: the last N bytes (all of them when N is more than the body holds)
        return max(size + start, 0), size - 1
    end = min(stop, size) if stop is not None else size
    return (start, end - 1) if start < end else None


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


def not_modified(response: Any) -> None:
    """Turn a full mitmproxy response into the 304 a server gives a browser that holds its version."""
    response.status_code = 304
    response.reason = "Not Modified"
    response.content = b""
    for name in ("Content-Length", "Content-Encoding", "Content-Range"):
        response.headers.pop(name, None)


def content_range(value: str) -> tuple[int, int, int | None] | None:
    """`bytes 0-99/1024` -> (0, 99, 1024); the total is None when the server wrote `*`."""
    span = parse_content_range_header(value or None)
    if span is None or span.units != "bytes" or span.start is None or span.stop is None:
        return None
    return span.start, span.stop - 1, span.length


def is_media(ex: Exchange) -> bool:
    """A partial answer, or audio and video (which players fetch in ranges)."""
    return ex.status == 206 or ex.content_type.startswith(MEDIA_TYPES) or bool(header(ex.response_headers,
                                                                                      "content-range"))


def resource_length(ex: Exchange) -> int | None:
    """The whole resource's length a recorded response speaks of: the total its Content-Range names, else
    the size of a full body; None when it cannot be told."""
    span = content_range(header(ex.response_headers, "content-range"))
    if span is not None:
        return span[2]
    return ex.response_body_size if ex.status == 200 else None


def fits(asked: str | None, ex: Exchange) -> bool:
    """Whether a recorded 206 holds exactly the bytes a request's Range asks (see the module doc)."""
    if ex.status != 206:
        return True
    span = content_range(header(ex.response_headers, "content-range"))
    if span is None or asked is None:
        return False
    first, last, total = span
    if total is None:   # the length was never said: only a closed range can be checked
        closed = _single_range(asked)
        wanted = (closed[0], closed[1] - 1) if closed is not None and closed[0] >= 0 and closed[1] is not None else None
    else:
        wanted = parse_range(asked, total)
    return wanted == (first, last) and ex.response_body_size == last - first + 1


def same_length(candidates: Iterable[Exchange]) -> bool:
    """Whether the recorded media and partial answers among `candidates` agree on the resource's length."""
    lengths = {resource_length(ex) for ex in candidates if is_media(ex)}
    return len(lengths) <= 1
