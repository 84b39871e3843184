"""The AI runner: AI seats' moves and hints, worked out in worker processes,
shared fairly between games.

Every search is a job of one game.  Each game has its own queue, and only
one job per game is in the workers at a time (at most ``capacity`` in all).
When a worker is free, the waiting game whose recent AI time plus its next
job's budget is least goes next (the time each game's searches took,
halved every ``USAGE_HALF_LIFE`` seconds; ties in arrival order): "least
attained service", with the shortest job first among games that have had
none.  So games that ask for a lot of AI time (four players, long searches,
many games at once) wait for one another, while a game that asks for little
gets the next free worker: its wait is at most the searches already
running.  The time each job waited for a worker is measured
(``AIQueue.stats()``, and a log line when it is long).
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
import os
import threading
import time
from collections import deque
from collections.abc import Callable
from concurrent.futures import Executor
from dataclasses import dataclass, field
from typing import Any

from ..ai import agent_info
from .errors import Stale
from .fanout import Fanout, encode
from .ports import GamesInMemory, Leases
from .session import GameSession, choose_ai_move
from .storage import StorageError

log = logging.getLogger("donutbox.server.ai")

#: A job that waited longer than this for a worker is logged as a warning.
SLOW_WAIT = 2.0
#: A game's AI time counts half as much after this many seconds.
USAGE_HALF_LIFE = 60.0


#: What a job without a time budget is expected to cost, in seconds.
QUICK_COST = 0.05


@dataclass
class _Job:
    args: tuple[Any, ...]
    future: asyncio.Future[str]
    #: the seconds it is expected to take (its budget, if it has one)
    cost: float = QUICK_COST
    queued: float = field(default_factory=time.monotonic)


class AIQueue:
    """Fair scheduling of AI searches over the worker pool."""

    def __init__(self, executor: Executor | None, capacity: int = 1) -> None:
        self.executor = executor
        self.capacity = max(1, capacity)
        self.pending: dict[str, deque[_Job]] = {}
        #: games with a job waiting and none in a worker, in serving order
        self.order: deque[str] = deque()
        #: games with a job in a worker
        self.running: set[str] = set()
        #: seconds the most recent jobs waited for a worker
        self.waits: deque[float] = deque(maxlen=1000)
        self.jobs = 0
        #: AI seconds each game used lately: (seconds, when), decaying
        self.usage: dict[str, tuple[float, float]] = {}

    async def think(
        self, game_id: str, view: Any, agent: str, options: dict[str, Any], seed: int
    ) -> str:
        """The agent's move for ``view``, as notation, when its turn comes."""
        future: asyncio.Future[str] = asyncio.get_running_loop().create_future()
        budget = options.get("seconds")
        cost = float(budget) if isinstance(budget, int | float) and budget > 0 else QUICK_COST
        self.pending.setdefault(game_id, deque()).append(
            _Job((view, agent, options, seed), future, cost)
        )
        if game_id not in self.running and game_id not in self.order:
            self.order.append(game_id)
        self._pump()
        return await future

    def queued(self, game_id: str) -> int:
        return len(self.pending.get(game_id) or ()) + (game_id in self.running)

    def used(self, game_id: str, now: float | None = None) -> float:
        """The game's recent AI seconds (decayed)."""
        seconds, when = self.usage.get(game_id, (0.0, 0.0))
        if not seconds:
            return 0.0
        now = time.monotonic() if now is None else now
        decay: float = 0.5 ** (max(0.0, now - when) / USAGE_HALF_LIFE)
        return seconds * decay

    def forget(self, game_id: str) -> None:
        """The game left memory: drop its usage (it has no job)."""
        if not self.queued(game_id):
            self.usage.pop(game_id, None)

    def _next(self) -> str:
        """The waiting game with the least recent AI time plus next job's
        budget (first come first served among equals)."""
        now = time.monotonic()

        def key(i: int) -> tuple[float, int]:
            game_id = self.order[i]
            jobs = self.pending.get(game_id)
            return (self.used(game_id, now) + (jobs[0].cost if jobs else 0.0), i)

        best = min(range(len(self.order)), key=key)
        game_id = self.order[best]
        del self.order[best]
        return game_id

    def _pump(self) -> None:
        loop = asyncio.get_running_loop()
        while len(self.running) < self.capacity and self.order:
            game_id = self._next()
            jobs = self.pending.get(game_id)
            if not jobs:
                self.pending.pop(game_id, None)
                continue
            job = jobs.popleft()
            if not jobs:
                del self.pending[game_id]
            if job.future.done():  # its waiter gave up
                if game_id in self.pending:
                    self.order.append(game_id)
                continue
            wait = time.monotonic() - job.queued
            self.waits.append(wait)
            self.jobs += 1
            if wait > SLOW_WAIT:
                log.warning("AI job of game %s waited %.1f s for a worker", game_id, wait)
            else:
                log.debug("AI job of game %s waited %.3f s for a worker", game_id, wait)
            self.running.add(game_id)
            work = loop.run_in_executor(self.executor, choose_ai_move, *job.args)
            work.add_done_callback(self._when_done(game_id, job, time.monotonic()))

    def _when_done(
        self, game_id: str, job: _Job, started: float
    ) -> Callable[[asyncio.Future[str]], None]:
        def done(work: asyncio.Future[str]) -> None:
            now = time.monotonic()
            self.usage[game_id] = (self.used(game_id, now) + (now - started), now)
            self.running.discard(game_id)
            if game_id in self.pending and game_id not in self.order:
                self.order.append(game_id)  # to the back: the others first
            if not job.future.done():
                if work.cancelled():
                    job.future.cancel()
                elif (err := work.exception()) is not None:
                    job.future.set_exception(err)
                else:
                    job.future.set_result(work.result())
            self._pump()

        return done

    def stats(self) -> dict[str, Any]:
        """How long jobs waited for a worker (seconds), over the last 1,000."""
        waits = sorted(self.waits)

        def at(q: float) -> float:
            return waits[min(len(waits) - 1, int(q * len(waits)))] if waits else 0.0

        return {
            "jobs": self.jobs,
            "waiting": sum(len(q) for q in self.pending.values()),
            "running": len(self.running),
            "wait_p50": at(0.5),
            "wait_p99": at(0.99),
            "wait_max": waits[-1] if waits else 0.0,
        }


class AIWork:
    """Two lanes of AI work: searches with a time budget (``mcts``, ``hard``:
    up to ``max_seconds`` each) on the ``--workers`` processes, and the quick
    agents (a move in milliseconds: ``medium``, ``easy``, ``random``, ...,
    and the player out of time's stand-in) on a worker of their own, so that
    they never wait behind a long search."""

    def __init__(
        self,
        searches: Executor | None,
        quick: Executor | None,
        capacity: int = 1,
    ) -> None:
        self.searches = AIQueue(searches, capacity)
        self.quick = AIQueue(quick, 1)

    def lane(self, agent: str) -> AIQueue:
        try:
            timed = agent_info(agent).timed
        except ValueError:
            timed = True
        return self.searches if timed else self.quick

    async def think(
        self, game_id: str, view: Any, agent: str, options: dict[str, Any], seed: int
    ) -> str:
        return await self.lane(agent).think(game_id, view, agent, options, seed)

    def queued(self, game_id: str) -> int:
        return self.searches.queued(game_id) + self.quick.queued(game_id)

    def forget(self, game_id: str) -> None:
        self.searches.forget(game_id)
        self.quick.forget(game_id)

    @property
    def pending(self) -> dict[str, deque[_Job]]:
        return {**self.searches.pending, **self.quick.pending}

    def stats(self) -> dict[str, Any]:
        return {"searches": self.searches.stats(), "quick": self.quick.stats()}


#: Seconds before an AI seat whose move could not be saved tries again.
AI_RETRY = 2.0


class AISeats:
    """Lets an AI seat move whenever it is its turn.  Its parts, given by
    the hub: the games in memory, the leases (only the holder of a game's
    lease moves its AI seats), the readers, the AI work queues, and the
    clocks' ``watch`` (after an AI move, the next player's clock)."""

    def __init__(
        self,
        games: GamesInMemory,
        leases: Leases,
        fanout: Fanout,
        ai: AIWork,
        watch_clock: Callable[[GameSession], None],
    ) -> None:
        self.games = games
        self.leases = leases
        self.fanout = fanout
        self.ai = ai
        self.watch_clock = watch_clock
        #: games whose AI seat is thinking
        self.thinking: set[str] = set()

    def kick(self, game_id: str) -> None:
        s = self.games.sessions.get(game_id)
        if s is None or s.over or not s.ai_to_move() or game_id in self.thinking:
            return
        if not self.leases.holds(game_id):
            # With a broker, only the holder of the game's lease moves its AI
            # seats; asking for the lease kicks again once it is ours.
            self.leases.want(game_id)
            return
        self.thinking.add(game_id)
        self.games.spawn(self._run(game_id))

    async def _run(self, game_id: str) -> None:
        try:
            await self._play(game_id)
        except StorageError as err:
            # The move was not saved (the store retried): tell the readers
            # and think again shortly; the game is never left "thinking".
            text = encode({"type": "error", "reason": err.reason})
            for c in list(self.fanout.of(game_id)):
                c.put_text(text)
            asyncio.get_running_loop().call_later(AI_RETRY, self.kick, game_id)
        finally:
            self.thinking.discard(game_id)

    async def _play(self, game_id: str) -> None:
        games, leases = self.games, self.leases
        while True:
            s = games.session(game_id)
            async with games.lock(game_id):
                pending = s.ai_view()
                if pending is None:
                    return
                view, seat = pending
                name, options = s.agent_spec(seat)
                version = s.version
            move = await self.ai.think(game_id, view, name, options, seed(game_id, version))
            s = games.session(game_id)
            async with games.lock(game_id):
                if not leases.holds(game_id):
                    # The lease went to another process (it moves), or its
                    # renewal is late: asked for, it kicks again once ours.
                    leases.want(game_id)
                    return
                if s.version != version:
                    continue  # something changed (a takeback): think again
                try:
                    await s.play_ai(move)
                except Stale:
                    stale = True  # stored by another process meanwhile
                else:
                    stale = False
                    self.fanout.publish(s)
                    leases.published(s)
                    self.watch_clock(s)
            if stale and not await leases.refresh(game_id):
                return


def seed(game_id: str, version: int) -> int:
    """A stable seed per game and version (``hash`` of a str changes between
    processes)."""
    h = hashlib.sha256(f"{game_id}:{version}".encode()).digest()
    return int.from_bytes(h[:4], "big") & 0x7FFFFFFF


#: How often an AI worker process checks that its server is still there.
PARENT_CHECK_SECONDS = 1.0


def die_with_parent(parent: int) -> None:
    """An AI worker's initializer: the worker exits once its server process
    is gone.  A worker waits on a queue whose both ends it holds, so a
    server killed with SIGKILL (or stopped while its workers were still
    starting) would otherwise leave it waiting for ever."""

    def watch() -> None:
        while True:
            time.sleep(PARENT_CHECK_SECONDS)
            if os.getppid() != parent:
                os._exit(0)

    threading.Thread(target=watch, name="donutbox-parent-watch", daemon=True).start()
