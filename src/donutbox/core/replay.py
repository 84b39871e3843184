"""Replaying a record to a ply, and cutting a game back to one.

The one place that turns "the position after N moves" into a game: the
command line, the renderers, the server's undo, takeback and replay viewer,
and terminal play call these instead of editing a record's ``moves``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .errors import InputError
from .game import Game
from .record import play_all, setup


def replay(record: Mapping[str, Any], ply: int | None = None) -> Game:
    """The game of ``record`` after its first ``ply`` moves (all if None).

    The record is read strictly (``RecordError`` naming the field), then its
    moves are played: ``IllegalMove`` names the ply of the first illegal one
    among them.  A free game's ``"end": true`` applies once all its moves are
    played.  ``InputError`` if ``ply`` is not from 0 to the number of moves.
    """
    game, moves, end = setup(record)
    if ply is None:
        ply = len(moves)
    _check_ply(ply, len(moves), "the record")
    play_all(game, moves[:ply], end and ply == len(moves))
    return game


def cut(game: Game, ply: int) -> Game:
    """A new game: ``game``'s deal (rules, players, decks or start card, seed
    and metadata) with only its first ``ply`` moves played.

    ``game`` is not changed.  ``cut(game, game.ply)`` is a game equal to
    ``game``; ``cut(game, game.ply - 1)`` takes the last move back.
    ``InputError`` if ``ply`` is not from 0 to ``game.ply``, or if ``game``
    has no deal to replay (a sampled world).
    """
    _check_ply(ply, game.ply, "the game")
    new = game.restart()
    play_all(new, game.history[:ply], ply == game.ply and game.ended_by == "record")
    return new


def _check_ply(ply: object, moves: int, what: str) -> None:
    if isinstance(ply, bool) or not isinstance(ply, int):
        raise InputError(f"ply must be an integer, not {type(ply).__name__}")
    if not 0 <= ply <= moves:
        raise InputError(f"ply must be from 0 to {moves} ({what} has {moves} moves), not {ply}")
