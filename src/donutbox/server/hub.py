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
- ``clocks`` (clocks.py): the timers of running clocks; ``deadlines``
  (deadlines.py): turn-based games whose deadline passed out of memory.

The WebSocket protocol is in protocol.py; the HTTP routes in routes_*.py.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import re
import time
from collections.abc import Awaitable, Callable
from concurrent.futures import Executor

from . import limits
from .ai_runner import AISeats, AIWork
from .broker import BrokerFactory, LocalBroker
from .clocks import Clocks
from .deadlines import Deadlines
from .errors import NoSuchGame
from .fanout import Fanout
from .session import GameSession, token_opens
from .storage import CorruptGame, Store, StoredGame
from .throttle import CreationLimit

log = logging.getLogger("donutbox.server.hub")

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


def _retrieved(done: asyncio.Future[GameSession]) -> None:
    """A shared load's failure is re-raised to every caller; nobody waiting
    on the future itself must not make asyncio log it as never retrieved."""
    if not done.cancelled():
        done.exception()


class Hub:
    """Games in memory, their locks, readers, AI seats and clocks."""

    def __init__(
        self,
        store: Store,
        executor: Executor | None,
        capacity: int = 1,
        quick: Executor | None = None,
        broker: BrokerFactory = LocalBroker,
    ) -> None:
        """``broker``: how to make the broker (``broker.make_broker``); the
        hub hands itself over as its host (``ports.BrokerHost``)."""
        self.store = store
        self.executor = executor
        self.sessions: dict[str, GameSession] = {}
        self.locks: dict[str, asyncio.Lock] = {}
        self.used: dict[str, float] = {}
        # The parts, each given what it uses (ports.py), in an order in
        # which each exists before the parts that are given it.
        #: other server processes (broker.py): none by default
        self.broker = broker(self)
        self.fanout = Fanout(
            lookup=self.sessions.get,
            elsewhere=self.broker.elsewhere,
            announce=self.broker.presence_changed,
        )
        self.ai = AIWork(executor, quick, capacity)
        self.clocks = Clocks(self, self.broker, self.fanout, self.ai)
        self.seats = AISeats(self, self.broker, self.fanout, self.ai, self.clocks.schedule)
        self.deadlines = Deadlines(self, store, self.clocks)
        #: called after every change made here (``changed``): the email
        #: reminders (mail/notify.py); each only starts a task
        self.watchers: list[Callable[[GameSession], None]] = []
        self.tasks: set[asyncio.Task[None]] = set()
        #: games whose hint is being searched (one at a time per game)
        self.hinting: set[str] = set()
        self._sweeper: asyncio.Task[None] | None = None
        #: games made per client address (throttle.py)
        self.creation = CreationLimit()
        #: games being played back in a worker thread (``load``)
        self._loading: dict[str, asyncio.Future[GameSession]] = {}

    # -- sessions ---------------------------------------------------------------

    async def load(self, game_id: str) -> GameSession:
        """The game's session, loaded if need be, like ``session``, but with
        the database read in a thread and a long record played back in
        ``limits.run_blocking``: the event loop keeps serving everyone else
        meanwhile.  Concurrent loads of one game share one.  Routes call
        this (or ``open``) first, then ``session`` finds the game in memory."""
        s = self.sessions.get(game_id)
        if s is not None:
            self.used[game_id] = time.monotonic()
            return s
        if not GAME_ID.fullmatch(game_id):
            raise NoSuchGame()
        waiting = self._loading.get(game_id)
        if waiting is not None:  # another request is loading it: share that
            return await asyncio.shield(waiting)
        done: asyncio.Future[GameSession] = asyncio.get_running_loop().create_future()
        done.add_done_callback(_retrieved)
        self._loading[game_id] = done
        try:
            s = await self._load(game_id)
        except asyncio.CancelledError:
            done.cancel()
            raise
        except Exception as err:
            done.set_exception(err)
            raise
        finally:
            del self._loading[game_id]
        done.set_result(s)
        return s

    async def _load(self, game_id: str) -> GameSession:
        stored = await asyncio.to_thread(self.store.get, game_id)
        if stored is None:
            raise NoSuchGame()
        s = self.sessions.get(game_id)  # loaded meanwhile by a sync caller?
        if s is not None:
            return s
        moves = stored.record.get("moves") if isinstance(stored.record, dict) else None
        if not isinstance(moves, list) or len(moves) <= LOAD_INLINE_MOVES:
            built = self._try_build(stored)
        else:
            built = await limits.run_blocking(self._try_build, stored, what="loading a game")
        if isinstance(built, Exception):  # a record the engine refuses: set aside
            raise await asyncio.to_thread(self._quarantine, game_id, built) from None
        return self._install(game_id, built)

    async def open(self, game_id: str, token: str | None) -> GameSession:
        """``load``, for a reader holding ``token`` (an owner token or a
        link's).  A game not in memory is loaded only for a token that opens
        it (checked on its stored options first: a small read): anyone else
        gets ``NoSuchGame`` exactly as for an id that does not exist, even
        when the game is damaged (``CorruptGame``, 503, is told to its own
        tokens only) or the server too busy to load it, and a stranger makes
        the server replay nothing.  The caller still checks what the token
        opens in a game in memory.

        A game already in memory is first compared with its stored version
        (``broker.check_stored``: with other processes, one of them may have
        stored a move and died before telling this one), so that a reader
        arriving or coming back is given the whole current state."""
        in_memory = game_id in self.sessions
        if not in_memory and GAME_ID.fullmatch(game_id):
            access = await asyncio.to_thread(self.store.access, game_id)
            if access is None or not token_opens(*access, token):
                raise NoSuchGame()
        s = await self.load(game_id)
        if in_memory:
            await self.broker.check_stored(game_id)
        return s

    def _try_build(self, stored: StoredGame) -> GameSession | Exception:
        """The session (playing the record back is the costly part; it
        touches no shared state, so it may run in a worker thread), or the
        error it gave."""
        try:
            return GameSession(stored, self.store)
        except Exception as err:
            return err

    def _quarantine(self, game_id: str, err: Exception) -> CorruptGame:
        """Set the game aside (a database write: called in a thread by
        ``load``); the error to raise."""
        first = (str(err).splitlines() or [""])[0]
        self.store.quarantine(game_id, f"{type(err).__name__}: {first}")
        return CorruptGame(game_id, type(err).__name__)

    def adopt(self, stored: StoredGame) -> GameSession:
        """A game just made (its stored row in hand: no database read) into
        memory."""
        built = self._try_build(stored)
        if isinstance(built, Exception):
            raise built
        return self._install(stored.id, built)

    def session(self, game_id: str) -> GameSession:
        """The game's session, loaded if need be; NoSuchGame if there is none."""
        s = self.sessions.get(game_id)
        if s is None:
            stored = self.store.get(game_id) if GAME_ID.fullmatch(game_id) else None
            if stored is None:
                raise NoSuchGame()
            built = self._try_build(stored)
            if isinstance(built, Exception):
                raise self._quarantine(game_id, built) from None
            s = self._install(game_id, built)
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
        """The game's lock (the game is loaded if need be: callers have
        ``load``-ed it, so this is no database read)."""
        lock = self.locks.get(game_id)
        if lock is None:
            self.session(game_id)
            lock = self.locks[game_id]
        self.used[game_id] = time.monotonic()
        return lock

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
        self.clocks.drop(game_id)  # a turn-based clock's timer (deadlines.py)
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
            await trimmer.check_async(limits.connections_held() + readers)
            if time.monotonic() - last >= SWEEP_SECONDS:
                last = time.monotonic()
                self.sweep()

    def start(self) -> None:
        self._sweeper = asyncio.ensure_future(self._sweep_forever())
        self.deadlines.start()

    def spawn(self, coro: Awaitable[None]) -> None:
        task = asyncio.ensure_future(coro)
        self.tasks.add(task)
        task.add_done_callback(self.tasks.discard)

    # -- changes ------------------------------------------------------------------

    def arrived(self, s: GameSession, seat: int) -> bool:
        """A human seat's player is here (said hello on the socket, or used
        the seat's link over HTTP); under the game's lock.  Once every human
        seat has arrived the clocks start: True if they started now (the
        caller tells every reader)."""
        s.joined.add(seat)
        if s.humans() <= s.joined and s.start_clock():
            self.clocks.schedule(s)
            return True
        return False

    # -- what the broker calls back (ports.BrokerHost) -----------------------------

    def kick_ai(self, game_id: str) -> None:
        self.seats.kick(game_id)

    def ai_thinking(self, game_id: str) -> bool:
        return game_id in self.seats.thinking

    def watch_clock(self, s: GameSession) -> None:
        self.clocks.schedule(s)

    def stop_clock(self, game_id: str) -> None:
        self.clocks.drop(game_id)

    def changed(self, s: GameSession) -> None:
        """After any change of a game: tell every reader, let an AI seat move,
        and watch the clock."""
        self.fanout.publish(s)
        self.broker.published(s)
        self.seats.kick(s.id)
        self.clocks.schedule(s)
        for watch in self.watchers:
            try:
                watch(s)
            except Exception as err:  # a reminder must never fail a move
                log.error("hub: a watcher failed (%s)", str(err).splitlines()[0][:200])

    async def close(self) -> None:
        await self.broker.close()
        if self._sweeper is not None:
            self._sweeper.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._sweeper
        self.deadlines.close()
        for task in list(self.tasks):
            task.cancel()
        self.clocks.close()
        self.fanout.close()
