"""A throwaway PostgreSQL server on loopback for the shared-store tests (skipped where PostgreSQL or
psycopg is not installed). initdb refuses to run as root, so as root the server runs as `nobody`."""
from __future__ import annotations

import contextlib
import glob
import os
import shutil
import socket
import subprocess
import tempfile
from typing import Iterator

import pytest


def _pg_bin(name: str) -> str | None:
    found = shutil.which(name)
    if found:
        return found
    candidates = sorted(glob.glob(f"/usr/lib/postgresql/*/bin/{name}"))
    return candidates[-1] if candidates else None


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextlib.contextmanager
def postgres_server() -> Iterator[str]:
    """Yields a SQLAlchemy URL of an empty database on a fresh server; the server is gone afterwards."""
    pytest.importorskip("psycopg", reason="psycopg is not installed (pip install 'weblica[postgres]')")
    initdb, pg_ctl = _pg_bin("initdb"), _pg_bin("pg_ctl")
    if not initdb or not pg_ctl:
        pytest.skip("PostgreSQL's initdb/pg_ctl are not installed")
    as_user = ["runuser", "-u", "nobody", "--"] if os.geteuid() == 0 else []
    if as_user and not shutil.which("runuser"):
        pytest.skip("running as root without runuser: initdb cannot run")
    base = tempfile.mkdtemp(prefix="weblica-pg-")
    os.chmod(base, 0o777)
    data, port = os.path.join(base, "data"), _free_port()
    run = lambda *args: subprocess.run([*as_user, *args], check=True, capture_output=True, timeout=60)  # noqa: E731
    try:
        run(initdb, "-D", data, "-A", "trust", "-U", "weblica", "--no-sync", "-E", "UTF8")
        run(pg_ctl, "-D", data, "-o", f"-k {base} -h 127.0.0.1 -p {port} -F", "-l", os.path.join(base, "log"),
            "-w", "start")
        try:
            yield f"postgresql+psycopg://weblica@127.0.0.1:{port}/postgres"
        finally:
            run(pg_ctl, "-D", data, "-m", "immediate", "-w", "stop")
    finally:
        shutil.rmtree(base, ignore_errors=True)
