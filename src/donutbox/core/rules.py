"""The rule variants, as data, and a declarative description of the game.

``RULE_OPTIONS`` is the one schema of the variants: their names, choices,
defaults and one-line explanations.  The record reader (``Rules.from_dict``),
the command line, the web API and its new-game form, and the OpenSpiel
parameters all read it, so a new variant is declared here once (and its
policy written in ``policy.py``).

Like OpenSpiel's game descriptions, ``GAME_INFO`` states the bounds every
other part (AI, environments, server) can rely on without reading the rules
code.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Final, Literal

from .errors import RecordError
from .policy import LAYOUT_RULES, MATCH_RULES, LayoutRule, MatchRule
from .scoring import CLOSERS, MAJORITY, ScoringRule


@dataclass(frozen=True, slots=True)
class Choice:
    """One value of a rule option, e.g. ``splitzkies`` of ``layout``."""

    value: str
    label: str
    help: str
    #: Its part of ``Rules.key()`` (a few lower-case letters).
    short: str = ""

    def to_dict(self) -> dict[str, str]:
        return {"value": self.value, "label": self.label, "help": self.help}


@dataclass(frozen=True, slots=True)
class RuleOption:
    """One rule variant: a choice among named values, or an on/off flag."""

    name: str
    label: str
    help: str
    default: str | bool
    choices: tuple[Choice, ...] = ()  # empty for a flag

    @property
    def kind(self) -> Literal["choice", "flag"]:
        return "choice" if self.choices else "flag"

    @property
    def values(self) -> tuple[str, ...]:
        """The values of a choice (empty for a flag)."""
        return tuple(c.value for c in self.choices)

    def choice(self, value: str) -> Choice:
        """The choice named ``value`` (RecordError if there is none)."""
        for c in self.choices:
            if c.value == value:
                return c
        raise RecordError(
            f"rules.{self.name} must be one of {', '.join(self.values)}, not {str(value)[:40]!r}"
        )

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "label": self.label,
            "help": self.help,
            "kind": self.kind,
            "default": self.default,
            "choices": [c.to_dict() for c in self.choices],
        }


def _choice(rule: MatchRule | LayoutRule) -> Choice:
    return Choice(rule.name, rule.label, rule.help, rule.short)


#: The defaults: the first matching rule and layout registered in ``policy.py``.
DEFAULT_MATCH: Final = next(iter(MATCH_RULES))
DEFAULT_LAYOUT: Final = next(iter(LAYOUT_RULES))

MATCH_OPTION: Final = RuleOption(
    "match",
    "Matching",
    "How a placed card must agree with the not-delivered donuts it touches.",
    DEFAULT_MATCH,
    tuple(_choice(r) for r in MATCH_RULES.values()),
)
LAYOUT_OPTION: Final = RuleOption(
    "layout",
    "Layout",
    "Where a card may sit on the counter.",
    DEFAULT_LAYOUT,
    tuple(_choice(r) for r in LAYOUT_RULES.values()),
)
CLOSERS_OPTION: Final = RuleOption(
    "closers",
    "Coffee's For Closers",
    "A sealed box scores for the player who placed the sealing card, whoever built it.",
    False,
)

#: Every rule option, in the order records, forms and labels list them.
RULE_OPTIONS: Final[tuple[RuleOption, ...]] = (MATCH_OPTION, LAYOUT_OPTION, CLOSERS_OPTION)
RULE_KEYS: Final = tuple(o.name for o in RULE_OPTIONS)

MATCHES: Final = MATCH_OPTION.values
LAYOUTS: Final = LAYOUT_OPTION.values


@dataclass(frozen=True, slots=True)
class Rules:
    """One combination of the variants (docs/spec.md, 'Geometry', 'Matching'
    and 'Delivery').  Its matching rule, layout and scoring are policy
    objects (``match_rule``, ``layout_rule``, ``scoring_rule``) that the
    engine, the AI, the server and the lab ask, never flags.

    ``scoring``: a scoring rule of its own (``scoring.ScoringRule``), not a
    record option: it replaces the one the options name (``closers`` must
    then be off, the rule deciding who scores a sealed box), and a record
    cannot be written of such a game (``record_options`` refuses)."""

    match: str = DEFAULT_MATCH
    layout: str = DEFAULT_LAYOUT
    closers: bool = False
    scoring: ScoringRule | None = field(default=None, kw_only=True)
    #: What a box is worth and who scores it (docs/spec.md, 'Runs and
    #: boxes', 'Delivery', 'The end'): ``scoring`` if given, else the
    #: majority rule or, under ``closers``, Coffee's For Closers.  Derived
    #: once (a plain attribute: the evaluations read it per position).
    scoring_rule: ScoringRule = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        for option, value in ((MATCH_OPTION, self.match), (LAYOUT_OPTION, self.layout)):
            if value not in option.values:
                raise RecordError(
                    f"rules.{option.name} must be one of {', '.join(option.values)}, "
                    f"not {str(value)[:40]!r}"
                )
        if not isinstance(self.closers, bool):
            raise RecordError("rules.closers must be true or false")
        if self.scoring is not None:
            if not isinstance(self.scoring, ScoringRule):
                raise RecordError("rules.scoring must be a ScoringRule")
            if self.closers:
                raise RecordError(
                    "rules.closers: a rules' own scoring rule decides who scores a sealed box"
                )
        scoring = self.scoring
        if scoring is None:
            scoring = CLOSERS if self.closers else MAJORITY
        object.__setattr__(self, "scoring_rule", scoring)

    @property
    def match_rule(self) -> MatchRule:
        """What a placement must agree with (docs/spec.md, 'Matching')."""
        return MATCH_RULES[self.match]

    @property
    def layout_rule(self) -> LayoutRule:
        """Where cards may sit (docs/spec.md, 'Geometry')."""
        return LAYOUT_RULES[self.layout]

    @property
    def squared(self) -> bool:
        """Do cards sit only at even coordinates?  (``layout_rule.step == 2``.)"""
        return self.layout_rule.step == 2

    @classmethod
    def from_dict(cls, d: Mapping[str, object] | object, where: str = "rules") -> Rules:
        """Read rules from JSON-like data, strictly: every key must be a rule
        option of the right type and value; missing ones take their defaults.
        A ``RecordError`` names the field (``where`` is its path)."""
        if not isinstance(d, Mapping):
            raise RecordError(f"{where} must be an object")
        for key in d:
            if key not in RULE_KEYS:
                # Refused (RULES.md section 9), but said plainly: a record
                # written by a newer release carries the options it added.
                raise RecordError(
                    f"{where}: unknown key {str(key)[:40]!r} (known: {', '.join(RULE_KEYS)}); "
                    "a newer release of donutbox may have written it"
                )
        values: dict[str, Any] = {}
        for option in RULE_OPTIONS:
            value = d.get(option.name, option.default)
            field = f"{where}.{option.name}"
            if option.kind == "flag":
                if not isinstance(value, bool):
                    raise RecordError(f"{field} must be true or false")
            else:
                if not isinstance(value, str):
                    raise RecordError(f"{field} must be a string")
                if value not in option.values:
                    raise RecordError(
                        f"{field} must be one of {', '.join(option.values)}, not {value[:40]!r}"
                    )
            values[option.name] = value
        return cls(**values)

    def to_dict(self) -> dict[str, object]:
        """Every option (the API's state and forms, the environments)."""
        return {o.name: getattr(self, o.name) for o in RULE_OPTIONS}

    def record_options(self) -> dict[str, object]:
        """The options a record writes: those not at their default.  The
        defaults are part of the format (RULES.md section 9), so an option
        added later, left at its default, does not make a record unreadable
        by a release that does not know it.  A ``RecordError`` for rules
        with a scoring rule of their own, which no option names."""
        if self.scoring is not None:
            raise RecordError(
                f"rules: the scoring rule {self.scoring.name!r} is no record option; "
                "a game scored by it cannot be written as a record"
            )
        return {
            o.name: getattr(self, o.name)
            for o in RULE_OPTIONS
            if getattr(self, o.name) != o.default
        }

    @staticmethod
    def all() -> list[Rules]:
        """Every combination (eight today), in RULE_OPTIONS order."""
        out: list[dict[str, object]] = [{}]
        for option in RULE_OPTIONS:
            values: tuple[object, ...] = option.values if option.choices else (False, True)
            out = [{**d, option.name: v} for d in out for v in values]
        return [Rules(**d) for d in out]  # type: ignore[arg-type]

    def label(self) -> str:
        """For people: ``"Perfect Match, Splitzkies, Coffee's For Closers"``."""
        parts = []
        for option in RULE_OPTIONS:
            value = getattr(self, option.name)
            if option.kind == "flag":
                if value:
                    parts.append(option.label)
            else:
                parts.append(option.choice(value).label)
        if self.scoring is not None:
            parts.append(self.scoring.label)
        return ", ".join(parts)

    def key(self) -> str:
        """A stable short id for files and tables: ``"ogm-sa"``, ``"pm-spl-closers"``."""
        parts = []
        for option in RULE_OPTIONS:
            value = getattr(self, option.name)
            if option.kind == "flag":
                if value:
                    parts.append(option.name)
            else:
                parts.append(option.choice(value).short)
        if self.scoring is not None:
            parts.append(self.scoring.short)
        return "-".join(parts)

    @classmethod
    def from_key(cls, key: str) -> Rules:
        """The rules of a ``key()``; RecordError if it is not one."""
        for rules in cls.all():
            if rules.key() == key:
                return rules
        raise RecordError(
            f"rules key {key[:40]!r} is not one of {', '.join(r.key() for r in cls.all())}"
        )


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
