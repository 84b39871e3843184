"""The hub: the games in memory and the parts that keep them going.

- ``sessions``: a ``GameSession`` per game *in use*, loaded from the store on
  demand.  Per-game state (the session, its lock) exists only for games
  that exist: a request for an unknown id is answered from the store and
  leaves nothing behind.  A game nobody has used for ``IDLE_SECONDS`` (no
  reader, no AI thinking, no clock running, not locked) leaves memory, and
  at most ``MAX_SESSIONS`` stay in memory (the least recently used idle ones
  go first).  Nothing is loaded at start-up: a game picks up (its AI seat
  thinks again, its clock is watched again) when someone reaches it.
- ``fanout`` (fanout.py): the readers of each game and what they are sent.
- ``ai`` and ``seats`` (ai_runner.py): AI work queued fairly across games, in
  two lanes (long searches; quick agents).
- ``clocks`` (clocks.py): the timers of running clocks.

The WebSocket protocol is in protocol.py; the HTTP routes in routes_*.py.
"""

from __future__ import annotations

import asyncio
import contextlib
import re
import time
from collections.abc import Awaitable
from concurrent.futures import Executor
from typing import NoReturn

from . import limits
from .ai_runner import AISeats, AIWork
from .broker import LocalBroker
from .clocks import Clocks
from .errors import NoSuchGame
from .fanout import Fanout
from .session import GameSession
from .storage import CorruptGame, Store, StoredGame
from .throttle import CreationLimit

#: A game unused for this long leaves memory (it is stored; it comes back
#: on the next request).
IDLE_SECONDS = 300.0
#: At most this many games in memory; beyond, idle ones leave first.
MAX_SESSIONS = 1000
#: How often idle games are looked for.
SWEEP_SECONDS = 30.0
#: How often the memory of a burst of connections that ended is given back.
TRIM_SECONDS = 2.0
#: Game ids are 16 URL-safe characters; anything much longer is not one.
MAX_ID = 64
#: What the store's ids look like (``secrets.token_urlsafe(12)``): any other
#: id is refused before any database work (an unknown-id flood costs no
#: query).
GAME_ID = re.compile(r"[A-Za-z0-9_-]{16}")
#: A stored record with more moves than this is played back into a session
#: in ``limits.run_blocking`` (off the event loop) by ``Hub.load``.
LOAD_INLINE_MOVES = 200


class Hub:
    """Games in memory, their locks, readers, AI seats and clocks."""

    def __init__(
        self,
        store: Store,
        executor: Executor | None,
        capacity: int = 1,
        quick: Executor | None = None,
        broker: LocalBroker | None = None,
    ) -> None:
        self.store = store
        self.executor = executor
        self.sessions: dict[str, GameSession] = {}
        self.locks: dict[str, asyncio.Lock] = {}
        self.used: dict[str, float] = {}
        self.fanout = Fanout()
        self.fanout.lookup = self.sessions.get
        #: other server processes (broker.py): none by default
        self.broker = broker or LocalBroker()
        self.broker.attach(self)
        self.fanout.elsewhere = self.broker.elsewhere
        self.fanout.announce = self.broker.presence_changed
        self.ai = AIWork(executor, quick, capacity)
        self.seats = AISeats(self)
        self.clocks = Clocks(self)
        self.tasks: set[asyncio.Task[None]] = set()
        #: games whose hint is being searched (one at a time per game)
        self.hinting: set[str] = set()
        self._sweeper: asyncio.Task[None] | None = None
        #: games made per client address (throttle.py)
        self.creation = CreationLimit()
        #: games being played back in a worker thread (``load``)
        self._loading: dict[str, asyncio.Future[None]] = {}

    # -- sessions ---------------------------------------------------------------

    async def load(self, game_id: str) -> GameSession:
        """The game's session, loaded if need be, like ``session``, but a
        long record is played back in ``limits.run_blocking``: the event loop
        keeps serving everyone else meanwhile.  Routes call this first, then
        ``session`` finds the game in memory."""
        s = self.sessions.get(game_id)
        if s is not None:
            self.used[game_id] = time.monotonic()
            return s
        if not GAME_ID.fullmatch(game_id):
            raise NoSuchGame()
        waiting = self._loading.get(game_id)
        if waiting is not None:  # another request is loading it: share that
            await asyncio.shield(waiting)
            return self.session(game_id)
        stored = self.store.get(game_id)
        if stored is None:
            raise NoSuchGame()
        moves = stored.record.get("moves") if isinstance(stored.record, dict) else None
        if not isinstance(moves, list) or len(moves) <= LOAD_INLINE_MOVES:
            return self._install(game_id, self._build(game_id, stored))
        done: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._loading[game_id] = done
        try:
            built = await limits.run_blocking(self._try_build, stored, what="loading a game")
            s = self.sessions.get(game_id)  # loaded meanwhile by a sync caller?
            if s is None:
                s = self._install(game_id, self._build_result(game_id, built))
            return s
        finally:
            del self._loading[game_id]
            done.set_result(None)

    def _try_build(self, stored: StoredGame) -> GameSession | Exception:
        """In a worker thread: the session (playing the record back is the
        costly part; it touches no shared state), or the error it gave."""
        try:
            return GameSession(stored, self.store)
        except Exception as err:
            return err

    def _build_result(self, game_id: str, built: GameSession | Exception) -> GameSession:
        if isinstance(built, Exception):
            self._refuse(game_id, built)
        assert isinstance(built, GameSession)
        return built

    def _build(self, game_id: str, stored: StoredGame) -> GameSession:
        try:
            return GameSession(stored, self.store)
        except Exception as err:  # a record the engine refuses: set aside
            self._refuse(game_id, err)

    def _refuse(self, game_id: str, err: Exception) -> NoReturn:
        first = (str(err).splitlines() or [""])[0]
        self.store.quarantine(game_id, f"{type(err).__name__}: {first}")
        raise CorruptGame(game_id, type(err).__name__) from None

    def session(self, game_id: str) -> GameSession:
        """The game's session, loaded if need be; NoSuchGame if there is none."""
        s = self.sessions.get(game_id)
        if s is None:
            stored = self.store.get(game_id) if GAME_ID.fullmatch(game_id) else None
            if stored is None:
                raise NoSuchGame()
            s = self._install(game_id, self._build(game_id, stored))
        else:
            self.used[game_id] = time.monotonic()
        return s

    def _install(self, game_id: str, s: GameSession) -> GameSession:
        if game_id in self.sessions:
            return self.sessions[game_id]
        self.sessions[game_id] = s
        self.locks[game_id] = asyncio.Lock()
        self.used[game_id] = time.monotonic()
        # A game loaded after a restart (or after it went idle) picks up
        # where it was: an AI seat to move thinks again, a running clock is
        # watched again.
        self.broker.installed(s)
        self.seats.kick(game_id)
        self.clocks.schedule(s)
        if len(self.sessions) > MAX_SESSIONS:
            self.sweep(force=True)
        return s

    def lock(self, game_id: str) -> asyncio.Lock:
        """The game's lock (the game is loaded if need be)."""
        self.session(game_id)
        return self.locks[game_id]

    def idle(self, game_id: str) -> bool:
        """Nothing holds the game in memory: no reader, no AI work, no clock,
        no lock held, no hint being searched."""
        lock = self.locks.get(game_id)
        return not (
            self.fanout.count(game_id)
            or game_id in self.seats.thinking
            or self.ai.queued(game_id)
            or self.clocks.running(game_id)
            or game_id in self.hinting
            or (lock is not None and lock.locked())
        )

    def evict(self, game_id: str) -> None:
        self.broker.release(game_id)
        self.sessions.pop(game_id, None)
        self.locks.pop(game_id, None)
        self.used.pop(game_id, None)
        self.ai.forget(game_id)

    def sweep(self, force: bool = False, now: float | None = None) -> int:
        """Let idle games leave memory: those unused for ``IDLE_SECONDS``, and
        with ``force`` the least recently used idle ones down to
        ``MAX_SESSIONS``.  Returns how many left."""
        now = time.monotonic() if now is None else now
        gone = 0
        by_age = sorted(self.used.items(), key=lambda item: item[1])
        excess = len(self.sessions) - MAX_SESSIONS
        for game_id, used in by_age:
            old = now - used >= IDLE_SECONDS
            if not (old or (force and gone < excess)):
                break
            if self.idle(game_id):
                self.evict(game_id)
                gone += 1
        return gone

    async def _sweep_forever(self) -> None:
        trimmer = limits.Trimmer()
        last = time.monotonic()
        while True:
            await asyncio.sleep(TRIM_SECONDS)
            # A burst of connections gone: their memory back to the system.
            readers = sum(len(r) for r in self.fanout.readers.values())
            trimmer.check(limits.connections_held() + readers)
            if time.monotonic() - last >= SWEEP_SECONDS:
                last = time.monotonic()
                self.sweep()

    def start(self) -> None:
        self._sweeper = asyncio.ensure_future(self._sweep_forever())

    def spawn(self, coro: Awaitable[None]) -> None:
        task = asyncio.ensure_future(coro)
        self.tasks.add(task)
        task.add_done_callback(self.tasks.discard)

    # -- changes ------------------------------------------------------------------

    def changed(self, s: GameSession) -> None:
        """After any change of a game: tell every reader, let an AI seat move,
        and watch the clock."""
        self.fanout.publish(s)
        self.broker.published(s)
        self.seats.kick(s.id)
        self.clocks.schedule(s)

    async def close(self) -> None:
        await self.broker.close()
        if self._sweeper is not None:
            self._sweeper.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._sweeper
        for task in list(self.tasks):
            task.cancel()
        self.clocks.close()
        self.fanout.close()
