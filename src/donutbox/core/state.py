"""What a game is made of: the one definition of its state.

``GameState`` lists every field of a game.  ``Game`` is built from one
(``Game.from_state``) and hands out copies of its own (``Game.state``); its
copy, the worlds that AI agents sample from a view (``worlds``), and the
views themselves (``view``) all go through it, so no code outside ``Game``
sets a game's private fields.
"""

from __future__ import annotations

from typing import Any, Final, NamedTuple

from .counter import Counter
from .moves import Move
from .rules import Rules

#: How a delivery happened (docs/spec.md, 'Game records and notation', ``deliveries``).
SEALED: Final = "sealed"
BOXED: Final = "boxed"
END: Final = "end"


class Delivery(NamedTuple):
    """A box that scored: sealed, boxed, or scored at the end."""

    ply: int | None  # index of the move, None for end scoring
    how: str
    size: int
    points: int
    to: tuple[int, ...]  # players it scored for (each gets ``points``)
    first: tuple[int, int]  # its first cell in reading order
    #: Did it hold a Cinnamon Roll?  Not written to records or replays; the
    #: lab asks the scoring rule what that made of its points
    #: (``ScoringRule.source(size, roll)``).
    roll: bool = False

    def to_dict(self) -> dict[str, Any]:
        return {
            "ply": self.ply,
            "how": self.how,
            "size": self.size,
            "points": self.points,
            "to": list(self.to),
        }


class GameState(NamedTuple):
    """Every field of a game.  The containers belong to whoever holds the
    state: ``Game.state()`` gives fresh copies, ``Game.from_state`` keeps the
    ones it is given."""

    rules: Rules
    names: tuple[str, ...]
    counter: Counter
    trays: list[list[str]]  # per player, in tray order
    piles: list[list[str]]  # per player, top of the pile = end of the list
    scores: list[int]
    delivered: list[int]  # boxes delivered per player (the tie-break)
    to_move: int  # the player to move (the last mover's seat once finished)
    finished: bool
    final_lap_turns: int | None  # turns left in the Final Lap, None before it
    swap_streak: int  # consecutive turns ended by a swap or pass
    history: list[Move]
    deliveries: list[Delivery]
    free: bool  # a free game (analysis board): no trays or piles
    decks: tuple[tuple[str, ...], ...] | None  # as dealt, top card first
    seed: int | None
    start: str  # the start card's face
    meta: dict[str, Any]  # a record's extra top-level keys
    ended_by: str | None  # "final-lap", "deadlock", "record" once finished


def winners(scores: list[int], delivered: list[int]) -> list[int]:
    """Highest score, then most boxes delivered; shared on a tie of both
    (docs/spec.md, 'The end')."""
    best = max(scores)
    tied = [p for p, s in enumerate(scores) if s == best]
    most = max(delivered[p] for p in tied)
    return [p for p in tied if delivered[p] == most]


__all__ = ["BOXED", "END", "SEALED", "Delivery", "GameState", "winners"]
