"""The lobby, in memory: open tables, the quick-match queue, who is online,
invitations (docs/community.md).

A table (or a quick match) that is full becomes a normal online game,
made by the same code as ``POST /api/online`` (``start`` is given that
function), so every guarantee of online play holds; each seated player's
seat token reaches only them (in their own lobby state and in their
history).  Open tables, the queue and invitations do not survive a
restart (the games made from them do: they are stored).

Bounds: a player sits at one table or waits in one queue at a time; at most
``MAX_TABLES`` open tables; ``MAX_INVITES`` invitations kept per player.
"""

from __future__ import annotations

import asyncio
import secrets
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from .accounts import User
from .errors import Busy, Conflict, Invalid, NoSuchGame, NotAllowed

MAX_TABLES = 500
MAX_INVITES = 20
#: Quick match: players whose ratings differ by at most this pair at once;
#: the window widens by ``WIDEN_PER_10S`` every 10 seconds waited.
WINDOW = 5.0
WIDEN_PER_10S = 2.0


@dataclass
class Table:
    id: str
    rules: dict[str, Any]  # RULE_OPTIONS values
    rules_key: str
    rules_label: str
    players: int
    clock: dict[str, float] | None
    rated: bool
    takebacks: bool
    host: User
    waiting: list[User] = field(default_factory=list)
    created: float = field(default_factory=time.time)
    game: str | None = None  # set when it started

    def public(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "rules": self.rules,
            "rules_key": self.rules_key,
            "rules_label": self.rules_label,
            "players": self.players,
            "clock": self.clock,
            "rated": self.rated,
            "takebacks": self.takebacks,
            "host": self.host.name,
            "waiting": [u.name for u in self.waiting],
        }


@dataclass
class Waiting:
    user: User
    rules: dict[str, Any]
    rules_key: str
    rules_label: str
    players: int
    rating: float
    since: float


#: Starts a game: (rules values, rules key, label, players in seat order,
#: clock, rated, takebacks) -> game id.  Given by routes_lobby.
Starter = Callable[
    [dict[str, Any], str, str, list[User], dict[str, float] | None, bool, bool],
    Awaitable[str],
]


class Lobby:
    def __init__(self) -> None:
        self.tables: dict[str, Table] = {}
        self.queue: list[Waiting] = []
        self.invites: dict[int, list[dict[str, Any]]] = {}
        #: live connections per user id: each an event set when their lobby
        #: state has changed (the socket sends the state then, coalesced)
        self.listeners: dict[int, set[asyncio.Event]] = {}
        #: user id -> last time seen through HTTP (lobby polled)
        self.seen: dict[int, tuple[float, str]] = {}
        self.starter: Starter | None = None
        self.lock = asyncio.Lock()
        #: games made for a user since they last looked (id): shown first
        self.started: dict[int, list[str]] = {}

    # -- presence ---------------------------------------------------------------

    def touch(self, user: User) -> None:
        self.seen[user.id] = (time.monotonic(), user.name)
        if len(self.seen) > 10_000:
            cutoff = time.monotonic() - 120
            self.seen = {k: v for k, v in self.seen.items() if v[0] > cutoff}

    def is_online(self, user_id: int) -> bool:
        if self.listeners.get(user_id):
            return True
        seen = self.seen.get(user_id)
        return seen is not None and time.monotonic() - seen[0] < 60

    def online(self) -> list[str]:
        now = time.monotonic()
        names = {
            name for uid, (t, name) in self.seen.items() if now - t < 60 or self.listeners.get(uid)
        }
        return sorted(names, key=str.lower)[:200]

    def listen(self, user: User, event: asyncio.Event) -> None:
        self.touch(user)
        self.listeners.setdefault(user.id, set()).add(event)
        self.changed()

    def unlisten(self, user: User, event: asyncio.Event) -> None:
        events = self.listeners.get(user.id)
        if events is not None:
            events.discard(event)
            if not events:
                del self.listeners[user.id]
        self.changed()

    def changed(self, only: int | None = None) -> None:
        """Wake the sockets (of ``only``, or everyone's)."""
        for uid, events in self.listeners.items():
            if only is None or uid == only:
                for e in events:
                    e.set()

    # -- where a player is ------------------------------------------------------

    def seat_of(self, user: User) -> Table | None:
        for t in self.tables.values():
            if any(u.id == user.id for u in t.waiting):
                return t
        return None

    def queued(self, user: User) -> Waiting | None:
        return next((w for w in self.queue if w.user.id == user.id), None)

    def leave_all(self, user: User) -> None:
        t = self.seat_of(user)
        if t is not None:
            t.waiting = [u for u in t.waiting if u.id != user.id]
            if not t.waiting:
                del self.tables[t.id]
            elif t.host.id == user.id:
                t.host = t.waiting[0]
        self.queue = [w for w in self.queue if w.user.id != user.id]

    def forget(self, user: User) -> None:
        """Signed out: off every table and queue."""
        self.leave_all(user)
        self.seen.pop(user.id, None)
        self.changed()

    # -- tables -----------------------------------------------------------------

    async def open_table(
        self,
        user: User,
        rules: dict[str, Any],
        rules_key: str,
        rules_label: str,
        players: int,
        clock: dict[str, float] | None,
        rated: bool,
        takebacks: bool,
    ) -> Table:
        if rated and takebacks:
            raise Invalid("takebacks: a rated game allows no takebacks")
        async with self.lock:
            if len(self.tables) >= MAX_TABLES:
                raise Busy("tables: the lobby is full; join a table or try again later")
            self.leave_all(user)
            t = Table(
                id=secrets.token_urlsafe(9),
                rules=rules,
                rules_key=rules_key,
                rules_label=rules_label,
                players=players,
                clock=clock,
                rated=rated,
                takebacks=takebacks,
                host=user,
                waiting=[user],
            )
            self.tables[t.id] = t
        self.changed()
        return t

    def table(self, table_id: str) -> Table:
        t = self.tables.get(table_id) if len(table_id) <= 32 else None
        if t is None:
            raise NoSuchGame("table: no such open table")
        return t

    async def join(self, user: User, table_id: str) -> Table:
        async with self.lock:
            t = self.table(table_id)
            if any(u.id == user.id for u in t.waiting):
                return t
            if len(t.waiting) >= t.players:
                raise Conflict("table: full")
            self.leave_all(user)
            t.waiting.append(user)
            if len(t.waiting) == t.players:
                await self._start(t)
        self.changed()
        return t

    async def leave(self, user: User, table_id: str) -> None:
        async with self.lock:
            t = self.table(table_id)
            if not any(u.id == user.id for u in t.waiting):
                raise NotAllowed("table: you are not at this table")
            self.leave_all(user)
        self.changed()

    async def _start(self, t: Table) -> None:
        """The table is full: it becomes an online game (seats in the order
        players sat down); it leaves the lobby."""
        assert self.starter is not None
        self.tables.pop(t.id, None)
        t.game = await self.starter(
            t.rules, t.rules_key, t.rules_label, list(t.waiting), t.clock, t.rated, t.takebacks
        )
        for u in t.waiting:
            self.started.setdefault(u.id, []).append(t.game)

    # -- quick match -------------------------------------------------------------

    async def enqueue(
        self,
        user: User,
        rules: dict[str, Any],
        rules_key: str,
        rules_label: str,
        players: int,
        rating: float,
    ) -> str | None:
        """Wait for a rated game of these rules; the game's id if one was
        made at once."""
        async with self.lock:
            self.leave_all(user)
            self.queue.append(
                Waiting(user, rules, rules_key, rules_label, players, rating, time.monotonic())
            )
            game = await self._pair()
        self.changed()
        return game

    async def dequeue(self, user: User) -> None:
        async with self.lock:
            self.queue = [w for w in self.queue if w.user.id != user.id]
        self.changed()

    @staticmethod
    def window(w: Waiting, now: float) -> float:
        return WINDOW + WIDEN_PER_10S * int((now - w.since) / 10)

    def match(self, now: float) -> list[Waiting] | None:
        """A group to start: the longest-waiting player and the nearest in
        rating of the same rules and player count, each pair within both
        players' windows."""
        for first in sorted(self.queue, key=lambda w: w.since):
            others = [
                w
                for w in self.queue
                if w is not first
                and w.rules_key == first.rules_key
                and w.players == first.players
                and abs(w.rating - first.rating)
                <= min(self.window(first, now), self.window(w, now))
            ]
            others.sort(key=lambda w: (abs(w.rating - first.rating), w.since))
            if len(others) >= first.players - 1:
                return [first, *others[: first.players - 1]]
        return None

    async def _pair(self, now: float | None = None) -> str | None:
        now = time.monotonic() if now is None else now
        made = None
        while (group := self.match(now)) is not None:
            ids = {w.user.id for w in group}
            self.queue = [w for w in self.queue if w.user.id not in ids]
            g = group[0]
            assert self.starter is not None
            made = await self.starter(
                g.rules, g.rules_key, g.rules_label, [w.user for w in group], None, True, False
            )
            for w in group:
                self.started.setdefault(w.user.id, []).append(made)
        return made

    async def pair_waiting(self) -> None:
        """Windows widen as players wait: try again (the lobby's ticker)."""
        if not self.queue:
            return
        async with self.lock:
            made = await self._pair()
        if made is not None:
            self.changed()

    # -- invitations --------------------------------------------------------------

    def invite(self, sender: User, to: User, table_id: str) -> None:
        t = self.table(table_id)
        if not any(u.id == sender.id for u in t.waiting):
            raise NotAllowed("table: invite to a table you sit at")
        if to.id == sender.id:
            raise Invalid("to: you cannot invite yourself")
        box = self.invites.setdefault(to.id, [])
        box[:] = [i for i in box if not (i["from"] == sender.name and i["table"] == t.id)]
        box.append({"from": sender.name, "table": t.id, "rules_label": t.rules_label})
        del box[:-MAX_INVITES]
        self.changed(only=to.id)

    def state_for(self, user: User) -> dict[str, Any]:
        """What ``user`` sees: every open table, the queue's size per rule
        set, who is online, their invitations (to tables still open) and
        where they are."""
        box = [i for i in self.invites.get(user.id, []) if i["table"] in self.tables]
        self.invites[user.id] = box
        sitting = self.seat_of(user)
        waiting = self.queued(user)
        queue: dict[str, int] = {}
        for w in self.queue:
            queue[f"{w.rules_key}/{w.players}"] = queue.get(f"{w.rules_key}/{w.players}", 0) + 1
        return {
            "me": user.name,
            "tables": [t.public() for t in sorted(self.tables.values(), key=lambda t: t.created)],
            "queue": queue,
            "online": self.online(),
            "invites": box,
            "table": sitting.id if sitting else None,
            "queued": None
            if waiting is None
            else {"rules_key": waiting.rules_key, "players": waiting.players},
        }
