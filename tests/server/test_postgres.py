"""Storage on a real PostgreSQL server, when one is given.

DONUTBOX_TEST_PG_URL names the server; unset, the test run starts a throwaway
one when PostgreSQL is installed (tests/throwaway_servers.py); without either
these tests are skipped with that reason.
"""

from __future__ import annotations

import os

import pytest

URL = os.environ.get("DONUTBOX_TEST_PG_URL")
if not URL:
    pytest.skip(
        "no PostgreSQL server: apt-get install postgresql (the test run then starts one)"
        " or set DONUTBOX_TEST_PG_URL",
        allow_module_level=True,
    )
pytest.importorskip("psycopg")
from fastapi.testclient import TestClient  # noqa: E402

from donutbox.server.app import create_app  # noqa: E402
from donutbox.server.storage import StaleVersion, Store, make_engine  # noqa: E402


def test_a_game_round_trips_through_postgresql() -> None:
    assert URL is not None
    with TestClient(create_app(URL, inline_ai=True)) as c:
        state = c.post("/api/games", json={"opponent": "hotseat", "seed": 31}).json()
        owner = {"Authorization": f"Bearer {state['owner_token']}"}
        r = c.post(
            f"/api/games/{state['id']}/moves",
            json={"move": state["legal"][0], "version": 0},
            headers=owner,
        )
        assert r.status_code == 200
    with TestClient(create_app(URL, inline_ai=True)) as c:
        again = c.get(f"/api/games/{state['id']}", headers=owner).json()
        assert again["version"] == 1 and again["history"] == [state["legal"][0]]


def test_versioned_saves_refuse_a_stale_writer() -> None:
    assert URL is not None
    engine = make_engine(URL)
    store = Store(engine)
    try:
        record = {"format": "donutbox/1", "players": ["A", "B"], "start": "CCSS", "moves": []}
        game = store.create("pg", "hotseat", ["human", "human"], {}, record)
        assert store.save(game.id, 0, record, False) == 1
        with pytest.raises(StaleVersion):
            store.save(game.id, 0, record, False)
        assert store.delete(game.id)
    finally:
        store.close()
        engine.dispose()  # else its connection is left open (a ResourceWarning)


def test_an_online_game_with_a_clock_survives_a_restart_on_postgresql() -> None:
    assert URL is not None
    body = {"seats": [{"name": "A"}, {"name": "B"}], "clock": {"minutes": 5}}
    with TestClient(create_app(URL, inline_ai=True)) as c:
        g = c.post("/api/online", json=body).json()
        auth = {"Authorization": f"Bearer {g['seats'][0]['token']}"}
        legal = c.get(f"/api/online/{g['id']}", headers=auth).json()["legal"]
        r = c.post(
            f"/api/online/{g['id']}/moves", json={"move": legal[0], "version": 0}, headers=auth
        )
        assert r.status_code == 200
    with TestClient(create_app(URL, inline_ai=True)) as c:
        again = c.get(f"/api/online/{g['id']}", headers=auth).json()
        assert again["version"] == 1 and again["history"] == [legal[0]]
        # Seat 0 moved before the clocks ran (not every seat had joined):
        # 5 minutes plus the default 15-second increment is not charged yet.
        assert again["clock"]["remaining_ms"] == [300_000, 300_000]
        assert c.get(f"/api/games/{g['id']}", headers=auth).status_code == 404
