"""Rating integrity (docs/community.md): the 1500 scale, weighted updates,
repeated games between the same accounts, provisional ratings off the
leaderboard, established ratings not moved by provisional opponents, quick
match keeping repeated pairs apart, and the schema's migration."""

from __future__ import annotations

import asyncio
import math
import os
import time
from pathlib import Path

import pytest
from community_helpers import (
    PASSWORD,
    Player,
    engine_at_revision,
    fresh_pg_database,
    rated_table_game,
    running_app,
    signed_up,
)
from fastapi.testclient import TestClient
from sqlalchemy.orm import Session

from donutbox.core import Rules
from donutbox.server.accounts import User, now
from donutbox.server.app import create_app
from donutbox.server.lobby.store import Waiting, match
from donutbox.server.ratings.model import (
    NEW,
    Skill,
    display,
    pair_weight,
    provisional,
    rate,
    seat_weights,
)
from donutbox.server.ratings.service import RatingRow

KEY = Rules().key()


@pytest.fixture
def app(tmp_path: Path):  # type: ignore[no-untyped-def]
    with running_app(f"sqlite:///{tmp_path / 'c.db'}") as application:
        yield application


# -- the model's rules, by hand ------------------------------------------------


def test_the_shown_scale_by_hand() -> None:
    """400 points are 10:1 odds, as on lichess: between settled players
    Plackett-Luce gives P = 1 / (1 + exp(-d / c)), c = sqrt(2) 25/6 =
    5.892557; 10:1 needs d = c ln 10 = 13.568; so 400 / 13.568 = 29.480887
    points per unit of mu.  The worked example's winner (mu 27.635389) shows
    1500 + 77.69 = 1578, the other (22.364611) 1422."""
    assert display(25.0) == 1500
    assert display(27.635389) == 1578
    assert display(22.364611) == 1422
    assert display(25.0 + 5.892557 * math.log(10)) == 1900


def test_a_weighted_update_is_that_part_of_the_whole_update() -> None:
    """The worked example (test_ratings.py): the winner of two new players
    goes 25 -> 27.635389, sigma 8.333333 -> 8.065901.  Weight 1/2: half of
    each step (26.317695, 8.199617); weight 0: nothing."""
    (a, b) = rate([NEW, NEW], [1, 2], [0.5, 0.0])
    assert math.isclose(a[0], 26.317695, abs_tol=1e-5)
    assert math.isclose(a[1], 8.199617, abs_tol=1e-5)
    assert b == (25.0, 25 / 3)


def test_pair_weights_and_provisional_thresholds() -> None:
    """The k-th game of a pair within a week: 1, 1, 1, 1/2, 1/4, then 0.
    Provisional: sigma above 6.5 or fewer than 5 different opponents."""
    assert [pair_weight(n) for n in range(8)] == [1, 1, 1, 0.5, 0.25, 0, 0, 0]
    assert provisional(NEW)
    assert not provisional(Skill(25, 6.5, 12, 5))
    assert provisional(Skill(25, 6.51, 40, 9))
    assert provisional(Skill(25, 3.0, 40, 4))


def test_an_established_rating_is_not_moved_by_a_provisional_opponent() -> None:
    settled, new = Skill(30, 4, 40, 9), NEW
    assert seat_weights([1, 2], {}, [settled, new]) == [0.0, 1.0]
    assert seat_weights([1, 2], {}, [new, new]) == [1.0, 1.0]
    assert seat_weights([1, 2], {}, [settled, settled]) == [1.0, 1.0]
    # Three players: each seat takes its smallest pair weight.
    earlier = {frozenset((1, 2)): 3, frozenset((1, 3)): 5}
    assert seat_weights([1, 2, 3], earlier, [new, new, new]) == [0.0, 0.5, 0.0]


def test_quick_match_skips_an_avoided_pair() -> None:
    def w(uid: int, rating: float, since: float) -> Waiting:
        return Waiting(User(uid, f"p{uid}"), {}, KEY, "", 2, rating, since)

    queue = [w(1, 0.0, 0.0), w(2, 0.0, 1.0), w(3, 3.0, 2.0)]
    assert [x.user.id for x in match(queue, 3.0) or []] == [1, 2]
    avoid = frozenset({frozenset((1, 2))})
    assert [x.user.id for x in match(queue, 3.0, avoid) or []] == [1, 3]
    assert match(queue[:2], 3.0, avoid) is None


# -- against the server ----------------------------------------------------------


def test_two_accounts_of_one_person_cannot_lift_a_rating_by_playing_each_other(app) -> None:  # type: ignore[no-untyped-def]
    """Eight rated games between two fresh accounts: they count 1, 1, 1,
    1/2, 1/4 and then nothing (the sixth to eighth change no rating); both
    stay provisional (one opponent), the leaderboard lists neither, and no
    shown rating moved more than 3.75 games' worth: their sigmas stay equal
    (the same games, the same weights), so one game moves mu by at most
    sigma'^2 / c <= 69.451389 / 13.176684 = 5.270809 (the worked example's
    first game, omega <= 1), 155.4 points, so 583 points in all.
    Quick match then keeps them apart."""
    main, alt, stranger = signed_up(app, "main", "alt", "stranger")
    ratings = app.state.community.ratings
    for _ in range(8):
        ratings.settle(rated_table_game(main, alt))
    history = main.get("/api/players/main").json()["history"]
    assert len(history) == 8 and all(h["rated"] and h["finished"] for h in history)
    oldest_first = history[::-1]
    assert [h["rating"]["weight"] for h in oldest_first] == [1, 1, 1, 0.5, 0.25, 0, 0, 0]
    for h in oldest_first[5:]:
        assert h["rating"]["before"] == h["rating"]["after"]
        assert h["rating"]["model"]["mu_before"] == h["rating"]["model"]["mu_after"]
    for p in (main, alt):
        r = p.get(f"/api/players/{p.name}").json()["ratings"][KEY]
        assert r["provisional"] is True and r["opponents"] == 1 and r["games"] == 5
        assert abs(r["rating"] - 1500) <= 583
    assert main.get(f"/api/leaderboard?rules={KEY}").json()["players"] == []
    boards = main.get("/api/leaderboard").json()["boards"]
    assert all(b["players"] == [] for b in boards)
    # Quick match: main and alt (three games or more this week) are not
    # paired, however long they wait; a third player is.
    store = app.state.community.lobby.store
    assert main.post("/api/lobby/queue", {"players": 2}).json()["game"] is None
    assert alt.post("/api/lobby/queue", {"players": 2}).json()["game"] is None
    assert store.pair(now=time.time() + 3600) == []
    if stranger.post("/api/lobby/queue", {"players": 2}).json()["game"] is None:
        (start,) = store.pair(now=time.time() + 3600)
        together = {u.name for u in start.users}
    else:
        still = {p.name for p in (main, alt) if p.get("/api/lobby").json()["queued"]}
        together = {"stranger", *({"main", "alt"} - still)}
    assert "stranger" in together and len(together) == 2


def test_an_established_player_is_not_moved_by_a_new_account(app) -> None:  # type: ignore[no-untyped-def]
    vet, fresh = signed_up(app, "vet", "fresh")
    ratings = app.state.community.ratings
    with Session(ratings.engine) as db, db.begin():
        db.add(
            RatingRow(
                user_id=1, rules_key=KEY, mu=30.0, sigma=4.0, games=40, opponents=9, updated=now()
            )
        )
    ratings.settle(rated_table_game(vet, fresh))
    mine = vet.get("/api/players/vet").json()
    assert mine["ratings"][KEY]["model"] == {"mu": 30.0, "sigma": 4.0}
    assert mine["ratings"][KEY]["games"] == 40
    assert mine["history"][0]["rating"]["weight"] == 0.0
    theirs = fresh.get("/api/players/fresh").json()
    assert theirs["history"][0]["rating"]["weight"] == 1.0
    assert theirs["ratings"][KEY]["model"] != {"mu": 25.0, "sigma": 8.333}
    # The established player is on the board, shown on the 1500 scale:
    # 1500 + 29.480887 * 5 = 1647.
    board = vet.get(f"/api/leaderboard?rules={KEY}").json()["players"]
    assert [(e["name"], e["rating"], e["provisional"]) for e in board] == [("vet", 1647, False)]


def _at_0002_with_a_rated_game(url: str) -> None:
    """A database of the code before: revision 0002, two accounts and one
    settled rated game between them."""
    from sqlalchemy import text

    from donutbox.server.accounts import Accounts

    engine = engine_at_revision(url, "0002")
    accounts = Accounts(engine)
    a = asyncio.run(accounts.sign_up("ann", PASSWORD))
    b = asyncio.run(accounts.sign_up("bob", PASSWORD))
    t = now()
    with engine.begin() as conn:
        conn.execute(
            text(
                "insert into community_games (game_id, rules_key, rules_label, rated,"
                " settled, created, ended) values ('g1', :k, 'x', :yes, :yes, :t, :t)"
            ),
            {"k": KEY, "yes": True, "t": t},
        )
        for seat, (uid, mu) in enumerate(((a.id, 27.6), (b.id, 22.4))):
            conn.execute(
                text(
                    "insert into community_seats (game_id, seat, user_id, token, place, score,"
                    " mu_before, sigma_before, mu_after, sigma_after)"
                    " values ('g1', :s, :u, 'tok', :p, 0, 25, 8.3, :mu, 8.0)"
                ),
                {"s": seat, "u": uid, "p": seat + 1, "mu": mu},
            )
            conn.execute(
                text(
                    "insert into ratings (user_id, rules_key, mu, sigma, games, updated)"
                    " values (:u, :k, :mu, 8.0, 1, :t)"
                ),
                {"u": uid, "k": KEY, "mu": mu, "t": t},
            )
    engine.dispose()


def _upgraded_keeps_the_game(url: str) -> None:
    app = create_app(url, inline_ai=True)
    with TestClient(app) as c:
        app.state.test_client = c
        ann = Player(app, "ann")
        assert ann.sign_in().status_code == 200
        p = ann.get("/api/players/ann").json()
        assert p["ratings"][KEY]["opponents"] == 1 and p["ratings"][KEY]["rating"] == 1577
        assert p["history"][0]["rating"]["weight"] == 1.0
        with app.state.hub.store.engine.connect() as conn:
            version = conn.exec_driver_sql("select version_num from alembic_version").all()
        assert [tuple(r) for r in version] == [("0009",)]


def test_the_migration_keeps_settled_games_and_counts_opponents(tmp_path: Path) -> None:
    """Settled games count fully (weight 1), opponents are counted from
    them, and ann's mu 27.6 shows 1500 + 29.480887 * 2.6 = 1576.65: 1577."""
    url = f"sqlite:///{tmp_path / 'old.db'}"
    _at_0002_with_a_rated_game(url)
    _upgraded_keeps_the_game(url)


PG_URL = os.environ.get("DONUTBOX_TEST_PG_URL")


@pytest.mark.skipif(not PG_URL, reason="no PostgreSQL server: set DONUTBOX_TEST_PG_URL")
def test_the_migration_on_postgresql() -> None:
    pytest.importorskip("psycopg")
    assert PG_URL is not None
    with fresh_pg_database(PG_URL, "rate_old") as url:
        _at_0002_with_a_rated_game(url)
        _upgraded_keeps_the_game(url)
