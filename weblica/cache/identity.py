"""Response identity: whether two recorded responses are the same content, random tokens aside.

With bodies: the body after masking what a page embeds fresh on every load (CSRF tokens, request ids,
render times). JSON is compared value by value and only values that look volatile are masked
(timestamps near the capture, random floats, UUIDs, tokens): a changed price is a different response.

Without bodies (a HAR written without content): status, content type, validators (ETag and
Last-Modified decide when both sides carry them) and the size in *bands*, so that a few bytes of
jitter (a timestamp rendered one digit longer) still count as the same response. An equal Last-Modified
decides for static files (scripts, styles, images, fonts) only: their size in a HAR may be the bytes
sent, which depend on the encoding the CDN chose that time, while a page or an API answer often keeps a
stale Last-Modified over changing content.

A redirect's target is compared as a request is: the same URL once masked, or the same scheme, host,
path and fields where the values that differ look random on both sides (a tracker's redirect carries
fresh ids every time) under names that do not say they carry content (`id`, `q`, `page` must be equal).
"""
from __future__ import annotations

import hashlib
import json
import re
from typing import Any

from weblica.cache.canonical import request_view
from weblica.cache.exchange import Exchange, header
from weblica.cache.volatile import detect, mask, semantic_name

SIZE_JITTER_BYTES = 64       # sizes this close are one band ...
SIZE_JITTER_SHARE = 0.02     # ... or within 2% of the larger one
STATIC_TYPES = ("application/javascript", "text/javascript", "application/x-javascript", "text/css", "image/",
                "font/", "application/font", "application/x-font")


def same_size_band(a: int, b: int) -> bool:
    if min(a, b) == 0:
        return a == b  # an empty answer is never a jittered non-empty one
    return abs(a - b) <= max(SIZE_JITTER_BYTES, SIZE_JITTER_SHARE * max(a, b))


def _mask_json(value: Any, capture_time: float | None) -> Any:
    if isinstance(value, dict):
        return {k: _mask_json(v, capture_time) for k, v in value.items()}
    if isinstance(value, list):
        return [_mask_json(v, capture_time) for v in value]
    if isinstance(value, bool) or value is None:
        return value
    if isinstance(value, (int, float)):
        # a number is masked only as a time near the capture or a random fraction: ids and prices stay
        return "<*>" if detect(repr(value), capture_time) in ("epoch_s", "epoch_ms", "random_float") else value
    if isinstance(value, str) and detect(value, capture_time):
        return "<*>"
    return value


def _validators(ex: Exchange) -> tuple[str, str]:
    return header(ex.response_headers, "etag"), header(ex.response_headers, "last-modified")


def same_target(a: str, b: str) -> bool:
    """Whether two redirect targets (Location values) send the browser to the same place (module doc)."""
    if mask(a) == mask(b):
        return True
    if not a or not b:
        return False
    va, vb = request_view("GET", a), request_view("GET", b)
    if (va.scheme, va.host, va.path) != (vb.scheme, vb.host, vb.path):
        return False
    fa, fb = va.field_dict(), vb.field_dict()
    if set(fa) != set(fb):
        return False
    return all(fa[n] == fb[n] or (not semantic_name(n) and all(_fresh(v, n) for v in fa[n] + fb[n])) for n in fa)


def _fresh(value: str, name: str) -> bool:
    """A value a tracker makes up per hit: random-looking, or a long number under a name that says nothing."""
    return bool(detect(value, name=name)) or bool(re.fullmatch(r"\d{8,}", value))


class ResponseComparer:
    """Says whether two recorded responses are the same content. Keeps one digest per response."""

    def __init__(self, store: Any | None, capture_time: float | None = None):
        self.store = store
        self.capture_time = capture_time
        self._cache: dict[int, str] = {}

    def normalized(self, ex: Exchange) -> str:
        """A digest of the masked response (status, redirect target and body)."""
        if ex.id is not None and ex.id in self._cache:
            return self._cache[ex.id]
        location = mask(header(ex.response_headers, "location"))
        body = self.store.bodies.get(ex.response_body_digest) if self.store is not None else b""
        text = body.decode("utf-8", "replace")
        if "json" in ex.content_type:
            try:
                text = json.dumps(_mask_json(json.loads(body), self.capture_time), sort_keys=True)
            except ValueError:
                text = mask(text)
        elif ex.content_type.startswith(("text/", "application/javascript", "application/xml")):
            text = mask(text)
        else:
            text = ex.response_body_digest or ""
        out = hashlib.sha256(f"{ex.status}|{location}|{text}".encode()).hexdigest()
        if ex.id is not None:
            self._cache[ex.id] = out
        return out

    def same(self, a: Exchange, b: Exchange) -> bool:
        if a.status != b.status:
            return False
        if a.response_body_digest and b.response_body_digest:
            if a.response_body_digest == b.response_body_digest:
                return same_target(header(a.response_headers, "location"), header(b.response_headers, "location"))
            return self.store is not None and self.normalized(a) == self.normalized(b)
        return same_without_bodies(a, b)


def same_without_bodies(a: Exchange, b: Exchange) -> bool:
    """Status, type, validators and size band: the identity of responses whose bodies are unknown."""
    if a.status != b.status or a.content_type != b.content_type:
        return False
    if not same_target(header(a.response_headers, "location"), header(b.response_headers, "location")):
        return False
    (etag_a, modified_a), (etag_b, modified_b) = _validators(a), _validators(b)
    if etag_a and etag_b:
        return etag_a == etag_b
    if modified_a and modified_b:
        if modified_a != modified_b:
            return False
        if a.content_type.startswith(STATIC_TYPES):
            return True
    return same_size_band(a.response_body_size, b.response_body_size)
