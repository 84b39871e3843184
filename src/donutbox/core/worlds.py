"""Determinization: full games consistent with one player's view.

An AI that may only see its own view (RULES.md keeps other trays and every
pile's order hidden) still needs whole games to simulate.  ``sample_world``
deals the cards the viewer has not seen (``view.unseen``, a multiset per
player) at random into the hidden places: other players' trays and every
pile, in a random order.  Everything public is copied from the view.

A sampled world is for simulation only: its history is not kept (other
players' swapped faces are hidden in the view), so it cannot be written as a
record.
"""

from __future__ import annotations

import random

from .game import Game
from .view import PlayerView


def sample_world(view: PlayerView, rng: random.Random) -> Game:
    """A random full game that the viewer cannot tell from the real one."""
    game = Game.__new__(Game)
    game.rules = view.rules
    game._match = view.rules.match_rule
    game.names = view.names
    game.counter = view.counter.copy()
    n = len(view.names)
    trays: list[list[str]] = []
    piles: list[list[str]] = []
    for p in range(n):
        if view.free:
            trays.append([])
            piles.append([])
            continue
        hidden = list(view.unseen[p])
        rng.shuffle(hidden)
        if p == view.player:
            trays.append(list(view.tray))
        else:
            size = view.tray_sizes[p]
            trays.append(hidden[:size])
            hidden = hidden[size:]
        piles.append(hidden)
    game.trays = trays
    game.piles = piles
    game._scores = list(view.scores)
    game._delivered = list(view.boxes_delivered)
    game._to_move = view.to_move if view.to_move is not None else 0
    game._finished = view.finished
    game._lap = view.final_lap_turns
    game._streak = view.swap_streak
    game.history = []
    game.deliveries = list(view.deliveries)
    game.free = view.free
    game.decks = None
    game.seed = None
    game.start = ""
    game.meta = {"world": True}
    game.ended_by = None
    return game
