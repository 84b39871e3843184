"""Reader fan-out: every reader of a game gets each change as *its own* state.

A reader is a ``Connection`` with an outgoing queue and a ``send`` coroutine
(transport-agnostic, boardgame.io's idea): the WebSocket endpoints wrap a
socket in one; tests and bots can use any coroutine.  Every change is put
on each reader's queue under the game's lock, so each reader receives
versions in order; a writer task per connection drains its queue, so a slow
reader never holds up a game.

Presence (who is connected, how many watch) is coalesced: joins and leaves
within ``PRESENCE_DELAY`` seconds make one presence message per game, not
one per change to every reader (1,000 spectators joining would otherwise
cost a million messages).
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
from collections.abc import Awaitable, Callable
from typing import Any

import orjson

from . import wire
from .online import RateLimit
from .session import SPECTATOR, GameSession

#: A reader's queue may hold this many messages; a reader that falls further
#: behind is disconnected (it reconnects and catches up from a fresh state).
QUEUE_LIMIT = 256
#: At most one presence message per game in this many seconds.
PRESENCE_DELAY = 0.25

#: A transport's way to send one JSON text message.
Send = Callable[[str], Awaitable[None]]


def encode(message: dict[str, Any]) -> str:
    """A game socket's message as JSON text (checked against its model in
    ``wire`` when ``DONUTBOX_CHECK_WIRE=1``)."""
    if wire.CHECKING:
        wire.check_server_message(message)
    # orjson: states are sent on every move to every reader; it encodes them
    # several times faster than the standard library.
    return orjson.dumps(message).decode()


class Connection:
    """One reader of one game: a seat, a spectator, or a local browser."""

    _ids = itertools.count(1)

    def __init__(self, send: Send, game_id: str, seat: int | None = None) -> None:
        self.id = next(self._ids)
        self.send = send
        self.game_id = game_id
        #: the seat, SPECTATOR, or None: a local (AI/hotseat) game's browser,
        #: or an online reader that has not said hello yet
        self.seat = seat
        self.online = False
        self.limit = RateLimit()
        self.queue: asyncio.Queue[str | None] = asyncio.Queue(QUEUE_LIMIT)
        self.closed = asyncio.Event()
        self.writer: asyncio.Task[None] | None = None

    def start(self) -> None:
        self.writer = asyncio.create_task(self._write())

    def put(self, message: dict[str, Any]) -> None:
        self.put_text(encode(message))

    def put_text(self, text: str) -> None:
        if self.closed.is_set():
            return
        try:
            self.queue.put_nowait(text)
        except asyncio.QueueFull:
            self.close()

    def close(self) -> None:
        if not self.closed.is_set():
            self.closed.set()
            with contextlib.suppress(asyncio.QueueFull):
                self.queue.put_nowait(None)

    async def _write(self) -> None:
        try:
            while True:
                message = await self.queue.get()
                if message is None:
                    return
                await self.send(message)
        except Exception:  # the transport is gone: stop writing
            self.closed.set()


class Fanout:
    """The readers of every game, and what they are sent."""

    def __init__(
        self,
        lookup: Callable[[str], GameSession | None] = lambda _id: None,
        elsewhere: Callable[[str], tuple[set[int], int]] = lambda _id: (set(), 0),
        announce: Callable[[str], None] = lambda _id: None,
    ) -> None:
        """``lookup``: how to find a game's session when its presence goes
        out (the hub's games in memory); ``elsewhere``: the seats connected
        to other server processes and their spectators, and ``announce``:
        how to tell them of a change here (broker.py; by default there are
        no other processes)."""
        #: readers per game; a game's entry exists only while it has readers
        self.readers: dict[str, set[Connection]] = {}
        #: games whose presence message is waiting to go out
        self._presence_due: dict[str, asyncio.TimerHandle] = {}
        self.lookup = lookup
        self.elsewhere = elsewhere
        self.announce = announce
        self._announce_due: set[str] = set()

    def of(self, game_id: str) -> set[Connection]:
        return self.readers.get(game_id) or set()

    def count(self, game_id: str) -> int:
        return len(self.readers.get(game_id) or ())

    def spectators(self, game_id: str) -> int:
        here = sum(1 for c in self.of(game_id) if c.seat == SPECTATOR)
        return here + self.elsewhere(game_id)[1]

    def attach(self, conn: Connection) -> None:
        self.readers.setdefault(conn.game_id, set()).add(conn)
        if conn.writer is None:
            conn.start()

    def detach(self, conn: Connection) -> None:
        """Forget a reader (its game's presence goes out soon after)."""
        conn.close()
        readers = self.readers.get(conn.game_id)
        if readers is not None:
            readers.discard(conn)
            if not readers:
                del self.readers[conn.game_id]
        if conn.online and conn.seat is not None:
            self.presence_changed(conn.game_id)

    def presence(self, s: GameSession) -> dict[str, Any]:
        connected = [False] * s.game.players
        spectators = 0
        for c in self.of(s.id):
            if c.seat is None:
                continue
            if c.seat == SPECTATOR:
                spectators += 1
            else:
                connected[c.seat] = True
        seats, watching = self.elsewhere(s.id)
        for seat in seats:
            if 0 <= seat < len(connected):
                connected[seat] = True
        return {"connected": connected, "spectators": spectators + watching}

    def publish(self, s: GameSession) -> None:
        """Every reader gets its own state (call with the game's lock held, or
        from one event-loop step, so that versions go out in order)."""
        readers = list(self.of(s.id))
        if not readers:
            return
        cache: dict[int | None, str] = {}
        presence = self.presence(s) if s.online else None
        for c in readers:
            if c.online and c.seat is None:
                continue  # not introduced yet
            text = cache.get(c.seat)
            if text is None:
                state = s.state(c.seat)
                if presence is not None:
                    state["presence"] = presence
                text = cache[c.seat] = encode({"type": "state", "state": state})
            c.put_text(text)

    def presence_changed(self, game_id: str, announce: bool = True) -> None:
        """A reader came or went: one presence message for the game goes out
        within ``PRESENCE_DELAY`` seconds, whatever else changes meanwhile
        (and, with ``announce``, to the other server processes)."""
        if announce:
            self._announce_due.add(game_id)
        if game_id in self._presence_due:
            return
        loop = asyncio.get_running_loop()
        self._presence_due[game_id] = loop.call_later(PRESENCE_DELAY, self._send_presence, game_id)

    def _send_presence(self, game_id: str) -> None:
        self._presence_due.pop(game_id, None)
        if game_id in self._announce_due:
            self._announce_due.discard(game_id)
            self.announce(game_id)
        s = self.lookup(game_id)
        if s is None or game_id not in self.readers:
            return
        text = encode({"type": "presence", "presence": self.presence(s)})
        for c in self.of(game_id):
            if c.seat is not None:
                c.put_text(text)

    def close(self) -> None:
        for handle in self._presence_due.values():
            handle.cancel()
        self._presence_due.clear()
        for readers in self.readers.values():
            for c in readers:
                c.close()
