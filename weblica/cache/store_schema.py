"""The recording store's schema: its tables (SQLAlchemy Core, any dialect) and the rows read from them.

One database may hold many recordings (a shared PostgreSQL server that every build worker reaches):
`runs.recording` names the recording a run belongs to; exchanges, misses and socket messages belong to
runs. A recording's own SQLite file leaves the name empty.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import JSON, Column, Float, ForeignKey, Integer, LargeBinary, MetaData, String, Table, Text

from weblica.cache.exchange import Exchange

APP_ID = "weblica-recording"
SCHEMA_VERSION = 1


class StoreError(RuntimeError):
    """A recording that cannot be opened, read or written; the message names the file and the fix."""


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
    # which recording of a shared database the run belongs to ("" in a recording's own SQLite file).
    # Added after schema 1: a file without the column holds one recording, and gets the column when
    # next opened for writing.
    Column("recording", String(200), nullable=False, server_default="", index=True),
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
# WebSocket messages of a recorded handshake (a 101 exchange), in the order they crossed the proxy.
# Added after schema 1: a recording without the table reads as one without WebSockets, and the table
# is created when the recording is next opened for writing (never by a read-only open).
ws_messages_table = Table(
    "ws_messages", metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("exchange_id", Integer, ForeignKey("exchanges.id"), nullable=False, index=True),
    Column("seq", Integer, nullable=False),
    Column("from_client", Integer, nullable=False),   # 1: the browser sent it, 0: the server did
    Column("is_text", Integer, nullable=False),
    Column("content", LargeBinary, nullable=False),
    Column("at", Float, nullable=False),
)
OPTIONAL_TABLES = frozenset({"ws_messages"})
OPTIONAL_COLUMNS = {"runs": frozenset({"recording"})}


@dataclass
class WsMessage:
    exchange_id: int
    seq: int
    from_client: bool
    is_text: bool
    content: bytes
    at: float


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
class PendingRun:
    """A run not yet stored: its exchanges with their bodies (what an import adds in one transaction)."""

    kind: str
    start_url: str | None = None
    info: dict[str, Any] = field(default_factory=dict)
    exchanges: list[tuple[Exchange, bytes | None, bytes | None]] = field(default_factory=list)
    # socket messages by the seq of their handshake exchange (WsMessage.exchange_id is filled on storing)
    ws_messages: dict[int, list["WsMessage"]] = field(default_factory=dict)


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
