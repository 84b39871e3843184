"""Play it out (issue 33, the review): a finished game's position after any
move as a new game against the AI, for the game's owner only."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("fastapi")
from fastapi.testclient import TestClient

import donutbox
from donutbox.core import dump
from donutbox.server.app import create_app

OWNER = "play-out-owner-token-0123456789abcdefghijklm"
AUTH = {"Authorization": f"Bearer {OWNER}"}


def _contested() -> dict[str, Any]:
    """tests/browser/conftest.py's contested box: 14 moves; after move 2
    player 0 may box a 12-point run (box@3,0) or swap."""
    decks = [
        ["BCRC", "HHHH", "HHHH", "HHHH", "BBBB", "HHHH", "HHHH"],
        ["CCCB", "HHHH", "HHHH", "HHHH", "HHHH", "HHHH"],
    ]
    game = donutbox.Game.deal(decks)
    for move in ["BCRC@2,0/0=C", "CCCB@2,2/0", "swap HHHH", "box@3,0"] + ["swap HHHH"] * 10:
        game.play(move)
    assert game.finished
    return dump(game)  # type: ignore[no-any-return]


@pytest.fixture
def client(tmp_path: Path):  # type: ignore[no-untyped-def]
    with TestClient(
        create_app(f"sqlite:///{tmp_path / 'g.db'}", inline_ai=True), headers=AUTH
    ) as c:
        yield c


def test_play_out_a_position_against_the_ai(client: TestClient) -> None:
    done = client.post("/api/games/import", json=_contested()).json()
    r = client.post(f"/api/games/{done['id']}/play-out", json={"ply": 2, "opponent": "random"})
    assert r.status_code == 200, r.text
    s = r.json()
    assert s["id"] != done["id"] and s["owner_token"] == OWNER
    # The position after two moves: player 0 to move, played by the owner,
    # with the box or a swap to choose (worked out in the docstring).
    assert s["history"] == ["BCRC@2,0/0=C", "CCCB@2,2/0"]
    assert s["to_move"] == 0 and s["player"] == 0 and not s["finished"]
    assert s["seats"] == ["human", "random"]
    assert sorted(s["legal"]) == ["box@3,0", "swap HHHH"]
    assert s["practice"] is True
    # Boxing it now: 12 points, and the AI answers.
    moved = client.post(
        f"/api/games/{s['id']}/moves", json={"move": "box@3,0", "version": s["version"]}
    )
    assert moved.status_code == 200, moved.text
    assert moved.json()["scores"][0] == 12
    # The finished game is unchanged.
    again = client.get(f"/api/games/{done['id']}").json()
    assert again["finished"] and len(again["history"]) == 14


def test_play_out_is_the_owners_and_only_of_a_finished_game(client: TestClient) -> None:
    done = client.post("/api/games/import", json=_contested()).json()
    url = f"/api/games/{done['id']}/play-out"
    stranger = {"Authorization": "Bearer " + "s" * 40}
    assert client.post(url, json={"ply": 2}, headers=stranger).status_code == 404
    r = client.post(url, json={"ply": 14})
    assert r.status_code == 422 and "ply must be from 0 to 13" in r.text
    assert client.post(url, json={"ply": -1}).status_code == 422
    r = client.post(url, json={"ply": 2, "opponent": "nobody"})
    assert r.status_code == 422 and "opponent" in r.text
    running = client.post("/api/games", json={"opponent": "random"}).json()
    r = client.post(f"/api/games/{running['id']}/play-out", json={"ply": 0})
    assert r.status_code == 403 and "once it is over" in r.text
