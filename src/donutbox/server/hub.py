"""The hub: game sessions in memory, their readers, AI seats and clocks.

Transport-agnostic (boardgame.io's idea): a reader is a ``Connection`` with an
outgoing queue and a ``send`` coroutine.  The WebSocket endpoint wraps a
socket in one; tests and bots can use any coroutine.  Every change of a game
is put on each reader's queue as *that reader's* state, under the game's
lock, so each reader receives versions in order; a writer task per
connection drains its queue, so a slow reader never holds up a game.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import itertools
import time
from collections import defaultdict
from collections.abc import Awaitable, Callable
from concurrent.futures import Executor
from typing import Any

import orjson

from .online import RATE_CLOSE, BadMessage, RateLimit, parse_message
from .session import HUMAN, SPECTATOR, ActionError, GameSession, choose_ai_move
from .storage import StorageError, Store

#: A reader's queue may hold this many messages; a reader that falls further
#: behind is disconnected (it reconnects and catches up from a fresh state).
QUEUE_LIMIT = 256
#: The agent that moves for a player whose clock ran out.
TIMEOUT_AGENT = "heuristic"
#: Seconds a new connection has to say hello.
HELLO_TIMEOUT = 10.0
#: Seconds before an AI seat whose move could not be saved tries again.
AI_RETRY = 2.0

#: A transport's way to send one JSON text message.
Send = Callable[[str], Awaitable[None]]


def encode(message: dict[str, Any]) -> str:
    # orjson: states are sent on every move to every reader; it encodes them
    # several times faster than the standard library.
    return orjson.dumps(message).decode()


class NoSuchGame(LookupError):
    pass


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


class Hub:
    """Sessions in memory, their locks, readers, AI seats and clocks."""

    def __init__(self, store: Store, executor: Executor | None) -> None:
        self.store = store
        self.executor = executor
        self.sessions: dict[str, GameSession] = {}
        self.locks: dict[str, asyncio.Lock] = defaultdict(asyncio.Lock)
        self.readers: dict[str, set[Connection]] = defaultdict(set)
        self.joined: dict[str, set[int]] = defaultdict(set)
        self.timers: dict[str, asyncio.Task[None]] = {}
        self.thinking: set[str] = set()
        self.tasks: set[asyncio.Task[None]] = set()

    # -- sessions ---------------------------------------------------------------

    def session(self, game_id: str) -> GameSession:
        s = self.sessions.get(game_id)
        if s is None:
            stored = self.store.get(game_id)
            if stored is None:
                raise NoSuchGame(game_id)
            s = self.sessions[game_id] = GameSession(stored, self.store)
            # A game loaded after a restart picks up where it was: an AI seat
            # to move thinks again, a running clock is watched again.
            self.kick_ai(s)
            self.schedule_clock(s)
        return s

    def resume_online(self) -> int:
        """Load every unfinished online game (at start-up), so their AI seats
        and clocks run without waiting for a reader."""
        # One bad row is quarantined (logged), not a failed start-up.
        return self.store.resume("online", self.session)

    def spawn(self, coro: Awaitable[None]) -> None:
        task = asyncio.ensure_future(coro)
        self.tasks.add(task)
        task.add_done_callback(self.tasks.discard)

    # -- publishing -----------------------------------------------------------

    def presence(self, game_id: str) -> dict[str, Any]:
        s = self.sessions[game_id]
        connected = [False] * s.game.players
        spectators = 0
        for c in self.readers[game_id]:
            if c.seat is None:
                continue
            if c.seat == SPECTATOR:
                spectators += 1
            else:
                connected[c.seat] = True
        return {"connected": connected, "spectators": spectators}

    def publish(self, s: GameSession) -> None:
        """Every reader gets its own state (call with the game's lock held, or
        from one event-loop step, so that versions go out in order)."""
        readers = list(self.readers[s.id])
        if not readers:
            return
        cache: dict[int | None, str] = {}
        presence = self.presence(s.id) if s.online else None
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

    def publish_presence(self, game_id: str) -> None:
        if game_id not in self.sessions:
            return
        text = encode({"type": "presence", "presence": self.presence(game_id)})
        for c in self.readers[game_id]:
            if c.seat is not None:
                c.put_text(text)

    def changed(self, s: GameSession) -> None:
        """After any change of a game: tell every reader, let an AI seat move,
        and watch the clock."""
        self.publish(s)
        self.kick_ai(s)
        self.schedule_clock(s)

    # -- AI seats -------------------------------------------------------------

    def kick_ai(self, s: GameSession) -> None:
        if s.ai_to_move() and not s.game.finished and s.id not in self.thinking:
            self.thinking.add(s.id)
            self.spawn(self.run_ai(s.id))

    async def think(self, view: Any, agent: str, options: dict[str, Any], seed: int) -> str:
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self.executor, choose_ai_move, view, agent, options, seed)

    async def run_ai(self, game_id: str) -> None:
        try:
            await self._run_ai(game_id)
        except StorageError as err:
            # The move was not saved (the store retried): tell the readers
            # and think again shortly; the game is never left "thinking".
            self.report(game_id, err.reason)
            asyncio.get_running_loop().call_later(AI_RETRY, self._rekick, game_id)
        finally:
            self.thinking.discard(game_id)

    def report(self, game_id: str, reason: str) -> None:
        """A one-line error to every reader of the game."""
        text = encode({"type": "error", "reason": reason})
        for c in self.readers.get(game_id, ()):
            c.put_text(text)

    def _rekick(self, game_id: str) -> None:
        s = self.sessions.get(game_id)
        if s is not None:
            self.kick_ai(s)

    async def _run_ai(self, game_id: str) -> None:
        while True:
            async with self.locks[game_id]:
                s = self.session(game_id)
                pending = s.ai_view()
                if pending is None:
                    return
                view, seat = pending
                name, options = s.agent_spec(seat)
                version = s.version
            move = await self.think(view, name, options, _seed(game_id, version))
            async with self.locks[game_id]:
                s = self.session(game_id)
                if s.version != version:
                    continue  # something changed (a takeback): think again
                await s.play_ai(move)
                self.publish(s)
                self.schedule_clock(s)

    # -- clocks -----------------------------------------------------------------

    def schedule_clock(self, s: GameSession) -> None:
        old = self.timers.pop(s.id, None)
        if old is not None and old is not asyncio.current_task():
            old.cancel()
        if s.clock is None or s.game.finished:
            return
        p = s.game.to_move
        if p is None or s.seats[p] != HUMAN:
            return
        deadline = s.clock.deadline(p)
        if deadline is None:
            return
        task = asyncio.ensure_future(self._clock(s.id, s.version, deadline))
        self.timers[s.id] = task

    async def _clock(self, game_id: str, version: int, deadline: float) -> None:
        await asyncio.sleep(max(0.0, deadline - time.monotonic()))
        async with self.locks[game_id]:
            s = self.session(game_id)
            if s.version != version:
                return
            seat = s.timed_out()
            if seat is None:
                self.schedule_clock(s)
                return
            view = s.game.view(seat)
        move = await self.think(view, TIMEOUT_AGENT, {}, _seed(game_id, version))
        async with self.locks[game_id]:
            s = self.session(game_id)
            if s.version != version or s.timed_out() != seat:
                return
            await s.play_for_timed_out(seat, move)
            self.changed(s)

    # -- readers ------------------------------------------------------------------

    def attach(self, conn: Connection) -> None:
        self.readers[conn.game_id].add(conn)
        conn.start()

    def detach(self, conn: Connection) -> None:
        conn.close()
        readers = self.readers.get(conn.game_id)
        if readers is not None:
            readers.discard(conn)
        if conn.online and conn.seat is not None:
            self.publish_presence(conn.game_id)

    async def receive(self, conn: Connection, text: str | bytes | None) -> bool:
        """Handle one message from an online reader; False if the connection
        should be closed (too many refused messages)."""
        if not conn.limit.allow():
            conn.put({"type": "error", "reason": "rate limit: too many messages, slow down"})
            return conn.limit.refused < RATE_CLOSE
        try:
            msg = parse_message(text)
        except BadMessage as err:
            conn.put({"type": "error", "reason": str(err)})
            return True
        ref = msg.get("ref")
        try:
            await self._dispatch(conn, msg)
        except ActionError as err:
            conn.put({"type": "error", "reason": err.reason, "ref": ref})
        except NoSuchGame:
            conn.put({"type": "error", "reason": "game: no such game", "ref": ref})
        except StorageError as err:
            conn.put({"type": "error", "reason": err.reason, "ref": ref})
        return True

    async def _dispatch(self, conn: Connection, msg: dict[str, Any]) -> None:
        kind = msg["type"]
        ref = msg.get("ref")
        if kind == "ping":
            conn.put({"type": "pong", "ref": ref})
            return
        if kind == "hello":
            await self.hello(conn, msg["token"])
            return
        if conn.seat is None:
            raise ActionError(401, "hello: send your link's token first")
        game_id = conn.game_id
        if kind == "sync":
            async with self.locks[game_id]:
                s = self.session(game_id)
                state = s.state(conn.seat)
                state["presence"] = self.presence(game_id)
                conn.put({"type": "state", "state": state})
            return
        if conn.seat == SPECTATOR:
            raise ActionError(403, f"{kind}: spectators cannot act")
        async with self.locks[game_id]:
            s = self.session(game_id)
            if kind == "preview":
                conn.put({"type": "preview", "ref": ref, **s.preview(msg["move"], conn.seat)})
                return
            if kind == "move":
                await s.act(msg["move"], msg["version"], conn.seat)
                conn.put({"type": "ack", "ref": ref, "version": s.version})
            elif kind == "takeback":
                await s.ask_takeback(conn.seat, msg["version"])
            elif kind == "answer":
                await s.answer_takeback(conn.seat, msg["accept"], msg["version"])
            self.changed(s)

    async def hello(self, conn: Connection, token: str) -> None:
        if conn.seat is not None:
            raise ActionError(409, "hello: already introduced")
        async with self.locks[conn.game_id]:
            s = self.session(conn.game_id)
            seat = s.reader_for(token) if s.online else None
            if seat is None:
                raise ActionError(403, "token: this link does not open this game")
            conn.seat = seat
            role = "spectator" if seat == SPECTATOR else "player"
            conn.put({"type": "welcome", "seat": seat, "role": role, "game": s.id})
            started = False
            if seat != SPECTATOR:
                self.joined[s.id].add(seat)
                humans = {i for i, k in enumerate(s.seats) if k == HUMAN}
                if humans <= self.joined[s.id] and s.start_clock():
                    self.schedule_clock(s)
                    started = True
            if started:
                # The clocks start now: every reader is told (this one too).
                self.publish(s)
            else:
                # The whole current state: whatever the reader missed while away.
                state = s.state(seat)
                state["presence"] = self.presence(s.id)
                conn.put({"type": "state", "state": state})
        self.publish_presence(conn.game_id)

    async def close(self) -> None:
        for task in list(self.tasks) + list(self.timers.values()):
            task.cancel()
        for readers in self.readers.values():
            for c in readers:
                c.close()


def _seed(game_id: str, version: int) -> int:
    # A stable seed (``hash`` of a str changes between processes).
    h = hashlib.sha256(f"{game_id}:{version}".encode()).digest()
    return int.from_bytes(h[:4], "big") & 0x7FFFFFFF
