"""Perft: count the move sequences of a given length from a position.

As in chess engines, ``perft(game, depth)`` walks the whole game tree below a
position to a fixed depth and counts the paths; ``divide`` gives the count
under each first move.  A dealt game is fully determined by its decks, so the
draws after every move are known and the tree is exact.  The counts are
checked against the naive reference engine (``tests/data/perft/positions.json``,
made by ``tests/reference/perft_gen.py``): any difference in move listing,
in the effect of a move, or in when the game ends shows up as a different
count, and ``divide`` finds the first move sequence where the two part.

What is counted:

- A move is an action as listed by ``Game.legal_moves`` (docs/spec.md, 'Game records and notation'):
  every distinct face of the tray, every legal place, rotation and lock
  choice, every box-it, ``swap FACE`` once per distinct face, ``pass``.  Two
  rotations that put the same donuts down are still two moves.
- ``perft(game, 0)`` is 1 for any position, finished or not.
- A finished game has no moves, so it contributes 0 paths at every depth of 1
  or more (the chess convention for a node without moves): only sequences of
  exactly ``depth`` legal moves count, and a sequence in which the game ends
  before its last move does not exist.

Pure: no I/O, and the game passed in is never changed.
"""

from __future__ import annotations

from .errors import InputError
from .game import Game


def perft(game: Game, depth: int) -> int:
    """The number of distinct sequences of ``depth`` legal moves from ``game``."""
    _check(game, depth)
    return _perft(game, depth)


def divide(game: Game, depth: int) -> dict[str, int]:
    """For each legal move (in notation, in ``legal_moves`` order), the number
    of sequences of ``depth - 1`` further moves after it.  ``depth`` >= 1; the
    values sum to ``perft(game, depth)``."""
    _check(game, depth)
    if depth < 1:
        raise InputError("divide needs a depth of at least 1")
    out: dict[str, int] = {}
    for move in game.legal_moves():
        child = game.copy()
        child.play(move)
        out[str(move)] = _perft(child, depth - 1)
    return out


def _check(game: Game, depth: int) -> None:
    if isinstance(depth, bool) or not isinstance(depth, int) or depth < 0:
        raise InputError(f"depth must be an integer of at least 0, not {depth!r}")
    if game.free:
        raise InputError("perft needs a dealt game (a free game has no trays to play from)")


def _perft(game: Game, depth: int) -> int:
    if depth == 0:
        return 1
    moves = game.legal_moves()
    if depth == 1:
        # Bulk count: the leaves need not be played.
        return len(moves)
    if game.final_lap_turns == 1:
        # The last turn of the Final Lap: whatever is played ends the game,
        # so no sequence can go on beyond it.
        return 0
    total = 0
    for move in moves:
        child = game.copy()
        child.play(move)
        total += _perft(child, depth - 1)
    return total
