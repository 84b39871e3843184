"""Rated play strangers can trust (docs/community.md, docs/online.md): every
rated game has a time control, resigning and running out of time lose it
(forfeits, ranked last), a rated game nobody starts is aborted, and a player
with a rated game still being played cannot start another.

Ratings are checked against the worked example of test_ratings.py (two new
players, the winner 27.635389, the loser 22.364611, both sigma 8.065901):
a forfeit must give exactly that, with the forfeiter as the loser whatever
the scores.
"""

from __future__ import annotations

import math
import time
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("fastapi")
from community_helpers import Player, running_app, signed_up

from donutbox.core.record import load
from donutbox.server import forfeits

WIN_MU, LOSE_MU, SIGMA = 27.635389, 22.364611, 8.065901


@pytest.fixture
def app(tmp_path: Path):  # type: ignore[no-untyped-def]
    with running_app(f"sqlite:///{tmp_path / 'c.db'}") as application:
        yield application


def _table_game(app: Any, players: list[Player], **table: Any) -> tuple[str, list[str]]:
    """A lobby table filled by ``players`` (the first opens it); the game
    and each player's seat token, in seat order."""
    body = {"players": len(players), **table}
    t = players[0].post("/api/lobby/tables", body).json()
    game = None
    for p in players[1:]:
        r = p.post(f"/api/lobby/tables/{t['id']}/join")
        assert r.status_code == 200, r.text
        game = r.json()["game"]
    assert game is not None
    tokens = []
    for p in players:
        mine = [g for g in p.get("/api/lobby").json()["games"] if g["game"] == game]
        tokens.append(mine[0]["token"])
    return game, tokens


def _auth(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def _state(p: Player, game: str, token: str) -> dict[str, Any]:
    r = p.get(f"/api/online/{game}", headers=_auth(token))
    assert r.status_code == 200, r.text
    return r.json()  # type: ignore[no-any-return]


def _settled(app: Any, game: str) -> Any:
    ratings = app.state.community.ratings
    ratings.settle(game)
    key = load(app.state.hub.store.get(game).record).rules.key()
    return ratings, key


def test_a_resign_ends_a_two_player_rated_game_at_once_and_the_resigner_loses(app) -> None:  # type: ignore[no-untyped-def]
    ann, bob = signed_up(app, "ann", "bob")
    game, tokens = _table_game(app, [ann, bob])
    st = _state(ann, game, tokens[0])
    assert st["rated"] and st["clock"] is not None  # a rated table gets a clock
    assert st["clock"]["increment_ms"] == 3000  # the default: 5 minutes + 3 s
    # A spectator or a stale version cannot resign; bob can, at once, even
    # when it is not his turn.
    r = bob.post(
        f"/api/online/{game}/resign", {"version": st["version"] + 1}, headers=_auth(tokens[1])
    )
    assert r.status_code == 409 and "stale" in r.json()["detail"]
    r = bob.post(f"/api/online/{game}/resign", {"version": st["version"]}, headers=_auth(tokens[1]))
    assert r.status_code == 200, r.text
    over = r.json()
    assert over["finished"] and over["ended_by"] == "resign"
    assert over["winners"] == [0] and over["to_move"] is None and over["legal"] == []
    assert over["forfeits"] == [{"seat": 1, "how": "resign", "ply": st["version"]}]
    again = ann.post(
        f"/api/online/{game}/resign", {"version": over["version"]}, headers=_auth(tokens[0])
    )
    assert again.status_code == 422 and again.json()["detail"] == "resign: the game is over"
    # Stored as over; the record keeps every move and says who resigned.
    stored = app.state.hub.store.get(game)
    assert stored.finished
    assert stored.record["forfeits"] == [{"seat": 1, "how": "resign", "ply": st["version"]}]
    ratings, key = _settled(app, game)
    a, b = ratings.rating(1, key), ratings.rating(2, key)
    assert math.isclose(a.mu, WIN_MU, abs_tol=1e-5) and math.isclose(b.mu, LOSE_MU, abs_tol=1e-5)
    assert math.isclose(a.sigma, SIGMA, abs_tol=1e-5) and a.games == b.games == 1
    # The lobby's history: ann first, bob second.
    assert ann.get("/api/players/ann").json()["history"][0]["place"] == 1
    assert bob.get("/api/players/bob").json()["history"][0]["place"] == 2


def test_resign_over_the_socket_reaches_every_reader(app) -> None:  # type: ignore[no-untyped-def]
    ann, bob = signed_up(app, "ann", "bob")
    game, tokens = _table_game(app, [ann, bob])
    client = app.state.test_client
    with (
        client.websocket_connect(f"/api/online/{game}/ws") as a,
        client.websocket_connect(f"/api/online/{game}/ws") as b,
    ):
        for ws, token in ((a, tokens[0]), (b, tokens[1])):
            ws.send_json({"type": "hello", "token": token})
            assert ws.receive_json()["type"] == "welcome"
        version = _state(ann, game, tokens[0])["version"]
        a.send_json({"type": "resign", "version": version, "ref": 7})
        seen_a = [a.receive_json() for _ in range(4)]
        ack = next(m for m in seen_a if m["type"] == "ack")
        assert ack["ref"] == 7 and ack["version"] == version + 1
        final = {}
        for _ in range(6):
            m = b.receive_json()
            if m["type"] == "state" and m["state"]["version"] == version + 1:
                final = m["state"]
                break
        assert final["finished"] and final["ended_by"] == "resign" and final["winners"] == [1]
        a.send_json({"type": "resign"})
        bad = a.receive_json()
        while bad["type"] != "error":
            bad = a.receive_json()
        assert bad["reason"] == "version: must be the state version the action was made on"


def test_a_player_who_resigns_a_game_of_three_drops_out_ranks_last_and_the_rest_play_on(
    app,
) -> None:  # type: ignore[no-untyped-def]
    ann, bob, cat = signed_up(app, "ann", "bob", "cat")
    game, tokens = _table_game(app, [ann, bob, cat])
    v = _state(ann, game, tokens[0])["version"]
    r = bob.post(f"/api/online/{game}/resign", {"version": v}, headers=_auth(tokens[1]))
    assert r.status_code == 200, r.text
    st = r.json()
    assert not st["finished"] and st["forfeits"][0]["seat"] == 1
    # Ann and cat play on to the end; bob's seat is played by the stand-in
    # (the server's medium AI) whenever it is its turn.
    final = _play_on(ann, game, tokens, gone=1)
    assert final["finished"] and final["ended_by"] not in ("resign", "time")
    stored = load(app.state.hub.store.get(game).record)
    assert stored.finished
    # Ann and cat by score (then boxes), bob last whatever his score.
    key = {p: (stored.scores[p], stored.boxes_delivered[p]) for p in (0, 2)}
    expected = {1: 3}
    expected[0] = 1 if key[0] >= key[2] else 2
    expected[2] = 1 if key[2] >= key[0] else 2
    assert forfeits.places(stored) == [expected[0], expected[1], expected[2]]
    assert bob.get("/api/players/bob").json()["history"][0]["place"] in (None, 3)
    _settled(app, game)
    assert bob.get("/api/players/bob").json()["history"][0]["place"] == 3


def _play_on(p: Player, game: str, tokens: list[str], gone: int) -> dict[str, Any]:
    """The seats still playing play their first legal move until the game
    ends; the forfeited seat ``gone`` is left to the stand-in."""
    stand_in_moves = 0
    deadline = time.monotonic() + 120
    st = _state(p, game, tokens[0])
    while not st["finished"]:
        assert time.monotonic() < deadline, "the game did not end"
        seat = st["to_move"]
        if seat == gone:
            assert st["thinking"] and st["legal"] == []  # the stand-in thinks
            time.sleep(0.02)
            before = st["version"]
            st = _state(p, game, tokens[0])
            stand_in_moves += st["version"] > before
            continue
        mine = _state(p, game, tokens[seat])
        r = p.post(
            f"/api/online/{game}/moves",
            {"move": mine["legal"][0], "version": mine["version"]},
            headers=_auth(tokens[seat]),
        )
        assert r.status_code == 200, r.text
        st = r.json()
    assert stand_in_moves > 0
    return st


def test_a_player_with_a_rated_game_in_progress_cannot_start_another(app) -> None:  # type: ignore[no-untyped-def]
    ann, bob, cat = signed_up(app, "ann", "bob", "cat")
    game, tokens = _table_game(app, [ann, bob])
    said = f"rated: your rated game {game} is still being played; finish or resign it first"
    r = ann.post("/api/lobby/queue", {"players": 2})
    assert r.status_code == 409 and r.json()["detail"] == said
    r = ann.post("/api/lobby/tables", {"players": 2})
    assert r.status_code == 409 and r.json()["detail"] == said
    t = cat.post("/api/lobby/tables", {"players": 2}).json()
    r = ann.post(f"/api/lobby/tables/{t['id']}/join")
    assert r.status_code == 409 and r.json()["detail"] == said
    # A casual table is fine.
    assert ann.post("/api/lobby/tables", {"players": 2, "rated": False}).status_code == 200
    # Once the game is resigned, ann can queue again.
    v = _state(ann, game, tokens[0])["version"]
    assert (
        ann.post(f"/api/online/{game}/resign", {"version": v}, headers=_auth(tokens[0])).status_code
        == 200
    )
    r = ann.post("/api/lobby/queue", {"players": 2})
    assert r.status_code == 200 and r.json()["queued"] is True


def test_quick_match_pairs_only_the_same_time_control_and_never_makes_a_clockless_game(app) -> None:  # type: ignore[no-untyped-def]
    ann, bob, cat = signed_up(app, "ann", "bob", "cat")
    r = ann.post("/api/lobby/queue", {"players": 2, "clock": {"minutes": 3, "increment": 2}})
    assert r.json() == {"queued": True, "game": None}
    r = bob.post("/api/lobby/queue", {"players": 2})  # the default: 5 + 3
    assert r.json() == {"queued": True, "game": None}
    r = cat.post("/api/lobby/queue", {"players": 2, "clock": {"minutes": 3, "increment": 2}})
    game = r.json()["game"]
    assert game is not None
    mine = [g for g in cat.get("/api/lobby").json()["games"] if g["game"] == game]
    st = _state(cat, game, mine[0]["token"])
    assert st["rated"]
    assert st["clock"]["increment_ms"] == 2000
    assert sorted(x for x in st["clock"]["remaining_ms"]) == [180_000, 180_000]
    assert bob.get("/api/lobby").json()["queued"]  # still waiting for a 5 + 3
    # A rated game needs a minute at least.
    r = bob.post("/api/lobby/queue", {"players": 2, "clock": {"minutes": 0.5, "increment": 0}})
    assert r.status_code == 422
    assert r.json()["detail"] == "clock.minutes: a rated game needs at least 1 minute"


def test_a_rated_game_nobody_starts_is_aborted_unrated(app, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setattr(forfeits, "ABORT_SECONDS", 1.0)
    ann, bob = signed_up(app, "ann", "bob")
    game, tokens = _table_game(app, [ann, bob])
    deadline = time.monotonic() + 20
    while not app.state.hub.store.get(game).finished:
        assert time.monotonic() < deadline, "the rated game was never aborted"
        time.sleep(0.1)
    st = _state(ann, game, tokens[0])
    assert st["finished"] and st["ended_by"] == "aborted" and st["winners"] == []
    ratings, key = _settled(app, game)
    assert ratings.rating(1, key).games == 0 and ratings.rating(2, key).games == 0
    assert ann.post("/api/lobby/queue", {"players": 2}).status_code == 200


@pytest.mark.slow
def test_a_player_who_stops_moving_in_a_rated_one_minute_game_loses_on_time(app) -> None:  # type: ignore[no-untyped-def]
    """A rated 1 + 0 game: both players arrive (their pages say hello on
    the socket) and leave; the player to move never moves: within the
    minute (and a second) the game is over on time, that player ranked
    last, both ratings settled as in the worked example."""
    ann, bob = signed_up(app, "ann", "bob")
    game, tokens = _table_game(app, [ann, bob], clock={"minutes": 1, "increment": 0})
    players = [ann, bob]
    for token in tokens:
        with app.state.test_client.websocket_connect(f"/api/online/{game}/ws") as ws:
            ws.send_json({"type": "hello", "token": token})
            assert ws.receive_json()["type"] == "welcome"
    st = _state(ann, game, tokens[0])
    assert st["clock"]["running"] is not None
    idle = st["clock"]["running"]
    started = time.monotonic()
    while not (st := _state(players[1 - idle], game, tokens[1 - idle]))["finished"]:
        assert time.monotonic() - started < 70, "nobody lost on time"
        time.sleep(0.5)
    assert time.monotonic() - started < 62
    assert st["ended_by"] == "time" and st["winners"] == [1 - idle]
    assert st["clock"]["flagged"][idle] is True
    ratings, key = _settled(app, game)
    loser, winner = ratings.rating(idle + 1, key), ratings.rating(2 - idle, key)
    assert math.isclose(winner.mu, WIN_MU, abs_tol=1e-5)
    assert math.isclose(loser.mu, LOSE_MU, abs_tol=1e-5)
