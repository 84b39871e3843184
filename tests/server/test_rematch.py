"""The end of a lobby game (rematch.py, head_to_head.py, the analysis of an
online game): a rematch offered and accepted by two real accounts makes a
new game with the seats turned, the rules and clock kept; it is pushed on
the other player's lobby socket; declined, it closes; the players (never a
spectator, never while it runs) may analyse their game; profiles count
wins and losses and the head-to-head record, worked out from the games'
final scores."""

from __future__ import annotations

import json
import os
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest
from community_helpers import fresh_pg_database, play_to_the_end, running_app, signed_up

PG_URL = os.environ.get("DONUTBOX_TEST_PG_URL")


@pytest.fixture
def app(tmp_path: Path):  # type: ignore[no-untyped-def]
    with running_app(f"sqlite:///{tmp_path / 'r.db'}") as application:
        yield application


@pytest.fixture
def pg_app():  # type: ignore[no-untyped-def]
    """The app on a PostgreSQL database of its own (migration 0008 there)."""
    if not PG_URL:
        pytest.skip("no PostgreSQL server: set DONUTBOX_TEST_PG_URL")
    pytest.importorskip("psycopg")
    with fresh_pg_database(PG_URL, "rematch") as url, running_app(url) as application:
        yield application


def _seat_tokens(players: list[Any], game_id: str) -> list[str]:
    """Each player's seat token of ``game_id``, in seat order (their own
    lobby state's games: the link carries the seat)."""
    by_seat: dict[int, str] = {}
    for p in players:
        (g,) = [g for g in p.get("/api/lobby").json()["games"] if g["game"] == game_id]
        by_seat[g["seat"]] = g["token"]
    return [by_seat[s] for s in sorted(by_seat)]


def _place(scores: list[int], delivered: list[int], seat: int) -> int:
    keys = list(zip(scores, delivered, strict=True))
    return 1 + sum(1 for k in keys if k > keys[seat])


def test_a_rematch_accepted_by_both_makes_a_new_game_with_the_seats_turned(app) -> None:  # type: ignore[no-untyped-def]
    _rematch_journey(app)


def test_a_rematch_on_postgresql(pg_app) -> None:  # type: ignore[no-untyped-def]
    _rematch_journey(pg_app)


def _rematch_journey(app: Any) -> None:
    ann, bob, cat = signed_up(app, "ann", "bob", "cat")
    t = ann.post("/api/lobby/tables", {"players": 2, "clock": {"minutes": 3, "increment": 2}})
    game_id = bob.post(f"/api/lobby/tables/{t.json()['id']}/join").json()["game"]
    tokens = _seat_tokens([ann, bob], game_id)
    # Not while the game runs; never for someone who did not play it.
    r = ann.post(f"/api/rematch/{game_id}")
    assert r.status_code == 409 and r.json()["detail"] == "rematch: the game is still being played"
    assert cat.post(f"/api/rematch/{game_id}").status_code == 404
    assert cat.get(f"/api/rematch/{game_id}").status_code == 404
    play_to_the_end(ann.client, game_id, tokens)
    with bob.client.websocket_connect("/api/lobby/ws") as ws:
        json.loads(ws.receive_text())
        offer = ann.post(f"/api/rematch/{game_id}").json()
        assert offer["accepted"] == ["ann"] and offer["waiting"] == ["bob"]
        assert offer["new_game"] is None
        # Bob's lobby socket brings the offer without his asking.
        for _ in range(10):
            pushed = json.loads(ws.receive_text())["lobby"]["rematches"]
            if pushed:
                break
        assert [(o["game"], o["accepted"], o["waiting"]) for o in pushed] == [
            (game_id, ["ann"], ["bob"])
        ]
    # Ann asking again changes nothing; Bob's acceptance makes the game.
    assert ann.post(f"/api/rematch/{game_id}").json()["new_game"] is None
    done = bob.post(f"/api/rematch/{game_id}").json()
    new_id = done["new_game"]
    assert new_id and new_id != game_id and done["waiting"] == []
    # One game only, however often it is accepted again.
    assert ann.post(f"/api/rematch/{game_id}").json()["new_game"] == new_id
    # (The old game may still be listed until the lobby's ticker settles it.)
    mine = {
        p.name: [g for g in p.get("/api/lobby").json()["games"] if g["game"] != game_id]
        for p in (ann, bob)
    }
    assert [g["game"] for g in mine["ann"]] == [new_id] == [g["game"] for g in mine["bob"]]
    # Seats turned: Bob (seat 1 before) now starts; same rules, clock, rated.
    assert mine["bob"][0]["seat"] == 0 and mine["ann"][0]["seat"] == 1
    assert mine["ann"][0]["rules"] == t.json()["rules_key"] and mine["ann"][0]["rated"]
    state = ann.get(
        f"/api/online/{new_id}", headers={"Authorization": f"Bearer {mine['ann'][0]['token']}"}
    ).json()
    assert state["players"] == ["bob", "ann"] and state["rated"]
    assert state["clock"]["remaining_ms"] == [180_000, 180_000]
    # A declined offer closes, and is told to the one who offered it.
    new_tokens = _seat_tokens([ann, bob], new_id)
    play_to_the_end(ann.client, new_id, new_tokens)
    assert bob.post(f"/api/rematch/{new_id}").json()["waiting"] == ["ann"]
    declined = ann.post(f"/api/rematch/{new_id}/decline").json()
    assert declined["declined"] == "ann" and declined["new_game"] is None
    (seen,) = [o for o in bob.get("/api/lobby").json()["rematches"] if o["game"] == new_id]
    assert seen["declined"] == "ann"
    # Declined means no: it is not offered again at once (nor made).
    again = bob.post(f"/api/rematch/{new_id}")
    assert again.status_code == 409 and again.json()["detail"] == "rematch: ann declined it"
    assert bob.get(f"/api/rematch/{new_id}").json()["new_game"] is None


def test_the_players_may_analyse_their_online_game_once_it_is_over(app) -> None:  # type: ignore[no-untyped-def]
    ann, bob = signed_up(app, "ann", "bob")
    t = ann.post("/api/lobby/tables", {"players": 2, "rated": False}).json()
    game_id = bob.post(f"/api/lobby/tables/{t['id']}/join").json()["game"]
    tokens = _seat_tokens([ann, bob], game_id)
    url = f"/api/games/{game_id}/analysis"
    seat = {"Authorization": f"Bearer {tokens[0]}"}
    r = ann.client.post(url, json={"seconds": 0.05}, headers=seat)
    assert r.status_code == 409
    assert r.json()["detail"] == (
        "analysis: the game is still being played; it opens when the game is over"
    )
    assert ann.client.get(url, headers=seat).status_code == 409
    final = play_to_the_end(ann.client, game_id, tokens)
    # A stranger's token opens nothing.
    stranger = {"Authorization": "Bearer " + "x" * 43}
    assert ann.client.post(url, json={"seconds": 0.05}, headers=stranger).status_code == 404
    r = ann.client.post(url, json={"seconds": 0.05}, headers=seat)
    assert r.status_code == 202 and r.json()["state"] in ("queued", "running")
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        doc = ann.client.get(url, headers={"Authorization": f"Bearer {tokens[1]}"}).json()
        if doc["state"] == "done":
            break
        time.sleep(0.2)
    assert doc["state"] == "done" and len(doc["moves"]) == len(final["history"])


def test_profiles_count_wins_draws_losses_and_the_head_to_head(app) -> None:  # type: ignore[no-untyped-def]
    ann, bob, cat = signed_up(app, "ann", "bob", "cat")
    finals = []
    for _ in range(2):  # two casual games of Ann and Bob (Ann at seat 0)
        t = ann.post("/api/lobby/tables", {"players": 2, "rated": False}).json()
        game_id = bob.post(f"/api/lobby/tables/{t['id']}/join").json()["game"]
        finals.append(play_to_the_end(ann.client, game_id, _seat_tokens([ann, bob], game_id)))
    places = [[_place(f["scores"], f["delivered"], s) for s in range(2)] for f in finals]
    wins = sum(1 for a, b in places if a < b)
    draws = sum(1 for a, b in places if a == b)
    losses = sum(1 for a, b in places if a > b)
    profile = cat.get("/api/players/ann").json()
    assert profile["results"] == {"games": 2, "wins": wins, "draws": draws, "losses": losses}
    vs = cat.get("/api/players/ann/vs/bob").json()
    assert (vs["games"], vs["wins"], vs["draws"], vs["losses"]) == (2, wins, draws, losses)
    back = cat.get("/api/players/bob/vs/ann").json()
    assert (back["wins"], back["losses"]) == (losses, wins)
    assert [g["result"] for g in vs["list"]] == [
        "win" if a < b else "loss" if a > b else "draw" for a, b in reversed(places)
    ]
    assert cat.get("/api/players/ann/vs/cat").json()["games"] == 0
    r = cat.get("/api/players/ann/vs/nobody")
    assert r.status_code == 404 and r.json()["detail"] == "other: no such player"
    r = cat.get("/api/players/ann/vs/ANN")
    assert r.status_code == 422 and r.json()["detail"].startswith("other:")


def test_acceptances_at_the_same_moment_make_one_game_on_postgresql() -> None:
    """Three players of a game of three offer or accept at the same moment
    (three threads, three connections, as three server processes would):
    one offer row, every acceptance kept, and exactly one of them makes
    the game; five times over."""
    if not PG_URL:
        pytest.skip("no PostgreSQL server: set DONUTBOX_TEST_PG_URL")
    pytest.importorskip("psycopg")
    from donutbox.server.accounts import User
    from donutbox.server.lobby.rematch import Rematches
    from donutbox.server.migrate import upgrade
    from donutbox.server.storage import make_engine

    with fresh_pg_database(PG_URL, "rematch_race") as url:
        engine = make_engine(url)
        assert upgrade(engine)
        r = Rematches(engine)
        users = [User(i, f"p{i}") for i in (1, 2, 3)]
        for round_ in range(5):
            game = f"race{round_}"
            gate = threading.Barrier(len(users))

            def accept(u: User, game: str = game, gate: threading.Barrier = gate) -> bool:
                gate.wait()
                return r.accept(game, u, users)[1]

            with ThreadPoolExecutor(len(users)) as pool:
                starts = list(pool.map(accept, users))
            assert starts.count(True) == 1, starts
            offer = r.offer(game)
            assert offer is not None and sorted(json.loads(offer.accepted)) == [1, 2, 3]
        engine.dispose()
