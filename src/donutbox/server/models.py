"""The API's request bodies (pydantic): what each field may hold."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, Field, field_validator

from .session import HUMAN


class NewGame(BaseModel):
    match: Literal["one-good-match", "perfect-match"] = "one-good-match"
    layout: Literal["squared-away", "splitzkies"] = "squared-away"
    closers: bool = False
    players: int = Field(2, ge=2, le=4)
    opponent: str = Field("medium", description="hotseat, or an agent or level name")
    seconds: float = Field(1.0, gt=0, le=30, description="thinking time of mcts")
    human_seat: int = Field(0, ge=0, le=3, description="the human's seat against the AI")
    names: list[Annotated[str, Field(max_length=40)]] | None = Field(
        None, description="player names, in turn order (at most 40 characters each)"
    )
    seed: int | None = Field(
        None, ge=0, lt=2**63, description="a chosen deal: makes the game a practice game"
    )


class Intent(BaseModel):
    move: str = Field(..., max_length=40, description="a move in notation")
    version: int = Field(..., ge=0, description="the state version the move was made on")


class Version(BaseModel):
    version: int = Field(..., ge=0)


class ClockOption(BaseModel):
    minutes: float = Field(10, gt=0, le=180, description="each player's time")
    increment: float = Field(15, ge=0, le=600, description="seconds added a move")


class OnlineSeat(BaseModel):
    kind: str = Field(HUMAN, description="human, or an agent or level name")
    name: str = Field("", max_length=40, description="shown escaped")


class NewOnlineGame(BaseModel):
    match: Literal["one-good-match", "perfect-match"] = "one-good-match"
    layout: Literal["squared-away", "splitzkies"] = "squared-away"
    closers: bool = False
    seats: list[OnlineSeat] = Field(..., min_length=2, max_length=4)
    clock: ClockOption | None = None
    seconds: float = Field(1.0, gt=0, le=30, description="thinking time of mcts seats")
    takebacks: bool = Field(
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
