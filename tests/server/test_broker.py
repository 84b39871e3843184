"""The broker's parts (broker.py, throttle.py): a version stored elsewhere
applied to a game in memory, the shared token buckets, leases, a gap read
back from the database, and ``--broker`` refused in one line.

The tests that need Redis use DONUTBOX_TEST_REDIS_URL (unset, the test run
starts a throwaway Redis when redis-server is installed) and are skipped
with that reason without either.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import random
import shutil
import socket
import subprocess
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from donutbox.core import Game, cut
from donutbox.core.record import dump
from donutbox.server import throttle
from donutbox.server.broker import LocalBroker, RedisBroker, adopt, check_url
from donutbox.server.session import GameSession
from donutbox.server.storage import Store, make_engine

REDIS = os.environ.get("DONUTBOX_TEST_REDIS_URL")
needs_redis = pytest.mark.skipif(
    not REDIS,
    reason="no Redis server: apt-get install redis-server (the test run then starts one)"
    " or set DONUTBOX_TEST_REDIS_URL",
)


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Store]:
    engine = make_engine(f"sqlite:///{tmp_path / 'games.db'}")
    s = Store(engine)
    yield s
    s.close()


def _played(game: Game, n: int, rng: random.Random) -> Game:
    for _ in range(n):
        game.play(rng.choice(sorted(game.legal_moves(), key=str)))
    return game


# -- adopt: another process's version applied here ------------------------------------


def test_a_version_one_move_ahead_is_applied_as_that_move(store: Store) -> None:
    """The session at version 3 adopts version 4 (one more move): its game
    is the one the record describes (the same record, the same view for
    every seat) as if read from the database."""
    rng = random.Random(5)
    game = _played(Game.new(None, ["A", "B"]), 3, rng)
    stored = store.create("t", "hotseat", ["human", "human"], {}, dump(game))
    s = GameSession(stored, store)
    _played(game, 1, rng)
    newer = store.get(stored.id)
    assert newer is not None
    newer.version, newer.record = 4, dump(game)
    adopt(s, newer, None)
    fresh = GameSession(newer, store)
    assert s.version == 4
    assert dump(s.game) == dump(game)
    for seat in (0, 1, -1):
        assert s.state(seat) == fresh.state(seat)


def test_a_version_that_took_moves_back_is_read_whole(store: Store) -> None:
    """A takeback (fewer moves, the count in the metadata) is not "one more
    move": the record is played back, and the result is that record's game."""
    rng = random.Random(9)
    game = _played(Game.new(None, ["A", "B"]), 6, rng)
    stored = store.create("t", "hotseat", ["human", "human"], {}, dump(game))
    s = GameSession(stored, store)
    shorter = cut(game, 4)  # as a takeback does (session.py)
    shorter.meta["takebacks"] = 1
    newer = store.get(stored.id)
    assert newer is not None
    newer.version, newer.record = 1, dump(shorter)
    adopt(s, newer, None)
    assert dump(s.game) == dump(shorter)
    assert len(s.game.history) == 4 and s.takebacks == 1


def test_without_a_broker_every_lease_is_this_process_s() -> None:
    b = LocalBroker(None)  # type: ignore[arg-type]  # never calls its host
    assert not b.shared and b.holds("any") and b.elsewhere("any") == (set(), 0)


# -- --broker refused in one line ----------------------------------------------------


def test_a_broker_url_that_is_not_redis_is_refused_in_one_line() -> None:
    with pytest.raises(ValueError, match=r"^--broker 'http://localhost:6379': give a Redis URL"):
        check_url("http://localhost:6379")


def test_serve_refuses_a_redis_it_cannot_reach_in_one_line(cli: Any, tmp_path: Path) -> None:
    pytest.importorskip("redis")
    from socket import socket

    with socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = str(sock.getsockname()[1])
    db = f"sqlite:///{tmp_path / 'g.db'}"
    done = cli("serve", "--port", port, "--db", db, "--broker", "redis://127.0.0.1:1/0")
    assert done.returncode == 2
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    assert "--broker: cannot reach Redis at redis://127.0.0.1:1/0" in lines[0]


# -- with Redis ------------------------------------------------------------------------


@needs_redis
def test_two_processes_limiters_draw_on_one_bucket() -> None:
    """Two limiters (one per process) with the same name and Redis store:
    burst 3 at 2 a second is 3 in all, not 3 each; a key of its own is
    unaffected; the wait is what the rate gives."""
    import redis.asyncio as aioredis

    async def main() -> None:
        assert REDIS
        prefix = f"test-{uuid.uuid4().hex[:8]}"
        clients = [aioredis.from_url(REDIS), aioredis.from_url(REDIS)]
        stores = [throttle.RedisBuckets(c, prefix) for c in clients]
        limiters = [throttle.Limiter(2.0, 3, name="x"), throttle.Limiter(2.0, 3, name="x")]
        try:
            waits = []
            for i in range(4):
                throttle.use_shared(stores[i % 2])
                waits.append(await limiters[i % 2].acquire("10.0.0.1"))
            assert waits[:3] == [0.0, 0.0, 0.0]
            assert 0.3 < waits[3] <= 0.5  # half a second for one token, less the time taken
            assert await limiters[1].acquire("10.0.0.2") == 0.0
            # Each process's own bucket was asked first (it alone refuses
            # without a Redis call), and it allowed both of its requests.
            assert len(limiters[0]) == 1 and limiters[0].retry_after("10.0.0.1") == 0.0
        finally:
            throttle.use_shared(None)
            for c in clients:
                await c.aclose()

    asyncio.run(main())


@needs_redis
def test_a_limiter_whose_redis_fails_limits_in_this_process() -> None:
    """Redis gone: the request is not refused for that; the process's own
    bucket limits it instead (and says so once in the log)."""
    import redis.asyncio as aioredis

    async def main() -> None:
        client = aioredis.from_url("redis://127.0.0.1:1/0", socket_connect_timeout=1)
        throttle.use_shared(throttle.RedisBuckets(client, "gone"))
        limiter = throttle.Limiter(1.0, 2, name="y")
        try:
            assert [await limiter.acquire("a") for _ in range(3)][:2] == [0.0, 0.0]
            assert await limiter.acquire("a") > 0  # the local bucket is empty
        finally:
            throttle.use_shared(None)
            await client.aclose()

    asyncio.run(main())


def test_a_redis_that_does_not_answer_holds_a_request_up_a_quarter_second_at_most() -> None:
    """A Redis that accepts connections and never answers (a listening
    socket nobody reads): each limited request waits TAKE_TIMEOUT at most
    for it, then this process's bucket decides (burst 2: two taken, the
    third refused, that one without asking Redis)."""
    pytest.importorskip("redis")

    with socket.socket() as mute:
        mute.bind(("127.0.0.1", 0))
        mute.listen(64)
        url = f"redis://127.0.0.1:{mute.getsockname()[1]}/0"

        async def main() -> None:
            client = throttle.RedisBuckets.client_for(url)
            store = throttle.RedisBuckets(client, "mute")
            throttle.use_shared(store)
            limiter = throttle.Limiter(0.01, 2, name="z")
            try:
                waited = []
                for _ in range(3):
                    start = time.monotonic()
                    waited.append(await limiter.acquire("a"))
                    assert time.monotonic() - start < 4 * throttle.TAKE_TIMEOUT
                assert waited[:2] == [0.0, 0.0] and waited[2] > 0
                assert store.failures == 2  # the refused third never asked Redis
            finally:
                throttle.use_shared(None)
                await client.aclose()

        asyncio.run(main())


@needs_redis
def test_a_lease_is_one_process_s_until_it_stops_renewing(monkeypatch: Any) -> None:
    """Two brokers on one prefix ask for one game's lease: one gets it; the
    other cannot while the holder renews it (beyond the lease's length);
    once the holder stops (as a killed process does), the other takes it
    over from the list of active games within the lease's length and a scan."""
    from donutbox.server import broker as broker_module

    monkeypatch.setattr(broker_module, "LEASE_MS", 600)
    monkeypatch.setattr(broker_module, "RENEW_SECONDS", 0.15)
    monkeypatch.setattr(broker_module, "SCAN_SECONDS", 0.1)

    class FakeHub:
        """The little of a hub the lease code touches (no game: it is only
        listed; loading it fails as for a game deleted meanwhile)."""

        def __init__(self) -> None:
            self.sessions: dict[str, Any] = {}
            self.locks: dict[str, Any] = {}
            self.loads = 0
            self.fanout = type("F", (), {"readers": {}})()

        def stop_clock(self, _game_id: str) -> None:
            return None

        async def load(self, game_id: str) -> Any:
            self.loads += 1
            raise broker_module.NoSuchGame()

    async def main() -> None:
        assert REDIS
        prefix = f"test-{uuid.uuid4().hex[:8]}"
        hubs = [FakeHub(), FakeHub()]
        a, b = (RedisBroker(hub, REDIS, prefix) for hub in hubs)  # type: ignore[arg-type]
        await a.start()
        await b.start()
        try:
            got = await a.client.set(a._lease("g"), a.origin, nx=True, px=600)
            assert got
            a.held.add("g")
            a.held_at["g"] = time.monotonic()
            await a.client.sadd(a.active_key, "g")
            hubs[0].sessions["g"] = type("S", (), {"over": False})()
            b.want("g")
            await asyncio.sleep(1.5)  # longer than the lease: renewed by a
            assert a.holds("g") and not b.holds("g")
            assert (await a.client.get(a._lease("g"))).decode() == a.origin
            assert hubs[1].loads == 0
            # a dies: its tasks stop, its lease is not given back.
            for task in a._tasks:
                task.cancel()
            await asyncio.sleep(1.2)
            assert hubs[1].loads >= 1  # b took it over and tried to load it
            # The game could not be loaded: b let it go and delisted it.
            assert not b.holds("g")
            assert not await b.client.sismember(b.active_key, "g")
        finally:
            for broker in (a, b):
                await broker.close()

    asyncio.run(main())


@needs_redis
def test_a_gap_in_the_versions_heard_is_read_from_the_database(
    tmp_path: Path, monkeypatch: Any
) -> None:
    """Two apps (two "processes" in one) on one database and one Redis: a
    spectator on the second sees every move made through the first, in
    order; versions written to the database without a message (as by a
    process killed between storing and publishing) are read back when the
    next message shows the gap, and the spectator gets that state whole."""
    pytest.importorskip("fastapi")
    from fastapi.testclient import TestClient

    from donutbox.server.app import create_app

    assert REDIS
    monkeypatch.setenv("DONUTBOX_BROKER_PREFIX", f"test-{uuid.uuid4().hex[:8]}")
    url = f"sqlite:///{tmp_path / 'games.db'}"
    with (
        TestClient(create_app(url, inline_ai=True, broker_url=REDIS)) as one,
        TestClient(create_app(url, inline_ai=True, broker_url=REDIS)) as two,
    ):
        g = one.post("/api/online", json={"seats": [{"name": "A"}, {"name": "B"}]}).json()
        auth = [{"Authorization": f"Bearer {s['token']}"} for s in g["seats"]]
        with two.websocket_connect(f"/api/online/{g['id']}/ws") as ws:
            ws.send_text(json.dumps({"type": "hello", "token": g["spectator"]["token"]}))
            seen: list[int] = []

            def until(version: int) -> dict[str, Any]:
                while True:
                    msg = ws.receive_json()
                    if msg["type"] == "state":
                        seen.append(msg["state"]["version"])
                        if msg["state"]["version"] >= version:
                            return msg["state"]  # type: ignore[no-any-return]

            until(0)
            rng = random.Random(4)

            def move() -> dict[str, Any]:
                state = one.get(f"/api/online/{g['id']}", headers=auth[0]).json()
                seat = state["to_move"]
                mine = one.get(f"/api/online/{g['id']}", headers=auth[seat]).json()
                body = {"move": rng.choice(mine["legal"]), "version": mine["version"]}
                r = one.post(f"/api/online/{g['id']}/moves", json=body, headers=auth[seat])
                assert r.status_code == 200, r.text
                return r.json()  # type: ignore[no-any-return]

            for v in range(1, 5):
                move()
                until(v)
            assert seen == [0, 1, 2, 3, 4]
            # Two versions stored behind the brokers' backs.
            hub = one.app.state.hub  # type: ignore[attr-defined]
            s = hub.sessions[g["id"]]
            game = s.game.copy()
            for v in (4, 5):
                game.play(rng.choice(sorted(game.legal_moves(), key=str)))
                hub.store.save(g["id"], v, dump(game), False)
            # The first app is behind too: it reads the game again on Stale.
            hub.evict(g["id"])
            last = move()
            state = until(last["version"])
            assert seen == [0, 1, 2, 3, 4, 7]
            assert state["history"] == last["history"] and len(state["history"]) == 7
            broker = two.app.state.hub.broker  # type: ignore[attr-defined]
            assert broker.reloads == 1 and broker.applied == 4


@needs_redis
def test_a_takeback_asked_on_one_process_is_answered_on_the_other(
    tmp_path: Path, monkeypatch: Any
) -> None:
    """Seat 0 on the first app asks to take its move back; seat 1, on the
    second, is shown the request and accepts it there: the move is taken
    back (a new version, without it) for both."""
    pytest.importorskip("fastapi")
    from fastapi.testclient import TestClient

    from donutbox.server.app import create_app

    assert REDIS
    monkeypatch.setenv("DONUTBOX_BROKER_PREFIX", f"test-{uuid.uuid4().hex[:8]}")
    url = f"sqlite:///{tmp_path / 'games.db'}"
    with (
        TestClient(create_app(url, inline_ai=True, broker_url=REDIS)) as one,
        TestClient(create_app(url, inline_ai=True, broker_url=REDIS)) as two,
    ):
        body = {"seats": [{"name": "A"}, {"name": "B"}], "takebacks": True}
        g = one.post("/api/online", json=body).json()
        path = f"/api/online/{g['id']}/ws"
        with one.websocket_connect(path) as ws0, two.websocket_connect(path) as ws1:

            def until(ws: Any, ok: Any) -> dict[str, Any]:
                while True:
                    msg = ws.receive_json()
                    if msg["type"] == "state" and ok(msg["state"]):
                        return msg["state"]  # type: ignore[no-any-return]

            for ws, seat in ((ws0, 0), (ws1, 1)):
                ws.send_text(json.dumps({"type": "hello", "token": g["seats"][seat]["token"]}))
            first = until(ws0, lambda s: bool(s["legal"]))
            assert first["to_move"] == 0
            ws0.send_text(json.dumps({"type": "move", "move": first["legal"][0], "version": 0}))
            until(ws1, lambda s: s["version"] == 1)
            ws0.send_text(json.dumps({"type": "takeback", "version": 1}))
            asked = until(ws1, lambda s: s["takeback"] is not None)
            assert asked["version"] == 1 and asked["takeback"] == {"by": 0, "agreed": [0]}
            ws1.send_text(json.dumps({"type": "answer", "accept": True, "version": 1}))
            for ws in (ws0, ws1):
                back = until(ws, lambda s: s["version"] == 2)
                assert back["history"] == [] and back["takeback"] is None and back["takebacks"] == 1


@pytest.mark.skipif(shutil.which("redis-server") is None, reason="no redis-server to restart")
def test_versions_stored_while_redis_was_away_are_caught_up_when_it_is_back(
    tmp_path: Path, monkeypatch: Any
) -> None:
    """A Redis of this test's own, stopped between two moves and started
    again: the move stored meanwhile (its message was lost) reaches the
    other process once Redis is back (it reads its games again), and later
    moves flow as before."""
    pytest.importorskip("fastapi")
    pytest.importorskip("redis")
    from fastapi.testclient import TestClient

    from donutbox.server.app import create_app

    port = _free_port()

    def start_redis() -> subprocess.Popen[bytes]:
        proc = subprocess.Popen(
            [*REDIS_SERVER, "--port", str(port), "--dir", str(tmp_path)],
            stdout=subprocess.DEVNULL,
        )
        deadline = time.monotonic() + 10
        while True:
            with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), 0.2):
                return proc
            assert time.monotonic() < deadline, "redis-server did not start"
            time.sleep(0.05)

    def until(ok: Any, timeout: float = 15.0) -> None:
        deadline = time.monotonic() + timeout
        while not ok():
            assert time.monotonic() < deadline
            time.sleep(0.05)

    redis_proc = start_redis()
    url = f"redis://127.0.0.1:{port}/0"
    monkeypatch.setenv("DONUTBOX_BROKER_PREFIX", "restart")
    db = f"sqlite:///{tmp_path / 'games.db'}"
    try:
        with (
            TestClient(create_app(db, inline_ai=True, broker_url=url)) as one,
            TestClient(create_app(db, inline_ai=True, broker_url=url)) as two,
        ):
            g = one.post("/api/online", json={"seats": [{"name": "A"}, {"name": "B"}]}).json()
            auth = [{"Authorization": f"Bearer {s['token']}"} for s in g["seats"]]
            two.get(f"/api/online/{g['id']}", headers=auth[1])  # in the second's memory
            hub_two = two.app.state.hub  # type: ignore[attr-defined]
            rng = random.Random(2)

            def move() -> int:
                state = one.get(f"/api/online/{g['id']}", headers=auth[0]).json()
                seat = state["to_move"]
                mine = one.get(f"/api/online/{g['id']}", headers=auth[seat]).json()
                body = {"move": rng.choice(mine["legal"]), "version": mine["version"]}
                r = one.post(f"/api/online/{g['id']}/moves", json=body, headers=auth[seat])
                assert r.status_code == 200, r.text
                return int(r.json()["version"])

            assert move() == 1
            until(lambda: hub_two.sessions[g["id"]].version == 1)
            redis_proc.kill()
            redis_proc.wait(10)
            assert move() == 2  # stored: the database is the authority
            time.sleep(0.5)
            assert hub_two.sessions[g["id"]].version == 1  # not heard of
            redis_proc = start_redis()
            until(lambda: hub_two.sessions[g["id"]].version == 2)
            assert move() == 3
            until(lambda: hub_two.sessions[g["id"]].version == 3)
            state = two.get(f"/api/online/{g['id']}", headers=auth[0]).json()
            assert state["version"] == 3 and len(state["history"]) == 3
    finally:
        redis_proc.kill()
        redis_proc.wait(10)


REDIS_SERVER = ["redis-server", "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@needs_redis
def test_a_move_on_a_process_whose_copy_is_behind_is_refused_once_then_accepted(
    tmp_path: Path, monkeypatch: Any
) -> None:
    """A version stored without its message reaching the second process (as
    by a writer killed between storing and publishing): a move there, made
    on the version its player last saw, is refused as stale, the second
    process having compared its copy with the database and read the game
    again; it then shows the stored version and the same player's move on
    it is accepted (not refused for ever)."""
    pytest.importorskip("fastapi")
    from fastapi.testclient import TestClient

    from donutbox.server.app import create_app

    assert REDIS
    monkeypatch.setenv("DONUTBOX_BROKER_PREFIX", f"test-{uuid.uuid4().hex[:8]}")
    url = f"sqlite:///{tmp_path / 'games.db'}"
    with (
        TestClient(create_app(url, inline_ai=True, broker_url=REDIS)) as one,
        TestClient(create_app(url, inline_ai=True, broker_url=REDIS)) as two,
    ):
        g = one.post("/api/online", json={"seats": [{"name": "A"}, {"name": "B"}]}).json()
        auth = [{"Authorization": f"Bearer {s['token']}"} for s in g["seats"]]
        before = two.get(f"/api/online/{g['id']}", headers=auth[0]).json()
        assert before["version"] == 0 and before["to_move"] == 0
        # Version 1 (seat 0's move) stored behind the brokers' backs.
        hub = one.app.state.hub  # type: ignore[attr-defined]
        game = hub.sessions[g["id"]].game.copy()
        game.play(sorted(game.legal_moves(), key=str)[0])
        hub.store.save(g["id"], 0, dump(game), False)
        body = {"move": before["legal"][0], "version": 0}
        r = two.post(f"/api/online/{g['id']}/moves", json=body, headers=auth[0])
        assert r.status_code == 409, r.text
        assert "stale" in r.json()["detail"]
        mine = two.get(f"/api/online/{g['id']}", headers=auth[1]).json()
        assert mine["version"] == 1 and mine["to_move"] == 1 and len(mine["history"]) == 1
        body = {"move": mine["legal"][0], "version": 1}
        r = two.post(f"/api/online/{g['id']}/moves", json=body, headers=auth[1])
        assert r.status_code == 200, r.text
        assert r.json()["version"] == 2 and len(r.json()["history"]) == 2


@needs_redis
def test_a_catch_up_read_is_not_refused_when_the_work_pool_is_full(
    tmp_path: Path, monkeypatch: Any
) -> None:
    """Reading a game again (after a gap, on taking a lease, on Redis's
    return) does not queue in the 16-slot work pool: with that pool full (as
    when one process takes over many games at once), the newer version is
    still read, not refused as Overloaded."""
    pytest.importorskip("fastapi")
    from fastapi.testclient import TestClient

    from donutbox.server import limits
    from donutbox.server.app import create_app

    assert REDIS
    monkeypatch.setenv("DONUTBOX_BROKER_PREFIX", f"test-{uuid.uuid4().hex[:8]}")
    url = f"sqlite:///{tmp_path / 'games.db'}"
    with TestClient(create_app(url, inline_ai=True, broker_url=REDIS)) as one:
        g = one.post("/api/online", json={"seats": [{"name": "A"}, {"name": "B"}]}).json()
        hub = one.app.state.hub  # type: ignore[attr-defined]
        game = hub.sessions[g["id"]].game.copy()
        game.play(sorted(game.legal_moves(), key=str)[0])
        hub.store.save(g["id"], 0, dump(game), False)
        monkeypatch.setattr(limits, "_waiting", limits.BLOCKING_QUEUE)
        assert one.portal.call(hub.broker.refresh, g["id"]) is True  # type: ignore[union-attr]
        assert hub.sessions[g["id"]].version == 1


@needs_redis
def test_malformed_messages_are_skipped_without_reconnecting_or_catching_up(
    tmp_path: Path, monkeypatch: Any
) -> None:
    """Garbage on the games channel (not JSON, not an object, a version that
    is not a number, a bad beat): each is skipped; the process keeps its one
    subscription (no reconnection, so no catch-up of every game and no
    leaked connection) and goes on applying the real versions."""
    pytest.importorskip("fastapi")
    import redis
    from fastapi.testclient import TestClient

    from donutbox.server.app import create_app

    assert REDIS
    prefix = f"test-{uuid.uuid4().hex[:8]}"
    monkeypatch.setenv("DONUTBOX_BROKER_PREFIX", prefix)
    url = f"sqlite:///{tmp_path / 'games.db'}"
    plain = redis.Redis.from_url(REDIS)
    channel = f"{prefix}:games"
    with (
        TestClient(create_app(url, inline_ai=True, broker_url=REDIS)) as one,
        TestClient(create_app(url, inline_ai=True, broker_url=REDIS)) as two,
    ):
        g = one.post("/api/online", json={"seats": [{"name": "A"}, {"name": "B"}]}).json()
        auth = [{"Authorization": f"Bearer {s['token']}"} for s in g["seats"]]
        two.get(f"/api/online/{g['id']}", headers=auth[0])  # in the second's memory
        broker = two.app.state.hub.broker  # type: ignore[attr-defined]
        assert plain.pubsub_numsub(channel) == [(channel.encode(), 2)]
        bad = [
            b"no newline at all",
            b"x\nnot json",
            b"x\n[1, 2]",
            b"x\n" + json.dumps({"k": "v", "g": "elsewhere", "v": "seven"}).encode(),
            b"x\n" + json.dumps({"k": "P", "p": {g["id"]: [["a"], 1]}}).encode(),
            b"\xff\xfe\n{}",
        ]
        for data in bad:
            plain.publish(channel, data)
        state = one.get(f"/api/online/{g['id']}", headers=auth[0]).json()
        body = {"move": state["legal"][0], "version": 0}
        assert (
            one.post(f"/api/online/{g['id']}/moves", json=body, headers=auth[0]).status_code == 200
        )
        deadline = time.monotonic() + 10
        while two.app.state.hub.sessions[g["id"]].version != 1:  # type: ignore[attr-defined]
            assert time.monotonic() < deadline, "the real version never arrived"
            time.sleep(0.05)
        assert broker.malformed == len(bad)
        assert broker.applied == 1 and broker.reloads == 0  # no catch-up
        assert plain.pubsub_numsub(channel) == [(channel.encode(), 2)]
    plain.close()


@pytest.mark.skipif(shutil.which("redis-server") is None, reason="no redis-server to restart")
def test_leases_dropped_while_redis_was_away_are_asked_for_again(
    tmp_path: Path, monkeypatch: Any
) -> None:
    """A broker holding a game's lease loses Redis for longer than a lease:
    it stops running the game (the lease may be another's by then); once
    Redis is back, the games in memory ask for their leases again (the AI
    seats are kicked and the clocks scheduled, which is what asks), with
    nobody having moved meanwhile."""
    pytest.importorskip("redis")
    from donutbox.server import broker as broker_module

    monkeypatch.setattr(broker_module, "LEASE_MS", 600)
    monkeypatch.setattr(broker_module, "RENEW_SECONDS", 0.15)
    monkeypatch.setattr(broker_module, "SCAN_SECONDS", 0.1)
    port = _free_port()

    def start_redis() -> subprocess.Popen[bytes]:
        proc = subprocess.Popen(
            [*REDIS_SERVER, "--port", str(port), "--dir", str(tmp_path)],
            stdout=subprocess.DEVNULL,
        )
        deadline = time.monotonic() + 10
        while True:
            with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), 0.2):
                return proc
            assert time.monotonic() < deadline, "redis-server did not start"
            time.sleep(0.05)

    kicked: list[str] = []
    scheduled: list[str] = []
    game = type("S", (), {"id": "g", "over": False})()

    class Hub:
        def __init__(self) -> None:
            self.sessions: dict[str, Any] = {"g": game}
            self.locks: dict[str, Any] = {}

        fanout = type("F", (), {"readers": {}})()
        kick_ai = staticmethod(kicked.append)

        def stop_clock(self, _game_id: str) -> None:
            return None

        def watch_clock(self, s: Any) -> None:
            scheduled.append(s.id)

        def ai_thinking(self, _game_id: str) -> bool:
            return False

    redis_proc = start_redis()

    async def main() -> None:
        nonlocal redis_proc
        b = RedisBroker(Hub(), f"redis://127.0.0.1:{port}/0", "away")  # type: ignore[arg-type]
        await b.start()
        try:
            assert await b.client.set(b._lease("g"), b.origin, nx=True, px=600)
            b.held.add("g")
            b.held_at["g"] = time.monotonic()
            redis_proc.kill()
            redis_proc.wait(10)
            deadline = time.monotonic() + 10
            while "g" in b.held:
                assert time.monotonic() < deadline, "the lease was never dropped"
                await asyncio.sleep(0.05)
            kicked.clear()
            scheduled.clear()
            redis_proc = start_redis()
            deadline = time.monotonic() + 15
            while "g" not in kicked or "g" not in scheduled:
                assert time.monotonic() < deadline, "the game never asked again"
                await asyncio.sleep(0.05)
        finally:
            await b.close()

    try:
        asyncio.run(main())
    finally:
        redis_proc.kill()
        redis_proc.wait(10)


def test_a_clock_s_turn_travels_as_time_elapsed_not_wall_clock_time(
    store: Store, monkeypatch: Any
) -> None:
    """The turn's clock is sent as the seconds it has run, and set from
    them on arrival, whatever the wall clock says (machines whose clocks
    disagree by minutes still agree on the turn)."""
    from donutbox.server import broker as broker_module
    from donutbox.server.broker import clock_ref
    from donutbox.server.online import Clock

    stored = store.create("t", "online", ["human", "human"], {}, dump(Game.new(None, ["A", "B"])))
    s = GameSession(stored, store)
    s.clock = Clock.from_dict(
        {"initial_ms": 60_000, "increment_ms": 0, "remaining_ms": [60_000, 60_000], "running": True}
    )
    s.clock.turn_started = time.monotonic() - 7.0
    monkeypatch.setattr(broker_module.time, "time", lambda: 0.0)  # a wall clock far off
    sent = clock_ref(s)
    assert sent is not None and 7.0 <= sent < 8.0
    other = store.get(stored.id)
    assert other is not None
    other.options = {"online": {"clock": s.clock.to_dict()}}
    there = GameSession(other, store)
    adopt(there, other, sent)
    assert there.clock is not None and there.clock.turn_started is not None
    assert 7.0 <= time.monotonic() - there.clock.turn_started < 8.0


def test_a_lease_not_renewed_lately_is_not_trusted() -> None:
    """``holds`` is not mere membership: a lease set or renewed longer ago
    than its length less the margin (a renewal that hangs, a paused
    process) may have expired in Redis, so this process no longer acts on
    it; one renewed just now is held."""
    pytest.importorskip("redis")
    from donutbox.server import broker as broker_module

    b = RedisBroker(None, "redis://127.0.0.1:1/0", "unused")  # type: ignore[arg-type]
    b.held.add("g")
    seconds = broker_module.LEASE_MS / 1000
    b.held_at["g"] = time.monotonic() - (seconds - broker_module.LEASE_MARGIN) - 0.05
    assert not b.holds("g")
    b.held_at["g"] = time.monotonic()
    assert b.holds("g")
    b.held.discard("g")
    assert not b.holds("g")


def test_clock_starts_are_forgotten_with_their_games() -> None:
    """What clock starts were announced is kept per game in memory only:
    released games and games that left memory are dropped at the next
    renewal round (it does not grow with every game ever seen)."""
    pytest.importorskip("redis")

    hub = type("H", (), {"sessions": {"here": object()}})()
    b = RedisBroker(hub, "redis://127.0.0.1:1/0", "unused")  # type: ignore[arg-type]
    b.clock_known.update({"here": 4, "gone": 7})
    asyncio.run(b._renew_all())  # nothing held: no Redis call
    assert b.clock_known == {"here": 4}


def test_shutdown_ends_a_task_that_swallowed_its_cancellation(monkeypatch: Any) -> None:
    """redis-py (8.1) can swallow a cancellation that lands while a command
    is in flight: the broker's sender then went back to its queue and the
    app's shutdown waited for it for ever (the stale-move test hung in the
    TestClient's shutdown).  ``close`` cancels again whatever carries on, so
    such a task ends, and the others with it, in well under a second."""
    pytest.importorskip("redis")
    from donutbox.server import broker as broker_module

    async def main() -> None:
        b = RedisBroker(None, "redis://127.0.0.1:1/0", "unused")  # type: ignore[arg-type]
        queue: asyncio.Queue[int] = asyncio.Queue()
        swallowed = asyncio.Event()

        async def like_the_sender() -> None:
            while True:
                try:
                    await asyncio.sleep(3600)  # "a command in flight"
                except asyncio.CancelledError:
                    swallowed.set()  # what redis-py did: not re-raised
                await queue.get()

        async def plain() -> None:
            await asyncio.sleep(3600)

        b._tasks = [asyncio.ensure_future(like_the_sender()), asyncio.ensure_future(plain())]
        await asyncio.sleep(0)
        started = time.monotonic()
        closing = asyncio.ensure_future(b.close())
        await asyncio.wait([closing], timeout=broker_module.STOP_SECONDS + 5)
        hung = not closing.done()
        for task in [*b._tasks, closing]:  # so that a failure ends too
            task.cancel()
        assert not hung, "close() waited for ever on the task that swallowed it"
        assert time.monotonic() - started < 1.0
        assert swallowed.is_set()
        assert all(t.cancelled() for t in b._tasks)

    asyncio.run(main())


def _late_renewals(monkeypatch: Any) -> None:
    """Lease times for the late-renewal tests: a 3 s lease trusted for
    2.25 s, renewed every 0.2 s, each renewal waited for 0.5 s at most."""
    from donutbox.server import broker as broker_module

    monkeypatch.setattr(broker_module, "LEASE_MS", 3000)
    monkeypatch.setattr(broker_module, "LEASE_MARGIN", 0.75)
    monkeypatch.setattr(broker_module, "RENEW_SECONDS", 0.2)
    monkeypatch.setattr(broker_module, "SCAN_SECONDS", 0.1)
    monkeypatch.setattr(broker_module, "RENEW_TIMEOUT", 0.5)


def _hold_renewals(client: Any, b: RedisBroker) -> Any:
    """This process's renewals get no answer until the returned function is
    called (as over a slow link): every other Redis call goes through."""
    gate = client.portal.call(asyncio.Event)
    real = b._renew

    async def late(**kw: Any) -> Any:
        await gate.wait()
        return await real(**kw)

    b._renew = late
    return lambda: client.portal.call(gate.set)


def _until(what: Any, seconds: float, why: str) -> Any:
    deadline = time.monotonic() + seconds
    while not (got := what()):
        assert time.monotonic() < deadline, why
        time.sleep(0.02)
    return got


@needs_redis
def test_an_ai_seat_kicked_while_its_lease_s_renewal_is_late_moves_once_it_is_renewed(
    tmp_path: Path, monkeypatch: Any
) -> None:
    """A renewal answered later than the lease's margin: the lease is not
    trusted meanwhile, so the AI seat, kicked by the human's move then, does
    not move; once the renewal comes back (the lease was never lost) it
    moves within a second or two, once, from this process (the other
    process on the same Redis never took the game)."""
    pytest.importorskip("fastapi")
    from fastapi.testclient import TestClient

    from donutbox.server.app import create_app

    assert REDIS
    _late_renewals(monkeypatch)
    monkeypatch.setenv("DONUTBOX_BROKER_PREFIX", f"test-{uuid.uuid4().hex[:8]}")
    url = f"sqlite:///{tmp_path / 'games.db'}"
    with (
        TestClient(create_app(url, inline_ai=True, broker_url=REDIS)) as one,
        TestClient(create_app(url, inline_ai=True, broker_url=REDIS)) as two,
    ):
        g = one.post("/api/online", json={"seats": [{"kind": "random"}, {"name": "H"}]}).json()
        auth = {"Authorization": f"Bearer {g['seats'][1]['token']}"}
        path = f"/api/online/{g['id']}"
        b = one.app.state.hub.broker  # type: ignore[attr-defined]
        # The AI seat moved first, from process one: it holds the lease.
        st = _until(
            lambda: (x := one.get(path, headers=auth).json())["legal"] and x, 10, "no AI move"
        )
        assert st["version"] == 1 and b.holds(g["id"])
        answer = _hold_renewals(one, b)
        _until(lambda: not b.holds(g["id"]), 5, "the lease stayed trusted")
        r = one.post(f"{path}/moves", json={"move": st["legal"][0], "version": 1}, headers=auth)
        assert r.status_code == 200, r.text
        time.sleep(0.3)
        assert one.get(path, headers=auth).json()["version"] == 2  # not while untrusted
        answer()
        shown = time.monotonic()
        st = _until(
            lambda: (x := one.get(path, headers=auth).json())["version"] > 2 and x,
            3,
            "the AI seat never moved after the renewal",
        )
        assert time.monotonic() - shown < 3
        assert st["version"] == 3 and st["legal"] and len(st["history"]) == 3
        holder = one.portal.call(b.client.get, b._lease(g["id"]))
        assert holder == b.origin.encode()  # never lost: the same process moved
        assert b.takeovers == 0 and two.app.state.hub.broker.takeovers == 0  # type: ignore[attr-defined]


@needs_redis
def test_a_clock_started_while_its_lease_s_renewal_is_late_runs_out_once_it_is_renewed(
    tmp_path: Path, monkeypatch: Any
) -> None:
    """The human joins (which starts the clock) while the lease's renewal is
    late: the clock is not watched meanwhile; once the renewal comes back it
    is, and when the human's 3 seconds are gone the stand-in moves."""
    pytest.importorskip("fastapi")
    from fastapi.testclient import TestClient

    from donutbox.server.app import create_app

    assert REDIS
    _late_renewals(monkeypatch)
    monkeypatch.setenv("DONUTBOX_BROKER_PREFIX", f"test-{uuid.uuid4().hex[:8]}")
    url = f"sqlite:///{tmp_path / 'games.db'}"
    with TestClient(create_app(url, inline_ai=True, broker_url=REDIS)) as one:
        body = {
            "seats": [{"kind": "random"}, {"name": "H"}],
            "clock": {"minutes": 0.05, "increment": 0},
        }
        g = one.post("/api/online", json=body).json()
        auth = {"Authorization": f"Bearer {g['seats'][1]['token']}"}
        path = f"/api/online/{g['id']}"
        b = one.app.state.hub.broker  # type: ignore[attr-defined]
        st = _until(
            lambda: (x := one.get(path, headers=auth).json())["legal"] and x, 10, "no AI move"
        )
        assert st["version"] == 1 and st["clock"]["running"] is None  # the human is not seated
        answer = _hold_renewals(one, b)
        _until(lambda: not b.holds(g["id"]), 5, "the lease stayed trusted")
        with one.websocket_connect(f"{path}/ws") as ws:
            ws.send_text(json.dumps({"type": "hello", "token": g["seats"][1]["token"]}))
            joined = time.monotonic()
            _until(
                lambda: one.get(path, headers=auth).json()["clock"]["running"] == 1,
                3,
                "the clock never started",
            )
            answer()
            st = _until(
                lambda: (x := one.get(path, headers=auth).json())["version"] > 1 and x,
                8,
                "the clock never ran out",
            )
            assert 3.0 <= time.monotonic() - joined < 8.0
            assert True in st["clock"]["flagged"] and len(st["history"]) >= 2
