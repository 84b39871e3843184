"""A position evaluation: points banked plus the expected worth of open boxes.

Used by the heuristic agent (one ply) and to score MCTS playouts that are
cut off before the end.  It reads only public information (the counter,
scores, cards left), through the small interface ``Position`` that both a
``Game`` (a view's sampled world) and a ``PlayerView`` provide.  What a box
is worth, and who may box it, come from the rules' scoring rule
(``Rules.scoring_rule``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from ..core import Counter, Rules


class Position(Protocol):
    """What the evaluation reads of a position: all of it public."""

    @property
    def rules(self) -> Rules: ...
    @property
    def names(self) -> tuple[str, ...]: ...
    @property
    def scores(self) -> Sequence[int]: ...
    @property
    def boxes_delivered(self) -> Sequence[int]: ...
    @property
    def finished(self) -> bool: ...
    @property
    def to_move(self) -> int | None: ...
    @property
    def final_lap_turns(self) -> int | None: ...
    @property
    def cards_left(self) -> int: ...
    @property
    def free(self) -> bool: ...
    @property
    def counter(self) -> Counter: ...


def expected_scores(game: Position) -> list[float]:
    """Each player's score plus their expected share of every open box.

    A box goes to its majority holders at the latest at the end; how safe a
    lead is depends on the margin, on how many empty edges the box still has
    (each is a way for someone else to grow into it) and on how many turns
    are left.  A player holding at least half of a box can bank it with box
    it on their turn, which makes a lead held by the player to move safer.
    """
    n = len(game.names)
    est = [float(s) for s in game.scores]
    if game.finished:
        return est
    turns_left = max(1.0, game.cards_left / n) if not game.free else 20.0
    if game.final_lap_turns is not None:
        turns_left = float(game.final_lap_turns)
    to_move = game.to_move
    scoring = game.rules.scoring_rule
    for r in game.counter.runs.values():
        size = len(r.cells)
        if size < 2:
            continue
        held = r.held[:n]
        best = max(held)
        if best == 0:
            continue
        leaders = [p for p in range(n) if held[p] == best]
        second = max((h for p, h in enumerate(held) if h != best), default=0)
        margin = best - second if len(leaders) == 1 else 0
        roll = r.rolls > 0
        # a run of 2 counts for half the box of 3 it may become
        value = float(scoring.points(size, roll)) if size >= 3 else 0.5 * scoring.points(3, roll)
        # Risk grows with open edges and turns left; a margin protects.
        risk = min(1.0, (r.open * 0.08 + 0.1) * min(turns_left, 6.0) / 6.0)
        safety = 1.0 - risk / (1.0 + margin)
        if to_move in leaders and scoring.may_box(held[to_move], size) and size >= 3:
            safety = max(safety, 0.95)
        share = value * safety / len(leaders)
        for p in leaders:
            est[p] += share
    return est


def margin(game: Position, player: int) -> float:
    """Expected score of ``player`` minus the best expected score of the others."""
    est = expected_scores(game)
    mine = est[player]
    others = max(e for p, e in enumerate(est) if p != player)
    if game.finished:
        # The tie-break counts: boxes delivered.
        d = game.boxes_delivered
        mine += 0.01 * d[player]
        others += 0.01 * max(x for p, x in enumerate(d) if p != player)
    return mine - others
