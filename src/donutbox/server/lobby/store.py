"""The lobby's state in the database (docs/community.md, "The lobby on many
processes"): open tables, where each player is (at a table or in the
quick-match queue), invitations, presence.  Every method is synchronous and
is one transaction: lobby/service.py calls them in threads, never on the event loop.

The same code serves SQLite (one process: its one connection serialises
every transaction) and PostgreSQL (any number of processes):

- **A seat** is taken by a conditional UPDATE of the table's row
  (``seated = seated + 1 WHERE seated < players AND starting IS NULL``): the
  row lock orders every change of one table, so two processes can never put
  two players in one seat.  The transaction that fills the table also marks it
  ``starting``: only that transaction starts its game.
- **Where a player is** (``lobby_places``) is keyed by the user: a player is
  at one table or in the queue, never two (two requests racing on two
  processes: the second's insert collides and is tried again, leaving the
  first place, as one after the other would).
- **Quick match** pairs under the ``queue`` lock row, the queued rows locked
  and deleted in the same transaction: a player is paired once.
- **Presence**: the time of a player's last lobby request, and each
  process's open lobby sockets (renewed every tick, forgotten
  ``SOCKET_TTL`` seconds after a process stops renewing them).

Times (presence, expiry, how long a player has waited) are the database's
clock on PostgreSQL (``clock_timestamp()``), so the machines' own clocks
need not agree; on SQLite (one process) this machine's.
"""

from __future__ import annotations

import functools
import json
import logging
import os
import re
import secrets
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, TypeVar, cast

from sqlalchemy import (
    Boolean,
    Float,
    ForeignKey,
    Integer,
    String,
    Text,
    delete,
    func,
    select,
    union,
    update,
)
from sqlalchemy.engine import CursorResult, Engine
from sqlalchemy.exc import IntegrityError, OperationalError
from sqlalchemy.orm import Mapped, Session, mapped_column

from ..accounts import CommunityBase, User
from ..errors import Busy, Conflict, Invalid, NoSuchGame, NotAllowed
from ..moderation.rows import BanRow
from ..ratings.service import repeated_pairs

log = logging.getLogger("donutbox.server.lobby")

MAX_TABLES = 500
#: The time control of a rated table opened without one, and of quick
#: match when none is asked for (docs/community.md, "Time controls").
DEFAULT_CLOCK: dict[str, float] = {"minutes": 5.0, "increment": 3.0}
#: What a table's id may be (``secrets.token_urlsafe(9)`` makes 12 of these):
#: anything else is no table, never a query.
TABLE_ID = re.compile(r"[A-Za-z0-9_-]{1,16}")
MAX_INVITES = 20
#: Turn-based lobby games one account may have in progress at once (as
#: Board Game Arena caps its tables): bounds what one account adds to the
#: deadline sweep, the "waiting for your move" list and the reminder mail.
MAX_TURN_BASED_GAMES = 50
#: A player is online for this long after their last lobby request.
SEEN_SECONDS = 60.0
#: A process's lobby sockets count this long after it last renewed them.
SOCKET_TTL = 10.0
#: A table whose game has not been made this long after it filled (the
#: process making it died) is closed.
STARTING_TTL = 60.0
#: An open table none of whose players has been in the lobby (a request or
#: an open lobby socket) for this long is closed, and a queued player away
#: this long leaves the queue: a player who left does not hold a table or
#: a place in the queue for ever, and throwaway accounts cannot fill the
#: lobby's ``MAX_TABLES`` for good.
AWAY_SECONDS = float(os.environ.get("DONUTBOX_LOBBY_AWAY_SECONDS", "180"))
#: Quick match: players whose ratings differ by at most this pair at once;
#: the window widens by ``WIDEN_PER_10S`` every 10 seconds waited.
WINDOW = 5.0
WIDEN_PER_10S = 2.0
#: Transactions that lose a race (a deadlock, a place inserted meanwhile)
#: are tried this many times in all.
ATTEMPTS = 5

T = TypeVar("T")


class _Again(Exception):
    """A transaction saw a race it cannot resolve: it is tried again."""


class LobbyTableRow(CommunityBase):
    __tablename__ = "lobby_tables"
    id: Mapped[str] = mapped_column(String(16), primary_key=True)
    rules: Mapped[str] = mapped_column(Text)  # JSON: RULE_OPTIONS values
    rules_key: Mapped[str] = mapped_column(String(40))
    rules_label: Mapped[str] = mapped_column(String(200))
    players: Mapped[int] = mapped_column(Integer)
    clock: Mapped[str | None] = mapped_column(Text, nullable=True)  # JSON
    rated: Mapped[bool] = mapped_column(Boolean)
    takebacks: Mapped[bool] = mapped_column(Boolean)
    host_id: Mapped[int] = mapped_column(Integer)
    host_name: Mapped[str] = mapped_column(String(20))
    #: players at it now, and how many ever sat down (a seat's order)
    seated: Mapped[int] = mapped_column(Integer)
    joins: Mapped[int] = mapped_column(Integer)
    created: Mapped[float] = mapped_column(Float, index=True)
    #: when it filled: its game is being made (it is no longer open)
    starting: Mapped[float | None] = mapped_column(Float, nullable=True)


class LobbyPlaceRow(CommunityBase):
    """Where a player is: at a table (``table_id``, ``seq``: the order they
    sat down) or in the quick-match queue (the rules, ``rating``)."""

    __tablename__ = "lobby_places"
    user_id: Mapped[int] = mapped_column(
        ForeignKey("users.id", ondelete="CASCADE"), primary_key=True
    )
    name: Mapped[str] = mapped_column(String(20))
    table_id: Mapped[str | None] = mapped_column(String(16), nullable=True, index=True)
    seq: Mapped[int] = mapped_column(Integer)
    rules: Mapped[str | None] = mapped_column(Text, nullable=True)
    rules_key: Mapped[str | None] = mapped_column(String(40), nullable=True)
    rules_label: Mapped[str | None] = mapped_column(String(200), nullable=True)
    players: Mapped[int | None] = mapped_column(Integer, nullable=True)
    rating: Mapped[float | None] = mapped_column(Float, nullable=True)
    #: the time control asked for (JSON; migration 0005)
    clock: Mapped[str | None] = mapped_column(Text, nullable=True)
    since: Mapped[float] = mapped_column(Float)


class LobbyInviteRow(CommunityBase):
    __tablename__ = "lobby_invites"
    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    to_id: Mapped[int] = mapped_column(Integer, index=True)
    from_id: Mapped[int] = mapped_column(Integer)
    from_name: Mapped[str] = mapped_column(String(20))
    table_id: Mapped[str] = mapped_column(String(16))
    rules_label: Mapped[str] = mapped_column(String(200))


class LobbyPresenceRow(CommunityBase):
    """A player's last lobby request (HTTP)."""

    __tablename__ = "lobby_presence"
    user_id: Mapped[int] = mapped_column(Integer, primary_key=True)
    name: Mapped[str] = mapped_column(String(20))
    seen: Mapped[float] = mapped_column(Float, index=True)


class LobbySocketRow(CommunityBase):
    """A process's open lobby sockets of one player."""

    __tablename__ = "lobby_sockets"
    origin: Mapped[str] = mapped_column(String(80), primary_key=True)
    user_id: Mapped[int] = mapped_column(Integer, primary_key=True)
    name: Mapped[str] = mapped_column(String(20))
    sockets: Mapped[int] = mapped_column(Integer)
    until: Mapped[float] = mapped_column(Float, index=True)


class LobbyLockRow(CommunityBase):
    """Rows locked to take turns: ``queue`` (pairing), ``tables`` (the
    number of open tables)."""

    __tablename__ = "lobby_locks"
    name: Mapped[str] = mapped_column(String(20), primary_key=True)
    n: Mapped[int] = mapped_column(Integer)


@dataclass
class Waiting:
    """A player in the quick-match queue."""

    user: User
    rules: dict[str, Any]
    rules_key: str
    rules_label: str
    players: int
    rating: float
    since: float
    #: the time control asked for (players are paired only with the same)
    clock: dict[str, float] = field(default_factory=lambda: dict(DEFAULT_CLOCK))


@dataclass
class Start:
    """A game to make: a full table's or a quick match's (seats in order)."""

    rules: dict[str, Any]
    rules_key: str
    rules_label: str
    users: list[User]
    clock: dict[str, float] | None
    rated: bool
    takebacks: bool
    table: str | None = None


def _rows(db: Session, stmt: Any) -> int:
    """How many rows an UPDATE or DELETE changed."""
    return int(cast("CursorResult[Any]", db.execute(stmt)).rowcount)


def window(w: Waiting, now: float) -> float:
    return WINDOW + WIDEN_PER_10S * int((now - w.since) / 10)


def match(
    queue: list[Waiting], now: float, avoid: frozenset[frozenset[int]] = frozenset()
) -> list[Waiting] | None:
    """A group to start: the longest-waiting player and the nearest in
    rating of the same rules, player count and time control, each pair
    within both players' windows, and no two of the group a pair in
    ``avoid`` (user ids that have just played each other repeatedly)."""
    for first in sorted(queue, key=lambda w: w.since):
        others = [
            w
            for w in queue
            if w is not first
            and w.rules_key == first.rules_key
            and w.players == first.players
            and w.clock == first.clock
            and abs(w.rating - first.rating) <= min(window(first, now), window(w, now))
        ]
        others.sort(key=lambda w: (abs(w.rating - first.rating), w.since))
        group = [first]
        for w in others:
            if len(group) == first.players:
                break
            if all(frozenset((w.user.id, g.user.id)) not in avoid for g in group):
                group.append(w)
        if len(group) == first.players:
            return group
    return None


@functools.lru_cache(maxsize=512)
def _parsed(text: str) -> Any:
    """A table's rules or clock (JSON written by this module; a few rule
    sets are most of them): parsed once.  Read only."""
    return json.loads(text)


def _public(t: Any, waiting: list[str]) -> dict[str, Any]:
    """A table as the lobby shows it (``t``: its row or ORM object)."""
    return {
        "id": t.id,
        "rules": _parsed(t.rules),
        "rules_key": t.rules_key,
        "rules_label": t.rules_label,
        "players": t.players,
        "clock": None if t.clock is None else _parsed(t.clock),
        "rated": t.rated,
        "takebacks": t.takebacks,
        "host": t.host_name,
        "waiting": waiting,
    }


def turn_based_refusal(in_progress: int) -> str | None:
    """Why a player with ``in_progress`` turn-based games may not start
    another (one line), or None."""
    if in_progress < MAX_TURN_BASED_GAMES:
        return None
    return (
        f"turn-based: you have {in_progress} turn-based games in progress, the most one "
        "account may have; finish some first"
    )


class LobbyStore:
    def __init__(self, engine: Engine) -> None:
        self.engine = engine
        self._db_clock = engine.dialect.name == "postgresql"

    def _now(self, db: Session) -> float:
        """Seconds since 1970 by the database's clock (every process asks
        the same one), or this machine's on SQLite (one process)."""
        if not self._db_clock:
            return time.time()
        return float(db.scalar(select(func.extract("epoch", func.clock_timestamp()))) or 0)

    # -- transactions -----------------------------------------------------------

    def _run(self, work: Callable[[Session], T]) -> T:
        """``work`` in one transaction, tried again if it lost a race with
        another (a deadlock, a row inserted meanwhile)."""
        for attempt in range(ATTEMPTS):
            try:
                with Session(self.engine) as db, db.begin():
                    return work(db)
            except (IntegrityError, OperationalError, _Again) as err:
                if attempt == ATTEMPTS - 1:
                    raise
                log.info("lobby: a transaction lost a race (%s); again", type(err).__name__)
                time.sleep(0.005 * (attempt + 1) + secrets.randbelow(10) / 1000)
        raise AssertionError("unreachable")

    @staticmethod
    def _lock(db: Session, name: str) -> None:
        db.execute(
            update(LobbyLockRow).where(LobbyLockRow.name == name).values(n=LobbyLockRow.n + 1)
        )

    @staticmethod
    def _open(db: Session, table_id: str) -> LobbyTableRow:
        t = db.get(LobbyTableRow, table_id) if TABLE_ID.fullmatch(table_id) else None
        if t is None or t.starting is not None:
            raise NoSuchGame("table: no such open table")
        return t

    @staticmethod
    def _waiting(db: Session, table_id: str) -> list[tuple[int, str]]:
        rows = db.execute(
            select(LobbyPlaceRow.user_id, LobbyPlaceRow.name)
            .where(LobbyPlaceRow.table_id == table_id)
            .order_by(LobbyPlaceRow.seq)
        ).all()
        return [(r[0], r[1]) for r in rows]

    def _leave_all(self, db: Session, user_id: int, starting_ok: bool = False) -> None:
        """Off the player's table (the host's part to the next, the last
        closing it) or out of the queue.  At a table whose game is being
        made: Conflict, or (``starting_ok``) they stay there."""
        place = db.get(LobbyPlaceRow, user_id, with_for_update=True)
        if place is None:
            return
        if place.table_id is None:
            db.delete(place)
            db.flush()
            return
        table_id = place.table_id
        # The table's row first: every change of a table's seats takes it.
        moved = _rows(
            db,
            update(LobbyTableRow)
            .where(LobbyTableRow.id == table_id, LobbyTableRow.starting.is_(None))
            .values(seated=LobbyTableRow.seated - 1),
        )
        if not moved and db.get(LobbyTableRow, table_id) is not None:
            if starting_ok:
                return
            raise Conflict("table: your game is starting (see your games)")
        db.delete(place)
        db.flush()
        if not moved:
            return
        t = db.get(LobbyTableRow, table_id, populate_existing=True)
        assert t is not None
        if t.seated <= 0:
            db.delete(t)
            db.execute(delete(LobbyInviteRow).where(LobbyInviteRow.table_id == table_id))
        elif t.host_id == user_id:
            host = self._waiting(db, table_id)[0]
            t.host_id, t.host_name = host
        db.flush()

    # -- tables -----------------------------------------------------------------

    def open_table(
        self,
        user: User,
        rules: dict[str, Any],
        rules_key: str,
        rules_label: str,
        players: int,
        clock: dict[str, float] | None,
        rated: bool,
        takebacks: bool,
    ) -> dict[str, Any]:
        if rated and takebacks:
            raise Invalid("takebacks: a rated game allows no takebacks")

        def work(db: Session) -> dict[str, Any]:
            self._lock(db, "tables")
            if (db.scalar(select(func.count()).select_from(LobbyTableRow)) or 0) >= MAX_TABLES:
                raise Busy("tables: the lobby is full; join a table or try again later")
            self._leave_all(db, user.id)
            t = LobbyTableRow(
                id=secrets.token_urlsafe(9),
                rules=json.dumps(rules),
                rules_key=rules_key,
                rules_label=rules_label[:200],
                players=players,
                clock=None if clock is None else json.dumps(clock),
                rated=rated,
                takebacks=takebacks,
                host_id=user.id,
                host_name=user.name,
                seated=1,
                joins=1,
                created=self._now(db),
                starting=None,
            )
            db.add(t)
            db.add(LobbyPlaceRow(user_id=user.id, name=user.name, table_id=t.id, seq=1, since=0))
            db.flush()
            return _public(t, [user.name])

        return self._run(work)

    def join(self, user: User, table_id: str) -> tuple[dict[str, Any], Start | None]:
        """Sit down; the table as it is now, and the game to make if this
        player filled it."""

        def work(db: Session) -> tuple[dict[str, Any], Start | None]:
            t = self._open(db, table_id)
            place = db.get(LobbyPlaceRow, user.id)
            if place is not None and place.table_id == table_id:
                return _public(t, [n for _, n in self._waiting(db, table_id)]), None
            self._leave_all(db, user.id)
            took = _rows(
                db,
                update(LobbyTableRow)
                .where(
                    LobbyTableRow.id == table_id,
                    LobbyTableRow.seated < LobbyTableRow.players,
                    LobbyTableRow.starting.is_(None),
                )
                .values(seated=LobbyTableRow.seated + 1, joins=LobbyTableRow.joins + 1),
            )
            t2 = db.get(LobbyTableRow, table_id, populate_existing=True)
            if not took:  # (the transaction is undone: the player stays where they were)
                if t2 is None or t2.starting is not None:
                    raise NoSuchGame("table: no such open table")
                raise Conflict("table: full")
            assert t2 is not None
            db.add(
                LobbyPlaceRow(
                    user_id=user.id, name=user.name, table_id=table_id, seq=t2.joins, since=0
                )
            )
            db.flush()
            seats = self._waiting(db, table_id)
            start = None
            if t2.seated >= t2.players:
                t2.starting = self._now(db)
                start = Start(
                    rules=json.loads(t2.rules),
                    rules_key=t2.rules_key,
                    rules_label=t2.rules_label,
                    users=[User(uid, name) for uid, name in seats],
                    clock=None if t2.clock is None else json.loads(t2.clock),
                    rated=t2.rated,
                    takebacks=t2.takebacks,
                    table=table_id,
                )
            return _public(t2, [n for _, n in seats]), start

        return self._run(work)

    def close(self, table_id: str) -> None:
        """A table that has started (or failed to): out of the lobby."""

        def work(db: Session) -> None:
            db.execute(delete(LobbyPlaceRow).where(LobbyPlaceRow.table_id == table_id))
            db.execute(delete(LobbyInviteRow).where(LobbyInviteRow.table_id == table_id))
            db.execute(delete(LobbyTableRow).where(LobbyTableRow.id == table_id))

        self._run(work)

    def leave(self, user: User, table_id: str) -> None:
        def work(db: Session) -> None:
            self._open(db, table_id)
            place = db.get(LobbyPlaceRow, user.id)
            if place is None or place.table_id != table_id:
                raise NotAllowed("table: you are not at this table")
            self._leave_all(db, user.id)

        self._run(work)

    def forget(self, user: User) -> None:
        """Signed out: off every table and queue, not seen any more."""

        def work(db: Session) -> None:
            # (at a table whose game is being made: they find it when back)
            self._leave_all(db, user.id, starting_ok=True)
            db.execute(delete(LobbyPresenceRow).where(LobbyPresenceRow.user_id == user.id))

        self._run(work)

    def table_rated(self, table_id: str) -> bool:
        """Is this an open rated table (False for no such table: joining it
        then says so)."""
        if not TABLE_ID.fullmatch(table_id):
            return False
        with Session(self.engine) as db:
            return bool(db.scalar(select(LobbyTableRow.rated).where(LobbyTableRow.id == table_id)))

    def table_turn_based(self, table_id: str) -> bool:
        """Is this an open table with a turn-based clock (``{"days": d}``)."""
        if not TABLE_ID.fullmatch(table_id):
            return False
        with Session(self.engine) as db:
            clock = db.scalar(select(LobbyTableRow.clock).where(LobbyTableRow.id == table_id))
        try:
            return isinstance(clock, str) and json.loads(clock).get("days") is not None
        except (ValueError, AttributeError):
            return False

    # -- quick match -------------------------------------------------------------

    def enqueue(
        self,
        user: User,
        rules: dict[str, Any],
        rules_key: str,
        rules_label: str,
        players: int,
        rating: float,
        clock: dict[str, float],
    ) -> None:
        def work(db: Session) -> None:
            self._leave_all(db, user.id)
            db.add(
                LobbyPlaceRow(
                    user_id=user.id,
                    name=user.name,
                    table_id=None,
                    seq=0,
                    rules=json.dumps(rules),
                    rules_key=rules_key,
                    rules_label=rules_label[:200],
                    players=players,
                    rating=rating,
                    clock=json.dumps(clock),
                    since=self._now(db),
                )
            )
            db.flush()

        self._run(work)

    def dequeue(self, user: User) -> None:
        def work(db: Session) -> None:
            db.execute(
                delete(LobbyPlaceRow).where(
                    LobbyPlaceRow.user_id == user.id, LobbyPlaceRow.table_id.is_(None)
                )
            )

        self._run(work)

    def queued_count(self) -> int:
        with Session(self.engine) as db:
            q = select(func.count()).select_from(LobbyPlaceRow)
            return int(db.scalar(q.where(LobbyPlaceRow.table_id.is_(None))) or 0)

    def pair(self, now: float | None = None) -> list[Start]:
        """Every group the queue makes now, taken out of it in one
        transaction (under the ``queue`` lock): the games to make."""

        def work(db: Session) -> list[Start]:
            at = self._now(db) if now is None else now
            self._lock(db, "queue")
            rows = db.scalars(
                select(LobbyPlaceRow)
                .where(LobbyPlaceRow.table_id.is_(None))
                .order_by(LobbyPlaceRow.since, LobbyPlaceRow.user_id)
                .with_for_update()
            ).all()
            queue = [
                Waiting(
                    User(r.user_id, r.name),
                    json.loads(r.rules or "{}"),
                    r.rules_key or "",
                    r.rules_label or "",
                    r.players or 2,
                    r.rating or 0.0,
                    r.since,
                    json.loads(r.clock) if r.clock else dict(DEFAULT_CLOCK),
                )
                for r in rows
            ]
            # A banned account (``donutbox admin ban``) is never paired.
            banned = set(
                db.scalars(
                    select(BanRow.user_id).where(BanRow.user_id.in_([w.user.id for w in queue]))
                )
            )
            if banned:
                db.execute(
                    delete(LobbyPlaceRow).where(
                        LobbyPlaceRow.user_id.in_(banned), LobbyPlaceRow.table_id.is_(None)
                    )
                )
                queue = [w for w in queue if w.user.id not in banned]
            avoid = repeated_pairs(db, [w.user.id for w in queue])
            made = []
            while (group := match(queue, at, avoid)) is not None:
                ids = {w.user.id for w in group}
                queue = [w for w in queue if w.user.id not in ids]
                gone = _rows(
                    db,
                    delete(LobbyPlaceRow).where(
                        LobbyPlaceRow.user_id.in_(ids), LobbyPlaceRow.table_id.is_(None)
                    ),
                )
                if gone != len(ids):  # cannot happen under the locks: try again
                    raise _Again("a queued player moved")
                g = group[0]
                made.append(
                    Start(
                        g.rules,
                        g.rules_key,
                        g.rules_label,
                        [w.user for w in group],
                        g.clock,
                        True,
                        False,
                    )
                )
            return made

        return self._run(work)

    # -- invitations and presence -----------------------------------------------

    def invite(self, sender: User, to: User, table_id: str) -> None:
        def work(db: Session) -> None:
            t = self._open(db, table_id)
            place = db.get(LobbyPlaceRow, sender.id)
            if place is None or place.table_id != table_id:
                raise NotAllowed("table: invite to a table you sit at")
            if to.id == sender.id:
                raise Invalid("to: you cannot invite yourself")
            db.execute(
                delete(LobbyInviteRow).where(
                    LobbyInviteRow.to_id == to.id,
                    LobbyInviteRow.from_id == sender.id,
                    LobbyInviteRow.table_id == table_id,
                )
            )
            db.add(
                LobbyInviteRow(
                    to_id=to.id,
                    from_id=sender.id,
                    from_name=sender.name,
                    table_id=table_id,
                    rules_label=t.rules_label,
                )
            )
            db.flush()
            keep = select(LobbyInviteRow.id).where(LobbyInviteRow.to_id == to.id)
            keep = keep.order_by(LobbyInviteRow.id.desc()).limit(MAX_INVITES)
            db.execute(
                delete(LobbyInviteRow).where(
                    LobbyInviteRow.to_id == to.id,
                    LobbyInviteRow.id.not_in(list(db.scalars(keep))),
                )
            )

        self._run(work)

    def touch(self, user: User) -> None:
        def work(db: Session) -> None:
            self._touch(db, user, self._now(db))

        self._run(work)

    @staticmethod
    def _touch(db: Session, user: User, at: float) -> None:
        done = _rows(
            db, update(LobbyPresenceRow).where(LobbyPresenceRow.user_id == user.id).values(seen=at)
        )
        if not done:
            db.add(LobbyPresenceRow(user_id=user.id, name=user.name, seen=at))
            db.flush()

    def is_online(self, user_id: int) -> bool:
        with Session(self.engine) as db:
            now = self._now(db)
            seen = db.scalar(
                select(LobbyPresenceRow.seen).where(LobbyPresenceRow.user_id == user_id)
            )
            if seen is not None and now - seen < SEEN_SECONDS:
                return True
            live = db.scalar(
                select(func.count())
                .select_from(LobbySocketRow)
                .where(LobbySocketRow.user_id == user_id, LobbySocketRow.until > now)
            )
            return bool(live)

    def open_socket(self, origin: str, user: User, most: int) -> bool:
        """One more lobby socket of ``user`` on this process, unless they
        have ``most`` open already (on every process)."""

        def work(db: Session) -> bool:
            now = self._now(db)
            self._touch(db, user, now)  # the player's row locked: one at a time
            live = db.scalar(
                select(func.coalesce(func.sum(LobbySocketRow.sockets), 0)).where(
                    LobbySocketRow.user_id == user.id, LobbySocketRow.until > now
                )
            )
            if int(live or 0) >= most:
                return False
            done = _rows(
                db,
                update(LobbySocketRow)
                .where(LobbySocketRow.origin == origin, LobbySocketRow.user_id == user.id)
                .values(sockets=LobbySocketRow.sockets + 1, until=now + SOCKET_TTL),
            )
            if not done:
                db.add(
                    LobbySocketRow(
                        origin=origin,
                        user_id=user.id,
                        name=user.name,
                        sockets=1,
                        until=now + SOCKET_TTL,
                    )
                )
            return True

        return self._run(work)

    def close_socket(self, origin: str, user: User) -> None:
        def work(db: Session) -> None:
            mine = (LobbySocketRow.origin == origin, LobbySocketRow.user_id == user.id)
            db.execute(
                update(LobbySocketRow).where(*mine).values(sockets=LobbySocketRow.sockets - 1)
            )
            db.execute(delete(LobbySocketRow).where(*mine, LobbySocketRow.sockets <= 0))

        self._run(work)

    def beat(self, origin: str) -> None:
        """This process's sockets are still open: they count for another
        ``SOCKET_TTL`` seconds."""

        def work(db: Session) -> None:
            db.execute(
                update(LobbySocketRow)
                .where(LobbySocketRow.origin == origin)
                .values(until=self._now(db) + SOCKET_TTL)
            )

        self._run(work)

    def sweep(self) -> int:
        """Forget expired sockets and presence, close tables whose game was
        never made (the process making it died) and tables whose players
        have all been away ``AWAY_SECONDS``, and take players away that long
        out of the queue: how many tables and places went."""

        def work(db: Session) -> int:
            now = self._now(db)
            db.execute(delete(LobbySocketRow).where(LobbySocketRow.until < now))
            here = set(
                db.scalars(
                    select(LobbyPresenceRow.user_id).where(
                        LobbyPresenceRow.seen >= now - AWAY_SECONDS
                    )
                )
            ) | set(db.scalars(select(LobbySocketRow.user_id)))
            db.execute(
                delete(LobbyPresenceRow).where(
                    LobbyPresenceRow.seen < now - max(2 * SEEN_SECONDS, AWAY_SECONDS)
                )
            )
            stuck = set(
                db.scalars(
                    select(LobbyTableRow.id).where(LobbyTableRow.starting < now - STARTING_TTL)
                )
            )
            seated: dict[str | None, set[int]] = {}
            for table_id, user_id in db.execute(
                select(LobbyPlaceRow.table_id, LobbyPlaceRow.user_id)
                .join(LobbyTableRow, LobbyTableRow.id == LobbyPlaceRow.table_id)
                .where(LobbyTableRow.starting.is_(None), LobbyTableRow.created < now - AWAY_SECONDS)
            ):
                seated.setdefault(table_id, set()).add(user_id)
            stuck |= {t for t, users in seated.items() if t is not None and not users & here}
            queued = set(
                db.scalars(select(LobbyPlaceRow.user_id).where(LobbyPlaceRow.table_id.is_(None)))
            )
            away = [u for u in queued if u not in here]
            left = 0
            if away:
                left = _rows(
                    db,
                    delete(LobbyPlaceRow).where(
                        LobbyPlaceRow.user_id.in_(away),
                        LobbyPlaceRow.table_id.is_(None),
                        LobbyPlaceRow.since < now - AWAY_SECONDS,
                    ),
                )
            for table_id in sorted(stuck):
                db.execute(delete(LobbyPlaceRow).where(LobbyPlaceRow.table_id == table_id))
                db.execute(delete(LobbyInviteRow).where(LobbyInviteRow.table_id == table_id))
                db.execute(delete(LobbyTableRow).where(LobbyTableRow.id == table_id))
            return len(stuck) + left

        return self._run(work)

    def gone(self, origin: str) -> None:
        """This process stops: its sockets are closed."""
        self._run(
            lambda db: db.execute(delete(LobbySocketRow).where(LobbySocketRow.origin == origin))
        )

    # -- what a player sees -----------------------------------------------------

    def public(self) -> dict[str, Any]:
        """The part everyone sees: the open tables, the queue's size per
        rule set, who is online (200 names at most)."""
        with Session(self.engine) as db:
            now = self._now(db)
            # Rows, not ORM objects: half the time with hundreds of tables.
            tables = db.execute(
                select(LobbyTableRow.__table__)
                .where(LobbyTableRow.starting.is_(None))
                .order_by(LobbyTableRow.created, LobbyTableRow.id)
            ).all()
            seats: dict[str, list[str]] = {}
            for table_id, name in db.execute(
                select(LobbyPlaceRow.table_id, LobbyPlaceRow.name)
                .where(LobbyPlaceRow.table_id.is_not(None))
                .order_by(LobbyPlaceRow.seq)
            ):
                seats.setdefault(str(table_id), []).append(name)
            queue: dict[str, int] = {}
            for key, players, n in db.execute(
                select(LobbyPlaceRow.rules_key, LobbyPlaceRow.players, func.count())
                .where(LobbyPlaceRow.table_id.is_(None))
                .group_by(LobbyPlaceRow.rules_key, LobbyPlaceRow.players)
            ):
                queue[f"{key}/{players}"] = int(n)
            names = union(
                select(LobbyPresenceRow.name).where(LobbyPresenceRow.seen > now - SEEN_SECONDS),
                select(LobbySocketRow.name).where(LobbySocketRow.until > now),
            ).subquery()
            online = list(
                db.scalars(select(names.c.name).order_by(func.lower(names.c.name)).limit(200))
            )
        return {
            "tables": [_public(t, seats.get(t.id, [])) for t in tables],
            "queue": queue,
            "online": online,
        }

    def private(self, user: User) -> dict[str, Any]:
        """The part only ``user`` sees: their invitations (to tables still
        open) and where they are."""
        with Session(self.engine) as db:
            rows = db.execute(
                select(LobbyInviteRow, LobbyTableRow.starting)
                .join(LobbyTableRow, LobbyTableRow.id == LobbyInviteRow.table_id)
                .where(LobbyInviteRow.to_id == user.id)
                .order_by(LobbyInviteRow.id)
            ).all()
            invites = [
                {"from": i.from_name, "table": i.table_id, "rules_label": i.rules_label}
                for i, starting in rows
                if starting is None
            ]
            place = db.get(LobbyPlaceRow, user.id)
            table = None
            if place is not None and place.table_id is not None:
                t = db.get(LobbyTableRow, place.table_id)
                table = place.table_id if t is not None and t.starting is None else None
            queued = None
            if place is not None and place.table_id is None:
                queued = {"rules_key": place.rules_key, "players": place.players}
        return {"invites": invites, "table": table, "queued": queued}
