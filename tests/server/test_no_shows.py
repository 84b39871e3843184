"""No-shows and the turn-based cap (docs/community.md, "Time controls,
resigning and abandonment"): a player paired for a rated game who never
arrives is marked in the aborted game; the first no-show in 24 hours is
forgiven, each further one pauses the player's rated play (15 minutes, 1
hour, 4 hours, then 24 hours), and casual play stays open.  An account may
have at most ``MAX_TURN_BASED_GAMES`` turn-based lobby games in progress.
"""

from __future__ import annotations

import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("fastapi")
from community_helpers import Player, running_app, signed_up

from donutbox.core.record import load
from donutbox.server import forfeits
from donutbox.server.lobby import store as lobby_store
from donutbox.server.ratings import no_shows

T0 = datetime(2026, 12, 5, 6, 0, tzinfo=UTC)


def test_the_first_no_show_is_forgiven_and_later_ones_pause_longer() -> None:
    minute = timedelta(minutes=1)
    assert no_shows.paused_until([], T0) is None
    assert no_shows.paused_until([T0 - minute], T0) is None  # the first: forgiven
    # The second, a minute ago: 15 minutes from it, 14 from now.
    assert no_shows.paused_until([T0 - 3 * 60 * minute, T0 - minute], T0) == T0 + 14 * minute
    # Third and fourth: 1 hour, then 4 hours from the last.
    three = [T0 - 120 * minute, T0 - 60 * minute, T0 - 10 * minute]
    assert no_shows.paused_until(three, T0) == T0 + 50 * minute
    assert no_shows.paused_until([*three, T0], T0) == T0 + 240 * minute
    # Fifth and later: 24 hours.
    many = [T0 - k * minute for k in range(7)]
    assert no_shows.paused_until(many, T0) == T0 + 24 * 60 * minute
    # A pause that has run out; a no-show older than 24 hours not counted.
    assert no_shows.paused_until([T0 - 100 * minute, T0 - 20 * minute], T0) is None
    assert no_shows.paused_until([T0 - 25 * 60 * minute, T0 - minute], T0) is None
    reason = no_shows.refusal([T0 - 3 * 60 * minute, T0 - minute], T0)
    assert reason == (
        "rated: you did not arrive for 2 rated games you were paired for in the last "
        "24 hours; rated play opens again in 14 minutes (at 06:14 UTC)"
    )


@pytest.fixture
def app(tmp_path: Path):  # type: ignore[no-untyped-def]
    with running_app(f"sqlite:///{tmp_path / 'c.db'}") as application:
        yield application


def _table_game(app: Any, host: Player, guest: Player, **table: Any) -> tuple[str, list[str]]:
    t = host.post("/api/lobby/tables", {"players": 2, **table})
    assert t.status_code == 200, t.text
    r = guest.post(f"/api/lobby/tables/{t.json()['id']}/join")
    assert r.status_code == 200, r.text
    game = r.json()["game"]
    tokens = []
    for p in (host, guest):
        mine = [g for g in p.get("/api/lobby").json()["games"] if g["game"] == game]
        tokens.append(mine[0]["token"])
    return game, tokens


def _arrive(app: Any, game: str, token: str) -> None:
    with app.state.test_client.websocket_connect(f"/api/online/{game}/ws") as ws:
        ws.send_json({"type": "hello", "token": token})
        assert ws.receive_json()["type"] == "welcome"


def _aborted(app: Any, game: str) -> Any:
    deadline = time.monotonic() + 20
    while not app.state.hub.store.get(game).finished:
        assert time.monotonic() < deadline, "the rated game was never aborted"
        time.sleep(0.1)
    return load(app.state.hub.store.get(game).record)


def test_a_player_who_twice_never_arrives_has_rated_play_paused(app, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setattr(forfeits, "ABORT_SECONDS", 1.0)
    ann, bob = signed_up(app, "ann", "bob")
    # Ann opens and arrives; Bob joins and never comes: aborted, Bob absent.
    game, tokens = _table_game(app, ann, bob)
    _arrive(app, game, tokens[0])
    record = _aborted(app, game)
    assert record.meta["aborted"] is True and record.meta["absent"] == [1]
    # No rematch of it: it would wait for Bob again.
    r = ann.post(f"/api/rematch/{game}")
    assert r.status_code == 409
    assert r.json()["detail"] == (
        "rematch: the game was aborted (not every player arrived); find a new opponent"
    )
    # The first no-show is forgiven: both may queue (and leave the queue),
    # and the lobby shows no pause.
    assert bob.get("/api/lobby").json()["rated_pause"] is None
    for p in (ann, bob):
        assert p.post("/api/lobby/queue", {"players": 2}).status_code == 200
        assert p.post("/api/lobby/queue/leave").status_code == 200
    # Again: Bob hosts this time, Ann arrives, Bob stays away.
    game, tokens = _table_game(app, bob, ann)
    _arrive(app, game, tokens[1])
    assert _aborted(app, game).meta["absent"] == [0]
    # Bob: paused 15 minutes from his no-show, on every way into a rated game.
    r = bob.post("/api/lobby/queue", {"players": 2})
    assert r.status_code == 409
    detail = r.json()["detail"]
    assert detail.startswith("rated: you did not arrive for 2 rated games you were paired for")
    assert "rated play opens again in 15 minutes" in detail or "in 14 minutes" in detail
    # The lobby says so before he tries: the same reason, and when it ends
    # (15 minutes after the no-show, which was moments ago).
    pause = bob.get("/api/lobby").json()["rated_pause"]
    assert pause["reason"] == detail
    assert 14 * 60 - 30 < pause["until"] - time.time() <= 15 * 60
    assert ann.get("/api/lobby").json()["rated_pause"] is None
    assert bob.post("/api/lobby/tables", {"players": 2}).status_code == 409
    assert not bob.get("/api/lobby").json()["queued"]  # nothing changed
    t = ann.post("/api/lobby/tables", {"players": 2}).json()
    r = bob.post(f"/api/lobby/tables/{t['id']}/join")
    assert r.status_code == 409 and r.json()["detail"] == detail
    # Casual play stays open to him; Ann, who came both times, is not paused.
    assert bob.post("/api/lobby/tables", {"players": 2, "rated": False}).status_code == 200
    assert ann.post("/api/lobby/queue", {"players": 2}).status_code == 200
    # No one's rating moved.
    key = record.rules.key()
    ratings = app.state.community.ratings
    assert ratings.rating(1, key).games == 0 and ratings.rating(2, key).games == 0


def test_an_account_has_at_most_so_many_turn_based_games_in_progress(app, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setattr(lobby_store, "MAX_TURN_BASED_GAMES", 2)
    ann, bob, cat = signed_up(app, "ann", "bob", "cat")
    days = {"clock": {"days": 3}, "rated": False}
    _table_game(app, ann, bob, **days)
    _table_game(app, ann, cat, **days)
    # Ann has two: a third turn-based table is refused, in one line.
    r = ann.post("/api/lobby/tables", {"players": 2, **days})
    assert r.status_code == 409
    assert r.json()["detail"] == (
        "turn-based: you have 2 turn-based games in progress, the most one account may have; "
        "finish some first"
    )
    assert ann.post("/api/lobby/queue", {"players": 2, "clock": {"days": 3}}).status_code == 409
    # Nor may she join Bob's (Bob has one: he may open it).
    t = bob.post("/api/lobby/tables", {"players": 2, **days})
    assert t.status_code == 200, t.text
    r = ann.post(f"/api/lobby/tables/{t.json()['id']}/join")
    assert r.status_code == 409 and r.json()["detail"].startswith("turn-based: you have 2")
    # A real-time table is not turn-based: still open to her.
    assert ann.post("/api/lobby/tables", {"players": 2, "rated": False}).status_code == 200
