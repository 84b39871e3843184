"""The lobby: open tables, the quick-match queue, who is online,
invitations (docs/community.md).

Its state is in the database (``lobby/store.py``: every read and change is
one transaction, run in a thread), so any number of server processes on one
database share one lobby, and it survives a restart.  What stays in this
process is only its own lobby sockets: each is woken when the lobby changes,
here or (through ``lobby/bus.py``, the broker's Redis) on another process,
and then reads the lobby again.

A table (or a quick match) that is full becomes a normal online game, made
by the same code as ``POST /api/online`` (``start`` is given that function)
on the process whose request filled it, so every guarantee of online play
holds; each seated player's seat token reaches only them (in their own
lobby state and in their history).

Bounds: a player sits at one table or waits in one queue at a time; at most
``MAX_TABLES`` open tables; ``MAX_INVITES`` invitations kept per player.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Awaitable, Callable, Iterable
from typing import Any

from sqlalchemy.engine import Engine

from ..accounts import User
from ..lobby.bus import LocalBus
from ..lobby.store import (
    MAX_INVITES,
    MAX_TABLES,
    WIDEN_PER_10S,
    WINDOW,
    LobbyStore,
    Start,
    Waiting,
    match,
    window,
)

__all__ = [
    "MAX_INVITES",
    "MAX_TABLES",
    "WIDEN_PER_10S",
    "WINDOW",
    "Lobby",
    "Starter",
    "Waiting",
    "match",
    "window",
]

log = logging.getLogger("donutbox.server.lobby")

#: A player's presence is written at most this often by one process (a
#: player is online for 60 s after their last lobby request).
TOUCH_SECONDS = 5.0
#: The public part of the lobby read for sockets woken by one change is
#: shared by them for at most this long.
PUBLIC_SECONDS = 1.0

#: Starts a game: (rules values, rules key, label, players in seat order,
#: clock, rated, takebacks) -> game id.  Given by routes.lobby.
Starter = Callable[
    [dict[str, Any], str, str, list[User], dict[str, float] | None, bool, bool],
    Awaitable[str],
]


class Lobby:
    def __init__(self, engine: Engine, bus: LocalBus | None = None) -> None:
        self.store = LobbyStore(engine)
        self.bus = bus or LocalBus()
        #: this process's name in the database's socket rows
        self.origin = self.bus.origin
        #: live connections of this process per user id: each an event set
        #: when their lobby state has changed (the socket sends the state
        #: then, coalesced)
        self.listeners: dict[int, set[asyncio.Event]] = {}
        self.starter: Starter | None = None
        #: changes seen (made here or heard of): the shared public part's key
        self.generation = 0
        #: each player's own part (their table, queue place, invitations,
        #: games) changes with (``private_epoch``, ``private[user id]``):
        #: a socket re-reads it only then (``private_version``)
        self.private_epoch = 0
        self.private: dict[int, int] = {}
        #: own parts read for sockets (a figure: docs/community.md)
        self.private_reads = 0
        self._public: tuple[int, float, asyncio.Task[dict[str, Any]]] | None = None
        #: user id -> when this process last wrote their presence
        self._touched: dict[int, float] = {}

    async def start(self) -> None:
        await self.bus.start(self._wake)

    async def close(self) -> None:
        with contextlib.suppress(Exception):
            await asyncio.to_thread(self.store.gone, self.origin)
        await self.bus.close()

    # -- changes ------------------------------------------------------------------

    def changed(self, only: int | None = None, private: Iterable[int] | None = None) -> None:
        """Wake the sockets (of ``only``, or everyone's), here and on every
        other process.  ``private``: the players whose own part changed
        (``only`` always does); None: anyone's may have."""
        ids = None if private is None else sorted(set(private))
        self._wake(only, ids)
        self.bus.publish(only, ids)

    def _wake(self, only: int | None, private: list[int] | None) -> None:
        self.generation += 1
        if only is not None:
            self._bump(only)
        elif private is None:
            self.private_epoch += 1
            self.private.clear()
        else:
            for uid in private:
                self._bump(uid)
        for uid, events in self.listeners.items():
            if only is None or uid == only:
                for e in events:
                    e.set()

    def _bump(self, uid: int) -> None:
        if len(self.private) >= 100_000:  # bounded: everyone's read again
            self.private_epoch += 1
            self.private.clear()
        self.private[uid] = self.private.get(uid, 0) + 1

    def private_version(self, uid: int) -> tuple[int, int]:
        """Changes whenever ``uid``'s own part of the lobby may have."""
        return self.private_epoch, self.private.get(uid, 0)

    # -- presence ---------------------------------------------------------------

    async def touch(self, user: User) -> None:
        now = time.monotonic()
        if now - self._touched.get(user.id, -TOUCH_SECONDS) < TOUCH_SECONDS:
            return
        self._touched[user.id] = now
        if len(self._touched) > 10_000:
            self._touched = {k: t for k, t in self._touched.items() if now - t < TOUCH_SECONDS}
        await asyncio.to_thread(self.store.touch, user)

    async def is_online(self, user_id: int) -> bool:
        if self.listeners.get(user_id):
            return True
        return await asyncio.to_thread(self.store.is_online, user_id)

    def sockets(self) -> int:
        """This process's lobby sockets."""
        return sum(len(v) for v in self.listeners.values())

    async def listen(self, user: User, event: asyncio.Event, most: int) -> bool:
        """A socket of ``user`` opens here; False if they have ``most`` open
        already (on every process)."""
        if not await asyncio.to_thread(self.store.open_socket, self.origin, user, most):
            return False
        self.listeners.setdefault(user.id, set()).add(event)
        self.changed(private=())  # who is online: public
        return True

    async def unlisten(self, user: User, event: asyncio.Event) -> None:
        events = self.listeners.get(user.id)
        if events is None or event not in events:
            return
        events.discard(event)
        if not events:
            del self.listeners[user.id]
        await asyncio.to_thread(self.store.close_socket, self.origin, user)
        self.changed(private=())

    async def forget(self, user: User) -> None:
        """Signed out: off every table and queue."""
        self._touched.pop(user.id, None)
        await asyncio.to_thread(self.store.forget, user)
        self.changed(private=[user.id])

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
    ) -> dict[str, Any]:
        t = await asyncio.to_thread(
            self.store.open_table,
            user,
            rules,
            rules_key,
            rules_label,
            players,
            clock,
            rated,
            takebacks,
        )
        self.changed(private=[user.id])
        return t

    async def join(self, user: User, table_id: str) -> tuple[dict[str, Any], str | None]:
        """Sit down: the table, and its game if this player filled it."""
        table, start = await asyncio.to_thread(self.store.join, user, table_id)
        game = None
        if start is not None:
            try:
                game = await self._start(start)
            finally:
                assert start.table is not None
                await asyncio.to_thread(self.store.close, start.table)
        self.changed(private=[user.id, *(u.id for u in start.users)] if start else [user.id])
        return table, game

    async def leave(self, user: User, table_id: str) -> None:
        await asyncio.to_thread(self.store.leave, user, table_id)
        self.changed(private=[user.id])

    async def _start(self, s: Start) -> str:
        """A full table, or a group of the queue: an online game (seats in
        the order players sat down, or the queue's)."""
        assert self.starter is not None
        return await self.starter(
            s.rules, s.rules_key, s.rules_label, s.users, s.clock, s.rated, s.takebacks
        )

    # -- quick match -------------------------------------------------------------

    async def enqueue(
        self,
        user: User,
        rules: dict[str, Any],
        rules_key: str,
        rules_label: str,
        players: int,
        rating: float,
        clock: dict[str, float],
    ) -> str | None:
        """Wait for a rated game of these rules and time control; the game's
        id if this player was paired at once."""
        await asyncio.to_thread(
            self.store.enqueue, user, rules, rules_key, rules_label, players, rating, clock
        )
        made: dict[int, str] = {}
        try:
            made = await self._pair()
        finally:
            self.changed(private=[user.id, *made])
        return made.get(user.id)

    async def dequeue(self, user: User) -> None:
        await asyncio.to_thread(self.store.dequeue, user)
        self.changed(private=[user.id])

    async def _pair(self) -> dict[int, str]:
        """Every group the queue makes now, each an online game: the game
        of each player paired."""
        made: dict[int, str] = {}
        failed: BaseException | None = None
        for s in await asyncio.to_thread(self.store.pair):
            try:
                game = await self._start(s)
            except Exception as err:  # that group is out of the queue, as it was
                log.exception("lobby: a quick match's game could not be made")
                failed = failed or err
                continue
            made.update((u.id, game) for u in s.users)
        if failed is not None and not made:
            raise failed
        return made

    async def pair_waiting(self) -> None:
        """Windows widen as players wait: try again (the lobby's ticker)."""
        if await asyncio.to_thread(self.store.queued_count) < 2:
            return
        if made := await self._pair():
            self.changed(private=made)

    # -- invitations --------------------------------------------------------------

    async def invite(self, sender: User, to: User, table_id: str) -> None:
        await asyncio.to_thread(self.store.invite, sender, to, table_id)
        self.changed(only=to.id)

    # -- what a player sees -----------------------------------------------------

    async def public(self) -> dict[str, Any]:
        """The public part for the sockets woken by one change: read once
        and shared (for at most ``PUBLIC_SECONDS``)."""
        cached = self._public
        now = time.monotonic()
        if cached is None or cached[0] != self.generation or now - cached[1] > PUBLIC_SECONDS:
            task = asyncio.ensure_future(asyncio.to_thread(self.store.public))
            cached = (self.generation, now, task)
            self._public = cached
        return dict(await asyncio.shield(cached[2]))

    async def state_for(
        self, user: User, shared: bool = False, private: dict[str, Any] | None = None
    ) -> dict[str, Any]:
        """What ``user`` sees: every open table, the queue's size per rule
        set, who is online, their invitations (to tables still open) and
        where they are.  ``shared``: the public part as read for every
        socket woken by the same change (a request reads it afresh).
        ``private``: their own part as read already (``store.private``)."""
        if shared:
            public = await self.public()
            if private is None:
                private = await asyncio.to_thread(self.store.private, user)
        elif private is not None:
            public = await asyncio.to_thread(self.store.public)
        else:
            public, private = await asyncio.to_thread(
                lambda: (self.store.public(), self.store.private(user))
            )
        assert private is not None
        return {
            "me": user.name,
            "tables": public["tables"],
            "queue": public["queue"],
            "online": public["online"],
            "invites": private["invites"],
            "table": private["table"],
            "queued": private["queued"],
        }

    async def tick(self, sweep: bool) -> None:
        """Every few seconds: this process's sockets renewed; with ``sweep``
        what expired is forgotten."""
        await asyncio.to_thread(self.store.beat, self.origin)
        if sweep and await asyncio.to_thread(self.store.sweep) > 0:
            self.changed()
