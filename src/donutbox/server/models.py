"""The API's request bodies (pydantic): what each field may hold.

The rule fields (``match``, ``layout``, ``closers``) are made from the
core's one schema of the variants, ``RULE_OPTIONS``: a new variant appears
here, in the OpenAPI schema and in ``GET /api/meta`` without an edit.
Agents are checked against the AI's catalogue (``agent_info``) by the
routes, which also bound ``seconds`` by the agent's ``max_seconds``.
"""

from __future__ import annotations

import json
from typing import Annotated, Any, Literal

from pydantic import BaseModel, Field, StrictBool, create_model, field_validator

from ..core import RULE_OPTIONS, RuleOption, Rules
from ..core.decks import MAX_TEXT as MAX_DECK_TEXT
from ..core.decks import Composition, DeckError, parse_composition, parse_text
from .online import TURN_DAYS
from .session import HUMAN

#: The longest player name the API takes (the page's limit).
MAX_NAME = 40


def _rule_field(option: RuleOption) -> tuple[Any, Any]:
    if option.kind == "flag":
        return StrictBool, Field(option.default, description=option.help)
    return Literal[option.values], Field(option.default, description=option.help)


#: A body's rule options, one field per ``RULE_OPTIONS`` entry.
_FIELDS: dict[str, Any] = {o.name: _rule_field(o) for o in RULE_OPTIONS}
RuleFields: type[BaseModel] = create_model("RuleFields", **_FIELDS)


def rules_of(body: BaseModel) -> Rules:
    """The ``Rules`` a body's rule fields name."""
    return Rules.from_dict({o.name: getattr(body, o.name) for o in RULE_OPTIONS})


def custom_deck(raw: dict[str, Any] | str | None) -> Composition | None:
    """A new game's ``deck``: None, or the composition it names (an object,
    or JSON/TOML text), read by the core's strict loader (DeckError naming
    the field; at most ``MAX_DECK_TEXT`` characters either way)."""
    if raw is None:
        return None
    try:
        if isinstance(raw, str):
            fmt = "json" if raw.lstrip().startswith("{") else "toml"
            return parse_text(raw, fmt)
        try:
            size = len(json.dumps(raw))
        except (RecursionError, ValueError):
            size = MAX_DECK_TEXT + 1
        if size > MAX_DECK_TEXT:
            raise DeckError(f"a deck composition is at most {MAX_DECK_TEXT} characters")
        return parse_composition(raw)
    except DeckError as err:
        raise DeckError(f"deck: {err}") from None


class NewGame(RuleFields):  # type: ignore[misc,valid-type]
    players: int = Field(2, ge=2, le=4)
    opponent: str = Field("medium", description="hotseat, or an agent or level name (/api/meta)")
    seconds: float | None = Field(
        None,
        gt=0,
        description="thinking time of a timed agent (default and most: /api/meta's agents)",
    )
    human_seat: int = Field(0, ge=0, le=3, description="the human's seat against the AI")
    names: list[Annotated[str, Field(max_length=MAX_NAME)]] | None = Field(
        None, description="player names, in turn order (at most 40 characters each)"
    )
    seed: int | None = Field(
        None, ge=0, lt=2**63, description="a chosen deal: makes the game a practice game"
    )
    deck: dict[str, Any] | Annotated[str, Field(max_length=MAX_DECK_TEXT)] | None = Field(
        None,
        description="a custom deck composition (docs/deck-lab.md): an object, or its "
        "JSON or TOML text; default: the standard deck",
    )


class PlayOut(BaseModel):
    ply: int = Field(..., ge=0, le=10_000, description="the position after this many moves")
    opponent: str = Field("medium", description="an agent or level name (/api/meta)")
    seconds: float | None = Field(None, gt=0, description="its thinking time, as in NewGame")


class Intent(BaseModel):
    move: str = Field(..., max_length=40, description="a move in notation")
    version: int = Field(..., ge=0, description="the state version the move was made on")


class Version(BaseModel):
    version: int = Field(..., ge=0)


class ClockOption(BaseModel):
    """A real-time control ``{minutes, increment}``, or a turn-based one
    ``{days}`` (days per move: 1, 2, 3 or 7; docs/online.md)."""

    minutes: float = Field(10, gt=0, le=180, description="each player's time")
    increment: float = Field(15, ge=0, le=600, description="seconds added a move")
    days: int | None = Field(
        None, description="turn-based: days per move (1, 2, 3 or 7) instead of minutes"
    )

    @field_validator("days")
    @classmethod
    def _days(cls, value: int | None) -> int | None:
        if value is not None and value not in TURN_DAYS:
            raise ValueError(f"days per move must be one of {', '.join(map(str, TURN_DAYS))}")
        return value

    def spec(self) -> dict[str, float]:
        """The time control as the lobby stores and pools it: ``{"days": d}``
        or ``{"minutes": m, "increment": i}``."""
        if self.days is not None:
            return {"days": self.days}
        return {"minutes": self.minutes, "increment": self.increment}


class OnlineSeat(BaseModel):
    kind: str = Field(HUMAN, description="human, or an agent or level name (/api/meta)")
    name: str = Field("", max_length=MAX_NAME, description="shown escaped")


class NewOnlineGame(RuleFields):  # type: ignore[misc,valid-type]
    seats: list[OnlineSeat] = Field(..., min_length=2, max_length=4)
    clock: ClockOption | None = None
    seconds: float | None = Field(
        None, gt=0, description="thinking time of timed AI seats (most: /api/meta's agents)"
    )
    takebacks: StrictBool = Field(
        False, description="allow takebacks (each needs every other human's consent)"
    )
    seed: Any = Field(
        None,
        description="refused: an online deal comes from the server's secrets",
        json_schema_extra={"deprecated": True},
    )

    @field_validator("seed")
    @classmethod
    def _no_seed(cls, value: Any) -> None:
        """The creator is usually a player: a deal they chose, they could
        rebuild offline (every tray, every pile)."""
        if value is not None:
            raise ValueError(
                "online deals come from the server's secrets; "
                "a seed is for local practice games only"
            )
