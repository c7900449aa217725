"""One build per test run, shared by pytest-xdist workers: the first caller builds under a file lock,
the others wait and read what it left (tests/fixtures_models.py, tests/fixtures_sites.py)."""
from __future__ import annotations

import fcntl
import shutil
from pathlib import Path
from typing import Callable


def built_once(out: Path, build: Callable[[], str]) -> str:
    """`build()` (which fills `out` and returns what to remember) once per run: the first caller builds
    under the lock, later ones (other workers included) read the note it left."""
    with open(f"{out}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # released when the file closes
        built = Path(f"{out}.built")  # beside the folder, not in it: tests list and copy its files
        if not built.exists():
            shutil.rmtree(out, ignore_errors=True)  # a build cut short
            built.write_text(build())
        return built.read_text()
