"""Ratings: openskill's Plackett-Luce, worked by hand; settled once; AI
and takeback games unrated; the schema migrated on new and old databases."""

from __future__ import annotations

import json
import math
import os
import secrets
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest
from community_helpers import Player, play_to_the_end, running_app
from fastapi.testclient import TestClient
from sqlalchemy import inspect

from donutbox.core import Game, Rules
from donutbox.core.record import dump, load
from donutbox.server.app import create_app
from donutbox.server.ratings.service import CommunitySeatRow, places


@pytest.fixture
def app(tmp_path: Path):  # type: ignore[no-untyped-def]
    with running_app(f"sqlite:///{tmp_path / 'c.db'}") as application:
        yield application


def test_a_two_player_game_worked_by_hand() -> None:
    """Plackett-Luce (Weng & Lin 2011, as openskill computes it), two new
    players (mu = 25, sigma = 25/3, beta = sigma/2 = 25/6, tau = 25/300,
    kappa = 0.0001), A first and B second:

    - tau first: sigma'^2 = (25/3)^2 + (25/300)^2 = 69.444444 + 0.006944
      = 69.451389 for both.
    - c^2 = sum over teams (sigma'^2 + beta^2) = 2 (69.451389 + 17.361111)
      = 173.625000; c = 13.176684.
    - exp(mu/c) is the same for both (equal mu): call it e.
      A (rank 1): q runs over teams ranked at or above A: A only.
        sum_q(A) = e + e (every team ranked at or below A) -> p = 1/2;
        omega_A = (1 - 1/2) / 1 = 1/2; delta_A = (1/2)(1/2) = 1/4.
      B (rank 2): q = A: p = e / 2e = 1/2 -> omega -= 1/2, delta += 1/4;
        q = B: sum_q(B) = e -> p = 1 -> omega += 0, delta += 0.
        omega_B = -1/2; delta_B = 1/4.
    - mu_new = mu + (sigma'^2 / c) omega = 25 +- 0.5 * 69.451389 / 13.176684
      = 25 +- 2.635389 -> A 27.635389, B 22.364611.
    - gamma = sigma' / c = 8.333750 / 13.176684 = 0.632464;
      delta' = gamma (sigma'^2 / c^2) delta = 0.632464 * 0.400008 * 0.25
      = 0.063248; sigma_new = sigma' sqrt(1 - delta')
      = 8.333750 * 0.967859 = 8.065901 for both.
    """
    from donutbox.server.ratings.service import MODEL

    a, b = MODEL.rate([[MODEL.rating()], [MODEL.rating()]], ranks=[1.0, 2.0])
    assert math.isclose(a[0].mu, 27.635389, abs_tol=1e-5)
    assert math.isclose(b[0].mu, 22.364611, abs_tol=1e-5)
    assert math.isclose(a[0].sigma, 8.065901, abs_tol=1e-5)
    assert math.isclose(b[0].sigma, 8.065901, abs_tol=1e-5)


def test_places_follow_score_then_boxes() -> None:
    """By score, then boxes delivered; equal on both share a place (the
    next place counts the players above: 1, 2, 2, 4)."""
    game = Game.new(Rules(), ["a", "b", "c", "d"])
    game._scores = [5, 7, 5, 5]  # type: ignore[attr-defined]
    game._delivered = [1, 0, 1, 0]  # type: ignore[attr-defined]
    assert places(game) == [2, 1, 2, 4]


def _lobby_game(app, takebacks: bool = False, rated: bool = True):  # type: ignore[no-untyped-def]
    ann, bob = Player(app, "ann"), Player(app, "bob")
    for p in (ann, bob):
        if p.sign_in().status_code != 200:
            assert p.sign_up().status_code == 200
    t = ann.post("/api/lobby/tables", {"players": 2, "rated": rated, "takebacks": takebacks}).json()
    game_id = bob.post(f"/api/lobby/tables/{t['id']}/join").json()["game"]
    tokens = [p.get("/api/lobby").json()["games"][0]["token"] for p in (ann, bob)]
    return ann, bob, game_id, tokens


def test_a_rated_game_updates_both_ratings_once_as_worked_by_hand(app) -> None:  # type: ignore[no-untyped-def]
    ann, _bob, game_id, tokens = _lobby_game(app)
    final = play_to_the_end(ann.client, game_id, tokens)
    ratings = app.state.community.ratings
    ratings.settle(game_id)  # (the lobby's ticker may have done it already)
    assert ratings.settle(game_id) is False  # idempotent: once only
    assert ratings.settle_all() == 0
    key = load(app.state.hub.store.get(game_id).record).rules.key()
    a, b = ratings.rating(1, key), ratings.rating(2, key)
    assert a.games == b.games == 1
    place = places(load(app.state.hub.store.get(game_id).record))
    if place[0] == place[1]:
        # A draw (same score, same boxes): by hand as above but with both
        # teams at rank 1, a_q = 2 for both q: for A, q = A gives omega +=
        # (1 - 1/2)/2 = 1/4, delta += 1/8; q = B gives omega -= (1/2)/2,
        # delta += 1/8: omega = 0, delta = 1/4.  mu stays 25, sigma as above.
        assert math.isclose(a.mu, 25.0, abs_tol=1e-9) and math.isclose(b.mu, 25.0, abs_tol=1e-9)
    else:
        # The worked example: the winner 27.635389, the other 22.364611.
        win, lose = (a, b) if place[0] == 1 else (b, a)
        assert math.isclose(win.mu, 27.635389, abs_tol=1e-5)
        assert math.isclose(lose.mu, 22.364611, abs_tol=1e-5)
    assert math.isclose(a.sigma, 8.065901, abs_tol=1e-5)
    assert math.isclose(b.sigma, 8.065901, abs_tol=1e-5)
    assert final["finished"]
    # The history shows the change on the 1500 scale: 400 / (ln 10 sqrt(2)
    # 25/6) = 29.480887 points per unit of mu, so the worked example's
    # +-2.635389 is +-77.69: the winner 1578, the other 1422.
    h = ann.get("/api/players/ann").json()["history"][0]
    assert h["rating"]["before"] == 1500
    if place[0] == place[1]:
        assert h["rating"]["after"] == 1500
    else:
        assert h["rating"]["after"] == (1578 if place[0] == 1 else 1422)
    assert h["rating"]["weight"] == 1.0
    assert math.isclose(h["rating"]["model"]["mu_after"], a.mu, abs_tol=1e-3)


def test_takeback_games_are_unrated(app) -> None:  # type: ignore[no-untyped-def]
    ann, _bob, game_id, tokens = _lobby_game(app, takebacks=True, rated=False)
    play_to_the_end(ann.client, game_id, tokens)
    ratings = app.state.community.ratings
    ratings.settle_all()
    h = ann.get("/api/players/ann").json()["history"][0]
    assert h["finished"] and h["rated"] is False and h["rating"] is None
    key = load(app.state.hub.store.get(game_id).record).rules.key()
    assert ratings.rating(1, key).games == 0


def test_ai_games_are_unrated_even_if_marked_rated(app) -> None:  # type: ignore[no-untyped-def]
    ann = Player(app, "ann")
    ann.sign_up()
    made = ann.client.post(
        "/api/online", json={"seats": [{"name": "ann"}, {"kind": "easy"}]}
    ).json()
    ratings = app.state.community.ratings
    ratings.record_game(made["id"], "ogm-sa", "x", True, [(1, made["seats"][0]["token"])])
    # Play it out: ann moves, the AI answers.
    auth = {"Authorization": f"Bearer {made['seats'][0]['token']}"}
    import time

    for _ in range(2000):
        s = ann.client.get(f"/api/online/{made['id']}", headers=auth).json()
        if s["finished"]:
            break
        if s["legal"]:
            ann.client.post(
                f"/api/online/{made['id']}/moves",
                json={"move": s["legal"][0], "version": s["version"]},
                headers=auth,
            )
        else:
            time.sleep(0.02)
    assert s["finished"]
    ratings.settle(made["id"])  # (or the lobby's ticker did already)
    h = ann.get("/api/players/ann").json()["history"][0]
    assert h["finished"] and h["rated"] is False and h["rating"] is None
    assert ratings.rating(1, "ogm-sa").games == 0


def _old_database(path: Path) -> None:
    """A database as today's code made it before migrations: the games table
    only (the schema storage.py creates), with one game in it."""
    con = sqlite3.connect(path)
    con.execute(
        "CREATE TABLE games (id VARCHAR(32) NOT NULL PRIMARY KEY, created DATETIME NOT NULL,"
        " updated DATETIME NOT NULL, version INTEGER NOT NULL, title VARCHAR(200) NOT NULL,"
        " mode VARCHAR(20) NOT NULL, seats TEXT NOT NULL, options TEXT NOT NULL,"
        " finished BOOLEAN NOT NULL, record TEXT NOT NULL)"
    )
    record = dump(Game.new(Rules(), ["A", "B"]))
    con.execute(
        "INSERT INTO games VALUES ('old', '2026-01-01 00:00:00', '2026-01-01 00:00:00', 0,"
        " 'old', 'hotseat', ?, ?, 0, ?)",
        (json.dumps(["human", "human"]), json.dumps({"owner": "0" * 64}), json.dumps(record)),
    )
    con.commit()
    con.close()


def test_an_old_database_upgrades_in_place_and_a_new_one_is_made(tmp_path: Path) -> None:
    old = tmp_path / "old.db"
    _old_database(old)
    for db in (old, tmp_path / "new.db"):
        app = create_app(f"sqlite:///{db}", inline_ai=True)
        with TestClient(app) as c:
            app.state.test_client = c
            tables = set(inspect(app.state.hub.store.engine).get_table_names())
            assert {"games", "users", "ratings", "community_seats", "alembic_version"} <= tables
            assert Player(app, "ann").sign_up().status_code == 200
        # Twice: the second start finds everything up to date.
        with TestClient(create_app(f"sqlite:///{db}", inline_ai=True)) as c:
            assert c.get("/api/meta").status_code == 200
    with TestClient(create_app(f"sqlite:///{old}", inline_ai=True)) as c:
        assert c.app.state.hub.store.get("old").title == "old"  # type: ignore[attr-defined]
    con = sqlite3.connect(old)
    assert con.execute("select version_num from alembic_version").fetchall() == [("0009",)]
    con.close()
    assert CommunitySeatRow.__tablename__ == "community_seats"


def test_donutbox_serve_starts_on_an_old_database(tmp_path: Path) -> None:
    """The command a deployment runs, on a database of today's code."""
    old = tmp_path / "old.db"
    _old_database(old)
    code = f"from donutbox.server.app import create_app;create_app('sqlite:///{old}');print('ok')"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.stdout.strip() == "ok", out.stderr


PG_URL = os.environ.get("DONUTBOX_TEST_PG_URL")
NO_PG = (
    "no PostgreSQL server: apt-get install postgresql (the test run then starts one)"
    " or set DONUTBOX_TEST_PG_URL"
)


@pytest.mark.skipif(not PG_URL, reason=NO_PG)
def test_accounts_lobby_and_ratings_on_postgresql() -> None:
    """Migrated on PostgreSQL (twice: the second start is up to date), then
    a rated lobby game played to the end and settled."""
    pytest.importorskip("psycopg")
    assert PG_URL is not None
    with TestClient(create_app(PG_URL, inline_ai=True)):
        pass  # started and stopped: its engine is closed (no ResourceWarning)
    app = create_app(PG_URL, inline_ai=True)
    with TestClient(app) as c:
        app.state.test_client = c
        suffix = secrets.token_hex(4)
        ann, bob = Player(app, f"ann{suffix}"), Player(app, f"bob{suffix}")
        for p in (ann, bob):
            assert p.sign_up().status_code == 200
        t = ann.post("/api/lobby/tables", {"players": 2}).json()
        game_id = bob.post(f"/api/lobby/tables/{t['id']}/join").json()["game"]
        tokens = [p.get("/api/lobby").json()["games"][0]["token"] for p in (ann, bob)]
        play_to_the_end(ann.client, game_id, tokens)
        app.state.community.ratings.settle(game_id)
        h = ann.get(f"/api/players/{ann.name}").json()["history"][0]
        assert h["finished"] and h["rated"] and h["rating"]["after"] is not None
