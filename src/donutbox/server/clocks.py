"""Clocks: one timer per game whose human to move has a running clock; when
it runs out, the server's medium AI moves for that player (docs/online.md)."""

from __future__ import annotations

import asyncio
import time
from typing import TYPE_CHECKING

from . import ai_runner
from .ai_runner import seed
from .errors import Stale
from .session import HUMAN, GameSession
from .storage import StorageError

if TYPE_CHECKING:
    from .hub import Hub

#: The agent that moves for a player whose clock ran out.
TIMEOUT_AGENT = "heuristic"


class Clocks:
    def __init__(self, hub: Hub) -> None:
        self.hub = hub
        self.timers: dict[str, asyncio.Task[None]] = {}

    def running(self, game_id: str) -> bool:
        return game_id in self.timers

    def schedule(self, s: GameSession) -> None:
        """Watch the clock of the player to move (after any change)."""
        old = self.timers.pop(s.id, None)
        if old is not None and old is not asyncio.current_task():
            old.cancel()
        if s.clock is None or s.game.finished:
            return
        broker = self.hub.broker
        if broker.shared and s.clock.running and not _stored_running(s):
            broker.clock_started(s)  # started here since the last save: tell the others
        p = s.game.to_move
        if p is None or s.seats[p] != HUMAN:
            return
        deadline = s.clock.deadline(p)
        if deadline is None:
            return
        if not broker.holds(s.id):
            # Another process may run this clock: the lease says which.
            broker.want(s.id)
            return
        task = asyncio.ensure_future(self._watch(s.id, s.version, deadline))
        self.timers[s.id] = task
        game_id = s.id
        task.add_done_callback(lambda t: self._forget(game_id, t))

    def drop(self, game_id: str) -> None:
        """Stop watching the game's clock (its lease went to another process)."""
        task = self.timers.pop(game_id, None)
        if task is not None and task is not asyncio.current_task():
            task.cancel()

    def _forget(self, game_id: str, task: asyncio.Task[None]) -> None:
        if self.timers.get(game_id) is task:
            del self.timers[game_id]

    async def _watch(self, game_id: str, version: int, deadline: float) -> None:
        try:
            await self._run_out(game_id, version, deadline)
        except Stale:
            # A human's move, stored by another process, beat the stand-in's:
            # this copy is behind; read it (its clock is scheduled again).
            await self.hub.broker.caught_up(game_id)
        except StorageError as err:
            # The stand-in's move was not saved (the store retried): tell the
            # readers and try again shortly, as an AI seat does; the clock is
            # never left stopped with nobody to move.
            from .fanout import encode

            text = encode({"type": "error", "reason": err.reason})
            for c in list(self.hub.fanout.of(game_id)):
                c.put_text(text)
            asyncio.get_running_loop().call_later(ai_runner.AI_RETRY, self._retry, game_id)

    def _retry(self, game_id: str) -> None:
        s = self.hub.sessions.get(game_id)
        if s is not None and game_id not in self.timers:
            self.schedule(s)

    async def _run_out(self, game_id: str, version: int, deadline: float) -> None:
        hub = self.hub
        await asyncio.sleep(max(0.0, deadline - time.monotonic()))
        s = hub.session(game_id)
        async with hub.lock(game_id):
            if s.version != version:
                return
            seat = s.timed_out()
            if seat is None:
                self.schedule(s)
                return
            view = s.game.view(seat)
        move = await hub.ai.think(game_id, view, TIMEOUT_AGENT, {}, seed(game_id, version))
        s = hub.session(game_id)
        async with hub.lock(game_id):
            if s.version != version or s.timed_out() != seat:
                return
            if not hub.broker.holds(game_id):
                # Another process runs it, or the lease's renewal is late:
                # asked for, the clock is watched again once it is ours.
                hub.broker.want(game_id)
                return
            await s.play_for_timed_out(seat, move)
            hub.changed(s)

    def close(self) -> None:
        for task in list(self.timers.values()):
            task.cancel()


def _stored_running(s: GameSession) -> bool:
    """Was the clock running in the version stored last?"""
    online = s.options.get("online") or {}
    clock = online.get("clock") if isinstance(online, dict) else None
    return bool(isinstance(clock, dict) and clock.get("running"))
