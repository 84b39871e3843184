"""One-idea agents: random, greedy (most points now), heuristic (one ply of evaluation)."""

from __future__ import annotations

import random

from ..core import Move, PlayerView
from ..core.worlds import sample_world
from .base import register
from .evaluate import margin
from .fasteval import fast_margin


@register("random")
class RandomAgent:
    """Any legal move, uniformly."""

    name = "random"

    def choose(self, view: PlayerView, rng: random.Random) -> Move:
        moves = view.legal_moves()
        return moves[rng.randrange(len(moves))]


def _gain(view: PlayerView, world_moves: list[Move], rng: random.Random) -> list[float]:
    world = sample_world(view, rng)
    me = view.player
    before = world.scores[me]
    gains = []
    for move in world_moves:
        g = world.copy()
        g.play(move)
        gains.append(float(g.scores[me] - before))
    return gains


@register("greedy")
class GreedyAgent:
    """The move that scores the most points this turn (ties at random)."""

    name = "greedy"

    def choose(self, view: PlayerView, rng: random.Random) -> Move:
        moves = view.legal_moves()
        if len(moves) == 1:
            return moves[0]
        gains = _gain(view, moves, rng)
        best = max(gains)
        return rng.choice([m for m, g in zip(moves, gains, strict=True) if g == best])


@register("heuristic")
class HeuristicAgent:
    """The move after which the position evaluates best for us (one ply)."""

    name = "heuristic"

    def choose(self, view: PlayerView, rng: random.Random) -> Move:
        moves = view.legal_moves()
        if len(moves) == 1:
            return moves[0]
        ranked = rank_moves(view, moves, rng)
        best = ranked[0][0]
        return rng.choice([m for v, m in ranked if v == best])


def rank_moves(view: PlayerView, moves: list[Move], rng: random.Random) -> list[tuple[float, Move]]:
    """Moves with their one-ply evaluation for the viewer, best first."""
    world = sample_world(view, rng)
    me = view.player
    # The specialised evaluation gives the same numbers for two players
    # (tests/ai/test_fasteval.py), in about half the time.
    value = fast_margin if len(view.names) == 2 else margin
    scored = []
    for move in moves:
        g = world.copy()
        g.play(move)
        scored.append((value(g, me), move))
    scored.sort(key=lambda vm: -vm[0])
    return scored
