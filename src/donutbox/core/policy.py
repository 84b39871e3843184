"""The rule variants' policies: what a matching rule and a layout decide.

A ``Rules`` value names one matching rule and one layout; the engine asks
these objects (``rules.match_rule``, ``rules.layout_rule``) instead of
testing flags.  A new matching rule is a ``MatchRule`` subclass with its
``accepts`` and ``why_not``; a new layout a ``LayoutRule`` with its step.
Both are registered below and described to people by ``RULE_OPTIONS``
(``rules.py``), which reads their names, labels and one-line help from here.

Rule objects are singletons, hashable by identity, so memo tables can be
keyed by them.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

from .geometry import QUADRANT_NAMES, STRIDE, card_zone, cell_zone_offsets, xy
from .matching import AGREE, SLOT_LOCK, SLOT_ROT, Fit, fit_slots


class MatchRule:
    """A matching rule (docs/spec.md, 'Matching'): which placements agree."""

    __slots__ = ("_memo", "_table", "help", "label", "name", "short")

    def __init__(self, name: str, label: str, help: str, short: str) -> None:
        self.name = name
        self.label = label
        self.help = help
        self.short = short
        self._memo: dict[tuple[str, int], tuple[Fit, ...]] = {}
        self._table: tuple[bool, ...] | None = None

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.name}>"

    def accepts(self, agree: Sequence[bool], touched: Sequence[bool]) -> bool:
        """May a card go down whose quadrants (NW, NE, SE, SW) agree with a
        partner (``agree``) and touch a not-delivered donut (``touched``)?"""
        raise NotImplementedError

    def why_not(self, quads: str, agree: Sequence[bool], touched: Sequence[bool]) -> str:
        """The one-line reason a refused card breaks this rule."""
        raise NotImplementedError

    def fits(self, face: str, requirement: int) -> tuple[Fit, ...]:
        """Every (rotation, lock) that may legally place ``face`` at a place
        with this requirement (see ``matching``).  Memoised: a pure function
        of its arguments, so threads may share the memo (a racy fill at
        worst computes an equal tuple twice; each dict operation is atomic
        under the interpreter lock)."""
        key = (face, requirement)
        found = self._memo.get(key)
        if found is None:
            found = self._memo[key] = self._compute(face, requirement)
        return found

    def mismatch(self, quads: str, masks: Sequence[int]) -> str | None:
        """Why these turned quadrants may not go down beside these masks, or
        None if they may."""
        agree = [AGREE[q][m] for q, m in zip(quads, masks, strict=True)]
        touched = [bool(m) for m in masks]
        if self.accepts(agree, touched):
            return None
        return self.why_not(quads, agree, touched)

    def accept_table(self) -> tuple[bool, ...]:
        """``accepts`` for all 256 (agree, touched) bit patterns, indexed by
        ``agree | touched << 4`` (bit i: quadrant i); made once per rule
        (by two threads at once, equal tables: either may be kept)."""
        table = self._table
        if table is None:
            table = self._table = tuple(
                self.accepts(
                    [bool(bits >> i & 1) for i in range(4)],
                    [bool(bits >> (4 + i) & 1) for i in range(4)],
                )
                for bits in range(256)
            )
        return table

    def _compute(self, face: str, requirement: int) -> tuple[Fit, ...]:
        # Table-driven (``matching.fit_slots``, compiled in the compiled
        # core): this runs for every new (face, requirement) pair, which in
        # a fresh process is several times per ply.
        return tuple(
            (SLOT_ROT[s], SLOT_LOCK[s]) for s in fit_slots(face, requirement, self.accept_table())
        )


class OneGoodMatch(MatchRule):
    """At least one touching pair agrees."""

    __slots__ = ()

    def accepts(self, agree: Sequence[bool], touched: Sequence[bool]) -> bool:
        return any(agree)

    def why_not(self, quads: str, agree: Sequence[bool], touched: Sequence[bool]) -> str:
        return f"{self.label}: no touching pair agrees"


class PerfectMatch(MatchRule):
    """At least one touching pair agrees, and every quadrant in a pair agrees
    with one of its partners."""

    __slots__ = ()

    def accepts(self, agree: Sequence[bool], touched: Sequence[bool]) -> bool:
        return any(agree) and all(a or not t for a, t in zip(agree, touched, strict=True))

    def why_not(self, quads: str, agree: Sequence[bool], touched: Sequence[bool]) -> str:
        if not any(agree):
            return f"{self.label}: no touching pair agrees"
        i = next(i for i in range(4) if touched[i] and not agree[i])
        return (
            f"{self.label}: the {quads[i]} at {QUADRANT_NAMES[i]} agrees with "
            "none of the donuts it touches"
        )


class LayoutRule:
    """A layout (docs/spec.md, 'Geometry'): the positions a card may take.

    ``step`` is the grid of positions: 2 for Squared Away (x and y even), 1
    for Splitzkies (any integers).  ``place_zone`` and ``cell_zone`` are the
    card positions whose openness or requirement can change when a card is
    placed / a cell changes, restricted to that grid.
    """

    __slots__ = ("_cell_offsets", "help", "label", "name", "place_zone", "short", "step")

    def __init__(self, name: str, label: str, help: str, short: str, step: int) -> None:
        self.name = name
        self.label = label
        self.help = help
        self.short = short
        self.step = step
        self.place_zone: tuple[int, ...] = card_zone(step)
        self._cell_offsets = cell_zone_offsets()

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.name}>"

    def allows(self, x: int, y: int) -> bool:
        return x % self.step == 0 and y % self.step == 0

    def why_not(self, x: int, y: int) -> str:
        grid = "even" if self.step == 2 else f"multiples of {self.step}"
        return f"{self.label}: a card's x and y must both be {grid}"

    def cell_zone(self, c: int) -> list[int]:
        """Positions to refresh when cell ``c`` changes (a boxed run's cells)."""
        x, y = xy(c)
        step = self.step
        return [
            c + dx + dy * STRIDE
            for dx, dy in self._cell_offsets
            if (x + dx) % step == 0 and (y + dy) % step == 0
        ]


ONE_GOOD_MATCH: Final = OneGoodMatch(
    "one-good-match",
    "One Good Match",
    "At least one touching pair agrees (the default).",
    "ogm",
)
PERFECT_MATCH: Final = PerfectMatch(
    "perfect-match",
    "Perfect Match",
    "At least one touching pair agrees, and every donut of the card that touches "
    "the counter agrees with one of its partners.",
    "pm",
)
SQUARED_AWAY: Final = LayoutRule(
    "squared-away",
    "Squared Away",
    "Cards sit edge to edge at even x and y (the default).",
    "sa",
    2,
)
SPLITZKIES: Final = LayoutRule(
    "splitzkies",
    "Splitzkies",
    "A card may sit one quadrant offset from its neighbours and hang half off them.",
    "spl",
    1,
)

#: The matching rules and layouts by name, in the order forms list them; the
#: first of each is the default.
MATCH_RULES: Final[dict[str, MatchRule]] = {r.name: r for r in (ONE_GOOD_MATCH, PERFECT_MATCH)}
LAYOUT_RULES: Final[dict[str, LayoutRule]] = {r.name: r for r in (SQUARED_AWAY, SPLITZKIES)}
