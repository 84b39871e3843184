"""The lobby as one signed-in player sees it: ``GET /api/lobby`` and the
lobby socket's ``lobby`` messages (server/lobby/service.py, routes/lobby.py)."""

from __future__ import annotations

from pydantic import Field

from .base import Wire


class LobbyTable(Wire):
    id: str
    rules: dict[str, str | bool]
    rules_key: str
    rules_label: str
    players: int
    clock: dict[str, float] | None = Field(
        description="{minutes, increment}, or {days} (turn-based), or none"
    )
    rated: bool
    takebacks: bool
    host: str
    waiting: list[str] = Field(description="the names seated so far, in order")


class LobbyInvite(Wire):
    from_: str = Field(alias="from")
    table: str
    rules_label: str


class LobbyQueued(Wire):
    rules_key: str
    players: int


class RatingModel(Wire):
    mu_before: float
    sigma_before: float
    mu_after: float
    sigma_after: float


class RatingChange(Wire):
    """How a settled rated game moved the player's rating (the 1500 scale;
    ``model``: the rating model's own figures)."""

    before: int
    after: int
    weight: float = Field(description="how much the game counted (docs/community.md)")
    model: RatingModel


class LobbyGame(Wire):
    """One of the player's lobby games (an entry of their history): in the
    lobby, the games still in progress."""

    game: str
    seat: int
    token: str = Field(description="the player's own seat token (their link)")
    players: list[str]
    opponents: list[str]
    rules: str = Field(description="the rule set's key")
    rules_label: str
    rated: bool
    voided: bool
    finished: bool
    place: int | None
    score: int | None
    rating: RatingChange | None
    date: str
    link: str


class RematchOffer(Wire):
    """A rematch of one of the player's finished lobby games
    (server/lobby/rematch.py)."""

    game: str = Field(description="the finished game")
    players: list[str]
    accepted: list[str]
    waiting: list[str] = Field(description="the players yet to accept")
    declined: str | None = Field(description="who declined, if anyone")
    new_game: str | None = Field(description="the new game, once every player accepted")
    offered: bool


class RatedPause(Wire):
    """Rated play paused after repeated no-shows (server/ratings/no_shows.py)."""

    until: float = Field(description="when rated play opens again (Unix seconds)")
    reason: str = Field(description="the one line a rated request is refused with")


class LobbyState(Wire):
    me: str
    tables: list[LobbyTable]
    queue: dict[str, int] = Field(description='players waiting, per "rules_key/players"')
    online: list[str] = Field(description="who is online (200 names at most)")
    invites: list[LobbyInvite]
    table: str | None = Field(description="the table the player sits at, if any")
    queued: LobbyQueued | None
    games: list[LobbyGame]
    rematches: list[RematchOffer] = Field(description="rematch offers of the player's games")
    rated_pause: RatedPause | None = Field(
        None, description="set while the player's rated play is paused (no-shows)"
    )
