"""One-idea agents: random, greedy (most points now), heuristic (one ply of evaluation)."""

from __future__ import annotations

import random

from ..core import Game, Move, PlayerView
from ..core.moves import BOX, PLACE
from ..core.worlds import sample_world
from .evaluate import margin
from .fasteval import ESTIMATE_ERROR, PlaceEvaluator, box_margin, fast_margin


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
    # a placement's points, without copying and playing the whole game
    # (the same numbers: tests/ai/test_fasteval.py)
    places = PlaceEvaluator(world, me)
    gains = []
    for move in world_moves:
        if places.applies and move.kind == PLACE:
            gains.append(places.gain(move))
            continue
        g = world.copy()
        g.play(move)
        gains.append(float(g.scores[me] - before))
    return gains


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


class HeuristicAgent:
    """The move after which the position evaluates best for us (one ply)."""

    name = "heuristic"

    def choose(self, view: PlayerView, rng: random.Random) -> Move:
        moves = view.legal_moves()
        if len(moves) == 1:
            return moves[0]
        return rng.choice(best_moves(view, moves, rng))


def best_moves(view: PlayerView, moves: list[Move], rng: random.Random) -> list[Move]:
    """The moves of ``rank_moves`` with the best value, in the order of
    ``moves``: the same list, found faster.  With two players a placement
    is first estimated (``PlaceEvaluator.estimate``, within
    ``ESTIMATE_ERROR`` of its value); only the moves estimated within twice
    that of the best are evaluated exactly, and a move whose value is the
    best is always among them."""
    world = sample_world(view, rng)
    me = view.player
    places = PlaceEvaluator(world, me)
    if not places.applies:
        ranked = _rank(world, me, moves)
        best = ranked[0][0]
        return [m for v, m in ranked if v == best]
    values = []
    estimated = []
    for move in moves:
        if move.kind == PLACE:
            values.append(places.estimate(move))
            estimated.append(True)
        else:
            values.append(_value(world, me, move, None))
            estimated.append(False)
    cut = max(values) - 2 * ESTIMATE_ERROR
    close = [i for i, v in enumerate(values) if v >= cut]
    exact = {i: places.margin(moves[i]) if estimated[i] else values[i] for i in close}
    best = max(exact.values())
    return [moves[i] for i in close if exact[i] == best]


def rank_moves(view: PlayerView, moves: list[Move], rng: random.Random) -> list[tuple[float, Move]]:
    """Moves with their one-ply evaluation for the viewer, best first."""
    world = sample_world(view, rng)
    return _rank(world, view.player, moves)


def _rank(world: Game, me: int, moves: list[Move]) -> list[tuple[float, Move]]:
    # The specialised evaluation gives the same numbers for two players
    # (tests/ai/test_fasteval.py), in about half the time; placements and
    # box-its are evaluated without copying and playing the whole game
    # (the same numbers again, the same tests).
    places = PlaceEvaluator(world, me)
    scored = [(_value(world, me, move, places), move) for move in moves]
    scored.sort(key=lambda vm: -vm[0])
    return scored


def _value(world: Game, me: int, move: Move, places: PlaceEvaluator | None) -> float:
    """The evaluation for ``me`` after ``move`` (``fast_margin`` for two
    players, ``margin`` for more)."""
    if len(world.names) != 2:
        g = world.copy()
        g.play(move)
        return margin(g, me)
    kind = move.kind
    if kind == PLACE and places is not None and places.applies:
        return places.margin(move)
    if kind == BOX:
        return box_margin(world, move, me)
    g = world.copy()
    g.play(move)
    return fast_margin(g, me)
