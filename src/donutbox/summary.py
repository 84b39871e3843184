"""The JSON objects printed by ``donutbox replay`` / ``moves`` (docs/notation.md).

Kept apart from the command line so that the server and tests build exactly
the same objects.
"""

from __future__ import annotations

from typing import Any

from .core import Game, Move
from .core.moves import BOX, PASS, PLACE, SWAP


def replay_summary(game: Game, error: tuple[int, str, str] | None) -> dict[str, Any]:
    """``scores``, ``delivered``, ``finished``, ``winners``, ``to_move``,
    ``cells``, ``deliveries`` and ``error``, in the contract's order."""
    return {
        "scores": game.scores,
        "delivered": game.boxes_delivered,
        "finished": game.finished,
        "winners": game.winners,
        "to_move": game.to_move,
        "cells": [
            {
                "x": d.x,
                "y": d.y,
                "flavour": d.flavour,
                "roll": d.roll,
                "owner": d.owner,
                "delivered": d.delivered,
            }
            for d in game.counter.donuts()
        ],
        "deliveries": [d.to_dict() for d in game.deliveries],
        "error": None if error is None else {"ply": error[0], "move": error[1], "reason": error[2]},
    }


_KIND_ORDER = {PLACE: 0, BOX: 1, SWAP: 2, PASS: 3}


def sorted_moves(moves: list[Move]) -> list[Move]:
    """A stable, readable order: placements by face, y, x, rotation, lock;
    then box-its in reading order; then swaps; then pass."""
    return sorted(moves, key=lambda m: (_KIND_ORDER[m.kind], m.face, m.y, m.x, m.rot, m.lock))
