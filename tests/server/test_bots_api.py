"""The Bot API against a real ``donutbox serve`` (docs/bots.md): tokens
shown once, listed and revoked; a bot token reaches only its own games and
challenges (every route tried with another bot's token, a revoked one, none,
and a person's session); a game stream holds exactly what the seat's page
would: never the other tray or a pile's order."""

from __future__ import annotations

import json
import queue
import random
import re
import threading
import time
from collections import Counter as Multiset
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from bot_helpers import Person, bearer, ndjson

from donutbox.core import Game
from donutbox.core.cards import rotate
from donutbox.core.record import load

FACE = re.compile(r"[CSHBR]{4}")


class Stream:
    """A streamed NDJSON response read in a thread into a queue."""

    def __init__(self, base: str, path: str, token: str) -> None:
        self.messages: queue.Queue[dict[str, Any]] = queue.Queue()
        self.log: list[dict[str, Any]] = []
        self.status = 0
        self._ready = threading.Event()
        self._client = httpx.Client(base_url=base, timeout=httpx.Timeout(30.0, read=None))
        self._thread = threading.Thread(target=self._read, args=(path, token), daemon=True)
        self._thread.start()
        assert self._ready.wait(10)

    def _read(self, path: str, token: str) -> None:
        try:
            with self._client.stream("GET", path, headers=bearer(token)) as r:
                self.status = r.status_code
                self._ready.set()
                for m in ndjson(r):
                    self.log.append(m)
                    self.messages.put(m)
        except httpx.HTTPError:
            pass
        finally:
            self._ready.set()

    def next(self, kind: str, timeout: float = 20) -> dict[str, Any]:
        deadline = time.monotonic() + timeout
        while True:
            m = self.messages.get(timeout=max(0.01, deadline - time.monotonic()))
            if m.get("type") == kind:
                return m

    def close(self) -> None:
        self._client.close()


@pytest.fixture(scope="module")
def site(module_server) -> Iterator[dict[str, Any]]:  # type: ignore[no-untyped-def]
    """A server with two people: Ann owns bots ``ann1`` and ``ann2``, Bob
    owns ``bob1``; a token of each."""
    ann, bob = Person(module_server.url, "Ann"), Person(module_server.url, "Bob")
    yield {
        "server": module_server,
        "url": module_server.url,
        "ann": ann,
        "bob": bob,
        "ann1": ann.bot("ann1"),
        "ann2": ann.bot("ann2"),
        "bob1": bob.bot("bob1"),
    }
    ann.http.close()
    bob.http.close()


def _challenge_accepted(site: dict[str, Any], by: str, to: str) -> str:
    """Bot ``by`` challenges bot ``to``, which accepts: the game's id."""
    url = site["url"]
    r = httpx.post(
        f"{url}/api/bot/challenge/{to}",
        json={"clock": {"minutes": 5, "increment": 3}, "rated": True},
        headers=bearer(site[by]),
    )
    assert r.status_code == 200, r.text
    r = httpx.post(f"{url}/api/bot/challenge/{r.json()['id']}/accept", headers=bearer(site[to]))
    assert r.status_code == 200, r.text
    game: str = r.json()["game"]
    return game


def test_tokens_are_shown_once_listed_with_their_last_use_and_revocable(site) -> None:  # type: ignore[no-untyped-def]
    ann: Person = site["ann"]
    url = site["url"]
    listed = ann.get("/api/account/bots").json()
    assert [b["name"] for b in listed] == ["ann1", "ann2"]
    assert "token" not in json.dumps(listed).replace('"tokens"', "")  # ids only
    r = ann.post("/api/account/bots/ann1/tokens")
    second = r.json()
    assert second["token"].startswith("dbx_") and second["token"] != site["ann1"]
    assert httpx.get(f"{url}/api/bot/account", headers=bearer(second["token"])).json() == {
        "name": "ann1",
        "bot": True,
    }
    tokens = next(b for b in ann.get("/api/account/bots").json() if b["name"] == "ann1")["tokens"]
    used = next(t for t in tokens if t["id"] == second["id"])
    assert used["last_used"] is not None and used["revoked"] is None
    assert ann.post(f"/api/account/bots/ann1/tokens/{second['id']}/revoke").status_code == 200
    r = httpx.get(f"{url}/api/bot/account", headers=bearer(second["token"]))
    assert r.status_code == 401
    assert r.json()["detail"] == "token: no such bot token, or it was revoked"
    # The first token still works; Bob can neither mint nor revoke Ann's.
    assert httpx.get(f"{url}/api/bot/account", headers=bearer(site["ann1"])).status_code == 200
    bob: Person = site["bob"]
    assert bob.post("/api/account/bots/ann1/tokens").status_code == 404
    assert bob.post("/api/account/bots/ann1/tokens/1/revoke").status_code == 404
    # A bot's name is an account name: taken for people too, and no
    # password signs a bot in.
    assert bob.post("/api/account/bots", {"name": "Ann"}).json()["detail"] == "name: already taken"
    r = bob.post("/api/account/signin", {"name": "ann1", "password": "correct horse battery"})
    assert r.status_code == 401


def test_a_bot_token_opens_only_its_own_games_and_challenges(site) -> None:  # type: ignore[no-untyped-def]
    url = site["url"]
    game = _challenge_accepted(site, "ann1", "bob1")
    other = httpx.post(
        f"{url}/api/bot/challenge/ann1", json={"rated": False}, headers=bearer(site["bob1"])
    ).json()["id"]
    routes = [
        ("GET", f"/api/bot/game/stream/{game}", None),
        ("POST", f"/api/bot/game/{game}/move", {"move": "CCBB@0,-2/0", "version": 0}),
        ("POST", f"/api/bot/game/{game}/resign", {"version": 0}),
        ("GET", f"/api/bot/game/{game}/record", None),
        ("POST", f"/api/bot/challenge/{other}/accept", None),
        ("POST", f"/api/bot/challenge/{other}/decline", {"reason": "no"}),
    ]
    ann: Person = site["ann"]
    for method, path, body in routes:
        # A stranger bot (ann2): exactly the answer to an unknown id.
        r = httpx.request(method, url + path, json=body, headers=bearer(site["ann2"]))
        assert r.status_code == 404, (path, r.text)
        assert r.json()["detail"] in ("no such game", "challenge: no such challenge")
        made_up = path.replace(game, "A" * 16).replace(other, "B" * 12)
        r2 = httpx.request(method, url + made_up, json=body, headers=bearer(site["ann2"]))
        assert (r2.status_code, r2.json()) == (404, r.json())
        # No token, a made-up one, and a person's session (the bot's owner):
        # 401 with one line.
        for headers in ({}, bearer("dbx_" + "x" * 32), {"Authorization": "Basic abc"}):
            r = httpx.request(method, url + path, json=body, headers=headers)
            assert r.status_code == 401 and "\n" not in r.json()["detail"], (path, r.text)
        r = ann.http.request(method, path, json=body, headers={"X-CSRF-Token": ann.csrf})
        assert r.status_code == 401, (path, r.text)
    # The bot's own routes need the token too.
    for path in ("/api/bot/account", "/api/bot/stream/event"):
        assert httpx.get(url + path).status_code == 401
        assert ann.get(path).status_code == 401
    # A challenger cannot accept its own challenge (only the bot challenged).
    r = httpx.post(f"{url}/api/bot/challenge/{other}/accept", headers=bearer(site["bob1"]))
    assert (r.status_code, r.json()["detail"]) == (404, "challenge: no such challenge")
    # A bot token is not a seat's link: the online routes do not open the game.
    r = httpx.get(f"{url}/api/online/{game}", headers=bearer(site["ann1"]))
    assert (r.status_code, r.json()["detail"]) == (404, "no such game")
    # The people's routes take no bot token.
    r = httpx.post(f"{url}/api/bots/bob1/challenge", json={}, headers=bearer(site["ann2"]))
    assert (r.status_code, r.json()["detail"]) == (
        403,
        "X-CSRF-Token: missing or wrong (reload the page)",
    )
    assert httpx.get(f"{url}/api/account/bots", headers=bearer(site["ann1"])).status_code == 401
    # The bot's own token works: a stale move is 409, an illegal one 422,
    # a move out of turn 403.
    first = httpx.Client(base_url=url, timeout=httpx.Timeout(30.0, read=None))
    states = {}
    for bot in ("ann1", "bob1"):
        with first.stream("GET", f"/api/bot/game/stream/{game}", headers=bearer(site[bot])) as r:
            assert r.status_code == 200
            states[bot] = next(ndjson(r))["state"]
    first.close()
    mover = "ann1" if states["ann1"]["to_move"] == states["ann1"]["player"] else "bob1"
    waiter = "bob1" if mover == "ann1" else "ann1"
    move = states[mover]["legal"][0]
    post = f"{url}/api/bot/game/{game}/move"
    r = httpx.post(post, json={"move": move, "version": 7}, headers=bearer(site[mover]))
    assert (r.status_code, r.json()["detail"]) == (409, "stale state: version 7, the game is at 0")
    r = httpx.post(post, json={"move": "swap CCCC", "version": 0}, headers=bearer(site[mover]))
    assert r.status_code == 422
    r = httpx.post(post, json={"move": move, "version": 0}, headers=bearer(site[waiter]))
    assert (r.status_code, r.json()["detail"]) == (403, "it is not your turn")
    r = httpx.post(post, json={"move": move, "version": 0}, headers=bearer(site[mover]))
    assert r.json() == {"ok": True, "version": 1}
    r = httpx.get(f"{url}/api/bot/game/{game}/record", headers=bearer(site[mover]))
    assert r.status_code == 403  # every deck: only once the game is over
    r = httpx.post(
        f"{url}/api/bot/game/{game}/resign", json={"version": 1}, headers=bearer(site[waiter])
    )
    assert r.status_code == 200


def _hidden_faces(game: Game, reader: int) -> set[str]:
    """Faces (any rotation) ``reader`` may not see in any form: in another
    tray or any pile, and nowhere public or in the reader's tray (as
    test_online_api's scan)."""
    seen: set[str] = set(game.trays[reader])
    for ply, m in enumerate(game.history):
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


def test_event_and_game_streams_hold_only_the_bots_own_view(site) -> None:  # type: ignore[no-untyped-def]
    url = site["url"]
    events = {b: Stream(url, "/api/bot/stream/event", site[b]) for b in ("ann2", "bob1")}
    # One event stream a token.
    r = httpx.get(f"{url}/api/bot/stream/event", headers=bearer(site["bob1"]))
    assert (r.status_code, r.json()["detail"]) == (
        409,
        "stream: this token has an event stream open already",
    )
    # A declined challenge reaches the challenger's stream.
    r = httpx.post(f"{url}/api/bot/challenge/bob1", json={}, headers=bearer(site["ann2"]))
    ch = events["bob1"].next("challenge")["challenge"]
    assert (ch["id"], ch["challenger"], ch["rated"]) == (
        r.json()["id"],
        {"name": "ann2", "bot": True},
        True,
    )
    assert ch["clock"] == {"minutes": 5.0, "increment": 3.0}
    httpx.post(
        f"{url}/api/bot/challenge/{ch['id']}/decline",
        json={"reason": "later"},
        headers=bearer(site["bob1"]),
    )
    declined = events["ann2"].next("challengeDeclined")["challenge"]
    assert (declined["id"], declined["status"], declined["reason"]) == (
        ch["id"],
        "declined",
        "later",
    )

    game_id = _challenge_accepted(site, "ann2", "bob1")
    for b in events:
        assert events[b].next("gameStart")["game"]["id"] == game_id
    streams = {b: Stream(url, f"/api/bot/game/stream/{game_id}", site[b]) for b in events}
    seat = {b: streams[b].next("state")["state"]["player"] for b in streams}
    by_seat = {s: b for b, s in seat.items()}
    rng = random.Random(5)
    latest = {b: streams[b].log[0]["state"] for b in streams}
    while not latest["ann2"]["finished"]:
        mover = by_seat[latest["ann2"]["to_move"]]
        state = latest[mover]
        r = httpx.post(
            f"{url}/api/bot/game/{game_id}/move",
            json={"move": rng.choice(state["legal"]), "version": state["version"]},
            headers=bearer(site[mover]),
        )
        assert r.status_code == 200, r.text
        for b in streams:
            while latest[b]["version"] < r.json()["version"]:
                latest[b] = streams[b].next("state")["state"]
    for b in events:
        assert events[b].next("gameFinish")["game"]["id"] == game_id
    # Each stream ends after the state that says the game is over.
    for s in streams.values():
        s._thread.join(10)
        assert not s._thread.is_alive()

    # The game as stored (the server's own deal, every deck): its record,
    # which a bot may read once the game is over (not before: 403).
    r = httpx.get(f"{url}/api/bot/game/{game_id}/record", headers=bearer(site["ann2"]))
    assert r.status_code == 200, r.text
    full = r.json()
    checked = 0
    for b, s in streams.items():
        who = seat[b]
        assert s.log[0]["type"] == "state"  # the whole state first
        for msg in s.log:
            assert msg["type"] in ("state", "presence")
            if msg["type"] != "state":
                continue
            st = msg["state"]
            game = load(dict(full, moves=full["moves"][: len(st["history"])]))
            assert st["tray"] == list(game.trays[who])
            unseen = st.pop("unseen")
            leaked = set(FACE.findall(json.dumps(st))) & _hidden_faces(game, who)
            assert not leaked, (b, st["version"], leaked)
            for p in range(game.players):
                expected = Multiset(game.piles[p])
                if p != who:
                    expected.update(game.trays[p])
                assert unseen[p] == sorted(expected.elements())
            checked += 1
    assert checked >= 2 * len(full["moves"])
    for s in [*streams.values(), *events.values()]:
        s.close()


def test_challenges_waiting_and_requests_a_token_makes_are_bounded(site) -> None:  # type: ignore[no-untyped-def]
    url = site["url"]
    token = site["bob"].bot("bob2")
    for i in range(3):
        r = httpx.post(f"{url}/api/bot/challenge/ann1", json={}, headers=bearer(token))
        assert r.status_code == 200, (i, r.text)
    r = httpx.post(f"{url}/api/bot/challenge/ann1", json={}, headers=bearer(token))
    assert (r.status_code, r.json()["detail"]) == (
        409,
        "challenge: at most 3 challenges waiting for an answer at once",
    )
    r = httpx.post(f"{url}/api/bot/challenge/Ann", json={}, headers=bearer(token))
    # People are challenged from the page, not by bots.
    assert (r.status_code, r.json()["detail"]) == (404, "name: no such bot")
    r = httpx.post(
        f"{url}/api/bot/challenge/ann1", json={"clock": {"minutes": 0.5}}, headers=bearer(token)
    )
    assert (r.status_code, r.json()["detail"]) == (
        422,
        "clock.minutes: a rated game needs at least 1 minute",
    )
    # 40 requests at once, then 8 a second: the next ones wait, in one line.
    with httpx.Client(base_url=url, headers=bearer(token)) as c:
        codes = [c.get("/api/bot/account") for _ in range(50)]
    refused = [r for r in codes if r.status_code == 429]
    assert refused and all(r.status_code == 200 for r in codes[:30])
    assert (
        refused[0]
        .json()["detail"]
        .startswith("rate limit: too many requests with this token; try again in")
    )


def test_an_event_stream_closed_by_its_client_is_let_go(site) -> None:  # type: ignore[no-untyped-def]
    url = site["url"]
    token = site["ann"].bot("ann3")
    with (
        httpx.Client(base_url=url, timeout=httpx.Timeout(30.0, read=None)) as c,
        c.stream("GET", "/api/bot/stream/event", headers=bearer(token)) as r,
    ):
        assert r.status_code == 200
        assert httpx.get(f"{url}/api/bots/ann3").json()["online"] is True
    # The server notices (the stream's task is cancelled): the token may
    # open its one event stream again.
    deadline = time.monotonic() + 10
    with httpx.Client(base_url=url, timeout=httpx.Timeout(30.0, read=None)) as c:
        while True:
            with c.stream("GET", "/api/bot/stream/event", headers=bearer(token)) as r:
                if r.status_code == 200:
                    break
                assert r.status_code == 409 and time.monotonic() < deadline
            time.sleep(0.1)
