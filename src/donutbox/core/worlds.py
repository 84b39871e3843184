"""Determinization: full games consistent with one player's view.

An AI that may only see its own view (docs/spec.md keeps other trays and
every pile's order hidden) still needs whole games to simulate.
``sample_world`` deals the cards the viewer has not seen (``view.unseen``, a
multiset per player) at random into the hidden places: other players' trays
and every pile, in a random order.  Everything public is copied from the view.

A sampled world is for simulation only: its history is not kept (other
players' swapped faces are hidden in the view), so it cannot be written as a
record or cut back (``replay.cut``).
"""

from __future__ import annotations

import random

from .game import Game
from .state import GameState
from .view import PlayerView


def sample_world(view: PlayerView, rng: random.Random) -> Game:
    """A random full game that the viewer cannot tell from the real one."""
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
    return Game.from_state(
        GameState(
            rules=view.rules,
            names=view.names,
            counter=view.counter.copy(),
            trays=trays,
            piles=piles,
            scores=list(view.scores),
            delivered=list(view.boxes_delivered),
            to_move=view.to_move if view.to_move is not None else 0,
            finished=view.finished,
            final_lap_turns=view.final_lap_turns,
            swap_streak=view.swap_streak,
            history=[],
            deliveries=list(view.deliveries),
            free=view.free,
            decks=None,
            seed=None,
            start="",
            meta={"world": True},
            ended_by=None,
        )
    )
