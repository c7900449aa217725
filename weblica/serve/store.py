"""Per-episode server-side state of synth sites: one JSON document per (site, episode), kept in SQLite
(or any SQLAlchemy URL) so checks read the truth the site holds, not what the page shows."""
from __future__ import annotations

import copy
import json
import threading
from typing import Any, Callable

from sqlalchemy import String, Text, create_engine, delete, select
from sqlalchemy.orm import DeclarativeBase, Mapped, Session, mapped_column
from sqlalchemy.pool import StaticPool


class Base(DeclarativeBase):
    pass


class EpisodeState(Base):
    __tablename__ = "episode_state"
    site: Mapped[str] = mapped_column(String(128), primary_key=True)
    episode: Mapped[str] = mapped_column(String(128), primary_key=True)
    body: Mapped[str] = mapped_column(Text)


class StateStore:
    """Read-modify-write of episode documents. Writes are serialized by one lock: the sites' requests are
    tiny, and a lock keeps two tabs of one episode from losing each other's updates."""

    def __init__(self, url: str = "sqlite://") -> None:
        kwargs: dict[str, Any] = {}
        if url in ("sqlite://", "sqlite:///:memory:"):
            # one shared in-memory database for every server thread
            kwargs = {"poolclass": StaticPool, "connect_args": {"check_same_thread": False}}
        self.engine = create_engine(url, **kwargs)
        Base.metadata.create_all(self.engine)
        self._lock = threading.RLock()

    def get(self, site: str, episode: str, initial: dict[str, Any]) -> dict[str, Any]:
        with self._lock, Session(self.engine) as session:
            row = session.get(EpisodeState, (site, episode))
            return json.loads(row.body) if row else copy.deepcopy(initial)

    def update(self, site: str, episode: str, initial: dict[str, Any],
               change: Callable[[dict[str, Any]], Any]) -> Any:
        """Apply `change` to the episode's state (created from `initial`) and store it; returns its result."""
        with self._lock, Session(self.engine) as session:
            row = session.get(EpisodeState, (site, episode))
            state = json.loads(row.body) if row else copy.deepcopy(initial)
            result = change(state)
            body = json.dumps(state, sort_keys=True, ensure_ascii=False)
            if row:
                row.body = body
            else:
                session.add(EpisodeState(site=site, episode=episode, body=body))
            session.commit()
            return result

    def reset(self, site: str, episode: str) -> None:
        with self._lock, Session(self.engine) as session:
            session.execute(delete(EpisodeState).where(EpisodeState.site == site, EpisodeState.episode == episode))
            session.commit()

    def episodes(self, site: str) -> list[str]:
        with Session(self.engine) as session:
            return list(session.scalars(select(EpisodeState.episode).where(EpisodeState.site == site)))


def with_views(state: dict[str, Any]) -> dict[str, Any]:
    """The state plus lookup views checks can address: for a list of records with ids, `<name>_ids`
    (ids in order) and `<name>_by_id` (record by id), so 'record t3 was deleted' is a set check."""
    out = dict(state)
    for key, value in state.items():
        if isinstance(value, list) and value and all(isinstance(v, dict) and "id" in v for v in value):
            out[f"{key}_ids"] = [v["id"] for v in value]
            out[f"{key}_by_id"] = {str(v["id"]): v for v in value}
        elif isinstance(value, list) and not value:
            out[f"{key}_ids"] = []
    return out
