"""The analysis of a finished local game over HTTP (routes/analysis.py)."""

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
    "points_lost",
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
        assert m["drop"] == 0 and m["points_lost"] == 0 and m["mark"] is None
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


def _wait_done(client: TestClient, game_id: str) -> dict[str, Any]:
    for _ in range(600):
        doc = client.get(f"/api/games/{game_id}/analysis").json()
        if doc["state"] == "done":
            return doc  # type: ignore[no-any-return]
        time.sleep(0.05)
    raise AssertionError("the analysis never finished")


def test_one_analysis_per_game_and_one_running_per_owner(client: TestClient) -> None:
    """An owner's second game waits (``queued``) while its first runs, even
    with a place free on the server; it starts when the first is done.  A
    fourth waits for none: 429 (PER_CLIENT = 3 running or waiting)."""
    a, b, c, d = (_import(client, "deadlock.json")["id"] for _ in range(4))
    assert client.post(f"/api/games/{a}/analysis", json={"seconds": 0.2}).status_code == 202
    again = client.post(f"/api/games/{a}/analysis", json={"seconds": 0.2})
    assert again.status_code == 202 and again.json()["state"] in ("running", "done")
    r = client.post(f"/api/games/{b}/analysis", json={"seconds": 0.05})
    assert r.status_code == 202
    assert r.json() == {"state": "queued", "ahead": 0, "done": 0, "total": 10}
    r = client.post(f"/api/games/{c}/analysis", json={"seconds": 0.05})
    assert r.json() == {"state": "queued", "ahead": 1, "done": 0, "total": 10}
    r = client.post(f"/api/games/{d}/analysis", json={"seconds": 0.05})
    assert r.status_code == 429 and r.json()["detail"].startswith("analysis: at most 3")
    running = [
        client.get(f"/api/games/{g}/analysis").json()["state"] == "running" for g in (a, b, c)
    ]
    assert running.count(True) <= 1
    for g in (a, b, c):
        assert len(_wait_done(client, g)["moves"]) == 10


def _job(game_id: str, owner: str, address: str, asked: float) -> Any:
    from donutbox.server.routes.analysis import Job

    return Job(game_id, owner, address, None, 0.1, 10, asked)  # type: ignore[arg-type]


def test_the_queue_serves_clients_in_turn() -> None:
    """Two places; ann (owner a, address 1) asked for three, then bob (b,
    2), then cy (c, 3).  ann's first and bob's start; when ann's ends,
    cy's (never served) goes before ann's second, though asked later.  A
    new owner token from ann's address waits like ann (one running per
    address too)."""
    from donutbox.server.routes.analysis import Analyses

    q = Analyses()
    for job in (
        _job("a1", "a", "1", 1.0),
        _job("a2", "a", "1", 2.0),
        _job("a3", "a", "1", 3.0),
        _job("b1", "b", "2", 4.0),
        _job("c1", "c", "3", 5.0),
        _job("x1", "x", "1", 6.0),
    ):
        q.waiting[job.game_id] = job
    started = []
    while (job := q.next_job()) is not None:
        q.begin(job)
        started.append(job.game_id)
    assert started == ["a1", "b1"]
    assert [q.ahead(g) for g in ("c1", "a2", "a3", "x1")] == [0, 1, 2, 3]
    del q.jobs["a1"]
    assert q.next_job() is q.waiting["c1"]
    q.begin(q.waiting["c1"])
    assert q.next_job() is None  # two running: b1, c1
    del q.jobs["b1"]
    assert q.next_job() is q.waiting["a2"]  # ann's turn again: her address is free
