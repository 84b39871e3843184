"""What the parts that keep games going need from one another, as narrow
interfaces (``typing.Protocol``), each handed over at construction by the
hub (hub.py), which owns the parts and wires them:

- ``GamesInMemory``: the games in memory, their locks, and "this game
  changed" (the hub);
- ``Leases``: which process moves a game (the broker, broker.py);
- ``BrokerHost``: what the broker calls back when another process changed a
  game (the hub).

The clocks (clocks.py), the AI seats (ai_runner.py) and the broker import
these, never the hub nor one another's modules, so no import goes round in
a circle (tests/test_layers.py checks it, lazy and ``TYPE_CHECKING``
imports included).
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Iterable
from typing import Protocol

from .fanout import Fanout
from .session import GameSession


class GamesInMemory(Protocol):
    """The games in memory (``Hub``)."""

    sessions: dict[str, GameSession]

    def session(self, game_id: str) -> GameSession:
        """The game's session, loaded if need be; NoSuchGame if none."""
        ...

    def lock(self, game_id: str) -> asyncio.Lock:
        """The game's lock (every change of a game is made under it)."""
        ...

    async def load(self, game_id: str) -> GameSession:
        """The game's session, read from the store if need be (off the
        event loop); NoSuchGame if none."""
        ...

    def spawn(self, coro: Awaitable[None]) -> None:
        """Run ``coro`` as a task the hub cancels when it closes."""
        ...

    def changed(self, s: GameSession) -> None:
        """After a change of ``s`` (under its lock): tell every reader and the
        other processes, let an AI seat move, watch the clock."""
        ...


class Leases(Protocol):
    """Which process moves a game (``LocalBroker``: always this one)."""

    shared: bool

    def holds(self, game_id: str) -> bool: ...

    def want(self, game_id: str) -> None:
        """Ask for the game's lease; the game is kicked again once held."""
        ...

    def published(self, s: GameSession) -> None:
        """A change of ``s`` made here: tell the other processes."""
        ...

    def clock_started(self, s: GameSession) -> None: ...

    async def caught_up(self, game_id: str) -> None:
        """After a stale action: read the game again if the store is ahead."""
        ...

    async def refresh(self, game_id: str) -> bool:
        """Read the game again from the store; False if it is gone."""
        ...


class StoredVersions(Protocol):
    def versions(self, game_ids: Iterable[str]) -> dict[str, int]: ...


class BrokerHost(Protocol):
    """What the broker reads and calls back (``Hub``): the games in memory,
    their readers, and the AI seats and clocks to wake once a game changed
    in another process or its lease came here."""

    sessions: dict[str, GameSession]
    locks: dict[str, asyncio.Lock]
    fanout: Fanout

    @property
    def store(self) -> StoredVersions: ...

    async def load(self, game_id: str) -> GameSession: ...

    def kick_ai(self, game_id: str) -> None:
        """Let the game's AI seat move if it is its turn (and held here)."""
        ...

    def ai_thinking(self, game_id: str) -> bool: ...

    def watch_clock(self, s: GameSession) -> None: ...

    def stop_clock(self, game_id: str) -> None: ...
