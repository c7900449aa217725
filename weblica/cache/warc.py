"""Reading a WARC file record by record, checking each one before anything is imported.

warcio parses the records; what it lets pass quietly is checked here: a record whose Content-Length
does not end where the record ends (warcio only prints a warning), a record cut short by the end of
the file, bytes that are not a record at all (garbage, a truncated tail: warcio stops without a word),
WARC-Block-Digest and WARC-Payload-Digest (warcio's check_digests), and an HTTP Content-Length that
does not match the payload. After unreadable bytes, reading resumes at the next record start
(`WARC/1.x` for a plain file, the next gzip member for a .warc.gz), so every bad record is listed.
"""
from __future__ import annotations

import io
import mmap
import re
from contextlib import redirect_stderr
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from weblica.cache.decompress import BodyTooLarge, Budget, read_bounded

RECORD_START = re.compile(rb"(?:^|\n)WARC/1\.[01]\r?\n")
GZIP_MEMBER = re.compile(rb"\x1f\x8b\x08")
NOT_BLANK = re.compile(rb"[^\r\n\t ]")


@dataclass
class BadRecord:
    """A record (or a HAR entry) that was not imported, and why."""

    index: int                 # the record's (or entry's) position in the file, from 0
    offset: int | None         # byte offset in the file, where known
    record_id: str | None
    uri: str | None
    reason: str
    concurrent_to: str | None = None   # a request record: the response it belongs to

    def describe(self) -> str:
        at = f" at byte {self.offset}" if self.offset is not None else ""
        return f"record {self.index}{at}{f' ({self.uri})' if self.uri else ''}: {self.reason}"

    def to_dict(self) -> dict[str, Any]:
        return {k: v for k, v in asdict(self).items() if v is not None}


@dataclass
class WarcRecord:
    """A request, response or resource record that passed every check."""

    index: int
    offset: int
    kind: str                  # request | response | resource (a WebSocket's frames: websocket.py)
    record_id: str | None
    uri: str | None
    date: str | None
    concurrent_to: str | None
    http_headers: Any          # warcio StatusAndHeaders (None for a resource record)
    body: bytes                # the payload, transfer and content encodings removed
    content_type: str = ""     # the record's own Content-Type (a resource record's format)


def _short(exc: BaseException) -> str:
    text = str(exc).replace("\r", "").replace("\n", " ").strip()
    return f"{type(exc).__name__}: {text[:120]}" if text else type(exc).__name__


def _check(iterator: Any, record: Any, index: int) -> WarcRecord | BadRecord:
    offset = iterator.offset
    headers = record.rec_headers
    record_id, uri = headers.get_header("WARC-Record-ID"), headers.get_header("WARC-Target-URI")
    concurrent_to = headers.get_header("WARC-Concurrent-To")
    declared = headers.get_header("Content-Length")
    errors_before = iterator.err_count
    problem = None
    body = b""
    try:  # decoded within the caps of weblica/cache/decompress.py: a gzip bomb is a bad record
        encoded = int(declared) if declared and declared.strip().isdigit() else None
        body = read_bounded(record.content_stream(), Budget(encoded, "its payload"))
    except BodyTooLarge as exc:
        problem = str(exc)
    except Exception as exc:  # a bad chunked or gzip payload: warcio raises whatever its decoder raises
        problem = f"its payload cannot be decoded ({_short(exc)})"
    iterator.read_to_end(record)
    missing = getattr(record.raw_stream, "limit", 0) or 0
    http = record.http_headers
    if record.format != "warc":
        problem = f"not a WARC record (warcio reads it as {record.format})"
    elif missing:
        problem = f"truncated: {missing} of its {declared} bytes (Content-Length) are missing"
    elif iterator.err_count > errors_before:
        problem = f"its Content-Length ({declared}) does not end where the record ends"
    elif record.digest_checker is not None and record.digest_checker.problems:
        problem = "digest mismatch: " + "; ".join(record.digest_checker.problems)
    elif problem is None and http is not None and record.rec_type in ("request", "response"):
        length = http.get_header("Content-Length")
        plain = not http.get_header("Transfer-Encoding") and not http.get_header("Content-Encoding")
        if plain and length is not None and length.strip().isdigit() and int(length) != len(body):
            problem = f"its HTTP Content-Length ({length}) is not the payload's length ({len(body)})"
    if problem is not None:
        belongs_to = concurrent_to if record.rec_type == "request" else None
        return BadRecord(index, offset, record_id, uri, problem, belongs_to)
    if record.rec_type in ("request", "response") and http is None:
        return BadRecord(index, offset, record_id, uri, f"a {record.rec_type} record without HTTP headers")
    return WarcRecord(index, offset, record.rec_type, record_id, uri, headers.get_header("WARC-Date"),
                      concurrent_to, http, body, headers.get_header("Content-Type") or "")


def read_warc(path: str | Path) -> tuple[list[WarcRecord], list[BadRecord]]:
    """Every good request, response and resource record of the file, and every bad record with its reason."""
    from warcio.archiveiterator import ArchiveIterator

    path = Path(path)
    size = path.stat().st_size
    good: list[WarcRecord] = []
    bad: list[BadRecord] = []
    if size == 0:
        return good, [BadRecord(0, 0, None, None, "the file is empty")]
    index = 0
    with open(path, "rb") as f, mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as data:
        next_start = GZIP_MEMBER if data[:2] == b"\x1f\x8b" else RECORD_START
        start = 0
        while start < size:  # each pass resumes after unreadable bytes, strictly further on
            f.seek(start)
            end, failure = start, None
            with redirect_stderr(io.StringIO()):  # warcio's warnings become the reasons given here
                iterator = ArchiveIterator(f, check_digests=True)
                try:
                    for record in iterator:
                        checked = _check(iterator, record, index)
                        offset, length = iterator.member_info
                        end = offset + length
                        index += 1
                        if isinstance(checked, BadRecord):
                            bad.append(checked)
                        elif checked.kind in ("request", "response", "resource"):
                            good.append(checked)
                except Exception as exc:  # warcio raises ArchiveLoadFailed, EOFError, zlib, Type and Index errors
                    failure = exc
                    end = max(end, iterator.offset)
            leftover = NOT_BLANK.search(data, end)  # the blank lines after a record are not part of it
            if leftover is None:
                break
            end = max(end, leftover.start()) if failure is None else end
            found = next_start.search(data, end + 1)
            resume = None if found is None else found.start() + (1 if data[found.start():found.start() + 1] == b"\n"
                                                                   and next_start is RECORD_START else 0)
            stop = resume if resume is not None else size
            reason = f"cannot be read ({_short(failure)})" if failure else "truncated, or not a WARC record"
            bad.append(BadRecord(index, end, None, None, f"bytes {end}-{stop} {reason}"))
            index += 1
            if resume is None:
                break
            start = resume
    return good, bad

