"""The deadline sweep: turn-based games whose deadline passed while they
were out of memory (docs/online.md, "Turn-based games").

A turn-based game's running turn has a wall-clock deadline stored with it
(``games.deadline_at``).  While the game is in memory its clock's timer
(clocks.py) acts at the deadline.  A game that nobody reads leaves memory
(hub.py), its timer with it, and a restarted server loads nothing: so
every ``SWEEP_SECONDS`` each process asks the database for unfinished games
whose deadline has passed (at most ``BATCH``, the earliest first) and loads
them.  Loading a game watches its clock again (``Hub._install``): its timer
finds the deadline passed and acts at once, as it would have in memory -
in a rated game the player loses on time (forfeits.py), in a casual one
the server's AI moves for them.

With many processes on one database each one sweeps; the broker's lease
(broker.py) lets exactly one of them act on a game, as for every clock:
the others' copies are told of the result like any other version.
"""

from __future__ import annotations

import asyncio
import logging
import os
from typing import Protocol

from .clocks import Clocks
from .online import wall
from .ports import GamesInMemory
from .storage import CorruptGame, StorageError

log = logging.getLogger("donutbox.server.deadlines")

#: How often the database is asked for passed deadlines (seconds);
#: ``DONUTBOX_DEADLINE_SWEEP_SECONDS`` changes it.  A deadline that passed
#: while its game was out of memory is acted on at most this late (a
#: turn-based move has a day at least).
SWEEP_SECONDS = float(os.environ.get("DONUTBOX_DEADLINE_SWEEP_SECONDS", "30"))
#: At most this many games loaded by one sweep (the rest wait for the next).
BATCH = 100


class DueGames(Protocol):
    def due(self, now: float, limit: int) -> list[str]:
        """Unfinished games whose stored deadline is before ``now``, the
        earliest first (storage.py)."""
        ...


class Deadlines:
    """The sweep.  Its parts, given by the hub: the games in memory (to load
    one), the store (to ask for passed deadlines) and the clocks."""

    def __init__(self, games: GamesInMemory, store: DueGames, clocks: Clocks) -> None:
        self.games = games
        self.store = store
        self.clocks = clocks
        self._task: asyncio.Task[None] | None = None

    async def sweep(self) -> int:
        """Load (or watch again) every game whose deadline has passed; how
        many there were."""
        due = await asyncio.to_thread(self.store.due, wall(), BATCH)
        for game_id in due:
            s = self.games.sessions.get(game_id)
            if s is not None:
                if game_id not in self.clocks.timers:
                    self.clocks.schedule(s)
                continue
            try:
                await self.games.load(game_id)  # watched again as it is installed
            except (CorruptGame, StorageError):
                continue  # quarantined or the database failed: logged by the store
        return len(due)

    async def _forever(self) -> None:
        while True:
            try:
                await self.sweep()
            except asyncio.CancelledError:
                raise
            except StorageError:
                pass  # logged once by the store; tried again at the next sweep
            except Exception as err:
                log.error("deadlines: sweep failed (%s)", str(err).splitlines()[0][:200])
            await asyncio.sleep(SWEEP_SECONDS)

    def start(self) -> None:
        self._task = asyncio.ensure_future(self._forever())

    def close(self) -> None:
        if self._task is not None:
            self._task.cancel()
