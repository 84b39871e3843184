"""The heuristic evaluation (``evaluate.py``), computed faster for MCTS.

MCTS evaluates a position at the end of every playout and for every move it
considers when it widens the tree: thousands of times a second.  These
functions give exactly the same numbers as ``expected_scores`` and
``margin`` (a test compares them on many positions) but read the game's
fields directly and specialise the common two-player case.  Games with
more players use the general code.
"""

from __future__ import annotations

from ..core import Game, Move
from ..core.geometry import cell
from .evaluate import expected_scores


def fast_scores(game: Game) -> list[float]:
    """``expected_scores(game)``, the same values, faster for two players."""
    names = game.names
    if len(names) != 2:
        return expected_scores(game)
    s = game._scores
    if game._finished:
        return [float(s[0]), float(s[1])]
    return _two(game, s[0], s[1], game._to_move, None)


def _two(game: Game, s0: int, s1: int, to_move: int, skip: object) -> list[float]:
    """Two players' expected scores with banked scores ``s0``, ``s1``, ``to_move``
    to move, and the run ``skip`` (an id, or None) left out."""
    e0 = float(s0)
    e1 = float(s1)
    lap = game._lap
    if lap is not None:
        turns_left = float(lap)
    elif game.free:
        turns_left = 20.0
    else:
        t = game.trays
        p = game.piles
        turns_left = max(1.0, (len(t[0]) + len(t[1]) + len(p[0]) + len(p[1])) / 2)
    m6 = min(turns_left, 6.0)
    for rid, r in game.counter.runs.items():
        if rid == skip:
            continue
        cells = r.cells
        size = len(cells)
        if size < 2:
            continue
        held = r.held
        h0 = held[0]
        h1 = held[1]
        if size >= 3:
            value = float(size * 2 if r.rolls else size)
        else:
            value = 0.5 * (size + 1) * (2 if r.rolls else 1)
        risk = (r.open * 0.08 + 0.1) * m6 / 6.0
        if risk > 1.0:
            risk = 1.0
        if h0 > h1:
            safety = 1.0 - risk / (1.0 + (h0 - h1))
            if to_move == 0 and 2 * h0 >= size and size >= 3 and safety < 0.95:
                safety = 0.95
            e0 += value * safety
        elif h1 > h0:
            safety = 1.0 - risk / (1.0 + (h1 - h0))
            if to_move == 1 and 2 * h1 >= size and size >= 3 and safety < 0.95:
                safety = 0.95
            e1 += value * safety
        elif h0:
            # A tie: margin 0, the share split between both.
            safety = 1.0 - risk / 1.0
            if 2 * held[to_move] >= size and size >= 3 and safety < 0.95:
                safety = 0.95
            share = value * safety / 2
            e0 += share
            e1 += share
    return [e0, e1]


def fast_margin(game: Game, player: int) -> float:
    """``margin(game, player)``, the same value, faster for two players."""
    est = fast_scores(game)
    mine = est[player]
    others = max(e for p, e in enumerate(est) if p != player)
    if game._finished:
        d = game._delivered
        mine += 0.01 * d[player]
        others += 0.01 * max(x for p, x in enumerate(d) if p != player)
    return mine - others


def box_margin(game: Game, box: Move, player: int) -> float:
    """``fast_margin`` after the player to move (``player``) plays the box-it
    ``box``, without playing it: the run's points are banked, the run leaves
    the evaluation and the turn passes.  (In the Final Lap the move may end
    the game, so it is played on a copy.)"""
    if len(game.names) != 2 or game._lap is not None:
        g = game.copy()
        g.play(box)
        return fast_margin(g, player)
    counter = game.counter
    rid = counter.run_of[cell(box.x, box.y)]
    points = counter.runs[rid].points
    s = game._scores
    s0 = s[0] + (points if player == 0 else 0)
    s1 = s[1] + (points if player == 1 else 0)
    e0, e1 = _two(game, s0, s1, 1 - player, rid)
    return e0 - e1 if player == 0 else e1 - e0
