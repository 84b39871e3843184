"""The rule variants and a declarative description of the game.

Like OpenSpiel's game descriptions, ``GAME_INFO`` states the bounds every
other part (AI, environments, server) can rely on without reading the rules
code.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final, Literal

from .errors import RecordError

Match = Literal["one-good-match", "perfect-match"]
Layout = Literal["squared-away", "splitzkies"]

MATCHES: Final = ("one-good-match", "perfect-match")
LAYOUTS: Final = ("squared-away", "splitzkies")


@dataclass(frozen=True, slots=True)
class Rules:
    """One combination of the variants (RULES.md sections 2, 4 and 6)."""

    match: Match = "one-good-match"
    layout: Layout = "squared-away"
    closers: bool = False

    def __post_init__(self) -> None:
        if self.match not in MATCHES:
            raise RecordError(
                f"rules.match must be one of {', '.join(MATCHES)}, not {self.match!r}"
            )
        if self.layout not in LAYOUTS:
            raise RecordError(
                f"rules.layout must be one of {', '.join(LAYOUTS)}, not {self.layout!r}"
            )
        if not isinstance(self.closers, bool):
            raise RecordError("rules.closers must be true or false")

    @property
    def perfect(self) -> bool:
        return self.match == "perfect-match"

    @property
    def squared(self) -> bool:
        return self.layout == "squared-away"

    def to_dict(self) -> dict[str, object]:
        return {"match": self.match, "layout": self.layout, "closers": self.closers}

    @staticmethod
    def all() -> list[Rules]:
        """The eight combinations."""
        return [Rules(m, lay, c) for m in MATCHES for lay in LAYOUTS for c in (False, True)]

    def label(self) -> str:
        parts = ["Perfect Match" if self.perfect else "One Good Match"]
        parts.append("Squared Away" if self.squared else "Splitzkies")
        if self.closers:
            parts.append("Coffee's For Closers")
        return ", ".join(parts)


@dataclass(frozen=True, slots=True)
class GameInfo:
    """Facts about the game that do not depend on a position."""

    min_players: int = 2
    max_players: int = 4
    tray_size: int = 4
    deck_size: int = 30
    flavours: str = "CSHB"
    #: Player names are free text, kept short enough for records and screens.
    max_name_length: int = 200

    def max_game_length(self, players: int) -> int:
        """A proven upper bound on the actions of a dealt game with standard decks.

        Placements are at most the cards dealt (``deck_size * players - 1``);
        each box-it freezes a run of 3+ donuts, so there are at most
        ``4 * cards / 3`` of them; and the deadlock guard ends any streak of
        swaps and passes before it outlasts the cards left, so at most
        ``cards`` of them stand between two other actions.
        """
        cards = self.deck_size * players
        other = (cards - 1) + (4 * cards) // 3
        return other + (other + 1) * cards


GAME_INFO: Final = GameInfo()
