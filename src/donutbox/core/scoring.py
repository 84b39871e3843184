"""What a box is worth and who scores it: the scoring policy of the rules.

A ``Rules`` value names one ``ScoringRule`` (``rules.scoring_rule``); every
part that scores a box or previews a score asks it, and nothing else: the
engine (``Game``: sealing, box it, end scoring), the AI's evaluations
(``ai/fasteval.py``, ``ai/evaluate.py``, ``ai/value.py``, ``ai/ppo.py``), the
server's previews (``server/session.py``), the lab's accounting of roll boxes
(``lab/match.py``) and the environments.  The standard rules (docs/spec.md,
'Runs and boxes', 'Delivery', 'The end') are ``MAJORITY``; Coffee's For
Closers is ``CLOSERS``.  A new way of scoring is a subclass overriding the
methods it changes; ``Rules(scoring=...)`` plays with it.

Not compiled (like ``policy.py``): a rule is meant to be subclassed.  The
compiled hot paths read its tables (``plain``, ``rolled``), built once when
the rule is made and never changed, so threads share them freely.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final, Protocol

#: ``ScoringRule.source`` of a box that holds a Cinnamon Roll, and of one that does not.
ROLL_BOX: Final = "roll"
PLAIN_BOX: Final = "plain"

#: Sizes the value tables cover: every run of a dealt game (at most 4
#: players x 30 cards x 4 donuts = 480 donuts on the counter) and then
#: some; a larger run (a free game's, in principle) is valued by ``value``.
TABLE_SIZE: Final = 512


class RunLike(Protocol):
    """What scoring reads of a run (``counter.Run``)."""

    @property
    def cells(self) -> list[int]: ...
    @property
    def rolls(self) -> int: ...
    @property
    def held(self) -> list[int]: ...


class ScoringRule:
    """The standard scoring (docs/spec.md, sections 5, 6 and 8): a box is
    worth a point a donut, doubled if it holds a Cinnamon Roll; a sealed box
    scores for its majority holders; a player may box an open box holding
    at least half of it; at the end every open box scores for its majority
    holders.  Override what a variant changes.

    Rule objects are hashable by identity (``Rules`` compares them so)."""

    __slots__ = ("box_need", "help", "label", "memo", "name", "plain", "rolled", "short")

    def __init__(self, name: str, label: str, help: str, short: str) -> None:
        self.name = name
        self.label = label
        self.help = help
        #: Its part of ``Rules.key()`` when given as ``Rules(scoring=...)``.
        self.short = short
        #: ``value(size, False)`` and ``value(size, True)`` for sizes below
        #: ``TABLE_SIZE``, for the hot paths (``points`` reads them).
        self.plain: tuple[int, ...] = tuple(self.value(s, False) for s in range(TABLE_SIZE))
        self.rolled: tuple[int, ...] = tuple(self.value(s, True) for s in range(TABLE_SIZE))
        #: ``need(size)`` for sizes below ``TABLE_SIZE`` (move generation
        #: lists box-its from it: ``held >= box_need[size]``).
        self.box_need: tuple[int, ...] = tuple(self.need(s) for s in range(TABLE_SIZE))
        #: The engine's memo of ``sealed_to`` / ``end_to`` answers (``Game``
        #: keys it by the players, the closer or -1 for the end, and the
        #: four held counts): they are pure functions of their arguments,
        #: so threads may share it (a racy fill asks the rule twice).
        self.memo: dict[tuple[int, int, int, int, int, int], tuple[int, ...]] = {}

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.name}>"

    # A rule is a singleton: copies are the rule itself, and a pickled
    # standard rule (inside the rules of a view sent to an AI worker
    # process) travels as its name, not its tables.

    def __copy__(self) -> ScoringRule:
        return self

    def __deepcopy__(self, memo: dict[int, object]) -> ScoringRule:
        return self

    def __reduce__(self) -> tuple[object, tuple[str, ...]]:
        if STANDARD_RULES.get(self.name) is self:
            return standard_rule, (self.name,)
        return type(self), (self.name, self.label, self.help, self.short)

    # -- what a box is worth -------------------------------------------------

    def value(self, size: int, roll: bool) -> int:
        """The points of a box of ``size`` donuts, ``roll`` if one of them is
        a Cinnamon Roll (the definition: ``points`` reads it from tables)."""
        return size * 2 if roll else size

    def points(self, size: int, roll: bool) -> int:
        """``value(size, roll)``, from the tables where they reach."""
        if size < TABLE_SIZE:
            return self.rolled[size] if roll else self.plain[size]
        return self.value(size, roll)

    def tables(self, most: int) -> tuple[tuple[int, ...], tuple[int, ...], tuple[int, ...]]:
        """``plain``, ``rolled`` and ``box_need`` reaching at least size
        ``most`` (the rule's own tables unless ``most`` is beyond them)."""
        if most < TABLE_SIZE:
            return self.plain, self.rolled, self.box_need
        sizes = range(most + 1)
        return (
            tuple(self.value(s, False) for s in sizes),
            tuple(self.value(s, True) for s in sizes),
            tuple(self.need(s) for s in sizes),
        )

    def run_points(self, run: RunLike) -> int:
        """What ``run`` is worth as a box."""
        return self.points(len(run.cells), run.rolls > 0)

    def source(self, size: int, roll: bool) -> str:
        """Where a box's points come from, for the lab's accounting:
        ``ROLL_BOX`` for a box the Cinnamon Roll changes the value of,
        ``PLAIN_BOX`` otherwise."""
        return ROLL_BOX if roll else PLAIN_BOX

    # -- who scores it -------------------------------------------------------
    #
    # Pure functions of their arguments (the engine and the evaluations
    # memoise their answers).

    def sealed_to(self, held: Sequence[int], players: int, closer: int) -> tuple[int, ...]:
        """Who scores a sealed box whose donuts ``held`` (per player) belong
        to them, ``closer`` having placed the sealing card: its majority holders."""
        return majority(held, players)

    def need(self, size: int) -> int:
        """The fewest donuts of a box of ``size`` a player must hold to box
        it now (it then scores for them alone): half, rounded up."""
        return (size + 1) // 2

    def may_box(self, held: int, size: int) -> bool:
        """May a player holding ``held`` of a box's ``size`` donuts box it now?"""
        if size < TABLE_SIZE:
            return held >= self.box_need[size]
        return held >= self.need(size)

    def why_not_box(self, held: int, size: int) -> str:
        """The one-line reason a player holding ``held`` of a box's ``size``
        donuts may not box it."""
        need = self.need(size)
        wanted = "at least half" if need == (size + 1) // 2 else f"at least {need}"
        return f"box it: you hold {held} of its {size} donuts; you need {wanted}"

    def end_to(self, held: Sequence[int], players: int) -> tuple[int, ...]:
        """Who scores an open box at the end of the game: its majority holders."""
        return majority(held, players)


class ClosersScoring(ScoringRule):
    """Coffee's For Closers: a sealed box scores for the player who placed
    the sealing card, whoever built it."""

    __slots__ = ()

    def sealed_to(self, held: Sequence[int], players: int, closer: int) -> tuple[int, ...]:
        return (closer,)


def majority(held: Sequence[int], players: int) -> tuple[int, ...]:
    """The players holding the most donuts of a run (all of them on a tie),
    none if nobody holds any (docs/spec.md, 'Runs and boxes')."""
    # (plain loops: the engine calls this for every box it delivers)
    best = 0
    for p in range(players):
        if held[p] > best:
            best = held[p]
    if best == 0:
        return ()
    leaders = []
    for p in range(players):
        if held[p] == best:
            leaders.append(p)
    return tuple(leaders)


MAJORITY: Final = ScoringRule(
    "majority",
    "Majority",
    "A sealed box scores for its majority holders (the default).",
    "maj",
)
CLOSERS: Final = ClosersScoring(
    "closers",
    "Coffee's For Closers",
    "A sealed box scores for the player who placed the sealing card, whoever built it.",
    "closers",
)

#: The rules of the standard game and its variants, by name.
STANDARD_RULES: Final[dict[str, ScoringRule]] = {r.name: r for r in (MAJORITY, CLOSERS)}


def standard_rule(name: str) -> ScoringRule:
    """The standard scoring rule named ``name`` (unpickling)."""
    return STANDARD_RULES[name]
