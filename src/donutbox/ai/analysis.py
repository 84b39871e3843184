"""Game analysis: what the AI thinks of every move of a finished game.

For each move, the position before it is searched by the MCTS agent from the
mover's own view at that moment (``game.view(mover)``: their tray, the
counter, the unseen cards as a multiset; never the other trays or any pile's
order), with the move actually played added to the search's candidates.
From the root's candidates:

- ``before``: the value of the search's choice (its most visited move), the
  mover's estimated winning chance with the best play it found;
- ``after``: the value of the move played;
- ``best`` / ``best_value``: the search's choice and its value (the same as
  the move played when the mover agreed with it);
- ``drop`` = max(0, before - after), and a mark by the drop (``MARKS``):
  ``inaccuracy`` from 0.10, ``mistake`` from 0.20, ``blunder`` from 0.30;
- ``points_lost``: the same two values as expected-score margins (the
  squash undone: ``20 * ln(v / (1 - v))``), their difference, at least 0.
  Once a game is lost (or won) a worse move hardly changes the winning
  chance, but it still costs points: a move is marked by whichever is the
  worse of its drop and its points lost, the points thresholds being what
  each drop costs in an even game (``POINT_MARKS``: 8.0, 16.2 and 24.8
  points), so a mark means the same loss of points in any position.

"Winning chance" is the search's value: a squashed expected-score margin
(``mcts._squash``), 0.5 for an even game, not a calibrated probability.
The JSON shape is in docs/ai.md.
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable
from dataclasses import asdict, dataclass
from typing import Any

from ..core import Game, InputError, Move
from ..core.replay import cut, replay
from .mcts import MARGIN_SCALE, MctsAgent

#: (mark, smallest drop in winning chance), worst first.
MARKS: tuple[tuple[str, float], ...] = (
    ("blunder", 0.30),
    ("mistake", 0.20),
    ("inaccuracy", 0.10),
)
#: Thinking time per move when none is given (CPU seconds).
DEFAULT_SECONDS = 1.0


#: The search's values are never exactly 0 or 1; nor are they read as
#: closer to them than this (a margin of about 184 points).
_EDGE = 1e-4


def margin(value: float) -> float:
    """A winning chance (the search's squashed value) as the expected-score
    margin it stands for: the inverse of ``mcts._squash``."""
    v = min(1.0 - _EDGE, max(_EDGE, value))
    return MARGIN_SCALE * math.log(v / (1.0 - v))


#: (mark, smallest points lost), worst first: the points a drop of each
#: ``MARKS`` threshold costs in an even game (from 0.5 + d/2 to 0.5 - d/2).
POINT_MARKS: tuple[tuple[str, float], ...] = tuple(
    (name, round(margin(0.5 + least / 2) - margin(0.5 - least / 2), 1)) for name, least in MARKS
)


def mark(drop: float, points_lost: float = 0.0) -> str | None:
    """The mark for a drop in winning chance or a loss of points, whichever
    is worse (None below 0.10 and 8.0 points)."""
    for (name, least), (_, points) in zip(MARKS, POINT_MARKS, strict=True):
        if drop >= least - 1e-12 or points_lost >= points - 1e-12:
            return name
    return None


@dataclass(frozen=True)
class MoveAnalysis:
    ply: int  # 0-based index of the move in the record
    player: int  # the mover
    move: str  # the move played, in notation
    before: float  # the mover's winning chance with the search's best move
    after: float  # ... with the move played
    best: str  # the search's best move
    best_value: float
    drop: float  # max(0, before - after)
    points_lost: float  # max(0, margin(before) - margin(after))
    mark: str | None  # "inaccuracy" / "mistake" / "blunder" / None
    choices: int  # legal moves in the position
    iterations: int  # search iterations spent on this move

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def analyse_game(
    game: Game,
    seconds: float | None = DEFAULT_SECONDS,
    iterations: int | None = None,
    seed: int = 0,
    progress: Callable[[int, int], None] | None = None,
) -> list[MoveAnalysis]:
    """Analyse every move of ``game`` (a dealt game; finished or not).

    The budget per move is ``iterations`` if given (reproducible: the same
    game, seed and budget give the same analysis), else ``seconds`` of CPU
    time.  ``progress(done, total)`` hears after each move."""
    if game.free:
        raise InputError("a free game (analysis board) has no trays to analyse from")
    moves = list(game.history)
    board = cut(game, 0)
    out: list[MoveAnalysis] = []
    for ply, played in enumerate(moves):
        mover = board.to_move
        assert mover is not None
        out.append(analyse_move(board, played, seconds, iterations, seed))
        board.play(played)
        if progress is not None:
            progress(ply + 1, len(moves))
    return out


def analyse_move(
    game: Game,
    played: Move,
    seconds: float | None = DEFAULT_SECONDS,
    iterations: int | None = None,
    seed: int = 0,
) -> MoveAnalysis:
    """The analysis of ``played`` in ``game`` (its player to move), searched
    from that player's view only."""
    mover = game.to_move
    assert mover is not None
    view = game.view(mover)
    agent = MctsAgent(seconds=seconds, iterations=iterations, clock="cpu")
    rng = random.Random(seed * 1_000_003 + game.ply)
    found = agent.search(view, rng, include=played)
    best, _visits, best_value = found[0]
    after = next(value for move, _, value in found if move == played)
    before = best_value
    drop = max(0.0, before - after)
    lost = max(0.0, margin(before) - margin(after))
    return MoveAnalysis(
        ply=game.ply,
        player=mover,
        move=str(played),
        before=round(before, 4),
        after=round(after, 4),
        best=str(best),
        best_value=round(best_value, 4),
        drop=round(drop, 4),
        points_lost=round(lost, 1),
        mark=mark(drop, lost),
        choices=len(view.legal_moves()),
        iterations=agent.last_iterations,
    )


def analyse_ply(
    record: dict[str, Any],
    ply: int,
    seconds: float | None = DEFAULT_SECONDS,
    iterations: int | None = None,
    seed: int = 0,
) -> dict[str, Any]:
    """One move of a record, for a worker process (picklable arguments and
    result): ``analyse_move`` of the record's move ``ply`` as a dict.  A
    server runs one of these per move in its AI workers, so it can report
    progress (``ply + 1`` of ``len(record["moves"])``) and let live games'
    AI moves go between them; the same seed and budget as ``analyse_game``
    give the same answers.  RecordError / IllegalMove for a bad record,
    InputError for a ply out of range or a free game."""
    game = replay(record)
    if game.free:
        raise InputError("a free game (analysis board) has no trays to analyse from")
    if isinstance(ply, bool) or not isinstance(ply, int) or not 0 <= ply < game.ply:
        raise InputError(f"ply must be from 0 to {game.ply - 1}")
    return analyse_move(cut(game, ply), game.history[ply], seconds, iterations, seed).to_dict()


def summary(analysis: list[MoveAnalysis], players: int) -> list[dict[str, Any]]:
    """Per player: moves, marks counted, the mean drop, and the points lost
    (in all, and a move)."""
    out = []
    for p in range(players):
        mine = [a for a in analysis if a.player == p]
        counts = {name: sum(1 for a in mine if a.mark == name) for name, _ in MARKS}
        out.append(
            {
                "player": p,
                "moves": len(mine),
                **counts,
                "mean_drop": round(sum(a.drop for a in mine) / len(mine), 4) if mine else 0.0,
                "points_lost": round(sum(a.points_lost for a in mine), 1),
                "mean_points_lost": (
                    round(sum(a.points_lost for a in mine) / len(mine), 2) if mine else 0.0
                ),
            }
        )
    return out


def to_json(game: Game, analysis: list[MoveAnalysis], budget: dict[str, Any]) -> dict[str, Any]:
    """The ``analyse --json`` document (docs/ai.md, 'Game analysis')."""
    return {
        "players": list(game.names),
        "scores": list(game.scores),
        "finished": game.finished,
        "budget": budget,
        "thresholds": {name: least for name, least in MARKS},
        "point_thresholds": {name: least for name, least in POINT_MARKS},
        "moves": [a.to_dict() for a in analysis],
        "summary": summary(analysis, len(game.names)),
    }


__all__ = [
    "DEFAULT_SECONDS",
    "MARKS",
    "POINT_MARKS",
    "MoveAnalysis",
    "analyse_game",
    "analyse_move",
    "analyse_ply",
    "margin",
    "mark",
    "to_json",
]
