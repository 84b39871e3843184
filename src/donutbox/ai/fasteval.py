"""The heuristic evaluation (``evaluate.py``), computed faster for MCTS.

MCTS evaluates a position at the end of every playout and for every move it
considers when it widens the tree: thousands of times a second.  These
functions give exactly the same numbers as ``expected_scores`` and
``margin`` (a test compares them on many positions) but specialise the
common two-player case.  Games with more players use the general code.
Like it, they read a position only through ``evaluate.Position``.
"""

from __future__ import annotations

from ..core import Game, Move
from .evaluate import Position, expected_scores


def fast_scores(game: Position) -> list[float]:
    """``expected_scores(game)``, the same values, faster for two players."""
    if len(game.names) != 2:
        return expected_scores(game)
    s = game.scores
    to_move = game.to_move
    if to_move is None:  # finished
        return [float(s[0]), float(s[1])]
    return _two(game, s[0], s[1], to_move, None)


def _two(game: Position, s0: int, s1: int, to_move: int, skip: object) -> list[float]:
    """Two players' expected scores with banked scores ``s0``, ``s1``, ``to_move``
    to move, and the run ``skip`` (an id, or None) left out."""
    e0 = float(s0)
    e1 = float(s1)
    lap = game.final_lap_turns
    if lap is not None:
        turns_left = float(lap)
    elif game.free:
        turns_left = 20.0
    else:
        turns_left = max(1.0, game.cards_left / 2)
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


def fast_margin(game: Position, player: int) -> float:
    """``margin(game, player)``, the same value, faster for two players."""
    est = fast_scores(game)
    mine = est[player]
    others = max(e for p, e in enumerate(est) if p != player)
    if game.finished:
        d = game.boxes_delivered
        mine += 0.01 * d[player]
        others += 0.01 * max(x for p, x in enumerate(d) if p != player)
    return mine - others


def box_margin(game: Game, box: Move, player: int) -> float:
    """``fast_margin`` after the player to move (``player``) plays the box-it
    ``box``, without playing it: the run's points are banked, the run leaves
    the evaluation and the turn passes.  (In the Final Lap the move may end
    the game, so it is played on a copy.)"""
    if len(game.names) != 2 or game.final_lap_turns is not None:
        g = game.copy()
        g.play(box)
        return fast_margin(g, player)
    counter = game.counter
    rid = counter.run_id_at(box.x, box.y)
    assert rid is not None, "box_margin needs a legal box-it"
    r = counter.runs[rid]
    s = game.scores
    s0 = s[0] + (r.points if player == 0 else 0)
    s1 = s[1] + (r.points if player == 1 else 0)
    e0, e1 = _two(game, s0, s1, 1 - player, rid)
    return e0 - e1 if player == 0 else e1 - e0
