"""The recording directory around the store: its screenshots, its actions, and where its database is.

    REC/recording.sqlite          the recording's own database (the default), bodies in REC/bodies/
    REC/store.json                or: a pointer to a shared database (any SQLAlchemy URL), the shared
                                  body directory, and this recording's name in that database
    REC/screens/run-N/step-K.png  screenshots after each action of run N (step-0: after the page opened)
    REC/actions.json              the actions every run played
    REC/rules/                    rules inferred for this recording
"""
from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from weblica.cache.store_schema import StoreError

DB_NAME = "recording.sqlite"
STORE_POINTER = "store.json"
RECORDING_MARKERS = (DB_NAME, STORE_POINTER)   # a folder holding either is a recording


@dataclass(frozen=True)
class SharedStore:
    """A recording kept in a database many machines reach: `url` (SQLAlchemy), `bodies` (a directory on a
    filesystem they share), `name` (the recording's name among the database's recordings)."""

    url: str
    bodies: str
    name: str


def write_store_pointer(recording: str | Path, shared: SharedStore) -> None:
    """Make `recording` a recording whose rows and bodies live in `shared` (written atomically)."""
    if not shared.name or len(shared.name) > 200:
        raise StoreError(f"a shared recording's name must be 1 to 200 characters, got {shared.name!r}")
    path = Path(recording) / STORE_POINTER
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps({"url": shared.url, "bodies": str(Path(shared.bodies).absolute()),
                               "recording": shared.name}, indent=1) + "\n", encoding="utf-8")
    os.replace(tmp, path)


def read_store_pointer(recording: str | Path) -> SharedStore | None:
    """The shared store `recording` points at, or None for a recording with its own database."""
    path = Path(recording) / STORE_POINTER
    if not path.is_file():
        return None
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        shared = SharedStore(url=data["url"], bodies=data["bodies"], name=data["recording"])
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise StoreError(f"{path} cannot be read ({exc}): expected url, bodies and recording. Fix: restore it "
                         "from the build that wrote it") from None
    if not all(isinstance(v, str) and v for v in (shared.url, shared.bodies, shared.name)):
        raise StoreError(f"{path} names no database (url, bodies and recording must be non-empty strings). "
                         "Fix: restore it from the build that wrote it")
    return shared


def screens_dir(recording: str | Path, run_index: int) -> Path:
    return Path(recording) / "screens" / f"run-{run_index}"


def save_actions(recording: str | Path, actions: list[dict[str, Any]], start_url: str) -> None:
    (Path(recording) / "actions.json").write_text(json.dumps({"start_url": start_url, "actions": actions}, indent=1))


def load_actions(recording: str | Path) -> tuple[str | None, list[dict[str, Any]]]:
    path = Path(recording) / "actions.json"
    if not path.exists():
        return None, []
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise StoreError(f"{path} cannot be read ({exc}). Fix: restore it from the recording's source, or "
                         "give --actions FILE and --url URL") from None
    start_url, actions = (data.get("start_url"), data.get("actions", [])) if isinstance(data, dict) else (None, None)
    if not (start_url is None or isinstance(start_url, str)) or not isinstance(actions, list):
        raise StoreError(f"{path} is not a weblica actions file (expected start_url and a list of actions). "
                         "Fix: restore it, or give --actions FILE and --url URL")
    return start_url, actions
