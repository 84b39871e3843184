"""Turn-based games (docs/online.md, "Turn-based games"): days per move as a
time control for invite-link games, lobby tables and quick match; a
wall-clock deadline stored with the game; a missed deadline loses a rated
game on time and makes the AI move in a casual one, even for a game that
had left memory (the deadline sweep); the "waiting for your move" list; and
the abandonment rule, which holds for real-time games only.

A "day" is shortened with the server's own knob (``online.DAY_SECONDS``,
the ``DONUTBOX_DAY_SECONDS`` variable of ``donutbox serve``): the clocks,
the deadlines and the sweep run on the real wall clock.
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
from donutbox.server import deadlines, online

WIN_MU, LOSE_MU = 27.635389, 22.364611
DAY = 1.5  # seconds in a "day" for these tests


@pytest.fixture
def app(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):  # type: ignore[no-untyped-def]
    monkeypatch.setattr(online, "DAY_SECONDS", DAY)
    monkeypatch.setattr(deadlines, "SWEEP_SECONDS", 0.2)
    with running_app(f"sqlite:///{tmp_path / 'c.db'}") as application:
        yield application


def _auth(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def _table_game(players: list[Player], **table: Any) -> tuple[str, list[str]]:
    """A lobby table filled by ``players`` (the first opens it): the game and
    each player's seat token, in seat order."""
    r = players[0].post("/api/lobby/tables", {"players": len(players), **table})
    assert r.status_code == 200, r.text
    table_id = r.json()["id"]
    game = None
    for p in players[1:]:
        r = p.post(f"/api/lobby/tables/{table_id}/join")
        assert r.status_code == 200, r.text
        game = r.json()["game"]
    assert game is not None
    tokens = []
    for p in players:
        mine = [g for g in p.get("/api/lobby").json()["games"] if g["game"] == game]
        tokens.append(mine[0]["token"])
    return game, tokens


def _state(p: Any, game: str, token: str) -> dict[str, Any]:
    r = p.get(f"/api/online/{game}", headers=_auth(token))
    assert r.status_code == 200, r.text
    return r.json()  # type: ignore[no-any-return]


def _stored(app: Any, game: str) -> Any:
    """The game as stored (read from the database, not the hub's memory)."""
    return app.state.hub.store.get(game)


def _until(check: Any, seconds: float, what: str) -> Any:
    deadline = time.monotonic() + seconds
    while True:
        got = check()
        if got:
            return got
        assert time.monotonic() < deadline, what
        time.sleep(0.05)


def _two_humans(days: int) -> dict[str, Any]:
    return {"seats": [{"name": "Ann"}, {"name": "Bob"}], "clock": {"days": days}}


def test_a_casual_turn_based_game_has_a_wall_clock_deadline_and_the_ai_moves_at_it(app) -> None:  # type: ignore[no-untyped-def]
    client = app.state.test_client
    before = time.time()
    made = client.post("/api/online", json=_two_humans(1)).json()
    after = time.time()
    game, tokens = made["id"], [s["token"] for s in made["seats"]]
    st = _state(client, game, tokens[0])
    clock = st["clock"]
    # One "day" per move, counted from the making: nobody has to arrive.
    assert clock["days"] == 1 and clock["running"] == st["to_move"]
    first = clock["deadline_at"]
    assert before + DAY <= first <= after + DAY
    mover = st["to_move"]
    assert 0 < clock["remaining_ms"][mover] <= DAY * 1000
    # At the deadline the server's AI moves for the player to move; the
    # game goes on, the other player's day starts then.
    stored = _until(
        lambda: (g := _stored(app, game)).version >= 1 and g,
        DAY + 5,
        "nobody moved at the deadline",
    )
    assert time.time() >= first
    assert len(stored.record["moves"]) == 1 and not stored.finished
    st = _state(client, game, tokens[0])
    assert st["clock"]["flagged"][mover] is True and st["to_move"] == 1 - mover
    second = st["clock"]["deadline_at"]
    assert first + DAY <= second <= time.time() + DAY
    assert stored.options["online"]["clock"]["deadline_at"] == second  # stored with the game


def test_a_missed_deadline_loses_a_rated_turn_based_game_on_time(app) -> None:  # type: ignore[no-untyped-def]
    ann, bob = signed_up(app, "ann", "bob")
    game, tokens = _table_game([ann, bob], clock={"days": 1})
    st = _state(ann, game, tokens[0])
    assert st["rated"] and st["clock"]["days"] == 1
    idle = st["to_move"]
    _until(lambda: _stored(app, game).finished, DAY + 5, "the rated game did not end on time")
    st = _state(ann, game, tokens[0])
    assert st["ended_by"] == "time" and st["winners"] == [1 - idle]
    assert st["forfeits"] == [{"seat": idle, "how": "time", "ply": 0}]
    ratings = app.state.community.ratings
    ratings.settle(game)
    key = load(_stored(app, game).record).rules.key()
    users = {0: 1, 1: 2}  # ann signed up first (id 1) and sat first
    assert math.isclose(ratings.rating(users[idle], key).mu, LOSE_MU, abs_tol=1e-5)
    assert math.isclose(ratings.rating(users[1 - idle], key).mu, WIN_MU, abs_tol=1e-5)


def test_a_deadline_that_passes_out_of_memory_is_found_by_the_sweep(app) -> None:  # type: ignore[no-untyped-def]
    client = app.state.test_client
    hub = app.state.hub
    made = client.post("/api/online", json=_two_humans(1)).json()
    game = made["id"]
    client.portal.call(hub.evict, game)  # on the server's loop: as its idle sweep does
    assert game not in hub.sessions and game not in hub.clocks.timers
    stored = _until(
        lambda: (g := _stored(app, game)).version >= 1 and g, DAY + 5, "the sweep missed it"
    )
    assert len(stored.record["moves"]) == 1


def test_days_per_move_must_be_one_two_three_or_seven(app) -> None:  # type: ignore[no-untyped-def]
    client = app.state.test_client
    for days in (0, 4, 30, -1):
        r = client.post("/api/online", json=_two_humans(days))
        assert r.status_code == 422, r.text
        assert "days" in r.json()["detail"] and "1, 2, 3, 7" in r.json()["detail"]
    (ann,) = signed_up(app, "ann")
    r = ann.post("/api/lobby/tables", {"players": 2, "clock": {"days": 5}})
    assert r.status_code == 422 and "days" in r.json()["detail"]
    assert ann.get("/api/lobby").json()["tables"] == []


def test_quick_match_pools_turn_based_players_by_days(app, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setattr(online, "DAY_SECONDS", 3600.0)
    ann, bob, cat = signed_up(app, "ann", "bob", "cat")
    assert ann.post("/api/lobby/queue", {"players": 2, "clock": {"days": 3}}).json()["queued"]
    assert bob.post("/api/lobby/queue", {"players": 2, "clock": {"days": 1}}).json()["queued"]
    before = time.time()
    r = cat.post("/api/lobby/queue", {"players": 2, "clock": {"days": 3}})
    game = r.json()["game"]
    assert game is not None
    mine = [g for g in cat.get("/api/lobby").json()["games"] if g["game"] == game]
    st = _state(cat, game, mine[0]["token"])
    assert st["rated"] and st["clock"]["days"] == 3
    assert before + 3 * 3600 <= st["clock"]["deadline_at"] <= time.time() + 3 * 3600
    assert sorted(st["players"]) == ["ann", "cat"]
    assert bob.get("/api/lobby").json()["queued"]  # still waiting for a 1-day game


def test_the_abandonment_rule_holds_for_real_time_games_only(app, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setattr(online, "DAY_SECONDS", 3600.0)
    ann, bob, cat = signed_up(app, "ann", "bob", "cat")
    _table_game([ann, bob], clock={"days": 2})
    # A turn-based rated game in progress: more of them, or a real-time one.
    _table_game([ann, cat], clock={"days": 7})
    game, _ = _table_game([ann, bob], clock={"minutes": 5, "increment": 3})
    # A real-time rated game in progress: nothing rated more, not even turn-based.
    said = f"rated: your rated game {game} is still being played; finish or resign it first"
    r = ann.post("/api/lobby/tables", {"players": 2, "clock": {"days": 1}})
    assert r.status_code == 409 and r.json()["detail"] == said
    r = ann.post("/api/lobby/queue", {"players": 2, "clock": {"days": 1}})
    assert r.status_code == 409 and r.json()["detail"] == said


def test_games_waiting_for_your_move_are_listed_for_the_player_to_move_only(
    app, monkeypatch
) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setattr(online, "DAY_SECONDS", 3600.0)
    ann, bob = signed_up(app, "ann", "bob")
    assert Player(app, "stranger").get("/api/account/waiting").status_code == 401
    assert ann.get("/api/account/waiting").json() == {"games": []}
    game, tokens = _table_game([ann, bob], clock={"days": 1})
    players = [ann, bob]
    st = _state(ann, game, tokens[0])
    mover = st["to_move"]
    waiting = players[mover].get("/api/account/waiting").json()["games"]
    assert [(w["game"], w["seat"]) for w in waiting] == [(game, mover)]
    assert waiting[0]["link"] == f"/#/online/{game}/{tokens[mover]}"
    assert waiting[0]["opponents"] == [players[1 - mover].name]
    assert waiting[0]["deadline_at"] == st["clock"]["deadline_at"]
    assert players[1 - mover].get("/api/account/waiting").json() == {"games": []}
    legal = _state(players[mover], game, tokens[mover])["legal"]
    r = players[mover].post(
        f"/api/online/{game}/moves",
        {"move": legal[0], "version": st["version"]},
        headers=_auth(tokens[mover]),
    )
    assert r.status_code == 200, r.text
    assert players[mover].get("/api/account/waiting").json() == {"games": []}
    waiting = players[1 - mover].get("/api/account/waiting").json()["games"]
    assert [(w["game"], w["seat"]) for w in waiting] == [(game, 1 - mover)]
    # A resign ends it: nobody waits on it any more.
    v = _state(ann, game, tokens[0])["version"]
    r = ann.post(f"/api/online/{game}/resign", {"version": v}, headers=_auth(tokens[0]))
    assert r.status_code == 200
    assert bob.get("/api/account/waiting").json() == {"games": []}


def test_a_missed_deadline_in_a_rated_game_of_three_drops_that_player_and_the_rest_go_on(
    app,
) -> None:  # type: ignore[no-untyped-def]
    ann, bob, cat = signed_up(app, "ann", "bob", "cat")
    game, tokens = _table_game([ann, bob, cat], clock={"days": 1})
    st = _state(ann, game, tokens[0])
    idle = st["to_move"]
    first_deadline = st["clock"]["deadline_at"]

    def dropped() -> dict[str, Any] | None:
        s = _state(ann, game, tokens[0])
        return s if s["forfeits"] else None

    st = _until(dropped, DAY + 5, "nobody dropped out at the deadline")
    assert st["forfeits"][0]["seat"] == idle and st["forfeits"][0]["how"] == "time"
    # Two players are left: the game goes on; the stand-in plays the seat
    # (its move made at once), and the next human has a whole day from then.
    assert not st["finished"]

    def stand_in_moved() -> dict[str, Any] | None:
        s = _state(ann, game, tokens[0])
        return s if len(s["history"]) >= 1 and s["to_move"] != idle else None

    st = _until(stand_in_moved, 5, "the stand-in did not move for the dropped player")
    if not st["finished"]:
        assert st["clock"]["deadline_at"] >= first_deadline + DAY
    # Everyone else misses their deadlines too: the last one left wins, and
    # the dropped player ranks last.
    st = _until(
        lambda: (s := _state(ann, game, tokens[0]))["finished"] and s, 3 * DAY + 10, "never ended"
    )
    assert st["ended_by"] == "time" and len(st["forfeits"]) == 2
    assert st["forfeits"][0]["seat"] == idle
    survivor = ({0, 1, 2} - {f["seat"] for f in st["forfeits"]}).pop()
    assert st["winners"] == [survivor]
