"""The lobby on two real `donutbox serve` processes on one PostgreSQL and one
Redis, each request sent to either process as a load balancer without
sticky sessions would: a table opened through one is listed and joined
through the other (each player given their own seat's link, and two players
racing for the last seat on the two processes never both seated); quick
match pairs two players queued on different processes, once, also when they
queue at the same moment; an invitation sent through one reaches the
invitee's lobby socket on the other; who is online counts the sockets of
both.

The processes (test_multiprocess.py's ``Serve``) get a database of their
own, made for this module and dropped after it, so other tests' lobbies
never meet theirs.  Skipped, with the reason, without DONUTBOX_TEST_PG_URL
and DONUTBOX_TEST_REDIS_URL (``.ci/run`` sets them).
"""

from __future__ import annotations

import asyncio
import json
import secrets
import threading
import time
import urllib.error
import urllib.request
import uuid
from collections.abc import Iterator
from typing import Any

import pytest
import test_multiprocess as multi  # skips this module too without the services

websockets = pytest.importorskip("websockets")
psycopg = pytest.importorskip("psycopg")

PASSWORD = "correct horse battery"
PREFIX = f"test-{uuid.uuid4().hex[:10]}"


def _admin_url() -> str:
    """The test server's URL as psycopg takes it."""
    assert multi.PG
    return multi.PG.replace("postgresql+psycopg://", "postgresql://", 1)


def _database(name: str) -> str:
    base = multi.PG
    assert base
    return base.rsplit("/", 1)[0] + "/" + name


def _new_database() -> Iterator[str]:
    name = f"lobby_{uuid.uuid4().hex[:10]}"
    with psycopg.connect(_admin_url(), autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    yield _database(name)
    with psycopg.connect(_admin_url(), autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


@pytest.fixture(scope="module")
def fresh_db() -> Iterator[str]:
    """A database of this module's own on the test server."""
    yield from _new_database()


@pytest.fixture
def quiet_db() -> Iterator[str]:
    """A database no process serves: no lobby ticker (``pair_waiting``,
    every ``TICK_SECONDS``) pairs the players a test queues itself.  (The
    ``two`` processes, once started, serve ``fresh_db`` until the module's
    end: their tickers would take groups out of a test's queue.)"""
    yield from _new_database()


@pytest.fixture(scope="module")
def two(
    tmp_path_factory: pytest.TempPathFactory, fresh_db: str
) -> Iterator[tuple[multi.Serve, multi.Serve]]:
    """Two processes on that database and the test Redis (a key prefix of
    their own: ``PREFIX``)."""
    folder = tmp_path_factory.mktemp("lobby")
    env = {"DONUTBOX_BROKER_PREFIX": PREFIX}
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(multi, "PG", fresh_db)  # Serve's --db
        a = multi.Serve(folder / "one.log", env)
        b = multi.Serve(folder / "two.log", env)
    try:
        a.wait_ready()
        b.wait_ready()
        yield a, b
    finally:
        a.stop()
        b.stop()


class Browser:
    """One browser: its cookies and CSRF token, each request sent to the
    process it is given."""

    def __init__(self, name: str, via: str | None = None) -> None:
        self.name = f"{name}{secrets.token_hex(3)}"
        self.cookies: dict[str, str] = {}
        self.csrf = ""
        #: the client's address, given through the (trusted, loopback) proxy
        self.via = via

    def cookie(self) -> str:
        return "; ".join(f"{k}={v}" for k, v in self.cookies.items())

    def call(self, server: multi.Serve, path: str, body: Any = None) -> tuple[int, Any]:
        headers = {"Cookie": self.cookie(), "X-CSRF-Token": self.csrf}
        if self.via is not None:
            headers["X-Forwarded-For"] = self.via
        data = None
        if body is not None:
            headers["Content-Type"] = "application/json"
            data = json.dumps(body).encode()
        req = urllib.request.Request(server.url + path, data=data, headers=headers)
        try:
            with urllib.request.urlopen(req, timeout=20) as r:
                status, raw, got = r.status, r.read(), r.headers.get_all("Set-Cookie") or []
        except urllib.error.HTTPError as err:
            status, raw, got = err.code, err.read(), err.headers.get_all("Set-Cookie") or []
        for line in got:
            name, _, value = line.split(";", 1)[0].partition("=")
            self.cookies[name.strip()] = value.strip().strip('"')
        return status, json.loads(raw)

    def get(self, server: multi.Serve, path: str) -> Any:
        status, answer = self.call(server, path)
        assert status == 200, (path, answer)
        return answer

    def post(self, server: multi.Serve, path: str, body: Any = None) -> tuple[int, Any]:
        return self.call(server, path, {} if body is None else body)

    def sign_up(self, server: multi.Serve) -> Browser:
        self.csrf = self.get(server, "/api/account")["csrf"]
        status, answer = self.post(
            server, "/api/account/signup", {"name": self.name, "password": PASSWORD}
        )
        assert status == 200, answer
        self.csrf = answer["csrf"]
        return self

    def socket(self, server: multi.Serve) -> Any:
        url = server.url.replace("http://", "ws://") + "/api/lobby/ws"
        return websockets.connect(url, additional_headers={"Cookie": self.cookie()})


def _seat(server: multi.Serve, game_id: str, token: str) -> int:
    return int(server.get(f"/api/online/{game_id}", token)["player"])


def test_a_table_opened_on_one_process_is_joined_on_the_other_each_player_with_their_seat(
    two: tuple[multi.Serve, multi.Serve],
) -> None:
    one, other = two
    ann, bob, cat = (Browser(n).sign_up(one) for n in ("ann", "bob", "cat"))
    status, t = ann.post(one, "/api/lobby/tables", {"players": 3, "clock": {"minutes": 5}})
    assert status == 200 and t["waiting"] == [ann.name]
    listed = {x["id"]: x for x in bob.get(other, "/api/lobby")["tables"]}
    assert listed[t["id"]]["waiting"] == [ann.name] and listed[t["id"]]["host"] == ann.name
    status, joined = bob.post(other, f"/api/lobby/tables/{t['id']}/join")
    assert status == 200 and joined["game"] is None
    assert joined["table"]["waiting"] == [ann.name, bob.name]
    # The host leaves through the other process: the table is bob's.
    assert ann.post(other, f"/api/lobby/tables/{t['id']}/leave")[0] == 200
    listed = {x["id"]: x for x in cat.get(one, "/api/lobby")["tables"]}
    assert listed[t["id"]]["host"] == bob.name and listed[t["id"]]["waiting"] == [bob.name]
    assert ann.post(one, f"/api/lobby/tables/{t['id']}/join")[0] == 200
    status, started = cat.post(one, f"/api/lobby/tables/{t['id']}/join")
    assert status == 200 and started["game"]
    game_id = started["game"]
    # Gone from the lobby of both processes.
    for server in (one, other):
        assert t["id"] not in {x["id"] for x in cat.get(server, "/api/lobby")["tables"]}
    # Each player's lobby, on either process, has their own seat's link;
    # seats in the order they sat down (bob, ann, cat); it opens that seat on
    # the other process.
    tokens = {}
    for seat, (p, asked, opens) in enumerate(
        ((bob, other, one), (ann, one, other), (cat, other, one))
    ):
        games = p.get(asked, "/api/lobby")["games"]
        assert [g["game"] for g in games] == [game_id]
        assert games[0]["seat"] == seat and games[0]["link"].endswith(games[0]["token"])
        assert _seat(opens, game_id, games[0]["token"]) == seat
        tokens[p.name] = games[0]["token"]
    assert len(set(tokens.values())) == 3
    for p in (ann, bob, cat):
        for server in (one, other):
            text = json.dumps(p.call(server, "/api/lobby")[1])
            assert [n for n, tok in tokens.items() if tok in text] == [p.name]


def test_two_players_racing_for_the_last_seat_on_two_processes_never_share_it(
    two: tuple[multi.Serve, multi.Serve],
) -> None:
    """Five rounds: a two-seat table, two players joining it at the same
    moment, one through each process: exactly one is seated (the game has
    the host and them), the other is refused and sits nowhere."""
    one, other = two
    host, left, right = (Browser(n).sign_up(one) for n in ("hst", "lft", "rgt"))
    for _ in range(5):
        # Casual: a player in a rated game being played may not sit at
        # another rated table (the seats race the same way).
        status, t = host.post(one, "/api/lobby/tables", {"players": 2, "rated": False})
        assert status == 200
        # Open on both processes (else the race would be no race).
        for p, server in ((left, one), (right, other)):
            assert t["id"] in {x["id"] for x in p.get(server, "/api/lobby")["tables"]}
        answers: dict[str, tuple[int, Any]] = {}
        go = threading.Barrier(2)

        def join(
            p: Browser,
            server: multi.Serve,
            table: str = t["id"],
            go: threading.Barrier = go,
            answers: dict[str, tuple[int, Any]] = answers,
        ) -> None:
            go.wait()
            answers[p.name] = p.post(server, f"/api/lobby/tables/{table}/join")

        racers = [threading.Thread(target=join, args=a) for a in ((left, one), (right, other))]
        for r in racers:
            r.start()
        for r in racers:
            r.join(30)
        won = [n for n, (status, a) in answers.items() if status == 200 and a["game"]]
        lost = [n for n, (status, a) in answers.items() if status != 200]
        assert len(won) == 1 and len(lost) == 1, answers
        assert answers[lost[0]][0] in (404, 409), answers
        game_id = answers[won[0]][1]["game"]
        winner, loser = (left, right) if won[0] == left.name else (right, left)
        seats = {p.name: p.get(other, "/api/lobby")["games"] for p in (host, winner, loser)}
        assert game_id in [g["game"] for g in seats[host.name]]
        assert game_id in [g["game"] for g in seats[winner.name]]
        assert game_id not in [g["game"] for g in seats[loser.name]]
        mine = loser.get(one, "/api/lobby")
        assert mine["table"] is None and t["id"] not in {x["id"] for x in mine["tables"]}


def _history(p: Browser, server: multi.Serve) -> list[str]:
    return [h["game"] for h in p.get(server, f"/api/players/{p.name}")["history"]]


def test_quick_match_pairs_players_queued_on_different_processes_once(
    two: tuple[multi.Serve, multi.Serve],
) -> None:
    one, other = two
    ann, bob = Browser("qan").sign_up(one), Browser("qbo").sign_up(one)
    body = {"players": 2}
    status, first = ann.post(one, "/api/lobby/queue", body)
    assert status == 200 and first == {"queued": True, "game": None}
    key = ann.get(other, "/api/lobby")["queued"]["rules_key"]
    assert bob.get(other, "/api/lobby")["queue"].get(f"{key}/2") == 1
    status, second = bob.post(other, "/api/lobby/queue", body)
    assert status == 200 and second["queued"] is False and second["game"]
    for p in (ann, bob):
        assert _history(p, one) == [second["game"]]
        assert p.get(one, "/api/lobby")["queued"] is None
    assert f"{key}/2" not in ann.get(one, "/api/lobby")["queue"]
    # At the same moment, five times: paired once each time (one game in
    # both histories), whichever process made it.  A new pair each time: a
    # player with a rated game still being played may not queue again.
    for round_ in range(5):
        ann = Browser("qan", via=f"10.7.{round_}.1").sign_up(one)
        bob = Browser("qbo", via=f"10.7.{round_}.2").sign_up(one)
        answers: list[tuple[int, Any]] = []
        go = threading.Barrier(2)

        def queue(
            p: Browser,
            server: multi.Serve,
            go: threading.Barrier = go,
            answers: list[tuple[int, Any]] = answers,
        ) -> None:
            go.wait()
            answers.append(p.post(server, "/api/lobby/queue", body))

        racers = [threading.Thread(target=queue, args=a) for a in ((ann, one), (bob, other))]
        for r in racers:
            r.start()
        for r in racers:
            r.join(30)
        assert [s for s, _ in answers] == [200, 200], answers
        deadline = time.monotonic() + 10  # (or the ticker pairs them, every 2 s)
        while len(_history(ann, other)) < 1:
            assert time.monotonic() < deadline, "not paired"
            time.sleep(0.1)
        time.sleep(0.5)
        a, b = _history(ann, other), _history(bob, one)
        assert len(a) == len(b) == 1 and a == b, (a, b)
        made = {g["game"] for _, g in answers if g["game"]}
        assert made <= {a[0]}, (made, a)
        assert f"{key}/2" not in ann.get(one, "/api/lobby")["queue"]


async def _next_state(ws: Any, want: Any, timeout: float = 10) -> dict[str, Any]:
    """The first lobby state the socket is sent for which ``want`` holds."""
    deadline = time.monotonic() + timeout
    while True:
        left = deadline - time.monotonic()
        assert left > 0, "no such lobby state was sent"
        msg = json.loads(await asyncio.wait_for(ws.recv(), left))
        if msg.get("type") == "lobby" and want(msg["lobby"]):
            return msg["lobby"]  # type: ignore[no-any-return]


def test_an_invitation_sent_through_one_process_reaches_the_socket_on_the_other(
    two: tuple[multi.Serve, multi.Serve],
) -> None:
    one, other = two
    ann, bob = Browser("ian").sign_up(one), Browser("ibo").sign_up(one)

    async def main() -> tuple[dict[str, Any], dict[str, Any]]:
        async with bob.socket(other) as ws:
            await _next_state(ws, lambda s: bob.name in s["online"])
            status, t = await asyncio.to_thread(ann.post, one, "/api/lobby/tables", {"players": 2})
            assert status == 200
            # The table reaches bob's socket (a change made on the other process).
            await _next_state(ws, lambda s: t["id"] in {x["id"] for x in s["tables"]})
            # Nonsense on the lobby's channel is skipped by both processes.
            client = multi.redis.Redis.from_url(multi.REDIS)
            try:
                for junk in (b"x\n{not json", b"x\n" + b"1" * 500, b"x\n[1]", b'x\n{"u": "1"}'):
                    client.publish(f"{PREFIX}:lobby", junk)
            finally:
                client.close()
            status, answer = await asyncio.to_thread(
                ann.post, one, "/api/lobby/invite", {"to": bob.name, "table": t["id"]}
            )
            assert status == 200 and answer == {"invited": bob.name}, answer
            got = await _next_state(ws, lambda s: bool(s["invites"]))
            return t, got

    t, got = asyncio.run(main())
    assert got["invites"] == [{"from": ann.name, "table": t["id"], "rules_label": t["rules_label"]}]
    # Only bob's own lobby has it.
    assert ann.get(other, "/api/lobby")["invites"] == []
    assert bob.get(one, "/api/lobby")["invites"] == got["invites"]


def test_who_is_online_counts_the_sockets_of_both_processes(
    two: tuple[multi.Serve, multi.Serve],
) -> None:
    """Cat has a lobby socket on process 1, dan on process 2 (neither
    asked anything else of the lobby): eve sees both online through either
    process."""
    one, other = two
    cat, dan, eve = (Browser(n).sign_up(one) for n in ("ocat", "odan", "oeve"))

    async def main() -> None:
        async with cat.socket(one) as a, dan.socket(other) as b:
            for ws in (a, b):
                await _next_state(ws, lambda s: {cat.name, dan.name} <= set(s["online"]))
            for server in (one, other):
                online = (await asyncio.to_thread(eve.get, server, "/api/lobby"))["online"]
                assert {cat.name, dan.name, eve.name} <= set(online), online
            r = await asyncio.to_thread(eve.get, one, f"/api/players/{dan.name}")
            assert r["online"] is True

    asyncio.run(main())


def test_a_player_s_lobby_sockets_are_counted_on_both_processes_together(
    two: tuple[multi.Serve, multi.Serve],
) -> None:
    """At most four lobby sockets a player: two on each process, the fifth
    refused on either; one closed, one may open again."""
    one, other = two
    fay = Browser("sfay").sign_up(one)

    async def refused(server: multi.Serve) -> bool:
        try:
            async with fay.socket(server) as ws:
                await asyncio.wait_for(ws.recv(), 10)
        except websockets.exceptions.ConnectionClosed as err:  # accepted, then closed
            return err.rcvd is not None and err.rcvd.code == 4429
        return False

    async def main() -> None:
        async with fay.socket(one) as a, fay.socket(one), fay.socket(other), fay.socket(other):
            await asyncio.wait_for(a.recv(), 10)
            assert await refused(other) and await refused(one)
            await a.close()
            deadline = time.monotonic() + 10
            while await refused(other):
                assert time.monotonic() < deadline, "the closed socket still counts"
                await asyncio.sleep(0.1)

    asyncio.run(main())


def _users(url: str, n: int) -> tuple[Any, list[Any]]:
    from sqlalchemy import text

    from donutbox.server import migrate
    from donutbox.server.accounts import User
    from donutbox.server.lobby.store import LobbyStore
    from donutbox.server.storage import make_engine

    engine = make_engine(url)
    assert migrate.upgrade(engine)
    tag = secrets.token_hex(3)
    names = [f"t{tag}{i}" for i in range(n)]
    with engine.begin() as conn:
        conn.execute(
            text(
                "insert into users (name, name_key, password_hash, created)"
                " values (:n, :n, 'x', CURRENT_TIMESTAMP)"
            ),
            [{"n": name} for name in names],
        )
        rows = conn.execute(
            text("select id, name from users where name like :t"), {"t": f"t{tag}%"}
        )
        users = [User(uid, name) for uid, name in rows]
    return LobbyStore(engine), sorted(users, key=lambda u: u.id)


def _at_once(work: list[Any]) -> list[Any]:
    """Each callable in a thread of its own, started together: their
    results (or the exception each raised)."""
    out: list[Any] = [None] * len(work)
    go = threading.Barrier(len(work))

    def run(i: int) -> None:
        go.wait()
        try:
            out[i] = work[i]()
        except Exception as err:
            out[i] = err

    threads = [threading.Thread(target=run, args=(i,)) for i in range(len(work))]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    return out


def test_eight_threads_racing_on_postgresql_never_share_a_seat_or_a_match(quiet_db: str) -> None:
    """The lobby's transactions themselves, eight at once on PostgreSQL
    (more at once than two processes make): a four-seat table gets exactly
    three more players and one game to make, ten times; eight players
    queueing and pairing at once are paired once each, five times."""
    from donutbox.server.errors import Conflict, NoSuchGame

    store, users = _users(quiet_db, 9)
    host, rest = users[0], users[1:]
    for _ in range(10):
        t = store.open_table(host, {}, "o", "x", 4, None, True, False)
        out = _at_once([lambda u=u, t=t: store.join(u, t["id"]) for u in rest])
        seated = [u for u, r in zip(rest, out, strict=True) if isinstance(r, tuple)]
        refused = [r for r in out if not isinstance(r, tuple)]
        assert len(seated) == 3, out
        assert all(isinstance(r, Conflict | NoSuchGame) for r in refused), refused
        starts = [r[1] for r in out if isinstance(r, tuple) and r[1] is not None]
        assert len(starts) == 1
        assert sorted(u.id for u in starts[0].users) == sorted(u.id for u in [host, *seated])
        assert starts[0].users[0] == host
        store.close(t["id"])
    for _ in range(5):

        def queue_and_pair(u: Any) -> list[Any]:
            store.enqueue(u, {}, "o", "x", 2, 0.0, {"minutes": 5.0, "increment": 3.0})
            return store.pair()

        out = _at_once([lambda u=u: queue_and_pair(u) for u in rest])
        assert not any(isinstance(r, Exception) for r in out), out
        groups = [[u.id for u in s.users] for r in out for s in r]
        flat = sorted(uid for g in groups for uid in g)
        assert flat == sorted(u.id for u in rest) and len(groups) == 4, groups
        assert store.queued_count() == 0
    store.engine.dispose()
