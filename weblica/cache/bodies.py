"""Request and response bodies, content-addressed on disk: a body is named by its sha256 and written once.

Many recordings (and many build workers, on a shared filesystem) may share one body directory: a body
is identical wherever it came from, so two writers of it both succeed.
"""
from __future__ import annotations

import hashlib
import os
import tempfile
from pathlib import Path

from weblica.cache.store_schema import StoreError


class BodyStore:
    """Bodies named by their sha256 digest under `root/ab/cdef…`; a body is written once, atomically."""

    def __init__(self, root: str | Path):
        self.root = Path(root)

    def path(self, digest: str) -> Path:
        return self.root / digest[:2] / digest[2:]

    def put(self, data: bytes) -> str:
        digest = hashlib.sha256(data).hexdigest()
        target = self.path(digest)
        if not target.exists():
            target.parent.mkdir(parents=True, exist_ok=True)
            # write then rename: a concurrent reader never sees half a body, and two writers of the same
            # body both succeed because the content is identical
            fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=".tmp-")
            with os.fdopen(fd, "wb") as f:
                f.write(data)
            os.replace(tmp, target)
        return digest

    def get(self, digest: str | None) -> bytes:
        """The body named `digest`; a missing body or one whose bytes no longer hash to it is a StoreError."""
        if not digest:
            return b""
        path = self.path(digest)
        try:
            data = path.read_bytes()
        except FileNotFoundError:
            raise StoreError(f"body {path} is missing: the recording was copied without its bodies/ folder "
                             "or the file was deleted; copy the whole recording directory again") from None
        except OSError as exc:
            raise StoreError(f"body {path} cannot be read ({exc.strerror or exc})") from None
        if hashlib.sha256(data).hexdigest() != digest:
            raise StoreError(f"body {path} is corrupt (its bytes no longer match its sha256 name); copy the "
                             "recording again from its source or record it again")
        return data
