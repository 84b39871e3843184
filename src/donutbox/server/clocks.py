"""Clocks: one timer per game whose human to move has a running clock.  When
it runs out, in a rated game that player loses on time (forfeits.py); in a
casual one the server's medium AI moves for them (docs/online.md).  A rated
game whose players have not all arrived is watched too: it is aborted at
its deadline (``forfeits.ABORT_SECONDS``).

A turn-based clock's timer (days per move) does not keep its game in
memory: an idle game leaves, its timer with it, and the deadline sweep
(deadlines.py) brings it back once its stored deadline has passed."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Coroutine
from typing import Any

from .ai_runner import AI_RETRY, AIWork, seed
from .errors import Stale
from .fanout import Fanout, encode
from .forfeits import STAND_IN
from .ports import GamesInMemory, Leases
from .session import GameSession
from .storage import StorageError

#: The agent that moves for a player whose clock ran out (a casual game).
TIMEOUT_AGENT = STAND_IN


class Clocks:
    """The timers.  Its parts, given by the hub: the games in memory, the
    leases (only the holder of a game's lease watches its clock), the
    readers (told when a stand-in's move could not be saved) and the AI
    work queues (the stand-in's move)."""

    def __init__(self, games: GamesInMemory, leases: Leases, fanout: Fanout, ai: AIWork) -> None:
        self.games = games
        self.leases = leases
        self.fanout = fanout
        self.ai = ai
        self.timers: dict[str, asyncio.Task[None]] = {}
        #: games whose timer is a turn-based clock's (it may wait for days)
        self.patient: set[str] = set()

    def running(self, game_id: str) -> bool:
        """A timer that keeps the game in memory (not a turn-based one)."""
        return game_id in self.timers and game_id not in self.patient

    def schedule(self, s: GameSession) -> None:
        """Watch the clock of the player to move (after any change)."""
        old = self.timers.pop(s.id, None)
        self.patient.discard(s.id)
        if old is not None and old is not asyncio.current_task():
            old.cancel()
        if s.clock is None or s.over:
            return
        broker = self.leases
        abort_at = s.abort_due()
        if abort_at is not None:
            if not broker.holds(s.id):
                broker.want(s.id)
                return
            wait = abort_at - time.time()
            self._start(s, self._abort_at(s.id, s.version, time.monotonic() + wait))
            return
        if broker.shared and s.clock.running and not _stored_running(s):
            broker.clock_started(s)  # started here since the last save: tell the others
        p = s.human_seat_to_act()
        if p is None:
            return
        deadline = s.clock.deadline(p)
        if deadline is None:
            return
        if not broker.holds(s.id):
            # Another process may run this clock: the lease says which.
            broker.want(s.id)
            return
        self._start(s, self._watch(s.id, s.version, deadline))
        if s.clock.days is not None:
            self.patient.add(s.id)

    def _start(self, s: GameSession, watch: Coroutine[Any, Any, None]) -> None:
        task = asyncio.ensure_future(watch)
        self.timers[s.id] = task
        game_id = s.id
        task.add_done_callback(lambda t: self._forget(game_id, t))

    def drop(self, game_id: str) -> None:
        """Stop watching the game's clock (its lease went to another process)."""
        task = self.timers.pop(game_id, None)
        self.patient.discard(game_id)
        if task is not None and task is not asyncio.current_task():
            task.cancel()

    def _forget(self, game_id: str, task: asyncio.Task[None]) -> None:
        if self.timers.get(game_id) is task:
            del self.timers[game_id]
            self.patient.discard(game_id)

    async def _abort_at(self, game_id: str, version: int, deadline: float) -> None:
        await asyncio.sleep(max(0.0, deadline - time.monotonic()))
        games = self.games
        s = games.session(game_id)
        async with games.lock(game_id):
            due = s.abort_due()
            if s.version != version or due is None or due > time.time():
                return
            if not self.leases.holds(game_id):
                self.leases.want(game_id)
                return
            await s.abort()
            games.changed(s)

    async def _watch(self, game_id: str, version: int, deadline: float) -> None:
        try:
            await self._run_out(game_id, version, deadline)
        except Stale:
            # A human's move, stored by another process, beat the stand-in's:
            # this copy is behind; read it (its clock is scheduled again).
            await self.leases.caught_up(game_id)
        except StorageError as err:
            # The stand-in's move was not saved (the store retried): tell the
            # readers and try again shortly, as an AI seat does; the clock is
            # never left stopped with nobody to move.
            text = encode({"type": "error", "reason": err.reason})
            for c in list(self.fanout.of(game_id)):
                c.put_text(text)
            asyncio.get_running_loop().call_later(AI_RETRY, self._retry, game_id)

    def _retry(self, game_id: str) -> None:
        s = self.games.sessions.get(game_id)
        if s is not None and game_id not in self.timers:
            self.schedule(s)

    async def _run_out(self, game_id: str, version: int, deadline: float) -> None:
        games, leases = self.games, self.leases
        await asyncio.sleep(max(0.0, deadline - time.monotonic()))
        s = games.session(game_id)
        async with games.lock(game_id):
            if s.version != version:
                return
            seat = s.timed_out()
            if seat is None:
                self.schedule(s)
                return
            if s.rated:  # running out of time loses a rated game
                if not leases.holds(game_id):
                    leases.want(game_id)
                    return
                await s.lose_on_time(seat)
                games.changed(s)
                return
            view = s.game.view(seat)
        move = await self.ai.think(game_id, view, TIMEOUT_AGENT, {}, seed(game_id, version))
        s = games.session(game_id)
        async with games.lock(game_id):
            if s.version != version or s.timed_out() != seat:
                return
            if not leases.holds(game_id):
                # Another process runs it, or the lease's renewal is late:
                # asked for, the clock is watched again once it is ours.
                leases.want(game_id)
                return
            await s.play_for_timed_out(seat, move)
            games.changed(s)

    def close(self) -> None:
        for task in list(self.timers.values()):
            task.cancel()


def _stored_running(s: GameSession) -> bool:
    """Was the clock running in the version stored last?"""
    online = s.options.get("online") or {}
    clock = online.get("clock") if isinstance(online, dict) else None
    return bool(isinstance(clock, dict) and clock.get("running"))
