"""The WebSocket messages, both ways (docs/online.md, "The protocol").

A game's socket (``/api/online/{id}/ws``, ``/api/games/{id}/ws``) sends
``ServerMessage``s and takes ``ClientMessage``s (a bot's game stream sends
the same ``ServerMessage``s); the lobby's socket (``/api/lobby/ws``) sends
``LobbyMessage``s and takes ``{"type": "ping"}``; a bot's event stream
(``/api/bot/stream/event``) sends ``BotEvent``s.
Client messages are parsed by ``server/online.py``'s ``parse_message``
(one-line reasons naming the field); the models here are their documented
shape, checked against the parser by tests/server/test_wire.py.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import ConfigDict, Field, TypeAdapter, ValidationError

from .base import Wire
from .game import Delivery, GameState, Presence
from .lobby import LobbyState

#: A client's reference, echoed in the answer (an integer within a JSON
#: number's exact range, or a short string).
Ref = Annotated[int, Field(gt=-(2**53), lt=2**53)] | Annotated[str, Field(max_length=64)]


# -- server to client, a game's socket ------------------------------------------------


class Welcome(Wire):
    """The answer to ``hello``: who the connection reads as."""

    type: Literal["welcome"]
    seat: int = Field(description="the seat, or -1 for a spectator")
    role: Literal["player", "spectator"]
    game: str


class StateMessage(Wire):
    """The game as this reader sees it, after every change."""

    type: Literal["state"]
    state: GameState


class PresenceMessage(Wire):
    """Who is connected, when a reader comes or goes."""

    type: Literal["presence"]
    presence: Presence


class Ack(Wire):
    """An action was taken; the state with ``version`` follows."""

    type: Literal["ack"]
    ref: Ref | None = None
    version: int


class PreviewMessage(Wire):
    """What a move would seal and score (the answer to ``preview``)."""

    type: Literal["preview"]
    ref: Ref | None = None
    move: str
    deliveries: list[Delivery]
    scores: list[int]


class ErrorMessage(Wire):
    """An action was refused, in one line naming the rule or field."""

    type: Literal["error"]
    reason: str
    ref: Ref | None = None


class Pong(Wire):
    type: Literal["pong"]
    ref: Ref | None = None


ServerMessage = Annotated[
    Welcome | StateMessage | PresenceMessage | Ack | PreviewMessage | ErrorMessage | Pong,
    Field(discriminator="type"),
]


# -- server to client, the lobby's socket ----------------------------------------------


class LobbyUpdate(Wire):
    """The lobby as ``GET /api/lobby`` gives it, whenever it changes (at
    most about once a second)."""

    type: Literal["lobby"]
    lobby: LobbyState


class LobbyPong(Wire):
    type: Literal["pong"]


LobbyMessage = Annotated[LobbyUpdate | LobbyPong, Field(discriminator="type")]


# -- server to a bot, the Bot API's event stream (docs/bots.md) -----------------------


class Challenger(Wire):
    name: str
    bot: bool


class Challenge(Wire):
    """A challenge to a bot, or the answer to the bot's own."""

    id: str
    challenger: Challenger
    dest: str = Field(description="the bot challenged")
    rules: dict[str, str | bool]
    rules_key: str
    players: int
    clock: dict[str, float] = Field(description="{minutes, increment}")
    rated: bool
    status: str = Field(description="created, accepted, declined or expired")
    reason: str | None
    game: str | None = Field(description="the game, once accepted")


class BotGame(Wire):
    id: str
    seat: int = Field(description="the bot's seat")
    rules_key: str
    rated: bool


class FinishedBotGame(BotGame):
    finished: Literal[True]


class ChallengeEvent(Wire):
    type: Literal["challenge", "challengeDeclined"]
    challenge: Challenge


class GameStart(Wire):
    type: Literal["gameStart"]
    game: BotGame


class GameFinish(Wire):
    type: Literal["gameFinish"]
    game: FinishedBotGame


class StreamError(Wire):
    type: Literal["error"]
    reason: str


BotEvent = Annotated[
    ChallengeEvent | GameStart | GameFinish | StreamError, Field(discriminator="type")
]


# -- client to server, a game's socket -------------------------------------------------


class ClientWire(Wire):
    """A client's message: fields other than those named are ignored (as
    ``parse_message`` does), the named ones checked strictly."""

    model_config = ConfigDict(extra="ignore", strict=True)


Version = Annotated[int, Field(ge=0, lt=2**31, description="the state version acted on")]


class Hello(ClientWire):
    """First, within 10 seconds: the seat's or the spectators' token."""

    type: Literal["hello"]
    token: Annotated[str, Field(min_length=1, max_length=200)]
    ref: Ref | None = None


class MoveMessage(ClientWire):
    type: Literal["move"]
    move: Annotated[str, Field(min_length=1, max_length=40, description="in notation")]
    version: Version
    ref: Ref | None = None


class PreviewRequest(ClientWire):
    type: Literal["preview"]
    move: Annotated[str, Field(min_length=1, max_length=40)]
    ref: Ref | None = None


class TakebackRequest(ClientWire):
    """Ask to take the last move back (a game that allows takebacks)."""

    type: Literal["takeback"]
    version: Version
    ref: Ref | None = None


class TakebackAnswer(ClientWire):
    type: Literal["answer"]
    accept: bool
    version: Version
    ref: Ref | None = None


class Resign(ClientWire):
    type: Literal["resign"]
    version: Version
    ref: Ref | None = None


class Sync(ClientWire):
    """Ask for the state again."""

    type: Literal["sync"]
    ref: Ref | None = None


class Ping(ClientWire):
    type: Literal["ping"]
    ref: Ref | None = None


ClientMessage = Annotated[
    Hello | MoveMessage | PreviewRequest | TakebackRequest | TakebackAnswer | Resign | Sync | Ping,
    Field(discriminator="type"),
]

SERVER_MESSAGE: TypeAdapter[Any] = TypeAdapter(ServerMessage)
LOBBY_MESSAGE: TypeAdapter[Any] = TypeAdapter(LobbyMessage)
BOT_EVENT: TypeAdapter[Any] = TypeAdapter(BotEvent)
CLIENT_MESSAGE: TypeAdapter[Any] = TypeAdapter(ClientMessage)


class WireError(ValueError):
    """An outgoing message that its model does not allow (a server bug)."""


def _check(adapter: TypeAdapter[Any], message: dict[str, Any]) -> None:
    try:
        adapter.validate_python(message, by_alias=True)
    except ValidationError as err:
        first = err.errors()[0]
        where = ".".join(str(p) for p in first["loc"])
        raise WireError(
            f"outgoing {message.get('type')!r} message: {where}: {first['msg']}"
        ) from None


def check_server_message(message: dict[str, Any]) -> None:
    """WireError if a game socket's message does not match its model."""
    _check(SERVER_MESSAGE, message)


def check_lobby_message(message: dict[str, Any]) -> None:
    _check(LOBBY_MESSAGE, message)


def check_bot_event(message: dict[str, Any]) -> None:
    """WireError if a line of a bot's event stream does not match its model."""
    _check(BOT_EVENT, message)


def schemas() -> dict[str, Any]:
    """The JSON Schemas of the three message unions and the models they
    use, for the OpenAPI document's components."""
    ref = "#/components/schemas/{model}"
    out: dict[str, Any] = {}
    for name, adapter in (
        ("ServerMessage", SERVER_MESSAGE),
        ("ClientMessage", CLIENT_MESSAGE),
        ("LobbyMessage", LOBBY_MESSAGE),
        ("BotEvent", BOT_EVENT),
    ):
        schema = adapter.json_schema(ref_template=ref)
        out.update(schema.pop("$defs", {}))
        out[name] = schema
    return out
