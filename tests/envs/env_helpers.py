"""What the envs tests share: a position some way into a game."""

from __future__ import annotations

import random

from donutbox.ai import make_agent
from donutbox.core import Game


def position(seed: int = 5, plies: int = 12) -> Game:
    """The two-player game of ``seed`` after ``plies`` moves of ``greedy``."""
    game = Game.new(seed=seed)
    agent = make_agent("greedy")
    rng = random.Random(seed)
    for _ in range(plies):
        p = game.to_move
        assert p is not None
        game.play(agent.choose(game.view(p), rng))
    return game
