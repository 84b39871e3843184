"""The analysis of a finished local game over HTTP (routes_analysis.py)."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("fastapi")
from fastapi.testclient import TestClient

from donutbox.server.app import create_app

DATA = Path(__file__).resolve().parents[1] / "data"
OWNER = "analysis-owner-token-0123456789abcdefghijkl"
AUTH = {"Authorization": f"Bearer {OWNER}"}
MOVE_KEYS = {
    "ply",
    "player",
    "move",
    "before",
    "after",
    "best",
    "best_value",
    "drop",
    "mark",
    "choices",
    "iterations",
}


@pytest.fixture
def client(tmp_path: Path):  # type: ignore[no-untyped-def]
    with TestClient(
        create_app(f"sqlite:///{tmp_path / 'g.db'}", inline_ai=True), headers=AUTH
    ) as c:
        yield c


def _import(client: TestClient, name: str) -> dict[str, Any]:
    record = json.loads((DATA / name).read_text())
    r = client.post("/api/games/import", json=record)
    assert r.status_code == 200, r.text
    return r.json()  # type: ignore[no-any-return]


def test_analyse_a_finished_game(client: TestClient) -> None:
    # deadlock.json: ten swaps of BBBB (the only move each time), then over.
    game = _import(client, "deadlock.json")
    assert game["finished"]
    url = f"/api/games/{game['id']}/analysis"
    assert client.get(url).json() == {"state": "none", "done": 0, "total": 10}
    r = client.post(url, json={"seconds": 0.05})
    assert r.status_code == 202, r.text
    assert r.json() == {"state": "running", "done": 0, "total": 10}
    for _ in range(400):
        doc = client.get(url).json()
        if doc["state"] == "done":
            break
        assert doc["state"] == "running" and doc["total"] == 10 and 0 <= doc["done"] <= 10
        time.sleep(0.05)
    else:
        raise AssertionError("the analysis never finished")
    assert doc["players"] == ["A", "B"] and doc["finished"] is True
    assert doc["budget"]["seconds"] == 0.05
    assert len(doc["moves"]) == 10
    for ply, m in enumerate(doc["moves"]):
        assert set(m) == MOVE_KEYS
        assert m["ply"] == ply and m["player"] == ply % 2
        # one legal move: the move played is the best, nothing lost
        assert m["move"] == m["best"] == "swap BBBB" and m["choices"] == 1
        assert m["drop"] == 0 and m["mark"] is None
        assert 0.0 <= m["after"] <= 1.0
    assert [s["moves"] for s in doc["summary"]] == [5, 5]
    # asked again: already done, nothing started
    r = client.post(url, json={"seconds": 0.05})
    assert r.status_code == 202 and r.json()["state"] == "done"


def test_no_bearer_no_game(client: TestClient) -> None:
    game = _import(client, "deadlock.json")
    url = f"/api/games/{game['id']}/analysis"
    other = {"Authorization": "Bearer " + "x" * 43}
    assert client.post(url, headers={"Authorization": ""}).status_code == 404
    assert client.post(url, headers=other).status_code == 404
    assert client.get(url, headers=other).status_code == 404
    assert client.get(url).json()["state"] == "none"  # nothing was started


def test_unfinished_game_and_bad_seconds_are_refused(client: TestClient) -> None:
    game = _import(client, "deadlock-not-yet.json")
    assert not game["finished"]
    url = f"/api/games/{game['id']}/analysis"
    r = client.post(url)
    assert r.status_code == 409 and "over" in r.json()["detail"]
    done = _import(client, "deadlock.json")
    url = f"/api/games/{done['id']}/analysis"
    for bad in (2, 0.01, "1", True):
        r = client.post(url, json={"seconds": bad})
        assert r.status_code == 422 and r.json()["detail"].startswith("seconds"), r.text
    r = client.post(url, json={"depth": 3})
    assert r.status_code == 422 and "seconds" in r.json()["detail"]
    assert client.get(url).json()["state"] == "none"


def test_one_analysis_per_game_and_a_cap_on_the_server(
    client: TestClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    from donutbox.server import routes_analysis

    monkeypatch.setattr(routes_analysis, "MAX_RUNNING", 1)
    a = _import(client, "deadlock.json")["id"]
    b = _import(client, "deadlock.json")["id"]
    assert client.post(f"/api/games/{a}/analysis", json={"seconds": 0.2}).status_code == 202
    again = client.post(f"/api/games/{a}/analysis", json={"seconds": 0.2})
    assert again.status_code == 202 and again.json()["state"] in ("running", "done")
    r = client.post(f"/api/games/{b}/analysis", json={"seconds": 0.05})
    assert r.status_code == 429 and r.json()["detail"].startswith("analysis:")
    for _ in range(400):
        if client.get(f"/api/games/{a}/analysis").json()["state"] == "done":
            break
        time.sleep(0.05)
    assert client.post(f"/api/games/{b}/analysis", json={"seconds": 0.05}).status_code == 202
