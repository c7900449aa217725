"""The folder a new recording is built in before it is moved into place, and the leftovers of killed imports.

An import writes a new recording into `.<name>.importing-<id>/` beside its final place and renames it there
when complete, so a reader never sees half a recording. A killed import left that folder behind for good
(14 MiB in the finding). Each building folder now has a lock file beside it (`<folder>.lock`), locked by the
building process for as long as it builds (`flock`, which the kernel releases when the process dies, even
by SIGKILL); the next import removes every building folder whose lock nobody holds.
"""
from __future__ import annotations

import fcntl
import os
import shutil
import uuid
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

MARK = ".importing-"


def _held(lock: Path) -> bool:
    """Whether a live process holds `lock` (a missing lock file is held by nobody)."""
    try:
        fd = os.open(lock, os.O_RDWR)
    except FileNotFoundError:
        return False
    except OSError:
        return True  # unreadable: leave it be
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    finally:
        os.close(fd)  # closing drops the lock this check may have taken
    return False


def remove_leftovers(parent: str | Path) -> list[Path]:
    """Remove the building folders in `parent` that no live import holds; the folders removed."""
    parent = Path(parent)
    removed: list[Path] = []
    try:
        candidates = [p for p in parent.iterdir() if p.name.startswith(".") and MARK in p.name]
    except OSError:
        return removed
    for path in candidates:
        if path.name.endswith(".lock"):
            if not path.with_name(path.name[:-5]).exists() and not _held(path):
                path.unlink(missing_ok=True)
            continue
        lock = path.with_name(path.name + ".lock")
        if path.is_dir() and not path.is_symlink() and not _held(lock):
            shutil.rmtree(path, ignore_errors=True)
            lock.unlink(missing_ok=True)
            removed.append(path)
    return removed


@contextmanager
def building_folder(out: str | Path) -> Iterator[Path]:
    """A new, locked folder beside `out` to build it in (leftovers of killed imports removed first); the
    folder is gone when the block ends (moved into place by the caller, or removed) and its lock with it."""
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    remove_leftovers(out.parent)
    folder = out.parent / f".{out.name}{MARK}{uuid.uuid4().hex[:12]}"
    lock = folder.with_name(folder.name + ".lock")
    fd = os.open(lock, os.O_RDWR | os.O_CREAT, 0o600)  # the lock first: a folder is never seen unlocked
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        folder.mkdir()
        try:
            yield folder
        finally:
            shutil.rmtree(folder, ignore_errors=True)
    finally:
        lock.unlink(missing_ok=True)
        os.close(fd)
