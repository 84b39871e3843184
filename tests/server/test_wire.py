"""The wire format (server/wire): the documented models of the state, the
lobby and the WebSocket messages; strict booleans; an undocumented field
never leaves the server."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("fastapi")
from community_helpers import running_app, signed_up
from fastapi.testclient import TestClient

from donutbox.server import fanout, wire
from donutbox.server.app import create_app
from donutbox.server.online import BadMessage, parse_message
from donutbox.server.session import GameSession


@pytest.fixture
def client(tmp_path: Path):  # type: ignore[no-untyped-def]
    with TestClient(create_app(f"sqlite:///{tmp_path / 'games.db'}", inline_ai=True)) as c:
        yield c


def _games(client: TestClient, token: str) -> int:
    return len(client.get("/api/games", headers={"Authorization": f"Bearer {token}"}).json())


def _schema_ref(doc: dict[str, Any], path: str, method: str) -> Any:
    answer = doc["paths"][path][method]["responses"]["200"]["content"]["application/json"]
    return answer["schema"]


def test_openapi_documents_the_state_the_lobby_and_the_messages(client: TestClient) -> None:
    doc = client.get("/openapi.json").json()
    state = {"$ref": "#/components/schemas/GameState"}
    for path, method in (
        ("/api/games", "post"),
        ("/api/games/{game_id}", "get"),
        ("/api/games/{game_id}/moves", "post"),
        ("/api/games/{game_id}/undo", "post"),
        ("/api/games/import", "post"),
        ("/api/online/{game_id}", "get"),
        ("/api/online/{game_id}/moves", "post"),
        ("/api/online/{game_id}/resign", "post"),
    ):
        assert _schema_ref(doc, path, method) == state, path
    assert _schema_ref(doc, "/api/lobby", "get") == {"$ref": "#/components/schemas/LobbyState"}
    assert _schema_ref(doc, "/api/games/{game_id}/replay/{ply}", "get") == {
        "$ref": "#/components/schemas/ReplayFrame"
    }
    schemas = doc["components"]["schemas"]
    # The three socket unions, each naming its message types.
    kinds = {
        name: sorted(schemas[name]["discriminator"]["mapping"])
        for name in ("ServerMessage", "ClientMessage", "LobbyMessage", "BotEvent")
    }
    assert kinds == {
        "ServerMessage": ["ack", "error", "pong", "presence", "preview", "state", "welcome"],
        "ClientMessage": [
            *("answer", "hello", "move", "ping", "preview", "resign", "sync", "takeback"),
        ],
        "LobbyMessage": ["lobby", "pong"],
        "BotEvent": ["challenge", "challengeDeclined", "error", "gameFinish", "gameStart"],
    }
    # The state holds the reader's own tray and the sizes of the others'
    # trays and piles: no field for another player's tray or a pile's order.
    fields = set(schemas["GameState"]["properties"])
    assert {"tray", "tray_sizes", "pile_sizes", "unseen", "cells", "legal", "version"} <= fields
    assert not fields & {"trays", "piles", "deck", "decks", "seed"}
    assert schemas["GameState"]["additionalProperties"] is False


def test_booleans_are_strict_and_a_refusal_changes_nothing(client: TestClient) -> None:
    made = client.post("/api/games", json={"opponent": "hotseat"}).json()
    token = made["owner_token"]
    auth = {"Authorization": f"Bearer {token}"}
    for value in ("yes", "true", 1, 0, None):
        r = client.post("/api/games", json={"opponent": "hotseat", "closers": value}, headers=auth)
        assert r.status_code == 422, value
        assert r.json()["detail"].startswith("closers: "), r.json()
    assert _games(client, token) == 1
    ok = client.post("/api/games", json={"opponent": "hotseat", "closers": True}, headers=auth)
    assert ok.status_code == 200 and ok.json()["rules"]["closers"] is True
    r = client.post("/api/online", json={"seats": [{}, {}], "takebacks": "no"})
    assert r.status_code == 422 and r.json()["detail"].startswith("takebacks: ")


def test_lobby_booleans_are_strict(tmp_path: Path) -> None:
    with running_app(f"sqlite:///{tmp_path / 'c.db'}") as app:
        (ann,) = signed_up(app, "ann")
        for field in ("rated", "takebacks"):
            r = ann.post("/api/lobby/tables", {"players": 2, field: "false"})
            assert r.status_code == 422 and r.json()["detail"].startswith(f"{field}: ")
        assert ann.get("/api/lobby").json()["tables"] == []


def test_a_local_state_has_no_online_fields(client: TestClient) -> None:
    state = client.post("/api/games", json={"opponent": "hotseat"}).json()
    online = {"clock", "takebacks_on", "rated", "forfeits", "takeback", "presence"}
    assert not online & set(state)
    assert state["owner_token"]


def test_an_undocumented_field_fails_the_check(
    client: TestClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    made = client.post("/api/games", json={"opponent": "hotseat"}).json()
    auth = {"Authorization": f"Bearer {made['owner_token']}"}
    state = client.get(f"/api/games/{made['id']}", headers=auth).json()
    wire.check_server_message({"type": "state", "state": state})
    leaked = dict(state, trays=[["CCBB"], ["SSHH"]])
    with pytest.raises(wire.WireError, match=r"state\.trays"):
        wire.check_server_message({"type": "state", "state": leaked})
    with pytest.raises(wire.WireError, match=r"state\.version"):
        wire.check_server_message({"type": "state", "state": dict(state, version="1")})
    wire.check_server_message({"type": "ack", "version": 1, "ref": 3})
    with pytest.raises(wire.WireError, match="flavour_name"):
        wire.check_server_message({"type": "ack", "version": 1, "flavour_name": "C"})
    # The game sockets' encoder checks when DONUTBOX_CHECK_WIRE=1 (the suite
    # sets it), and only then: production encodes without the check.
    monkeypatch.setattr(wire, "CHECKING", True)
    with pytest.raises(wire.WireError):
        fanout.encode({"type": "state", "state": leaked})
    monkeypatch.setattr(wire, "CHECKING", False)
    assert json.loads(fanout.encode({"type": "state", "state": leaked}))["state"]["trays"]


def test_http_never_sends_an_undocumented_field(
    client: TestClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    made = client.post("/api/games", json={"opponent": "hotseat"}).json()
    auth = {"Authorization": f"Bearer {made['owner_token']}"}
    real = GameSession.state

    def leaky(self: GameSession, seat: int | None = None) -> dict[str, Any]:
        return dict(real(self, seat), trays=["a secret"])

    monkeypatch.setattr(GameSession, "state", leaky)
    r = client.get(f"/api/games/{made['id']}", headers=auth)
    assert r.status_code == 500
    assert r.json() == {"detail": "server: the answer did not match its documented shape"}
    assert "secret" not in r.text


# Client messages: (message, accepted) worked out from docs/online.md.
CLIENT_CASES: list[tuple[dict[str, Any], bool]] = [
    ({"type": "hello", "token": "abc"}, True),
    ({"type": "hello", "token": ""}, False),
    ({"type": "hello", "token": "x" * 201}, False),
    ({"type": "move", "move": "CCBB@0,-2/90", "version": 3, "ref": 1}, True),
    ({"type": "move", "move": "CCBB@0,-2/90", "version": "3"}, False),
    ({"type": "move", "move": "CCBB@0,-2/90", "version": True}, False),
    ({"type": "move", "move": "CCBB@0,-2/90", "version": -1}, False),
    ({"type": "move", "move": "CCBB@0,-2/90", "version": 2**31}, False),
    ({"type": "move", "version": 3}, False),
    ({"type": "preview", "move": "pass"}, True),
    ({"type": "takeback", "version": 0}, True),
    ({"type": "answer", "accept": True, "version": 4}, True),
    ({"type": "answer", "accept": "yes", "version": 4}, False),
    ({"type": "answer", "accept": 1, "version": 4}, False),
    ({"type": "resign", "version": 9}, True),
    ({"type": "resign"}, False),
    ({"type": "sync"}, True),
    ({"type": "ping", "ref": "r" * 64}, True),
    ({"type": "ping", "ref": "r" * 65}, False),
    ({"type": "ping", "ref": 2**53}, False),
    ({"type": "ping", "ref": True}, False),
    ({"type": "ping", "something": "else"}, True),
    ({"type": "dance"}, False),
    ({"kind": "ping"}, False),
]


@pytest.mark.parametrize(("message", "accepted"), CLIENT_CASES)
def test_client_message_models_agree_with_the_parser(
    message: dict[str, Any], accepted: bool
) -> None:
    try:
        parse_message(json.dumps(message))
        parsed = True
    except BadMessage:
        parsed = False
    try:
        wire.CLIENT_MESSAGE.validate_python(message)
        modelled = True
    except ValueError:
        modelled = False
    assert (parsed, modelled) == (accepted, accepted)
