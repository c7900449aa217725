"""Bodies with bounds: decompression that stops at a size and a ratio, so a compressed bomb is refused.

A 1 MiB WARC with a gzip-encoded payload decompressed to 1 GiB on import. Every body that arrives
encoded (a WARC record's payload, a HAR entry whose content still carries its encoding, a response the
recorder captures) is decoded here in bounded steps: past `MAX_BODY_BYTES` decoded bytes, or past
`MAX_RATIO` times its encoded size once it is over `RATIO_FLOOR`, it is a BodyTooLarge (a ValueError)
naming the cap, and nothing more is decoded. The caps can be raised through WEBLICA_MAX_BODY_BYTES and
WEBLICA_MAX_BODY_RATIO for a site that really serves such bodies.
"""
from __future__ import annotations

import io
import os
import zlib
from typing import Any, BinaryIO

MAX_BODY_BYTES = int(os.environ.get("WEBLICA_MAX_BODY_BYTES", 128 << 20))  # a page's largest asset is far smaller
MAX_RATIO = float(os.environ.get("WEBLICA_MAX_BODY_RATIO", 200))  # text compresses 3-20x; a bomb ~1000x
RATIO_FLOOR = 1 << 20      # small bodies may compress very well (a page of spaces): no ratio below this
CHUNK = 1 << 16
BROTLI_STEP = 64           # brotli input fed this many bytes at a time: one step expands to tens of MiB at most


class BodyTooLarge(ValueError):
    """A body whose decoded size passes a cap."""


class Budget:
    """How many decoded bytes a body may have, given its encoded size."""

    def __init__(self, encoded_size: int | None, where: str = "a body", max_bytes: int | None = None,
                 max_ratio: float | None = None) -> None:
        self.max_bytes = MAX_BODY_BYTES if max_bytes is None else max_bytes
        self.max_ratio = MAX_RATIO if max_ratio is None else max_ratio
        self.encoded_size = encoded_size
        self.where = where

    @property
    def limit(self) -> int:
        if self.encoded_size is None:
            return self.max_bytes
        return min(self.max_bytes, max(RATIO_FLOOR, int(self.encoded_size * self.max_ratio)))

    def check(self, decoded: int) -> None:
        if decoded > self.limit:
            size = f"{self.encoded_size} encoded bytes" if self.encoded_size is not None else "its encoded size"
            raise BodyTooLarge(
                f"{self.where} decodes to more than {self.limit} bytes from {size} (caps: {self.max_bytes} bytes, "
                f"{self.max_ratio:g}x its encoded size): a decompression bomb, or a body too large to keep; "
                "raise WEBLICA_MAX_BODY_BYTES / WEBLICA_MAX_BODY_RATIO if it is genuine")


def read_bounded(stream: BinaryIO | Any, budget: Budget) -> bytes:
    """All of a (decoding) stream, read in chunks and refused past the budget."""
    out = bytearray()
    limit = budget.limit
    while True:
        chunk = stream.read(min(CHUNK, limit + 1 - len(out)) or 1)
        if not chunk:
            return bytes(out)
        out += chunk
        budget.check(len(out))


def _zlib(data: bytes, wbits: int, budget: Budget) -> bytes:
    decoder = zlib.decompressobj(wbits)
    out = bytearray()
    pending = data
    while pending:
        out += decoder.decompress(pending, budget.limit + 1 - len(out))
        budget.check(len(out))
        pending = decoder.unconsumed_tail
        if decoder.eof and decoder.unused_data and wbits >= 16:  # a second gzip member follows
            pending, decoder = decoder.unused_data, zlib.decompressobj(wbits)
    out += decoder.flush()
    budget.check(len(out))
    return bytes(out)


def _deflate(data: bytes, budget: Budget) -> bytes:
    try:  # "deflate" is zlib-wrapped by the standard, raw in practice as often
        return _zlib(data, zlib.MAX_WBITS, budget)
    except zlib.error:
        return _zlib(data, -zlib.MAX_WBITS, budget)


def _brotli(data: bytes, budget: Budget) -> bytes:
    import brotli

    decoder = brotli.Decompressor()
    out = bytearray()
    for start in range(0, len(data), BROTLI_STEP):
        out += decoder.process(data[start:start + BROTLI_STEP])
        budget.check(len(out))
    return bytes(out)


def _zstd(data: bytes, budget: Budget) -> bytes:
    import zstandard

    reader = zstandard.ZstdDecompressor().stream_reader(io.BytesIO(data), read_across_frames=True)
    return read_bounded(reader, budget)


DECODERS = {"gzip": lambda d, b: _zlib(d, 16 + zlib.MAX_WBITS, b), "x-gzip": lambda d, b: _zlib(d, 16 + zlib.MAX_WBITS, b),
            "deflate": _deflate, "br": _brotli, "zstd": _zstd, "identity": lambda d, b: d}


def decoded_body(data: bytes, content_encoding: str, where: str = "a body") -> bytes:
    """`data` with its Content-Encoding (`gzip`, `deflate`, `br`, `zstd`, or a list applied in order)
    removed, within the caps. BodyTooLarge past them; ValueError for an unknown or broken encoding."""
    encodings = [e.strip().lower() for e in (content_encoding or "").split(",") if e.strip()]
    budget = Budget(len(data), where)
    for encoding in reversed(encodings):  # the last one named was applied last
        decoder = DECODERS.get(encoding)
        if decoder is None:
            raise ValueError(f"{where}: unknown content encoding {encoding!r}")
        try:
            data = decoder(data, budget)
        except BodyTooLarge:
            raise
        except Exception as exc:  # zlib.error, brotli.error, zstandard.ZstdError
            raise ValueError(f"{where}: its {encoding} encoding cannot be decoded ({type(exc).__name__}: "
                             f"{str(exc)[:100]})") from None
    budget.check(len(data))
    return data


# what an encoded body starts with, for the encodings that mark themselves
_MAGIC = {"gzip": b"\x1f\x8b", "x-gzip": b"\x1f\x8b", "zstd": b"\x28\xb5\x2f\xfd"}


def har_body(data: bytes, content_encoding: str, where: str = "a body") -> bytes:
    """A HAR entry's body as served decoded. HAR keeps bodies decoded, but some tools keep the encoded
    bytes (base64) beside a Content-Encoding header: a body that still starts as its named encoding does
    is decoded, within the caps; any body is held to the size cap."""
    encodings = [e.strip().lower() for e in (content_encoding or "").split(",") if e.strip()]
    if len(encodings) == 1 and encodings[0] in _MAGIC and data.startswith(_MAGIC[encodings[0]]):
        return decoded_body(data, encodings[0], where)
    return checked_size(data, where)


def checked_size(data: bytes, where: str = "a body") -> bytes:
    """`data` if it is within the size cap (a body that arrived decoded); BodyTooLarge otherwise."""
    Budget(None, where).check(len(data))
    return data
