"""Cheap random moves for playouts: draw a candidate, check it, retry.

Listing every legal move costs a few hundred moves' worth of work; a playout
only needs one.  ``sample_move`` draws a random (place, tray card, rotation)
and keeps it if it fits, which is a couple of dictionary look-ups.  After a
few misses it falls back to the full list, so it can always move (box-its,
swaps and passes come only from that fallback).
"""

from __future__ import annotations

import random

from .errors import IllegalMove
from .game import Game
from .geometry import xy
from .matching import SLOT_LOCK, SLOT_ROT
from .movegen import fit_slots_of
from .moves import PLACE, Move

TRIES = 8


def sample_move(game: Game, rng: random.Random) -> Move:
    """A random legal move for the player to move (not uniform over moves)."""
    to_move = game.to_move
    if to_move is None:
        raise IllegalMove("the game is over")
    places = game.counter.places
    tray = game.trays[to_move]
    if places and tray and not game.free:
        keys = list(places)
        match = game.rules.match_rule
        for _ in range(TRIES):
            p = keys[rng.randrange(len(keys))]
            face = tray[rng.randrange(len(tray))]
            # ``match.fits`` as slots, from movegen's memo tables (the same
            # choices in the same order: compiled, no call to the rule).
            options = fit_slots_of(match, face, places[p] & 0xFFFF)
            if options:
                slot = options[rng.randrange(len(options))]
                x, y = xy(p)
                return Move(PLACE, face, x, y, SLOT_ROT[slot], SLOT_LOCK[slot])
    moves = game.legal_moves()
    return moves[rng.randrange(len(moves))]
