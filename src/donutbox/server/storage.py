"""Storage of games through SQLAlchemy: an SQLite file by default, any
SQLAlchemy URL (e.g. PostgreSQL) by option.

A game is stored as its record plus metadata.  Every move is saved in one
transaction that also checks the state version (optimistic concurrency), so
two writers can never both apply a move to the same version.

Faults (docs/online.md, "Limits and what they cost"):

- Every database failure reaches callers as ``StorageError`` (one line,
  ``reason``), logged once on the ``donutbox.storage`` logger; never a bare
  driver exception, never a signal.
- SQLite runs in WAL mode with ``locking_mode=EXCLUSIVE`` and
  ``mmap_size=0``: nothing of the database is memory-mapped.  In WAL's
  usual shared mode SQLite maps the ``-shm`` index into memory, and a
  truncated or unwritable ``-shm`` file then killed the process with SIGBUS
  (no log line, no error to catch).  In exclusive mode the index is in this
  process's memory, and the same faults are ordinary I/O errors.  The cost:
  one process holds the file (a second ``donutbox serve`` on it is refused
  at start with "database is locked"); in this process every thread shares
  one connection (``make_engine`` returns the same engine for the same
  URL), taken in turn.  Commits stay as cheap as before (no fsync a move).
- A move's write is retried (``SAVE_ATTEMPTS``, with a short pause) when
  the database is busy or fails for a moment; if it still fails the caller
  gets ``StorageError`` and the stored game is unchanged.
- A row that cannot be read (bad JSON, nesting beyond ``jsonsafe``'s bound,
  a record the engine refuses) is *quarantined*: logged, listed in the
  ``quarantine`` table, skipped at start-up and in lists, answered with
  ``CorruptGame``; the server starts anyway.
"""

from __future__ import annotations

import asyncio
import builtins
import json
import logging
import os
import secrets
import threading
import time
import weakref
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from datetime import UTC, datetime
from functools import partial
from pathlib import Path
from typing import Any, cast

from sqlalchemy import (
    Boolean,
    DateTime,
    Float,
    Integer,
    String,
    Table,
    Text,
    bindparam,
    create_engine,
    event,
    select,
    update,
)
from sqlalchemy.engine import Engine
from sqlalchemy.exc import SQLAlchemyError
from sqlalchemy.orm import DeclarativeBase, Mapped, Session, mapped_column
from sqlalchemy.pool import QueuePool

from .jsonsafe import MAX_DEPTH, loads_bounded

log = logging.getLogger("donutbox.storage")
#: Tries of a move's write before ``StorageError``, and the pause after the
#: first failure (doubled each time).
SAVE_ATTEMPTS = 3
SAVE_PAUSE = 0.1
#: ``Store.versions`` asks for at most this many ids in one query.
VERSIONS_CHUNK = 500
#: Milliseconds SQLite waits for a lock held by another connection.
BUSY_TIMEOUT_MS = 2000


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
    #: the running turn's wall-clock deadline (seconds since the epoch) of a
    #: turn-based game, and the human seat to move: copies of what the
    #: record and options say, kept so that a query finds the games whose
    #: deadline passed, or that wait on a player, without loading them
    deadline_at: Mapped[float | None] = mapped_column(Float, nullable=True, index=True)
    to_move: Mapped[int | None] = mapped_column(Integer, nullable=True)


class QuarantineRow(Base):
    """Games set aside because their row cannot be read (see the module's
    docstring).  Their ``games`` row is kept as it was, for a person to look
    at; delete the ``quarantine`` row to try the game again."""

    __tablename__ = "quarantine"

    id: Mapped[str] = mapped_column(String(32), primary_key=True)
    at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    reason: Mapped[str] = mapped_column(String(300))


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


_TABLE = cast(Table, GameRow.__table__)
_SAVE_VALUES: dict[str, Any] = {
    "version": bindparam("b_new"),
    "record": bindparam("b_record"),
    "finished": bindparam("b_finished"),
    "updated": bindparam("b_updated"),
    "deadline_at": bindparam("b_deadline"),
    "to_move": bindparam("b_to_move"),
}
_SAVE_WHERE = (_TABLE.c.id == bindparam("b_id"), _TABLE.c.version == bindparam("b_old"))
#: The versioned write of one move (built once: SQLAlchemy caches its SQL).
_SAVE = update(_TABLE).where(*_SAVE_WHERE).values(**_SAVE_VALUES)
_SAVE_WITH_OPTIONS = (
    update(_TABLE).where(*_SAVE_WHERE).values(**_SAVE_VALUES, options=bindparam("b_options"))
)


#: What a save indexes (``GameRow.deadline_at``, ``GameRow.to_move``).
Waiting = tuple[float | None, int | None]


class StaleVersion(Exception):
    """The stored game has moved on: the write was refused."""


class StorageError(Exception):
    """The database failed; ``reason`` says what, in one line fit for a
    client ("storage: ..."), and nothing was changed by the failed call."""

    status = 503

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class CorruptGame(StorageError):
    """A stored game that cannot be read: it is quarantined."""

    def __init__(self, game_id: str, why: str) -> None:
        super().__init__(f"game {game_id}: its stored record is damaged ({why}); set aside")
        self.game_id = game_id
        self.why = why


def _brief(err: BaseException) -> str:
    """The first line of a driver error, without SQLAlchemy's SQL and
    background link."""
    orig = getattr(err, "orig", None)
    text = str(orig if orig is not None else err).strip()
    line = (text.splitlines() or [type(err).__name__])[0]
    return line.split(" (Background on this error")[0][:200]


def _transient(err: BaseException) -> bool:
    """Worth trying again: any failure of the database itself (busy, locked,
    an I/O error).  A lasting one (a full disk, a damaged file) fails every
    try, which costs a fraction of a second."""
    from sqlalchemy.exc import DBAPIError

    return isinstance(err, DBAPIError)


def default_url() -> str:
    """An SQLite file in the user's data folder (XDG_DATA_HOME or ~/.local/share)."""
    base = Path(os.environ.get("XDG_DATA_HOME") or Path.home() / ".local" / "share")
    folder = base / "donutbox"
    folder.mkdir(parents=True, exist_ok=True)
    return f"sqlite:///{folder / 'donutbox.db'}"


#: SQLite engines of this process by URL: an SQLite file is opened once (its
#: lock is exclusive, so a second engine on it would find it locked).
_SQLITE_ENGINES: weakref.WeakValueDictionary[str, Engine] = weakref.WeakValueDictionary()
_SQLITE_LOCK = threading.Lock()


def make_engine(url: str | None = None, busy_timeout_ms: int | None = None) -> Engine:
    """An engine for ``url``.  An SQLite file gets one connection, shared by
    every thread of this process (the same engine for the same URL), in WAL
    mode with an exclusive lock: see the module's docstring."""
    url = url or default_url()
    busy = BUSY_TIMEOUT_MS if busy_timeout_ms is None else busy_timeout_ms
    if not url.startswith("sqlite"):
        engine = create_engine(url, future=True)
        Base.metadata.create_all(engine)
        return engine
    with _SQLITE_LOCK:
        known = _SQLITE_ENGINES.get(url)
        if known is not None:
            return known
        engine = create_engine(
            url,
            future=True,
            poolclass=QueuePool,
            pool_size=1,
            max_overflow=0,
            pool_timeout=10,
            connect_args={"check_same_thread": False},
        )

        @event.listens_for(engine, "connect")
        def _sqlite_pragmas(dbapi_conn: Any, _record: Any) -> None:
            cur = dbapi_conn.cursor()
            cur.execute(f"PRAGMA busy_timeout={int(busy)}")
            cur.execute("PRAGMA mmap_size=0")
            # Exclusive before WAL: the WAL index then lives in this
            # process's memory, never in a mapped -shm file.
            cur.execute("PRAGMA locking_mode=EXCLUSIVE")
            cur.execute("PRAGMA journal_mode=WAL")
            cur.execute("PRAGMA synchronous=NORMAL")
            cur.close()

        Base.metadata.create_all(engine)
        _SQLITE_ENGINES[url] = engine
        return engine


def _now() -> datetime:
    return datetime.now(UTC)


def _load(row: GameRow) -> StoredGame:
    """A row as a StoredGame; CorruptGame (naming the column) if any of its
    JSON is unreadable or nested beyond ``jsonsafe.MAX_DEPTH``."""
    parsed: dict[str, Any] = {}
    for column in ("seats", "options", "record"):
        try:
            parsed[column] = loads_bounded(getattr(row, column), MAX_DEPTH, what=column)
        except (ValueError, TypeError) as err:
            raise CorruptGame(row.id, _brief(err)) from None
    seats, options, record = parsed["seats"], parsed["options"], parsed["record"]
    if not isinstance(seats, list) or not all(isinstance(k, str) for k in seats):
        raise CorruptGame(row.id, "seats: not a list of names")
    if not isinstance(options, dict):
        raise CorruptGame(row.id, "options: not an object")
    if not isinstance(record, dict):
        raise CorruptGame(row.id, "record: not an object")
    return StoredGame(
        id=row.id,
        version=row.version,
        title=row.title,
        mode=row.mode,
        seats=seats,
        options=options,
        finished=row.finished,
        record=record,
        created=row.created,
        updated=row.updated,
    )


class Store:
    """Games in a database.  Every method raises StorageError (one line,
    logged) when the database fails, never a driver's exception."""

    def __init__(self, engine: Engine) -> None:
        self.engine = engine
        # Moves are written by one thread, off the event loop: a slow disk
        # then delays that game's move, not the server.
        self.writer = ThreadPoolExecutor(max_workers=1, thread_name_prefix="donutbox-db")
        #: ids set aside (also kept in memory: the quarantine table may be
        #: unwritable when a row turns out damaged)
        self.quarantined: dict[str, str] = {}
        self.attempts = SAVE_ATTEMPTS
        self.pause = SAVE_PAUSE
        try:
            with Session(self.engine) as db:
                for q in db.scalars(select(QuarantineRow)):
                    self.quarantined[q.id] = q.reason
        except SQLAlchemyError as err:
            log.error("storage: cannot read the quarantine list: %s", _brief(err))

    def _fail(self, doing: str, err: BaseException) -> StorageError:
        reason = f"storage: could not {doing} ({_brief(err)})"
        log.error("%s", reason)
        return StorageError(reason)

    async def save_async(
        self,
        game_id: str,
        version: int,
        record: dict[str, Any],
        finished: bool,
        options: dict[str, Any] | None = None,
        waiting: Waiting = (None, None),
    ) -> int:
        """``save_with_retry``, run in the writer thread."""
        loop = asyncio.get_running_loop()
        work = partial(self.save_with_retry, game_id, version, record, finished, options, waiting)
        return await loop.run_in_executor(self.writer, work)

    def close(self) -> None:
        """Finish pending writes and close the database connection (for
        SQLite this releases the file's lock; the engine reconnects if it is
        used again)."""
        self.writer.shutdown(wait=True)
        self.engine.dispose()

    def create(
        self,
        title: str,
        mode: str,
        seats: list[str],
        options: dict[str, Any],
        record: dict[str, Any],
        finished: bool = False,
        waiting: Waiting = (None, None),
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
            deadline_at=waiting[0],
            to_move=waiting[1],
        )
        try:
            with Session(self.engine) as db, db.begin():
                db.add(row)
        except SQLAlchemyError as err:
            raise self._fail("create the game", err) from None
        stored = self.get(game_id)
        assert stored is not None
        return stored

    def get(self, game_id: str) -> StoredGame | None:
        """The game, None if there is none; CorruptGame if its row cannot be
        read (it is quarantined then)."""
        if game_id in self.quarantined:
            raise CorruptGame(game_id, self.quarantined[game_id])
        try:
            with Session(self.engine) as db:
                row = db.get(GameRow, game_id)
                if row is None:
                    return None
                try:
                    return _load(row)
                except CorruptGame as err:
                    damaged = err
        except SQLAlchemyError as err:
            raise self._fail("read the game", err) from None
        # Outside the session: the SQLite engine has one connection.
        self.quarantine(game_id, damaged.why)
        raise damaged

    def versions(self, game_ids: Iterable[str]) -> dict[str, int]:
        """The stored version of each of these games that exists (one small
        query per ``VERSIONS_CHUNK`` ids, reading two columns by primary
        key): how a process finds what another stored without telling it
        (server/broker.py, ``RedisBroker.reconcile``)."""
        ids = list(game_ids)
        out: dict[str, int] = {}
        try:
            with Session(self.engine) as db:
                for start in range(0, len(ids), VERSIONS_CHUNK):
                    chunk = ids[start : start + VERSIONS_CHUNK]
                    query = select(GameRow.id, GameRow.version).where(GameRow.id.in_(chunk))
                    out.update((row.id, row.version) for row in db.execute(query))
        except SQLAlchemyError as err:
            raise self._fail("read the games' versions", err) from None
        return out

    def access(self, game_id: str) -> tuple[str, dict[str, Any]] | None:
        """The mode and options (which hold the token digests) of a stored
        game, even a quarantined one, read alone: who may be told that a
        damaged game is damaged.  None if there is no such row or its
        options cannot be read (then nobody can be told)."""
        try:
            with Session(self.engine) as db:
                row = db.execute(
                    select(GameRow.mode, GameRow.options).where(GameRow.id == game_id)
                ).first()
        except SQLAlchemyError as err:
            raise self._fail("read the game", err) from None
        if row is None:
            return None
        try:
            options = loads_bounded(row.options, MAX_DEPTH, what="options")
        except (ValueError, TypeError):
            return None
        return (row.mode, options) if isinstance(options, dict) else None

    def save(
        self,
        game_id: str,
        version: int,
        record: dict[str, Any],
        finished: bool,
        options: dict[str, Any] | None = None,
        waiting: Waiting = (None, None),
    ) -> int:
        """Store the record (and the options, e.g. clocks, when given) as
        version ``version + 1``; StaleVersion if the stored version is not
        ``version``.  One transaction; one try (driver errors pass through:
        ``save_with_retry`` is what callers want)."""
        params: dict[str, Any] = {
            "b_id": game_id,
            "b_old": version,
            "b_new": version + 1,
            "b_record": json.dumps(record),
            "b_finished": finished,
            "b_updated": _now(),
            "b_deadline": waiting[0],
            "b_to_move": waiting[1],
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

    def save_with_retry(
        self,
        game_id: str,
        version: int,
        record: dict[str, Any],
        finished: bool,
        options: dict[str, Any] | None = None,
        waiting: Waiting = (None, None),
    ) -> int:
        """``save``, tried up to ``attempts`` times while the database fails
        (pausing ``pause`` seconds, then twice that, ...).  StaleVersion is
        not retried.  If every try fails: StorageError, logged, and the
        stored game is as it was (each try is one transaction)."""
        pause = self.pause
        for attempt in range(1, self.attempts + 1):
            try:
                return self.save(game_id, version, record, finished, options, waiting)
            except SQLAlchemyError as err:
                if attempt == self.attempts or not _transient(err):
                    tries = f"{attempt} tr{'y' if attempt == 1 else 'ies'}"
                    raise self._fail(f"save the move ({tries})", err) from None
                log.warning(
                    "storage: saving game %s failed (%s); trying again", game_id, _brief(err)
                )
                time.sleep(pause)
                pause *= 2
        raise AssertionError("unreachable")

    def list(
        self, limit: int = 100, exclude_mode: str | None = None, owner: str | None = None
    ) -> list[StoredGame]:
        """The most recently updated games (of ``owner``, a digest kept in
        the options, when given); damaged rows are quarantined and left out."""
        out = []
        damaged: list[CorruptGame] = []
        try:
            with Session(self.engine) as db:
                query = select(GameRow)
                if exclude_mode is not None:
                    query = query.where(GameRow.mode != exclude_mode)
                if owner is not None:  # a hex digest, kept in options (server/routes/local.py)
                    query = query.where(GameRow.options.contains(f'"owner": "{owner}"'))
                rows = db.scalars(query.order_by(GameRow.updated.desc()).limit(limit))
                for r in rows:
                    if r.id in self.quarantined:
                        continue
                    try:
                        out.append(_load(r))
                    except CorruptGame as err:
                        damaged.append(err)
        except SQLAlchemyError as err:
            raise self._fail("list the games", err) from None
        for bad in damaged:  # outside the session: one connection
            self.quarantine(bad.game_id, bad.why)
        return out

    def due(self, now: float, limit: int = 100) -> builtins.list[str]:
        """Ids of unfinished games whose turn-based deadline is at or before
        ``now`` (seconds since the epoch), the earliest first, quarantined
        ones left out: what the deadline sweep loads (deadlines.py)."""
        try:
            with Session(self.engine) as db:
                query = (
                    select(GameRow.id)
                    .where(GameRow.deadline_at <= now, GameRow.finished.is_(False))
                    .order_by(GameRow.deadline_at)
                    .limit(limit)
                )
                ids = list(db.scalars(query))
        except SQLAlchemyError as err:
            raise self._fail("list the games whose deadline passed", err) from None
        return [i for i in ids if i not in self.quarantined]

    def unfinished_ids(self, mode: str) -> builtins.list[str]:
        """Ids of the games of ``mode`` still being played (to resume their
        clocks and AI seats when the server starts), quarantined ones left
        out."""
        try:
            with Session(self.engine) as db:
                query = select(GameRow.id).where(GameRow.mode == mode, GameRow.finished.is_(False))
                ids = list(db.scalars(query))
        except SQLAlchemyError as err:
            raise self._fail("list the unfinished games", err) from None
        return [i for i in ids if i not in self.quarantined]

    def resume(self, mode: str, load: Callable[[str], object]) -> int:
        """``resume_each`` over the unfinished games of ``mode``; if even
        their list cannot be read (a damaged file), that is logged and the
        caller starts with none: the server comes up and answers each
        request with the storage's error."""
        try:
            ids = self.unfinished_ids(mode)
        except StorageError:
            return 0
        return self.resume_each(ids, load)

    def resume_each(self, ids: Iterable[str], load: Callable[[str], object]) -> int:
        """``load(id)`` for each id (e.g. the hub opening a session), a game
        whose loading fails quarantined with a log line instead of stopping
        the caller: one bad row must not stop the server from starting.
        Returns how many loaded."""
        n = 0
        for game_id in ids:
            try:
                load(game_id)
                n += 1
            except CorruptGame:
                pass  # already quarantined and logged
            except StorageError:
                pass  # logged; the database itself failed, not this row
            except Exception as err:
                self.quarantine(game_id, f"{type(err).__name__}: {_brief(err)}")
        return n

    def quarantine(self, game_id: str, reason: str) -> None:
        """Set ``game_id`` aside (logged; remembered in the ``quarantine``
        table when it is writable, in memory anyway)."""
        reason = reason[:300]
        if game_id in self.quarantined:
            return
        self.quarantined[game_id] = reason
        log.error("storage: game %s set aside: %s", game_id, reason)
        try:
            with Session(self.engine) as db, db.begin():
                db.merge(QuarantineRow(id=game_id, at=_now(), reason=reason))
        except SQLAlchemyError as err:
            log.error("storage: cannot record that game %s is set aside: %s", game_id, _brief(err))

    def delete(self, game_id: str) -> bool:
        try:
            with Session(self.engine) as db, db.begin():
                row = db.get(GameRow, game_id)
                if row is None:
                    return False
                db.delete(row)
                return True
        except SQLAlchemyError as err:
            raise self._fail("delete the game", err) from None
