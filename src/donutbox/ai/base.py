"""The agent interface and the registry of agents by name."""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import Any, Protocol

from ..core import Move, PlayerView


class Agent(Protocol):
    """Chooses a move for the player to move from that player's view only."""

    name: str

    def choose(self, view: PlayerView, rng: random.Random) -> Move:
        """A legal move for ``view.player`` (who must be to move)."""
        ...


#: name -> factory taking keyword options (e.g. seconds=, iterations=).
AGENTS: dict[str, Callable[..., Agent]] = {}

#: Difficulty levels as (agent name, options).
LEVELS: dict[str, tuple[str, dict[str, Any]]] = {
    "easy": ("greedy", {}),
    "medium": ("heuristic", {}),
    "hard": ("mcts", {"seconds": 1.0}),
}


def register(name: str) -> Callable[[Callable[..., Agent]], Callable[..., Agent]]:
    def deco(factory: Callable[..., Agent]) -> Callable[..., Agent]:
        AGENTS[name] = factory
        return factory

    return deco


def agent_names() -> list[str]:
    _load()
    return sorted(AGENTS) + sorted(LEVELS)


def make_agent(name: str, **options: Any) -> Agent:
    """An agent by name (``random``, ``greedy``, ``heuristic``, ``mcts``) or
    difficulty level (``easy``, ``medium``, ``hard``); options override."""
    _load()
    if name in LEVELS:
        base, defaults = LEVELS[name]
        return AGENTS[base](**{**defaults, **options})
    if name not in AGENTS:
        raise ValueError(f"unknown agent {name!r}; known: {', '.join(agent_names())}")
    return AGENTS[name](**options)


def _load() -> None:
    # Agents register themselves on import.
    from . import mcts, simple  # noqa: F401
