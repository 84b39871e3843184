"""A game as one reader sees it: the state sent over HTTP and in the
WebSocket's ``state`` messages, a move's preview, and a replay frame.

Every field comes from the engine's ``PlayerView`` (``core/view.py``:
public information plus the reader's own tray) and the server's session
(``server/session.py``); nothing here can hold another player's tray or a
pile's order.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from .base import Wire


class Cell(Wire):
    """One donut on the counter (a quarter of a card)."""

    x: int
    y: int
    flavour: str = Field(description="the donut's flavour letter (docs/notation.md)")
    roll: bool = Field(description="a roll donut (its box scores double)")
    owner: int | None = Field(description="the seat whose owner mark it carries, if any")
    delivered: bool = Field(description="part of a box already scored")


class Delivery(Wire):
    """A box scored: sealed, boxed early, or at the end."""

    ply: int | None = Field(description="the move that scored it; null for end scoring")
    how: Literal["sealed", "boxed", "end"]
    size: int
    points: int
    to: list[int] = Field(description="the seats it scored for")


class OpenBox(Wire):
    """A run not yet scored, with its value if it scored now."""

    x: int = Field(description="its first cell (lowest in reading order)")
    y: int
    size: int
    points: int = Field(description="what it would score now")
    held: list[int] = Field(description="owner marks in it, per seat")
    end_to: list[int] = Field(
        description="the seats it would score for if the game ended now (the scoring rule)"
    )
    cells: list[list[int]] = Field(description="every cell as [x, y]")


class ClockView(Wire):
    """An online game's clock now."""

    remaining_ms: list[int | None] = Field(description="per seat; null for an AI seat")
    running: int | None = Field(description="the seat whose clock runs, if any")
    increment_ms: int
    flagged: list[bool] = Field(description="per seat: ran out of time")
    days: int | None = Field(None, description="turn-based: days per move (absent: real time)")
    deadline_at: float | None = Field(
        None, description="turn-based: when the running turn's time ends (seconds since 1970)"
    )


class ForfeitEntry(Wire):
    seat: int
    how: Literal["resign", "time"]
    ply: int


class TakebackOffer(Wire):
    by: int = Field(description="the seat asking")
    agreed: list[int] = Field(description="the seats that agreed so far")


class Presence(Wire):
    connected: list[bool] = Field(description="per seat: a reader of that seat is connected")
    spectators: int


class ViewState(Wire):
    """What the engine lets one reader know (``PlayerView.to_dict``)."""

    player: int = Field(description="the reader's seat; -1 for a spectator")
    rules: dict[str, str | bool] = Field(description="the rule options (GET /api/meta)")
    players: list[str]
    free: bool = Field(description="a record without decks (no trays, no piles)")
    to_move: int | None
    finished: bool
    winners: list[int]
    scores: list[int]
    delivered: list[int] = Field(description="boxes scored, per seat")
    tray: list[str] = Field(description="the reader's own tray (empty for a spectator)")
    tray_sizes: list[int]
    pile_sizes: list[int]
    unseen: list[list[str]] = Field(
        description="per seat, the faces not yet seen by the reader, sorted (never an order)"
    )
    history: list[str] = Field(description="the moves in notation; others' swaps hidden")
    deliveries: list[Delivery]
    final_lap_turns: int | None
    cells: list[Cell]


class GameState(ViewState):
    """The state of a game as one reader sees it: ``GET /api/games/{id}``,
    ``GET /api/online/{id}``, the moves' answers and the WebSocket's
    ``state`` messages.  The online fields are sent for online games only;
    ``owner_token`` once, to the browser that made or imported a game."""

    id: str
    title: str
    mode: Literal["ai", "hotseat", "online"]
    seats: list[str] = Field(description='"human", or the agent playing the seat')
    version: int = Field(description="increases with every change; actions name it")
    thinking: bool = Field(description="an AI seat is to move")
    ended_by: str | None = Field(
        description="why the game ended: the rules' reason, resign, time or aborted"
    )
    legal: list[str] = Field(description="the reader's legal moves when it is their turn")
    boxes: list[OpenBox]
    if_ended: list[int] = Field(
        description="each seat's score if the game ended now (open boxes scored at the end)"
    )
    takebacks: int = Field(description="moves taken back so far")
    practice: bool = Field(description="a chosen deal or a game with takebacks")
    clock: ClockView | None = Field(None, description="online only")
    takebacks_on: bool | None = Field(None, description="online only: takebacks allowed")
    rated: bool | None = Field(None, description="online only")
    forfeits: list[ForfeitEntry] | None = Field(None, description="online only")
    takeback: TakebackOffer | None = Field(None, description="online only: a pending request")
    presence: Presence | None = Field(None, description="online only")
    owner_token: str | None = Field(None, description="a new or imported local game only")


class Preview(Wire):
    """What a move would seal and score (public information only)."""

    move: str
    deliveries: list[Delivery]
    scores: list[int] = Field(description="points each seat would gain")


class ReplayState(ViewState):
    boxes: list[OpenBox]


class ReplayFrame(Wire):
    """``GET /api/games/{id}/replay/{ply}``: a finished game at one ply."""

    ply: int
    of: int = Field(description="the game's number of moves")
    state: ReplayState
