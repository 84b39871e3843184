"""Storage of games through SQLAlchemy: an SQLite file by default (WAL mode),
any SQLAlchemy URL (e.g. PostgreSQL) by option.

A game is stored as its record plus metadata.  Every move is saved in one
transaction that also checks the state version (optimistic concurrency), so
two writers can never both apply a move to the same version.
"""

from __future__ import annotations

import asyncio
import json
import os
import secrets
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from datetime import UTC, datetime
from functools import partial
from pathlib import Path
from typing import Any

from sqlalchemy import (
    Boolean,
    DateTime,
    Integer,
    String,
    Text,
    bindparam,
    create_engine,
    event,
    select,
    update,
)
from sqlalchemy.engine import Engine
from sqlalchemy.orm import DeclarativeBase, Mapped, Session, mapped_column


class Base(DeclarativeBase):
    pass


class GameRow(Base):
    __tablename__ = "games"

    id: Mapped[str] = mapped_column(String(32), primary_key=True)
    created: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    updated: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    version: Mapped[int] = mapped_column(Integer)
    title: Mapped[str] = mapped_column(String(200))
    mode: Mapped[str] = mapped_column(String(20))  # "ai", "hotseat" or "online"
    seats: Mapped[str] = mapped_column(Text)  # JSON list: "human" or agent name per seat
    options: Mapped[str] = mapped_column(Text)  # JSON: agent options
    finished: Mapped[bool] = mapped_column(Boolean, default=False)
    record: Mapped[str] = mapped_column(Text)  # the game record, donutbox/1


@dataclass
class StoredGame:
    id: str
    version: int
    title: str
    mode: str
    seats: list[str]
    options: dict[str, Any]
    finished: bool
    record: dict[str, Any]
    created: datetime
    updated: datetime


_TABLE = GameRow.__table__
_SAVE_VALUES = {
    "version": bindparam("b_new"),
    "record": bindparam("b_record"),
    "finished": bindparam("b_finished"),
    "updated": bindparam("b_updated"),
}
_SAVE_WHERE = (_TABLE.c.id == bindparam("b_id"), _TABLE.c.version == bindparam("b_old"))
#: The versioned write of one move (built once: SQLAlchemy caches its SQL).
_SAVE = update(_TABLE).where(*_SAVE_WHERE).values(**_SAVE_VALUES)
_SAVE_WITH_OPTIONS = (
    update(_TABLE).where(*_SAVE_WHERE).values(**_SAVE_VALUES, options=bindparam("b_options"))
)


class StaleVersion(Exception):
    """The stored game has moved on: the write was refused."""


def default_url() -> str:
    """An SQLite file in the user's data folder (XDG_DATA_HOME or ~/.local/share)."""
    base = Path(os.environ.get("XDG_DATA_HOME") or Path.home() / ".local" / "share")
    folder = base / "donutbox"
    folder.mkdir(parents=True, exist_ok=True)
    return f"sqlite:///{folder / 'donutbox.db'}"


def make_engine(url: str | None = None) -> Engine:
    url = url or default_url()
    engine = create_engine(url, future=True)
    if engine.dialect.name == "sqlite":

        @event.listens_for(engine, "connect")
        def _sqlite_pragmas(dbapi_conn: Any, _record: Any) -> None:
            cur = dbapi_conn.cursor()
            cur.execute("PRAGMA journal_mode=WAL")
            cur.execute("PRAGMA synchronous=NORMAL")
            cur.execute("PRAGMA busy_timeout=5000")
            cur.close()

    Base.metadata.create_all(engine)
    return engine


def _now() -> datetime:
    return datetime.now(UTC)


def _load(row: GameRow) -> StoredGame:
    return StoredGame(
        id=row.id,
        version=row.version,
        title=row.title,
        mode=row.mode,
        seats=json.loads(row.seats),
        options=json.loads(row.options),
        finished=row.finished,
        record=json.loads(row.record),
        created=row.created,
        updated=row.updated,
    )


class Store:
    """Games in a database."""

    def __init__(self, engine: Engine) -> None:
        self.engine = engine
        # Moves are written by one thread, off the event loop: a slow disk
        # or a WAL checkpoint then delays that game's move, not the server.
        self.writer = ThreadPoolExecutor(max_workers=1, thread_name_prefix="donutbox-db")

    async def save_async(
        self,
        game_id: str,
        version: int,
        record: dict[str, Any],
        finished: bool,
        options: dict[str, Any] | None = None,
    ) -> int:
        """``save``, run in the writer thread."""
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(
            self.writer, partial(self.save, game_id, version, record, finished, options)
        )

    def close(self) -> None:
        self.writer.shutdown(wait=True)

    def create(
        self,
        title: str,
        mode: str,
        seats: list[str],
        options: dict[str, Any],
        record: dict[str, Any],
        finished: bool = False,
    ) -> StoredGame:
        now = _now()
        game_id = secrets.token_urlsafe(12)
        row = GameRow(
            id=game_id,
            created=now,
            updated=now,
            version=0,
            title=title[:200],
            mode=mode,
            seats=json.dumps(seats),
            options=json.dumps(options),
            finished=finished,
            record=json.dumps(record),
        )
        with Session(self.engine) as db, db.begin():
            db.add(row)
        stored = self.get(game_id)
        assert stored is not None
        return stored

    def get(self, game_id: str) -> StoredGame | None:
        with Session(self.engine) as db:
            row = db.get(GameRow, game_id)
            return None if row is None else _load(row)

    def save(
        self,
        game_id: str,
        version: int,
        record: dict[str, Any],
        finished: bool,
        options: dict[str, Any] | None = None,
    ) -> int:
        """Store the record (and the options, e.g. clocks, when given) as
        version ``version + 1``; StaleVersion if the stored version is not
        ``version``.  One transaction."""
        params: dict[str, Any] = {
            "b_id": game_id,
            "b_old": version,
            "b_new": version + 1,
            "b_record": json.dumps(record),
            "b_finished": finished,
            "b_updated": _now(),
        }
        if options is not None:
            params["b_options"] = json.dumps(options)
        stmt = _SAVE if options is None else _SAVE_WITH_OPTIONS
        # SQLAlchemy Core, not the ORM, and one prepared statement: an UPDATE
        # on a pooled connection is all a move needs.
        with self.engine.begin() as conn:
            result = conn.execute(stmt, params)
            if result.rowcount != 1:
                raise StaleVersion(game_id)
        return version + 1

    def list(
        self, limit: int = 100, exclude_mode: str | None = None, owner: str | None = None
    ) -> list[StoredGame]:
        with Session(self.engine) as db:
            query = select(GameRow)
            if exclude_mode is not None:
                query = query.where(GameRow.mode != exclude_mode)
            if owner is not None:  # a hex digest, kept in options (server/routes_local.py)
                query = query.where(GameRow.options.contains(f'"owner": "{owner}"'))
            rows = db.scalars(query.order_by(GameRow.updated.desc()).limit(limit))
            return [_load(r) for r in rows]

    def unfinished_ids(self, mode: str) -> list[str]:
        """Ids of the games of ``mode`` still being played (to resume their
        clocks and AI seats when the server starts)."""
        with Session(self.engine) as db:
            query = select(GameRow.id).where(GameRow.mode == mode, GameRow.finished.is_(False))
            return list(db.scalars(query))

    def delete(self, game_id: str) -> bool:
        with Session(self.engine) as db, db.begin():
            row = db.get(GameRow, game_id)
            if row is None:
                return False
            db.delete(row)
            return True
