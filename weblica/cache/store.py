"""The recording store: runs and exchanges in SQL (through SQLAlchemy), bodies content-addressed on disk.

A recording directory looks like:

    REC/recording.sqlite          runs, exchanges, replay misses (any SQLAlchemy URL works instead)
    REC/bodies/ab/cdef…           request and response bodies, named by sha256, written once
    REC/screens/run-N/step-K.png  screenshots after each action of run N (step-0: after the page opened)
    REC/actions.json              the actions every run played

SQLite runs in WAL mode with a busy timeout and retries, so several recorders (processes or threads)
may write to one recording at once and lose nothing.
"""
from __future__ import annotations

import hashlib
import json
import os
import random
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterable, TypeVar

from sqlalchemy import (JSON, Column, Float, ForeignKey, Integer, MetaData, String, Table, Text, create_engine,
                        event, insert, inspect, select, update)
from sqlalchemy.engine import Engine
from sqlalchemy.exc import DatabaseError, OperationalError

from weblica.cache.exchange import Exchange

APP_ID = "weblica-recording"
SCHEMA_VERSION = 1
DB_NAME = "recording.sqlite"
SQLITE_MAGIC = b"SQLite format 3\x00"
T = TypeVar("T")


class StoreError(RuntimeError):
    """A recording that cannot be opened or written; the message names the fix."""


metadata = MetaData()
meta_table = Table("weblica_meta", metadata, Column("key", String(64), primary_key=True), Column("value", Text))
runs_table = Table(
    "runs", metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("kind", String(16), nullable=False),      # record | import | replay
    Column("seed", Integer, nullable=False, default=0),
    Column("started", Float, nullable=False),
    Column("ended", Float),
    Column("start_url", Text),
    Column("info", JSON, nullable=False, default=dict),
)
exchanges_table = Table(
    "exchanges", metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("run_id", Integer, ForeignKey("runs.id"), nullable=False, index=True),
    Column("seq", Integer, nullable=False),
    Column("method", String(16), nullable=False),
    Column("url", Text, nullable=False),
    Column("request_headers", JSON, nullable=False),
    Column("request_body_digest", String(64)),
    Column("status", Integer, nullable=False),
    Column("reason", Text, nullable=False, default=""),
    Column("response_headers", JSON, nullable=False),
    Column("response_body_digest", String(64)),
    Column("response_body_size", Integer, nullable=False, default=0),
    Column("response_fingerprint", Text),
    Column("http_version", String(16), nullable=False, default="HTTP/1.1"),
    Column("started", Float, nullable=False),
    Column("ended", Float, nullable=False),
)
misses_table = Table(
    "misses", metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("run_id", Integer, ForeignKey("runs.id"), nullable=False, index=True),
    Column("method", String(16), nullable=False),
    Column("url", Text, nullable=False),
    Column("request_headers", JSON, nullable=False),
    Column("request_body_digest", String(64)),
    Column("closest_exchange_id", Integer),
    Column("differing", JSON, nullable=False),   # field -> [requested value, recorded value]
    Column("at", Float, nullable=False),
)


@dataclass
class Run:
    id: int
    kind: str
    seed: int
    started: float
    ended: float | None
    start_url: str | None
    info: dict[str, Any] = field(default_factory=dict)


@dataclass
class Miss:
    id: int
    run_id: int
    method: str
    url: str
    request_headers: list[tuple[str, str]]
    request_body_digest: str | None
    closest_exchange_id: int | None
    differing: dict[str, list[Any]]


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
        if not digest:
            return b""
        try:
            return self.path(digest).read_bytes()
        except FileNotFoundError:
            raise StoreError(f"body {digest} is missing from {self.root}: the recording was copied "
                             "without its bodies/ folder; copy the whole recording directory") from None


def _sqlite_pragmas(dbapi_connection: Any, _record: Any) -> None:
    cursor = dbapi_connection.cursor()
    cursor.execute("PRAGMA journal_mode=WAL")     # readers do not block the writer
    cursor.execute("PRAGMA busy_timeout=30000")   # wait for the write lock instead of failing at once
    cursor.execute("PRAGMA synchronous=NORMAL")
    cursor.execute("PRAGMA foreign_keys=ON")
    cursor.close()


def _check_sqlite_file(path: Path) -> None:
    if not path.exists() or path.stat().st_size == 0:
        return
    with path.open("rb") as f:
        head = f.read(16)
    if head != SQLITE_MAGIC:
        raise StoreError(f"{path} is not a SQLite database (corrupt or a foreign file). Fix: point at a "
                         "recording directory made by `weblica record` or `weblica import`, or remove the file")


class Store:
    """One recording's runs, exchanges and misses. `url` is any SQLAlchemy URL; bodies go to `bodies_dir`."""

    def __init__(self, url: str, bodies_dir: str | Path, create: bool = False):
        self.url = url
        self.bodies = BodyStore(bodies_dir)
        if url.startswith("sqlite:///"):
            _check_sqlite_file(Path(url[len("sqlite:///"):]))
        self.engine: Engine = create_engine(url, future=True)
        if self.engine.dialect.name == "sqlite":
            event.listen(self.engine, "connect", _sqlite_pragmas)
        try:
            self._open(create)
        except DatabaseError as exc:
            self.engine.dispose()
            raise StoreError(f"{url} cannot be read as a recording ({exc.orig}). Fix: point at a recording "
                             "made by `weblica record` or `weblica import`") from None

    def _open(self, create: bool) -> None:
        tables = set(inspect(self.engine).get_table_names())
        if "weblica_meta" not in tables:
            if tables:
                raise StoreError(f"{self.url} is a database but not a weblica recording (tables: "
                                 f"{', '.join(sorted(tables))}). Fix: use a new --out directory")
            if not create:
                raise StoreError(f"{self.url} holds no recording. Fix: record one with `weblica record URL --out DIR`")
            self._retry(lambda: metadata.create_all(self.engine))
            with self.engine.begin() as conn:
                existing = conn.execute(select(meta_table.c.key)).scalars().all()
                if not existing:  # a concurrent creator may have won the race
                    conn.execute(insert(meta_table), [{"key": "app", "value": APP_ID},
                                                      {"key": "schema", "value": str(SCHEMA_VERSION)},
                                                      {"key": "created", "value": str(time.time())}])
        with self.engine.connect() as conn:
            meta = dict(conn.execute(select(meta_table.c.key, meta_table.c.value)).all())
        if meta.get("app") != APP_ID:
            raise StoreError(f"{self.url} is not a weblica recording (app={meta.get('app')!r})")
        if int(meta.get("schema", 0)) > SCHEMA_VERSION:
            raise StoreError(f"{self.url} was written by a newer weblica (schema {meta['schema']}); upgrade weblica")

    @classmethod
    def open_dir(cls, directory: str | Path, create: bool = False) -> "Store":
        """Open the recording in `directory` (made with create=True)."""
        directory = Path(directory)
        if not create and not (directory / DB_NAME).exists():
            raise StoreError(f"{directory} is not a recording (no {DB_NAME}). Fix: record one with "
                             "`weblica record URL --out DIR` or import one with `weblica import FILE`")
        directory.mkdir(parents=True, exist_ok=True)
        return cls(f"sqlite:///{directory / DB_NAME}", directory / "bodies", create=create)

    def close(self) -> None:
        self.engine.dispose()

    def __enter__(self) -> "Store":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    # ---- writing -----------------------------------------------------------------------------------

    def _retry(self, fn: Callable[[], T], attempts: int = 20) -> T:
        # busy_timeout covers most contention; a lock upgrade deadlock still raises at once, so back off
        for attempt in range(attempts):
            try:
                return fn()
            except OperationalError as exc:
                message = str(exc.orig).lower()
                if attempt == attempts - 1 or not ("locked" in message or "busy" in message):
                    raise
                time.sleep(min(0.5, 0.01 * 2 ** attempt) * (0.5 + random.random()))
        raise AssertionError("unreachable")

    def new_run(self, kind: str = "record", seed: int = 0, start_url: str | None = None,
                info: dict[str, Any] | None = None) -> int:
        def go() -> int:
            with self.engine.begin() as conn:
                result = conn.execute(insert(runs_table).values(kind=kind, seed=seed, started=time.time(),
                                                                start_url=start_url, info=info or {}))
                return int(result.inserted_primary_key[0])
        return self._retry(go)

    def finish_run(self, run_id: int, info: dict[str, Any] | None = None) -> None:
        values: dict[str, Any] = {"ended": time.time()}
        if info is not None:
            values["info"] = info
        def go() -> None:
            with self.engine.begin() as conn:
                conn.execute(update(runs_table).where(runs_table.c.id == run_id).values(**values))
        self._retry(go)

    def add_exchange(self, exchange: Exchange, request_body: bytes | None = None,
                     response_body: bytes | None = None) -> int:
        """Store one exchange (bodies first, so a row never names a missing body); returns its id."""
        if request_body:
            exchange.request_body_digest = self.bodies.put(request_body)
        if response_body is not None:
            exchange.response_body_digest = self.bodies.put(response_body) if response_body else None
            exchange.response_body_size = len(response_body)
        row = {
            "run_id": exchange.run_id, "seq": exchange.seq, "method": exchange.method, "url": exchange.url,
            "request_headers": [list(h) for h in exchange.request_headers],
            "request_body_digest": exchange.request_body_digest, "status": exchange.status,
            "reason": exchange.reason, "response_headers": [list(h) for h in exchange.response_headers],
            "response_body_digest": exchange.response_body_digest,
            "response_body_size": exchange.response_body_size,
            "response_fingerprint": exchange.response_fingerprint, "http_version": exchange.http_version,
            "started": exchange.started, "ended": exchange.ended,
        }
        def go() -> int:
            with self.engine.begin() as conn:
                return int(conn.execute(insert(exchanges_table).values(**row)).inserted_primary_key[0])
        exchange.id = self._retry(go)
        return exchange.id

    def add_miss(self, run_id: int, method: str, url: str, request_headers: Iterable[tuple[str, str]],
                 request_body: bytes | None, closest_exchange_id: int | None,
                 differing: dict[str, list[Any]]) -> None:
        digest = self.bodies.put(request_body) if request_body else None
        row = {"run_id": run_id, "method": method, "url": url, "request_headers": [list(h) for h in request_headers],
               "request_body_digest": digest, "closest_exchange_id": closest_exchange_id,
               "differing": differing, "at": time.time()}
        def go() -> None:
            with self.engine.begin() as conn:
                conn.execute(insert(misses_table).values(**row))
        self._retry(go)

    # ---- reading -----------------------------------------------------------------------------------

    def runs(self, kinds: Iterable[str] = ("record", "import")) -> list[Run]:
        kinds = list(kinds)
        with self.engine.connect() as conn:
            rows = conn.execute(select(runs_table).where(runs_table.c.kind.in_(kinds))
                                .order_by(runs_table.c.id)).mappings().all()
        return [Run(id=r["id"], kind=r["kind"], seed=r["seed"], started=r["started"], ended=r["ended"],
                    start_url=r["start_url"], info=r["info"] or {}) for r in rows]

    def exchanges(self, run_ids: Iterable[int] | None = None, with_request_bodies: bool = True) -> list[Exchange]:
        """Exchanges in recorded order (run, then seq); request bodies loaded so keys can be computed."""
        query = select(exchanges_table).order_by(exchanges_table.c.run_id, exchanges_table.c.seq,
                                                 exchanges_table.c.id)
        if run_ids is not None:
            query = query.where(exchanges_table.c.run_id.in_(list(run_ids)))
        with self.engine.connect() as conn:
            rows = conn.execute(query).mappings().all()
        out = []
        for r in rows:
            ex = Exchange(method=r["method"], url=r["url"], request_headers=[tuple(h) for h in r["request_headers"]],
                          request_body_digest=r["request_body_digest"], status=r["status"], reason=r["reason"],
                          response_headers=[tuple(h) for h in r["response_headers"]],
                          response_body_digest=r["response_body_digest"],
                          response_body_size=r["response_body_size"], http_version=r["http_version"],
                          started=r["started"], ended=r["ended"], seq=r["seq"], run_id=r["run_id"], id=r["id"],
                          response_fingerprint=r["response_fingerprint"])
            if with_request_bodies:
                ex.request_body = self.bodies.get(ex.request_body_digest)
            out.append(ex)
        return out

    def count_exchanges(self) -> int:
        from sqlalchemy import func
        with self.engine.connect() as conn:
            return int(conn.execute(select(func.count()).select_from(exchanges_table)).scalar_one())

    def misses(self) -> list[Miss]:
        with self.engine.connect() as conn:
            rows = conn.execute(select(misses_table).order_by(misses_table.c.id)).mappings().all()
        return [Miss(id=r["id"], run_id=r["run_id"], method=r["method"], url=r["url"],
                     request_headers=[tuple(h) for h in r["request_headers"]],
                     request_body_digest=r["request_body_digest"], closest_exchange_id=r["closest_exchange_id"],
                     differing=r["differing"]) for r in rows]


# ---- the recording directory around the store -------------------------------------------------------

def screens_dir(recording: str | Path, run_index: int) -> Path:
    return Path(recording) / "screens" / f"run-{run_index}"


def save_actions(recording: str | Path, actions: list[dict[str, Any]], start_url: str) -> None:
    (Path(recording) / "actions.json").write_text(json.dumps({"start_url": start_url, "actions": actions}, indent=1))


def load_actions(recording: str | Path) -> tuple[str | None, list[dict[str, Any]]]:
    path = Path(recording) / "actions.json"
    if not path.exists():
        return None, []
    data = json.loads(path.read_text())
    return data.get("start_url"), data.get("actions", [])
