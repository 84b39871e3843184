"""donutbox: the digital home of the donut card game.

The public API is re-exported here from the pure rules core::

    import donutbox
    game = donutbox.Game.new(rules=donutbox.Rules(), players=2, seed=7)
    move = game.legal_moves()[0]
    game.play(move)
    record = donutbox.dump(game)  # the game's record (docs/notation.md), a dict
    again = donutbox.load(record)  # read a record and play all its moves
"""

from .core import (
    FORMAT,
    GAME_INFO,
    STANDARD_DECK,
    Delivery,
    DonutboxError,
    Game,
    IllegalMove,
    Move,
    NotationError,
    PlayerView,
    RecordError,
    Rules,
    dump,
    load,
)

__version__ = "0.1.0"

__all__ = [
    "FORMAT",
    "GAME_INFO",
    "STANDARD_DECK",
    "Delivery",
    "DonutboxError",
    "Game",
    "IllegalMove",
    "Move",
    "NotationError",
    "PlayerView",
    "RecordError",
    "Rules",
    "__version__",
    "dump",
    "load",
]
