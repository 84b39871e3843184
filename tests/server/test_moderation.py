"""Moderation (docs/community.md): ``donutbox admin`` bans, unbans and
voids (ratings recomputed exactly from the remaining games), players
report one another (bounded), every action is logged; the migration on
SQLite and PostgreSQL."""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from community_helpers import (
    Player,
    fresh_pg_database,
    rated_table_game,
    signed_up,
)
from fastapi.testclient import TestClient
from sqlalchemy import select
from sqlalchemy.orm import Session

from donutbox.cli import main as cli
from donutbox.core import Rules
from donutbox.server.accounts import now
from donutbox.server.app import create_app
from donutbox.server.moderation.rows import ReportRow
from donutbox.server.ratings.replay import recompute
from donutbox.server.ratings.service import CommunitySeatRow, RatingRow

KEY = Rules().key()


@pytest.fixture
def url(tmp_path: Path) -> str:
    return f"sqlite:///{tmp_path / 'm.db'}"


@pytest.fixture
def app(url: str):  # type: ignore[no-untyped-def]
    application = create_app(url, inline_ai=True)
    with TestClient(application) as c:
        application.state.test_client = c
        yield application


def _table_game(app: Any, host: Player, guest: Player) -> str:
    """A rated two-player table game played to the end and settled."""
    game_id = rated_table_game(host, guest)
    app.state.community.ratings.settle(game_id)
    return game_id


def _snapshot(engine: Any) -> tuple[list[Any], list[Any]]:
    with Session(engine) as db:
        ratings = [
            (r.user_id, r.rules_key, r.mu, r.sigma, r.games, r.opponents)
            for r in db.scalars(select(RatingRow).order_by(RatingRow.user_id))
        ]
        seats = [
            (s.game_id, s.seat, s.mu_before, s.sigma_before, s.mu_after, s.sigma_after, s.weight)
            for s in db.scalars(
                select(CommunitySeatRow).order_by(CommunitySeatRow.game_id, CommunitySeatRow.seat)
            )
        ]
    return ratings, seats


def _their(p: Player, game: str) -> dict[str, Any]:
    history = p.get(f"/api/players/{p.name}").json()["history"]
    return next(h for h in history if h["game"] == game)  # type: ignore[no-any-return]


def _admin(url: str, *args: str) -> int:
    return cli(["admin", "--db", url, "--by", "op", *args])


def test_voiding_games_recomputes_ratings_exactly(app, url: str, capsys) -> None:  # type: ignore[no-untyped-def]
    ann, bob, cat, dan = signed_up(app, "ann", "bob", "cat", "dan")
    first = _table_game(app, ann, bob)
    other = _table_game(app, cat, dan)
    last = _table_game(app, ann, bob)
    engine = app.state.hub.store.engine
    before = _snapshot(engine)
    # Replaying every game with nothing voided gives every number back, to
    # the last bit: the replay is the settling, in the same order.
    with Session(engine) as db, db.begin():
        assert recompute(db) == 3
    assert _snapshot(engine) == before
    # Void ann and bob's first game: their last game becomes their first
    # together, between two new players: the worked example
    # (test_ratings.py) by hand: 27.635389 and 22.364611, sigma 8.065901;
    # a draw leaves mu at 25.
    assert _admin(url, "void", "--reason", "fixed", "--", first) == 0
    assert "ratings recomputed from 2 game(s)" in capsys.readouterr().out
    for p in (ann, bob):
        history = p.get(f"/api/players/{p.name}").json()["history"]
        voided = next(h for h in history if h["game"] == first)
        assert voided["voided"] is True and voided["rating"] is None
        again = next(h for h in history if h["game"] == last)
        assert again["rating"]["before"] == 1500 and again["rating"]["weight"] == 1.0
        draw = all(h["place"] == 1 for h in (again, _their(ann if p is bob else bob, last)))
        expected = 25.0 if draw else {1: 27.635389, 2: 22.364611}[again["place"]]
        assert math.isclose(again["rating"]["model"]["mu_after"], expected, abs_tol=1e-3)
        assert math.isclose(again["rating"]["model"]["sigma_after"], 8.065901, abs_tol=1e-3)
    rating = ann.get("/api/players/ann").json()["ratings"][KEY]
    assert rating["games"] == 1 and rating["opponents"] == 1
    # Void the other two: nobody has a rating left.
    assert _admin(url, "void", "--", last) == 0
    assert _admin(url, "void", "--", last) == 2  # once only
    assert "is void already" in capsys.readouterr().err
    assert _admin(url, "void", "--", other) == 0
    for p in (ann, bob, cat, dan):
        assert p.get(f"/api/players/{p.name}").json()["ratings"] == {}
    assert _admin(url, "void", "nosuchgame") == 2
    capsys.readouterr()
    assert _admin(url, "log", "--json") == 0
    log = json.loads(capsys.readouterr().out)
    assert [(e["action"], e["actor"]) for e in log] == [("void", "admin:op")] * 3
    assert log[-1]["target"] == first and log[-1]["detail"] == "fixed"


def test_a_void_gives_later_games_of_the_pair_their_weight_back(app, url: str) -> None:  # type: ignore[no-untyped-def]
    """Five games of one pair count 1, 1, 1, 1/2, 1/4; the replay gives
    every stored number back; voiding the first, the other four are the
    pair's first four: 1, 1, 1, 1/2."""
    ann, bob = signed_up(app, "ann", "bob")
    games = [_table_game(app, ann, bob) for _ in range(5)]
    engine = app.state.hub.store.engine
    before = _snapshot(engine)
    with Session(engine) as db, db.begin():
        assert recompute(db) == 5
    assert _snapshot(engine) == before

    def weights() -> list[Any]:
        history = ann.get("/api/players/ann").json()["history"][::-1]
        return [None if h["rating"] is None else h["rating"]["weight"] for h in history]

    assert weights() == [1, 1, 1, 0.5, 0.25]
    assert _admin(url, "void", "--", games[0]) == 0
    assert weights() == [None, 1, 1, 1, 0.5]
    assert ann.get("/api/players/ann").json()["ratings"][KEY]["games"] == 4


def test_a_ban_ends_sessions_and_takes_the_player_out_of_lobby_and_leaderboard(
    app, url: str, capsys
) -> None:  # type: ignore[no-untyped-def]
    ann, bob = signed_up(app, "ann", "bob")
    engine = app.state.hub.store.engine
    with Session(engine) as db, db.begin():
        db.add(
            RatingRow(
                user_id=1, rules_key=KEY, mu=30.0, sigma=4.0, games=40, opponents=9, updated=now()
            )
        )
    assert [e["name"] for e in bob.get(f"/api/leaderboard?rules={KEY}").json()["players"]] == [
        "ann"
    ]
    assert ann.post("/api/lobby/queue", {"players": 2}).json()["queued"] is True
    assert _admin(url, "ban", "ann", "--reason", "farming") == 0
    assert "1 session(s) ended" in capsys.readouterr().out
    # Her session is gone; she is out of the queue and off the board.
    assert ann.get("/api/account").json()["user"] is None
    assert ann.get("/api/lobby").status_code == 401
    assert bob.get("/api/lobby").json()["queue"] == {}
    assert bob.get(f"/api/leaderboard?rules={KEY}").json()["players"] == []
    assert bob.get("/api/players/ann").json()["banned"] is True
    # She cannot sign in again: her password checks, but no session opens.
    r = ann.sign_in()
    assert r.status_code == 403
    assert r.json()["detail"] == "account: this account is banned from this server"
    assert ann.get("/api/account").json()["user"] is None
    assert _admin(url, "ban", "ann") == 2
    assert capsys.readouterr().err.strip() == "donutbox admin: name: ann is banned already"
    assert _admin(url, "unban", "ann") == 0
    board = bob.get(f"/api/leaderboard?rules={KEY}").json()["players"]
    assert [e["name"] for e in board] == ["ann"]
    assert _admin(url, "unban", "ann") == 2
    assert _admin(url, "ban", "nobody") == 2
    capsys.readouterr()
    assert _admin(url, "log", "--json") == 0
    log = json.loads(capsys.readouterr().out)
    assert [(e["action"], e["target"], e["detail"]) for e in log] == [
        ("unban", "ann", ""),
        ("ban", "ann", "farming"),
    ]


def test_reports_are_bounded_and_listed(app, url: str, capsys) -> None:  # type: ignore[no-untyped-def]
    ann, bob = signed_up(app, "ann", "bob")
    game = _table_game(app, ann, bob)
    r = bob.post("/api/players/ann/report", {"reason": "stalled the game", "game": game})
    assert r.status_code == 200 and r.json() == {"reported": True}
    again = bob.post("/api/players/ann/report", {"reason": "again", "game": game})
    assert again.status_code == 409
    assert again.json()["detail"] == "report: you have reported this already"
    for body, status, start in [
        ({"reason": "me"}, 422, "name: you cannot report yourself"),
        ({"reason": "x", "game": "nosuchgame"}, 422, "game: not a lobby game of you and"),
        ({"reason": "x" * 501}, 422, "reason"),
        ({"reason": ""}, 422, "reason"),
    ]:
        who = "bob" if start.startswith("name") else "ann"
        r = bob.post(f"/api/players/{who}/report", body)
        assert r.status_code == status and r.json()["detail"].startswith(start), r.text
    assert bob.post("/api/players/nobody/report", {"reason": "x"}).status_code == 404
    assert bob.post("/api/players/ann/report", {"reason": "x"}, csrf=False).status_code == 403
    stranger = Player(app, "cat")
    stranger.fetch_csrf()
    assert stranger.post("/api/players/ann/report", {"reason": "x"}).status_code == 401
    # Ten reports in a day at most: nine more made earlier today, then one
    # more is refused with 429.
    with Session(app.state.hub.store.engine) as db, db.begin():
        for _ in range(9):
            db.add(ReportRow(at=now(), reporter_id=2, target_id=1, game_id=None, reason="old"))
    r = bob.post("/api/players/ann/report", {"reason": "one more"})
    assert r.status_code == 429 and r.json()["detail"] == "report: at most 10 reports a day"
    capsys.readouterr()
    assert _admin(url, "reports", "--json") == 0
    reports = json.loads(capsys.readouterr().out)
    assert len(reports) == 10
    first = reports[-1]
    assert (first["reporter"], first["player"], first["game"], first["reason"]) == (
        "bob",
        "ann",
        game,
        "stalled the game",
    )
    assert _admin(url, "log") == 0
    out = capsys.readouterr().out
    assert "report" in out and "stalled the game" in out


PG_URL = os.environ.get("DONUTBOX_TEST_PG_URL")


@pytest.mark.skipif(not PG_URL, reason="no PostgreSQL server: set DONUTBOX_TEST_PG_URL")
def test_moderation_on_postgresql_from_another_process() -> None:
    """The migration on PostgreSQL, and ``donutbox admin`` as a separate
    process while the server has the database open."""
    pytest.importorskip("psycopg")
    assert PG_URL is not None
    with fresh_pg_database(PG_URL, "mod") as url:
        app = create_app(url, inline_ai=True)
        with TestClient(app) as c:
            app.state.test_client = c
            ann, bob = signed_up(app, "ann", "bob")
            game = _table_game(app, ann, bob)
            env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2] / "src")}

            def run(*args: str) -> subprocess.CompletedProcess[str]:
                return subprocess.run(
                    [sys.executable, "-m", "donutbox", "admin", "--db", url, "--by", "op", *args],
                    capture_output=True,
                    text=True,
                    timeout=120,
                    env=env,
                )

            assert run("ban", "bob").returncode == 0
            assert bob.get("/api/account").json()["user"] is None
            out = run("void", "--", game)
            assert out.returncode == 0 and "from 0 game(s)" in out.stdout, out.stderr
            assert ann.get("/api/players/ann").json()["ratings"] == {}
            log = json.loads(run("log", "--json").stdout)
            assert [e["action"] for e in log] == ["void", "ban"]
            with app.state.hub.store.engine.connect() as conn:
                version = conn.exec_driver_sql("select version_num from alembic_version").all()
            assert [tuple(r) for r in version] == [("0009",)]
