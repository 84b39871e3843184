"""Fuzzing the online inputs with hypothesis: WebSocket messages and HTTP
bodies, random and nearly valid.  No input crashes the server (no 500, the
socket answers), and a refused input changes nothing."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("fastapi")
from fastapi.testclient import TestClient
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from starlette.websockets import WebSocketDisconnect

from donutbox.server.app import create_app
from donutbox.server.online import MESSAGE_TYPES

JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=30),
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=12,
)
MOVE_TEXT = st.one_of(
    st.text(max_size=45),
    st.from_regex(r"[CSHBR]{4}@-?[0-9]{1,3},-?[0-9]{1,3}/[0-9]{1,3}(=[CSHB])?", fullmatch=True),
    st.sampled_from(["swap CCSS", "pass", "box 0,0", "box", "", "CCSS@0,1/0"]),
)
FIELDS = {
    "type": st.sampled_from(MESSAGE_TYPES) | st.text(max_size=10),
    "move": MOVE_TEXT | JSON,
    "version": st.integers(-3, 3) | JSON,
    "accept": st.booleans() | JSON,
    "token": st.text(max_size=40) | JSON,
    "ref": st.integers() | st.text(max_size=80) | JSON,
}
NEAR_VALID = st.fixed_dictionaries(
    {"type": FIELDS["type"]},
    optional={k: v for k, v in FIELDS.items() if k != "type"},
).map(json.dumps)
MESSAGES = st.one_of(NEAR_VALID, JSON.map(json.dumps), st.text(max_size=200))
SETTINGS = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def _auth(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def test_websocket_messages_never_crash_and_refusals_change_nothing(tmp_path: Path) -> None:
    with TestClient(create_app(f"sqlite:///{tmp_path / 'g.db'}", inline_ai=True)) as client:
        g = client.post("/api/online", json={"seats": [{"name": "A"}, {"name": "B"}]}).json()
        token = g["seats"][0]["token"]
        url = f"/api/online/{g['id']}/ws"

        def snapshot() -> dict[str, Any]:
            return client.get(f"/api/online/{g['id']}", headers=_auth(token)).json()

        @SETTINGS
        @given(text=MESSAGES, introduce=st.booleans())
        @example(text=json.dumps({"type": "hello", "token": "not-a-seat"}), introduce=False)
        def check(text: str, introduce: bool) -> None:
            before = snapshot()
            with client.websocket_connect(url) as ws:
                if introduce:
                    ws.send_text(json.dumps({"type": "hello", "token": token}))
                    assert ws.receive_json()["type"] == "welcome"
                ws.send_text(text)
                ws.send_text(json.dumps({"type": "ping", "ref": "end"}))
                replies = []
                while True:  # the socket answers everything, then the ping
                    try:
                        msg = ws.receive_json()
                    except WebSocketDisconnect as closed:
                        # A hello whose token opens nothing is answered with
                        # an error and close 4404 (protocol.CLOSE_NO_GAME),
                        # exactly as for a game that does not exist.
                        assert closed.code == 4404, closed
                        assert '"hello"' in text
                        assert replies and replies[-1]["type"] == "error"
                        break
                    if msg == {"type": "pong", "ref": "end"}:
                        break
                    replies.append(msg)
            after = snapshot()
            kinds = {m["type"] for m in replies}
            if "ack" not in kinds and not ("state" in kinds and '"takeback"' in text):
                # Refused (or harmless): the game is exactly as it was.
                assert after["version"] == before["version"]
                assert after["history"] == before["history"]
            for m in replies:
                if m["type"] == "error":
                    assert m["reason"] and "\n" not in m["reason"]
                    assert "Traceback" not in m["reason"]

        check()


def test_http_bodies_never_crash_and_refusals_change_nothing(tmp_path: Path) -> None:
    with TestClient(
        create_app(f"sqlite:///{tmp_path / 'g.db'}", inline_ai=True),
        raise_server_exceptions=False,
    ) as client:
        g = client.post("/api/online", json={"seats": [{"name": "A"}, {"name": "B"}]}).json()
        token = g["seats"][0]["token"]

        def version() -> int:
            return int(client.get(f"/api/online/{g['id']}", headers=_auth(token)).json()["version"])

        @SETTINGS
        @given(
            path=st.sampled_from(
                [
                    "/api/online",
                    f"/api/online/{g['id']}/moves",
                    "/api/games",
                    "/api/games/import",
                    "/api/games/nope/moves",
                ]
            ),
            body=st.one_of(
                JSON.map(json.dumps),
                st.fixed_dictionaries(
                    {}, optional={"move": MOVE_TEXT | JSON, "version": FIELDS["version"]}
                ).map(json.dumps),
                st.fixed_dictionaries(
                    {},
                    optional={
                        "seats": st.lists(
                            st.fixed_dictionaries(
                                {}, optional={"kind": st.text(max_size=8), "name": JSON}
                            ),
                            max_size=5,
                        )
                        | JSON,
                        "clock": JSON,
                        "players": JSON,
                        "opponent": JSON,
                    },
                ).map(json.dumps),
                st.text(max_size=100),
            ),
            auth=st.sampled_from(["", "Bearer x", f"Bearer {token}", token]),
        )
        def check(path: str, body: str, auth: str) -> None:
            before = version()
            r = client.post(
                path,
                content=body.encode("utf-8", "surrogatepass"),
                headers={"Content-Type": "application/json", "Authorization": auth},
            )
            assert r.status_code < 500, (path, body, r.text)
            if r.status_code >= 400:
                detail = r.json()["detail"]
                assert detail
                assert version() == before

        check()
