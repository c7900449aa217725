"""The Exchange data model: one recorded request and the response it got."""
from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

from weblica.cache.canonical import RequestView, request_view

Headers = list[tuple[str, str]]

# Headers that describe the transfer, not the content. Bodies are stored decoded, so these are
# dropped on record and recomputed on replay.
HOP_HEADERS = frozenset({"content-encoding", "transfer-encoding", "content-length", "connection",
                         "keep-alive", "proxy-connection", "alt-svc"})


def header(headers: Headers, name: str, default: str = "") -> str:
    name = name.lower()
    for key, value in headers:
        if key.lower() == name:
            return value
    return default


@dataclass
class Exchange:
    """A request and its response. Bodies live in the body store, named by their sha256 digest."""

    method: str
    url: str
    request_headers: Headers = field(default_factory=list)
    request_body_digest: str | None = None
    status: int = 0
    reason: str = ""
    response_headers: Headers = field(default_factory=list)
    response_body_digest: str | None = None
    response_body_size: int = 0
    http_version: str = "HTTP/1.1"
    started: float = 0.0     # wall-clock seconds when the request began (replay refreshes dates from it)
    ended: float = 0.0
    seq: int = 0             # order within its run
    run_id: int = 0
    id: int | None = None
    request_body: bytes | None = None   # filled when loaded with bodies; not stored in the table
    # identity of a response whose body is unknown (HAR without content): status, size, type, validators
    response_fingerprint: str | None = None

    @cached_property
    def view(self) -> RequestView:
        return request_view(self.method, self.url, self.request_headers, self.request_body or b"")

    @property
    def content_type(self) -> str:
        return header(self.response_headers, "content-type").split(";")[0].strip().lower()

    def response_identity(self) -> str:
        """What makes two responses the same: the body digest, else status, size, type and validators."""
        if self.response_body_digest:
            return f"{self.status}:{self.response_body_digest}"
        if self.response_fingerprint:
            return self.response_fingerprint
        return ":".join([str(self.status), str(self.response_body_size), self.content_type,
                         header(self.response_headers, "etag"), header(self.response_headers, "last-modified")])

    def summary(self) -> dict[str, Any]:
        return {"id": self.id, "run_id": self.run_id, "seq": self.seq, "method": self.method, "url": self.url,
                "status": self.status}
