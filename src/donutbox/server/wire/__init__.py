"""The wire format: every payload the server sends a client, as Pydantic
models (docs/online.md, "Payloads").

The models are the documented contract of the JSON the page's scripts, the
terminal client and other programs read: the HTTP routes declare them as
response models (so ``/docs`` and ``/openapi.json`` show them, and a field
a model lacks never leaves through HTTP), and the WebSocket messages are
listed in the OpenAPI document's components (``ServerMessage``,
``ClientMessage``, ``LobbyMessage``, ``BotEvent``).

Outgoing WebSocket messages are built as plain dicts and encoded with
orjson on the hot path (a state goes to every reader on every move);
building each through its model would cost more than the move itself.
With ``DONUTBOX_CHECK_WIRE=1`` (the test suite sets it) every outgoing
message is validated against its model first, so a field a model lacks, or
a value of the wrong type, fails the test that sent it.
"""

from __future__ import annotations

import os
from typing import Any

from .game import (
    Cell,
    ClockView,
    Delivery,
    ForfeitEntry,
    GameState,
    OpenBox,
    Presence,
    Preview,
    ReplayFrame,
    ReplayState,
    TakebackOffer,
    ViewState,
)
from .lobby import LobbyGame, LobbyInvite, LobbyQueued, LobbyState, LobbyTable
from .messages import (
    CLIENT_MESSAGE,
    LOBBY_MESSAGE,
    SERVER_MESSAGE,
    WireError,
    check_bot_event,
    check_lobby_message,
    check_server_message,
    schemas,
)

#: Validate every outgoing WebSocket message against its model (tests).
CHECKING = os.environ.get("DONUTBOX_CHECK_WIRE", "") == "1"

#: The route options of every route answering with a game's state: only
#: the fields the state has (a local game's has no online fields).
STATE: dict[str, Any] = {"response_model": GameState, "response_model_exclude_unset": True}

__all__ = [
    "CHECKING",
    "CLIENT_MESSAGE",
    "LOBBY_MESSAGE",
    "SERVER_MESSAGE",
    "STATE",
    "Cell",
    "ClockView",
    "Delivery",
    "ForfeitEntry",
    "GameState",
    "LobbyGame",
    "LobbyInvite",
    "LobbyQueued",
    "LobbyState",
    "LobbyTable",
    "OpenBox",
    "Presence",
    "Preview",
    "ReplayFrame",
    "ReplayState",
    "TakebackOffer",
    "ViewState",
    "WireError",
    "check_bot_event",
    "check_lobby_message",
    "check_server_message",
    "schemas",
]
