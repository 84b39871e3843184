"""The agent interface: what every agent offers its callers.

The agents (``simple.py``, ``mcts.py``, ``ppo.py``) need nothing from here
to satisfy it; ``catalogue.py`` lists them and makes them by name.
"""

from __future__ import annotations

import random
from typing import Protocol

from ..core import Move, PlayerView


class Agent(Protocol):
    """Chooses a move for the player to move from that player's view only."""

    name: str

    def choose(self, view: PlayerView, rng: random.Random) -> Move:
        """A legal move for ``view.player`` (who must be to move)."""
        ...
