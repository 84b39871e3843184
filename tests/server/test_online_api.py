"""Online play through the ASGI test client: links, per-reader states, the
WebSocket protocol, takebacks, clocks, limits, and a hidden-information scan
of every message of whole games."""

from __future__ import annotations

import json
import random
import re
from collections import Counter as Multiset
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("fastapi")
from fastapi.testclient import TestClient
from starlette.websockets import WebSocketDisconnect

from donutbox.core import Game
from donutbox.core.cards import rotate
from donutbox.core.record import load
from donutbox.server.app import create_app

FACE = re.compile(r"[CSHBR]{4}")


@pytest.fixture
def client(tmp_path: Path):  # type: ignore[no-untyped-def]
    with TestClient(create_app(f"sqlite:///{tmp_path / 'games.db'}", inline_ai=True)) as c:
        yield c


def _online(client: TestClient, **body: Any) -> dict[str, Any]:
    body.setdefault("seats", [{"name": "Ann"}, {"name": "Bob"}])
    r = client.post("/api/online", json=body)
    assert r.status_code == 200, r.text
    return r.json()


def _auth(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


class Reader:
    """One WebSocket reader that logs everything it is sent."""

    def __init__(self, client: TestClient, game_id: str, token: str | None) -> None:
        self.cm = client.websocket_connect(f"/api/online/{game_id}/ws")
        self.ws = self.cm.__enter__()
        self.log: list[dict[str, Any]] = []
        self.state: dict[str, Any] | None = None
        if token is not None:
            self.send(type="hello", token=token)
            self.welcome = self.until("welcome")
            self.until("state")

    def send(self, **msg: Any) -> None:
        self.ws.send_text(json.dumps(msg))

    def recv(self) -> dict[str, Any]:
        msg = self.ws.receive_json()
        self.log.append(msg)
        if msg["type"] == "state":
            self.state = msg["state"]
        return msg

    def until(self, kind: str, **match: Any) -> dict[str, Any]:
        for _ in range(50):
            msg = self.recv()
            if msg["type"] == kind and all(msg.get(k) == v for k, v in match.items()):
                return msg
        raise AssertionError(f"no {kind} message")

    def presence(self, expected: dict[str, Any]) -> None:
        for _ in range(50):
            msg = self.recv()
            if msg["type"] == "presence" and msg["presence"] == expected:
                return
        raise AssertionError(f"presence never became {expected}")

    def version(self, v: int) -> dict[str, Any]:
        for _ in range(50):
            msg = self.recv()
            if msg["type"] == "state" and msg["state"]["version"] == v:
                return msg["state"]
        raise AssertionError(f"no state at version {v}")

    def close(self) -> None:
        self.cm.__exit__(None, None, None)


def _deal(client: TestClient, game_id: str) -> Game:
    """The game as stored (the server's own deal), read from the database."""
    stored = client.app.state.hub.store.get(game_id)  # type: ignore[attr-defined]
    return load(stored.record)


def test_links_open_one_seat_each_and_the_spectator_sees_no_tray(client: TestClient) -> None:
    g = _online(client)
    t0, t1 = g["seats"][0]["token"], g["seats"][1]["token"]
    spectator = g["spectator"]["token"]
    # At least 128 bits: 32 URL-safe base64 characters are 192 bits.
    assert len({t0, t1, spectator}) == 3 and all(len(t) >= 22 for t in (t0, t1, spectator))
    assert g["seats"][0]["link"] == f"/#/online/{g['id']}/{t0}"
    deal = _deal(client, g["id"])
    s0 = client.get(f"/api/online/{g['id']}", headers=_auth(t0)).json()
    s1 = client.get(f"/api/online/{g['id']}", headers=_auth(t1)).json()
    sp = client.get(f"/api/online/{g['id']}", headers=_auth(spectator)).json()
    assert s0["player"] == 0 and s0["tray"] == list(deal.trays[0])
    assert s1["player"] == 1 and s1["tray"] == list(deal.trays[1])
    assert sp["player"] == -1 and sp["tray"] == [] and sp["legal"] == []
    assert s0["legal"] and s1["legal"] == []  # seat 0 moves first
    for bad in ("", "Bearer nope", f"Bearer {t0}x", t0[:-1]):
        r = client.get(f"/api/online/{g['id']}", headers={"Authorization": bad})
        # The answer to an id that does not exist: nothing says the game is real.
        assert (r.status_code, r.json()) == (404, {"detail": "no such game"})
    # The local (one-browser) endpoints do not open an online game, even
    # with a seat's token, and the saved-games list does not show it.
    assert client.get(f"/api/games/{g['id']}", headers=_auth(t0)).status_code == 404
    r = client.post(
        f"/api/games/{g['id']}/moves",
        json={"move": s0["legal"][0], "version": 0},
        headers=_auth(t0),
    )
    assert r.status_code == 404
    r = client.post(f"/api/games/{g['id']}/undo", json={"version": 0}, headers=_auth(t0))
    assert r.status_code == 404
    assert all(row["id"] != g["id"] for row in client.get("/api/games", headers=_auth(t0)).json())


def test_http_moves_need_the_seat_whose_turn_it_is(client: TestClient) -> None:
    g = _online(client)
    t0, t1 = g["seats"][0]["token"], g["seats"][1]["token"]
    spectator = g["spectator"]["token"]
    legal = client.get(f"/api/online/{g['id']}", headers=_auth(t0)).json()["legal"]
    url = f"/api/online/{g['id']}/moves"
    r = client.post(url, json={"move": legal[0], "version": 0}, headers=_auth(t1))
    assert r.status_code == 403 and "not your turn" in r.json()["detail"]
    r = client.post(url, json={"move": legal[0], "version": 0}, headers=_auth(spectator))
    assert r.status_code == 403 and "spectator" in r.json()["detail"]
    r = client.post(url, json={"move": legal[0], "version": 0})
    assert (r.status_code, r.json()) == (404, {"detail": "no such game"})  # no token
    r = client.post(url, json={"move": legal[0], "version": 0}, headers=_auth(t0))
    assert r.status_code == 200 and r.json()["version"] == 1
    r = client.post(url, json={"move": legal[0], "version": 0}, headers=_auth(t0))
    assert r.status_code == 409 and "stale" in r.json()["detail"]
    s1 = client.get(f"/api/online/{g['id']}", headers=_auth(t1)).json()
    assert s1["history"] == [legal[0]] and s1["to_move"] == 1


def test_bad_creation_requests_name_the_field(client: TestClient) -> None:
    r = client.post("/api/online", json={"seats": [{"kind": "wizard"}, {}]})
    assert r.status_code == 422 and "seats[0].kind" in r.json()["detail"]
    r = client.post("/api/online", json={"seats": [{"kind": "random"}, {"kind": "greedy"}]})
    assert r.status_code == 422 and "human" in r.json()["detail"]
    r = client.post("/api/online", json={"seats": [{}]})
    assert r.status_code == 422
    r = client.post("/api/online", json={"seats": [{"name": "x" * 41}, {}]})
    assert r.status_code == 422 and r.json()["detail"].startswith("seats.0.name:")
    # Found by the fuzzer: JSON's non-standard Infinity once made a 500.
    r = client.post(
        "/api/online",
        content=b'{"clock": Infinity, "seats": [{}, {}]}',
        headers={"Content-Type": "application/json"},
    )
    assert r.status_code == 422 and r.json()["detail"].startswith("clock")
    assert "\n" not in r.json()["detail"]


def test_names_are_kept_as_text(client: TestClient) -> None:
    name = "<img src=x onerror=alert(1)>"
    g = _online(client, seats=[{"name": name}, {"name": "  Bob \n  Smith "}])
    state = client.get(f"/api/online/{g['id']}", headers=_auth(g["seats"][0]["token"])).json()
    # Stored and sent as the very text typed (whitespace tidied): escaping is
    # the page's job, which draws names with textContent (tests/browser).
    assert state["players"] == [name, "Bob Smith"]


def test_websocket_protocol_hello_moves_presence_and_errors(client: TestClient) -> None:
    g = _online(client)
    t0, t1 = g["seats"][0]["token"], g["seats"][1]["token"]
    wrong = Reader(client, g["id"], None)
    wrong.send(type="move", move="CCSS@0,1/0", version=0)
    assert "hello" in wrong.until("error")["reason"]  # the socket stays open
    wrong.send(type="hello", token="not-a-token")
    # A wrong token: answered as an unknown game is (error, then close 4404).
    assert wrong.until("error")["reason"] == "token: no such game, or this link does not open it"
    with pytest.raises(WebSocketDisconnect) as closed:
        wrong.recv()
    assert closed.value.code == 4404
    wrong.cm.__exit__(None, None, None)
    a = Reader(client, g["id"], None)
    a.send(type="hello", token=t0)
    assert a.until("welcome") == {"type": "welcome", "seat": 0, "role": "player", "game": g["id"]}
    first = a.until("state")["state"]
    assert first["presence"] == {"connected": [True, False], "spectators": 0}
    b = Reader(client, g["id"], t1)
    a.presence({"connected": [True, True], "spectators": 0})
    watcher = Reader(client, g["id"], g["spectator"]["token"])
    assert watcher.welcome["seat"] == -1 and watcher.welcome["role"] == "spectator"
    a.presence({"connected": [True, True], "spectators": 1})
    # Malformed messages: an error naming the field, and the socket stays open.
    for bad, field in [
        ("{not json", "JSON"),
        ("[1, 2]", "object"),
        ('{"type": "dance"}', "type"),
        ('{"type": "move", "move": 5, "version": 0}', "move"),
        ('{"type": "move", "move": "CCSS@0,1/0", "version": "0"}', "version"),
        ('{"type": "answer", "version": 0, "accept": "yes"}', "accept"),
        ('{"type": "ping", "ref": [1]}', "ref"),
        ("x" * 5000, "too long"),
    ]:
        a.ws.send_text(bad)
        assert field in a.until("error")["reason"], bad
    a.ws.send_bytes(b'{"type": "ping"}')
    assert "binary" in a.until("error")["reason"]
    watcher.send(type="move", move=first["legal"][0], version=0)
    assert "spectators cannot act" in watcher.until("error")["reason"]
    b.send(type="move", move=first["legal"][0], version=0, ref=7)
    assert b.until("error")["ref"] == 7
    # A move: acknowledged to its sender, and every reader gets its own state.
    a.send(type="move", move=first["legal"][0], version=0, ref="m1")
    assert a.until("ack") == {"type": "ack", "ref": "m1", "version": 1}
    sa, sb, sw = a.version(1), b.version(1), watcher.version(1)
    assert sa["history"] == sb["history"] == sw["history"] == [first["legal"][0]]
    assert sw["tray"] == [] and sb["legal"] and sa["legal"] == []
    assert len(sa["tray"]) == 4 and sa["tray"] != sb["tray"]
    # The same move again (a second tab on an old version): refused, once.
    a.send(type="move", move=first["legal"][0], version=0, ref="m2")
    err = a.until("error")
    assert err["ref"] == "m2" and "stale" in err["reason"]
    a.send(type="sync")
    assert a.until("state")["state"]["version"] == 1
    b.close()
    a.presence({"connected": [True, False], "spectators": 1})
    a.close()
    watcher.close()


def test_takeback_needs_the_other_players_consent(client: TestClient) -> None:
    g = _online(client, takebacks=True)
    a = Reader(client, g["id"], g["seats"][0]["token"])
    b = Reader(client, g["id"], g["seats"][1]["token"])
    move = a.state["legal"][0]  # type: ignore[index]
    a.send(type="takeback", version=0)
    assert "no move to take back" in a.until("error")["reason"]
    a.send(type="move", move=move, version=0)
    b.version(1)
    a.send(type="takeback", version=1)
    asked = b.version(1)
    assert asked["takeback"] == {"by": 0, "agreed": [0]}
    b.send(type="answer", accept=False, version=1)
    declined = a.version(1)
    assert declined["takeback"] is None and declined["history"] == [move]
    a.send(type="takeback", version=1)
    b.version(1)
    a.send(type="answer", accept=True, version=1)
    assert "you asked" in a.until("error")["reason"]
    b.send(type="answer", accept=True, version=0)
    assert "stale" in b.until("error")["reason"]
    b.send(type="answer", accept=True, version=1)
    back = a.version(2)  # the version grows: 0 -> 1 (move) -> 2 (taken back)
    assert back["history"] == [] and back["to_move"] == 0 and back["takeback"] is None
    assert back["legal"] and move in back["legal"]
    # Counted, for every reader; two humans agreeing is no practice game.
    assert back["takebacks"] == 1 and back["practice"] is False
    b.send(type="answer", accept=True, version=2)
    assert "no takeback" in b.until("error")["reason"]
    a.close()
    b.close()


def test_ai_seats_play_in_online_games(client: TestClient) -> None:
    g = _online(client, seats=[{"name": "Ann"}, {"kind": "greedy"}])
    assert g["seats"][1]["token"] is None and g["seats"][1]["link"] is None
    a = Reader(client, g["id"], g["seats"][0]["token"])
    a.send(type="move", move=a.state["legal"][0], version=0)  # type: ignore[index]
    answered = a.version(2)
    assert len(answered["history"]) == 2 and answered["to_move"] == 0
    a.close()


def test_a_clock_that_runs_out_lets_the_ai_move(client: TestClient) -> None:
    g = _online(client, clock={"minutes": 0.01, "increment": 30})
    a = Reader(client, g["id"], g["seats"][0]["token"])
    assert a.state["clock"]["running"] is None  # type: ignore[index]  # not all seated
    b = Reader(client, g["id"], g["seats"][1]["token"])
    # Both seats have joined: seat 0's 0.6 seconds run; the server's medium
    # AI moves for it when they are gone, and it plays on with the increment.
    after = b.version(1)
    assert len(after["history"]) == 1 and after["to_move"] == 1
    assert after["clock"]["flagged"] == [True, False]
    assert after["clock"]["remaining_ms"][0] == 30_000
    assert after["clock"]["running"] == 1
    assert 0 < after["clock"]["remaining_ms"][1] <= 600
    a.close()
    b.close()


def test_rate_limit_refuses_floods_and_closes_abusers(client: TestClient) -> None:
    g = _online(client)
    a = Reader(client, g["id"], g["seats"][0]["token"])
    for i in range(40):
        a.send(type="ping", ref=i)
    replies = []
    while len(replies) < 40:
        msg = a.recv()
        if msg["type"] in ("pong", "error"):
            replies.append(msg)
    pongs = [r for r in replies if r["type"] == "pong"]
    limited = [r for r in replies if r["type"] == "error" and "rate limit" in r["reason"]]
    # A burst of 30 messages passes (the hello and 29 pings, plus what
    # refills meanwhile at 10 a second); the rest is refused.
    assert len(pongs) + len(limited) == 40
    assert 29 <= len(pongs) < 40 and limited
    # Keep flooding: after 50 refusals in a row the server hangs up.
    for i in range(100):
        a.send(type="ping", ref=i)
    with pytest.raises(WebSocketDisconnect):
        for _ in range(200):
            a.recv()
    a.cm.__exit__(None, None, None)


def _hidden_faces(game: Game, reader: int) -> set[str]:
    """Faces (any rotation) that ``reader`` may not see in any form: in
    another tray or any pile, and nowhere public or in the reader's tray."""
    seen: set[str] = set()
    if reader >= 0:
        seen.update(game.trays[reader])
    for ply, m in enumerate(game.history):
        # Placed cards are public; a swapped card only to the one who swapped.
        if m.kind == "place" or (m.kind == "swap" and ply % game.players == reader):
            seen.add(m.face)
    hidden = set()
    for p in range(game.players):
        for face in list(game.piles[p]) + ([] if p == reader else list(game.trays[p])):
            if face not in seen:
                hidden.update(rotate(face, r) for r in (0, 90, 180, 270))
    for f in seen:
        hidden.difference_update(rotate(f, r) for r in (0, 90, 180, 270))
    return hidden


@pytest.mark.parametrize("seed", [1, 2])
def test_no_message_shows_a_reader_a_hidden_card(client: TestClient, seed: int) -> None:
    g = _online(client, layout="splitzkies" if seed == 2 else "squared-away")
    readers = {
        0: Reader(client, g["id"], g["seats"][0]["token"]),
        1: Reader(client, g["id"], g["seats"][1]["token"]),
        -1: Reader(client, g["id"], g["spectator"]["token"]),
    }
    rng = random.Random(seed)
    version = 0
    while True:
        state = readers[0].state
        assert state is not None
        if state["finished"]:
            break
        mover = readers[state["to_move"]]
        legal = mover.state["legal"]  # type: ignore[index]
        mover.send(type="move", move=rng.choice(legal), version=version)
        version += 1
        for r in readers.values():
            r.version(version)
    record = client.get(f"/api/games/{g['id']}/record", headers=_auth(g["spectator"]["token"]))
    assert record.status_code == 200
    full = record.json()
    assert len(full["moves"]) == version
    checked = 0
    for who, r in readers.items():
        for msg in r.log:
            if msg["type"] != "state":
                continue
            st = msg["state"]
            replay = dict(full, moves=full["moves"][: st["version"]])
            replay.pop("end", None)
            game = load(replay)
            # The tray is the reader's own, and nothing else names a card
            # the reader has not seen...
            assert st["tray"] == (list(game.trays[who]) if who >= 0 else [])
            unseen = st.pop("unseen")
            text = json.dumps(st)
            leaked = set(FACE.findall(text)) & _hidden_faces(game, who)
            assert not leaked, (who, st["version"], leaked)
            # ...except the multiset of unseen cards, which is public
            # knowledge (the deck minus what the reader has seen), sorted.
            for p in range(game.players):
                expected = Multiset(game.piles[p])
                if p != who:
                    expected.update(game.trays[p])
                assert unseen[p] == sorted(expected.elements())
            checked += 1
    assert checked >= 3 * version
    for r in readers.values():
        r.close()
