"""The recording store: runs and exchanges in SQL (through SQLAlchemy), bodies content-addressed on disk.

A recording is a directory (see `recording_dir.py`) whose rows live in its own SQLite file by default,
or, for builds spread over many machines, in a shared database (any SQLAlchemy URL, e.g. PostgreSQL)
under the recording's name, with bodies in a shared directory.

SQLite runs in WAL mode with a busy timeout and retries, so several recorders (processes or threads)
may write to one recording at once and lose nothing. Commands that only read open the file read-only
(they cannot write it, not even a schema into an empty file); a body is checked against its digest
when read. Every failure of the database or of a body is a StoreError that names the file.
"""
from __future__ import annotations

import functools
import random
import sqlite3
import time
from pathlib import Path
from typing import Any, Callable, Iterable, TypeVar
from urllib.parse import quote

from sqlalchemy import create_engine, delete, event, func, insert, inspect, select, text, true, update
from sqlalchemy.engine import Engine
from sqlalchemy.exc import DatabaseError, IntegrityError, InternalError, OperationalError, ProgrammingError

from weblica.cache.bodies import BodyStore
from weblica.cache.exchange import Exchange
from weblica.cache.recording_dir import (DB_NAME, STORE_POINTER, SharedStore, load_actions, read_store_pointer,
                                         save_actions, screens_dir, write_store_pointer)
from weblica.cache.store_schema import (APP_ID, OPTIONAL_COLUMNS, OPTIONAL_TABLES, SCHEMA_VERSION, Miss,
                                        PendingRun, Run, StoreError, WsMessage, exchanges_table, meta_table,
                                        metadata, misses_table, runs_table, ws_messages_table)

__all__ = ["DB_NAME", "STORE_POINTER", "BodyStore", "Miss", "PendingRun", "Run", "SharedStore", "Store",
           "StoreError", "WsMessage", "load_actions", "save_actions", "screens_dir", "write_store_pointer"]

SQLITE_MAGIC = b"SQLite format 3\x00"
IN_PROGRESS = "in_progress"  # in a recorder's run info until the run finishes

T = TypeVar("T")


def _sqlite_pragmas(readonly: bool) -> Callable[[Any, Any], None]:
    # nothing here writes to the file: a foreign or damaged file is refused before anything changes it
    def on_connect(dbapi_connection: Any, _record: Any) -> None:
        cursor = dbapi_connection.cursor()
        cursor.execute("PRAGMA busy_timeout=30000")   # wait for the write lock instead of failing at once
        if readonly:
            cursor.execute("PRAGMA query_only=ON")
        else:
            cursor.execute("PRAGMA synchronous=NORMAL")
        cursor.execute("PRAGMA foreign_keys=ON")
        cursor.close()
    return on_connect


def _postgres_readonly(dbapi_connection: Any, _record: Any) -> None:
    # a read-only open of a shared PostgreSQL store: every transaction of the session refuses writes
    cursor = dbapi_connection.cursor()
    cursor.execute("SET SESSION CHARACTERISTICS AS TRANSACTION READ ONLY")
    cursor.close()
    dbapi_connection.commit()


def _check_sqlite_file(path: Path, create: bool) -> None:
    if not path.exists():
        return
    if path.is_dir():
        raise StoreError(f"{path} is a directory, not a recording database. Fix: remove it or use another --out")
    if path.stat().st_size == 0:
        if create:
            return
        raise StoreError(f"{path} is empty (0 bytes): no recording in it. Fix: record or import the recording "
                         "again, or remove the file")
    with path.open("rb") as f:
        head = f.read(16)
    if head != SQLITE_MAGIC:
        raise StoreError(f"{path} is not a SQLite database (corrupt or a foreign file). Fix: point at a "
                         "recording directory made by `weblica record` or `weblica import`, or remove the file")


def _guarded(method: Callable[..., T]) -> Callable[..., T]:
    """A database failure inside a Store method becomes one StoreError naming the database file."""
    @functools.wraps(method)
    def wrapper(self: "Store", *args: Any, **kwargs: Any) -> T:
        try:
            return method(self, *args, **kwargs)
        except OperationalError as exc:
            raise StoreError(f"{self.where}: {exc.orig}") from None
        except InternalError as exc:
            if "read-only" not in str(exc.orig):
                raise StoreError(f"{self.where}: {exc.orig}") from None
            raise StoreError(f"{self.where} is open read-only: {exc.orig}") from None
        except DatabaseError as exc:
            raise StoreError(f"{self.where} is corrupt ({exc.orig}). Fix: restore the recording from a copy, or "
                             "record or import it again") from None
        except ValueError as exc:  # a column that no longer decodes (JSON written over)
            raise StoreError(f"{self.where} holds an unreadable row ({exc}): the file is corrupt. Fix: restore "
                             "the recording from a copy, or record or import it again") from None
    return wrapper


class Store:
    """One recording's runs, exchanges and misses. `url` is any SQLAlchemy URL; bodies go to `bodies_dir`.

    `create` makes the schema in a new database; `readonly` opens a SQLite file so that nothing can be
    written to it (commands that only read use it); neither set: an existing recording, read and written.
    `recording` names the recording among those of a shared database; "" is a database of its own.
    """

    def __init__(self, url: str, bodies_dir: str | Path, create: bool = False, readonly: bool = False,
                 recording: str = ""):
        self.url = url
        self.readonly = readonly
        self.recording = recording
        self.bodies = BodyStore(bodies_dir)
        self.where = url
        kwargs: dict[str, Any] = {}
        if url.startswith("sqlite:///") and url != "sqlite:///:memory:":
            path = Path(url[len("sqlite:///"):])
            self.where = str(path)
            _check_sqlite_file(path, create and not readonly)
            # SQLite's URI modes: ro never writes, rw never creates a missing file, rwc may create it
            uri = f"file:{quote(str(path.absolute()))}?mode={'ro' if readonly else 'rwc' if create else 'rw'}"
            kwargs["creator"] = lambda: sqlite3.connect(uri, uri=True, check_same_thread=False)
        self.engine: Engine = create_engine(url, future=True, **kwargs)
        if self.engine.dialect.name == "sqlite":
            event.listen(self.engine, "connect", _sqlite_pragmas(readonly))
        else:
            self.where = self.engine.url.render_as_string(hide_password=True)
            if readonly and self.engine.dialect.name == "postgresql":
                event.listen(self.engine, "connect", _postgres_readonly)
        if recording:
            self.where += f" (recording {recording!r})"
        try:
            self._open(create and not readonly)
            if create and not readonly and self.engine.dialect.name == "sqlite":
                self._use_wal()
        except StoreError:
            self.engine.dispose()
            raise

    @_guarded
    def _use_wal(self) -> None:
        # WAL (readers do not block the writer) is a property of the file: set once, on a checked recording
        def go() -> None:
            with self.engine.connect() as conn:
                conn.exec_driver_sql("PRAGMA journal_mode=WAL")
        self._retry(go)

    @_guarded
    def _open(self, create: bool) -> None:
        tables = set(inspect(self.engine).get_table_names())
        if "weblica_meta" not in tables:
            # only our own tables, without the meta table: another worker is creating the schema right now
            if tables and not (create and tables <= set(metadata.tables)):
                raise StoreError(f"{self.where} is a database but not a weblica recording (tables: "
                                 f"{', '.join(sorted(tables))}). Fix: use a new --out directory")
            if not create:
                raise StoreError(f"{self.where} holds no recording. Fix: record one with "
                                 "`weblica record URL --out DIR`")
            self._create_schema()
            tables = set(inspect(self.engine).get_table_names())
        with self.engine.connect() as conn:
            meta = dict(conn.execute(select(meta_table.c.key, meta_table.c.value)).all())
        if not meta and create:   # the meta table is there, its rows not yet: a concurrent creator's
            self._create_schema()
            tables = set(inspect(self.engine).get_table_names())
            with self.engine.connect() as conn:
                meta = dict(conn.execute(select(meta_table.c.key, meta_table.c.value)).all())
        if meta.get("app") != APP_ID:
            raise StoreError(f"{self.where} is not a weblica recording (app={meta.get('app')!r})")
        # a creator writes the meta rows only after every table: list the tables again now that they are
        # there, since the first listing may have caught a concurrent creator half-way
        tables = set(inspect(self.engine).get_table_names())
        schema = str(meta.get("schema", "0"))
        if not schema.isdigit():
            raise StoreError(f"{self.where} is corrupt (schema version {schema!r}). Fix: restore the recording "
                             "from a copy, or record or import it again")
        if int(schema) > SCHEMA_VERSION:
            raise StoreError(f"{self.where} was written by a newer weblica (schema {schema}); upgrade weblica")
        self._optional_missing = set(OPTIONAL_TABLES - tables)
        expected = {t.name: {c.name for c in t.columns} for t in metadata.sorted_tables
                    if t.name not in self._optional_missing}
        missing_columns: dict[str, set[str]] = {}
        for name, columns in expected.items():
            found = {c["name"] for c in inspect(self.engine).get_columns(name)} if name in tables else set()
            lacking = columns - found - OPTIONAL_COLUMNS.get(name, frozenset())
            if lacking:
                raise StoreError(f"{self.where} is not a complete weblica recording (table {name} lacks "
                                 f"{', '.join(sorted(lacking))}). Fix: record or import it again")
            if columns - found:
                missing_columns[name] = columns - found
        self._has_names = "recording" not in missing_columns.get("runs", set())
        if not self._has_names and self.recording:
            raise StoreError(f"{self.where}: the database holds one unnamed recording, not a shared store of "
                             "named ones. Fix: point --store at a database made for shared recordings")
        if (self._optional_missing or missing_columns) and not self.readonly:
            self._migrate(missing_columns)   # an older recording, migrated when opened to write

    def _create_schema(self) -> None:
        # many workers may create a shared database's schema at once: a creator that loses the race
        # finds the tables (or the meta rows) there and goes on
        for attempt in range(10):
            try:   # create_all creates only the tables not there yet: again until none is missing
                self._retry(lambda: metadata.create_all(self.engine))
                break
            except (IntegrityError, ProgrammingError, OperationalError):   # "already exists": another won
                if attempt == 9:
                    raise
                time.sleep(0.05 * (attempt + 1))
        try:
            with self.engine.begin() as conn:
                existing = conn.execute(select(meta_table.c.key)).scalars().all()
                if not existing:
                    conn.execute(insert(meta_table), [{"key": "app", "value": APP_ID},
                                                      {"key": "schema", "value": str(SCHEMA_VERSION)},
                                                      {"key": "created", "value": str(time.time())}])
        except IntegrityError:   # a concurrent creator wrote them first
            pass

    def _migrate(self, missing_columns: dict[str, set[str]]) -> None:
        tables = [metadata.tables[n] for n in self._optional_missing]
        self._retry(lambda: metadata.create_all(self.engine, tables=tables))
        self._optional_missing = set()
        if "recording" in missing_columns.get("runs", set()):
            def add() -> None:
                with self.engine.begin() as conn:
                    conn.execute(text("ALTER TABLE runs ADD COLUMN recording VARCHAR(200) NOT NULL DEFAULT ''"))
            self._retry(add)
            self._has_names = True

    # ---- this recording's rows among a shared database's ---------------------------------------------

    def _mine(self) -> Any:
        """A clause true for this recording's runs (every run in a database without names)."""
        return runs_table.c.recording == self.recording if self._has_names else true()

    def _my_run_ids(self) -> Any:
        return select(runs_table.c.id).where(self._mine())

    def _my_exchange_ids(self) -> Any:
        return select(exchanges_table.c.id).where(exchanges_table.c.run_id.in_(self._my_run_ids()))

    @classmethod
    def open_dir(cls, directory: str | Path, create: bool = False, readonly: bool = False) -> "Store":
        """Open the recording in `directory`: a new one with create=True, read-only with readonly=True.
        A directory with a `store.json` pointer (`write_store_pointer`) opens its shared database."""
        directory = Path(directory)
        shared = read_store_pointer(directory) if directory.is_dir() else None
        if shared is not None:
            return cls(shared.url, shared.bodies, create=create, readonly=readonly, recording=shared.name)
        if not create or readonly:
            if not directory.exists():
                raise StoreError(f"{directory} does not exist. Fix: record a recording with "
                                 "`weblica record URL --out DIR` or import one with `weblica import FILE --out DIR`")
            if not directory.is_dir():
                raise StoreError(f"{directory} is a file, not a recording directory. Fix: give the directory "
                                 f"that holds {DB_NAME}")
            if not (directory / DB_NAME).exists():   # (nor a store.json: read above)
                raise StoreError(f"{directory} is not a recording (no {DB_NAME}). Fix: record one with "
                                 "`weblica record URL --out DIR` or import one with `weblica import FILE`")
        else:
            directory.mkdir(parents=True, exist_ok=True)
        return cls(f"sqlite:///{directory / DB_NAME}", directory / "bodies", create=create, readonly=readonly)

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

    @_guarded
    def new_run(self, kind: str = "record", seed: int = 0, start_url: str | None = None,
                info: dict[str, Any] | None = None, in_progress: bool = False) -> int:
        """A new run; `in_progress` (a recorder's runs) marks it until finish_run gives its end: a run still
        marked without an end was cut by a kill (`finished_runs`)."""
        if in_progress:
            info = {**(info or {}), IN_PROGRESS: True}

        def go() -> int:
            with self.engine.begin() as conn:
                result = conn.execute(insert(runs_table).values(kind=kind, seed=seed, started=time.time(),
                                                                start_url=start_url, info=info or {},
                                                                **self._name_value()))
                return int(result.inserted_primary_key[0])
        return self._retry(go)

    @_guarded
    def finish_run(self, run_id: int, info: dict[str, Any] | None = None) -> None:
        values: dict[str, Any] = {"ended": time.time()}
        if info is not None:
            values["info"] = info
        def go() -> None:
            with self.engine.begin() as conn:
                conn.execute(update(runs_table).where(runs_table.c.id == run_id).values(**values))
        self._retry(go)

    def _name_value(self) -> dict[str, str]:
        return {"recording": self.recording} if self._has_names else {}

    @_guarded
    def clear(self) -> None:
        """Delete every row of this recording (a shared database's other recordings keep theirs); bodies
        stay, since other recordings may share them."""
        def go() -> None:
            with self.engine.begin() as conn:
                exchange_ids = self._my_exchange_ids()
                if "ws_messages" not in self._optional_missing:
                    conn.execute(delete(ws_messages_table).where(ws_messages_table.c.exchange_id.in_(exchange_ids)))
                conn.execute(delete(misses_table).where(misses_table.c.run_id.in_(self._my_run_ids())))
                conn.execute(delete(exchanges_table).where(exchanges_table.c.run_id.in_(self._my_run_ids())))
                conn.execute(delete(runs_table).where(self._mine()))
        self._retry(go)

    @_guarded
    def add_exchange(self, exchange: Exchange, request_body: bytes | None = None,
                     response_body: bytes | None = None) -> int:
        """Store one exchange (bodies first, so a row never names a missing body); returns its id."""
        row = self._exchange_row(exchange, request_body, response_body)
        def go() -> int:
            with self.engine.begin() as conn:
                return int(conn.execute(insert(exchanges_table).values(**row)).inserted_primary_key[0])
        exchange.id = self._retry(go)
        return exchange.id

    def _exchange_row(self, exchange: Exchange, request_body: bytes | None,
                      response_body: bytes | None) -> dict[str, Any]:
        if request_body:
            exchange.request_body_digest = self.bodies.put(request_body)
        if response_body is not None:
            exchange.response_body_digest = self.bodies.put(response_body) if response_body else None
            exchange.response_body_size = len(response_body)
        return {
            "run_id": exchange.run_id, "seq": exchange.seq, "method": exchange.method, "url": exchange.url,
            "request_headers": [list(h) for h in exchange.request_headers],
            "request_body_digest": exchange.request_body_digest, "status": exchange.status,
            "reason": exchange.reason, "response_headers": [list(h) for h in exchange.response_headers],
            "response_body_digest": exchange.response_body_digest,
            "response_body_size": exchange.response_body_size,
            "response_fingerprint": exchange.response_fingerprint, "http_version": exchange.http_version,
            "started": exchange.started, "ended": exchange.ended,
        }

    @_guarded
    def add_runs(self, pending: list[PendingRun]) -> list[int]:
        """Store whole runs in one transaction: all of them with all their exchanges, or none.

        Bodies are written first (content-addressed, so a body left by a failed transaction is only an
        unreferenced file, never half a run)."""
        rows = [[self._exchange_row(ex, req, resp) for ex, req, resp in run.exchanges] for run in pending]
        def go() -> list[int]:
            ids = []
            with self.engine.begin() as conn:
                for run, run_rows in zip(pending, rows):
                    now = time.time()
                    run_id = int(conn.execute(insert(runs_table).values(
                        kind=run.kind, seed=0, started=now, ended=now, start_url=run.start_url,
                        info=run.info, **self._name_value())).inserted_primary_key[0])
                    if run_rows:
                        conn.execute(insert(exchanges_table), [{**row, "run_id": run_id} for row in run_rows])
                    if run.ws_messages:   # handshakes found again by their seq within the run
                        by_seq = dict(conn.execute(select(exchanges_table.c.seq, exchanges_table.c.id)
                                                   .where(exchanges_table.c.run_id == run_id)).all())
                        ws_rows = [{"exchange_id": by_seq[seq], "seq": m.seq, "from_client": int(m.from_client),
                                    "is_text": int(m.is_text), "content": m.content, "at": m.at}
                                   for seq, messages in run.ws_messages.items() if seq in by_seq for m in messages]
                        if ws_rows:
                            conn.execute(insert(ws_messages_table), ws_rows)
                    for ex, _, _ in run.exchanges:
                        ex.run_id = run_id
                    ids.append(run_id)
            return ids
        return self._retry(go)

    @_guarded
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

    @_guarded
    def add_ws_message(self, message: WsMessage) -> None:
        row = {"exchange_id": message.exchange_id, "seq": message.seq, "from_client": int(message.from_client),
               "is_text": int(message.is_text), "content": message.content, "at": message.at}
        def go() -> None:
            with self.engine.begin() as conn:
                conn.execute(insert(ws_messages_table).values(**row))
        self._retry(go)

    # ---- reading -----------------------------------------------------------------------------------

    @_guarded
    def ws_messages(self, exchange_ids: Iterable[int] | None = None) -> dict[int, list[WsMessage]]:
        """Recorded WebSocket messages by handshake exchange id, each socket's in recorded order."""
        if "ws_messages" in self._optional_missing:
            return {}
        query = (select(ws_messages_table).where(ws_messages_table.c.exchange_id.in_(self._my_exchange_ids()))
                 .order_by(ws_messages_table.c.exchange_id, ws_messages_table.c.seq))
        if exchange_ids is not None:
            query = query.where(ws_messages_table.c.exchange_id.in_(list(exchange_ids)))
        out: dict[int, list[WsMessage]] = {}
        with self.engine.connect() as conn:
            for r in conn.execute(query).mappings():
                out.setdefault(r["exchange_id"], []).append(WsMessage(
                    exchange_id=r["exchange_id"], seq=r["seq"], from_client=bool(r["from_client"]),
                    is_text=bool(r["is_text"]), content=bytes(r["content"]), at=r["at"]))
        return out

    @_guarded
    def runs(self, kinds: Iterable[str] = ("record", "import")) -> list[Run]:
        kinds = list(kinds)
        with self.engine.connect() as conn:
            columns = [c for c in runs_table.c if self._has_names or c.name != "recording"]
            rows = conn.execute(select(*columns).where(runs_table.c.kind.in_(kinds), self._mine())
                                .order_by(runs_table.c.id)).mappings().all()
        return [Run(id=r["id"], kind=r["kind"], seed=r["seed"], started=r["started"], ended=r["ended"],
                    start_url=r["start_url"], info=r["info"] or {}) for r in rows]

    def finished_runs(self, kinds: Iterable[str] = ("record", "import")) -> tuple[list[Run], list[Run]]:
        """(the other runs, the runs cut before their end): a recorder's run killed mid-browse never got its
        end time, and its exchanges stop wherever the kill fell, so evidence comes from the others."""
        runs = self.runs(kinds)
        cut = [r for r in runs if r.ended is None and r.info.get(IN_PROGRESS)]
        return [r for r in runs if r not in cut], cut

    @_guarded
    def exchanges(self, run_ids: Iterable[int] | None = None, with_request_bodies: bool = True) -> list[Exchange]:
        """Exchanges in recorded order (run, then seq); request bodies loaded so keys can be computed."""
        query = (select(exchanges_table).where(exchanges_table.c.run_id.in_(self._my_run_ids()))
                 .order_by(exchanges_table.c.run_id, exchanges_table.c.seq, exchanges_table.c.id))
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

    @_guarded
    def count_exchanges(self) -> int:
        with self.engine.connect() as conn:
            return int(conn.execute(select(func.count()).select_from(exchanges_table)
                                    .where(exchanges_table.c.run_id.in_(self._my_run_ids()))).scalar_one())

    @_guarded
    def misses(self) -> list[Miss]:
        with self.engine.connect() as conn:
            rows = conn.execute(select(misses_table).where(misses_table.c.run_id.in_(self._my_run_ids()))
                                .order_by(misses_table.c.id)).mappings().all()
        return [Miss(id=r["id"], run_id=r["run_id"], method=r["method"], url=r["url"],
                     request_headers=[tuple(h) for h in r["request_headers"]],
                     request_body_digest=r["request_body_digest"], closest_exchange_id=r["closest_exchange_id"],
                     differing=r["differing"]) for r in rows]
