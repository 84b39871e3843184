"""DELETE /api/games/{id}: a local game's owner deletes it; anyone else is
told "no such game" and nothing changes."""

from __future__ import annotations

from pathlib import Path

from fastapi.testclient import TestClient

from donutbox.server.app import create_app

OWNER = "delete-owner-token-0123456789abcdefghijklmn"
OTHER = "delete-other-token-0123456789abcdefghijklmn"


def _auth(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def test_the_owner_deletes_a_game_and_nobody_else_can(tmp_path: Path) -> None:
    with TestClient(create_app(f"sqlite:///{tmp_path / 'g.db'}", inline_ai=True)) as c:
        made = c.post("/api/games", json={"opponent": "hotseat"}, headers=_auth(OWNER))
        assert made.status_code == 200
        gid = made.json()["id"]
        # Without the bearer, or with another: 404, and the game stays.
        assert c.delete(f"/api/games/{gid}").status_code == 404
        refused = c.delete(f"/api/games/{gid}", headers=_auth(OTHER))
        assert refused.status_code == 404
        assert refused.json()["detail"] == "no such game"
        assert [g["id"] for g in c.get("/api/games", headers=_auth(OWNER)).json()] == [gid]
        # The owner: 204, then it is gone for them too.
        gone = c.delete(f"/api/games/{gid}", headers=_auth(OWNER))
        assert gone.status_code == 204
        assert gone.content == b""
        assert c.get("/api/games", headers=_auth(OWNER)).json() == []
        assert c.get(f"/api/games/{gid}", headers=_auth(OWNER)).status_code == 404
        assert c.delete(f"/api/games/{gid}", headers=_auth(OWNER)).status_code == 404
        # An unknown id: the same answer.
        assert c.delete("/api/games/nope", headers=_auth(OWNER)).status_code == 404


def test_an_online_game_is_not_deleted_through_the_local_route(tmp_path: Path) -> None:
    with TestClient(create_app(f"sqlite:///{tmp_path / 'g.db'}", inline_ai=True)) as c:
        made = c.post(
            "/api/online",
            json={"seats": [{"kind": "human", "name": "A"}, {"kind": "human", "name": "B"}]},
        )
        assert made.status_code == 200, made.text
        body = made.json()
        seat = body["seats"][0]["token"]
        assert c.delete(f"/api/games/{body['id']}", headers=_auth(seat)).status_code == 404
        assert c.get(f"/api/online/{body['id']}", headers=_auth(seat)).status_code == 200
