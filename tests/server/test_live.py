"""Online play against a real `donutbox serve` process over real WebSockets:
racing clients, and a server killed with SIGKILL and started again."""

from __future__ import annotations

import asyncio
import json
import random
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("websockets")
from donutbox.server.client import OnlineClient


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class Server:
    """`donutbox serve` in a child process, on a fixed port and database."""

    def __init__(self, db: Path) -> None:
        self.port = _free_port()
        self.db = f"sqlite:///{db}"
        self.base = f"http://127.0.0.1:{self.port}"
        self.proc: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        self.proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "donutbox.cli",
                "serve",
                "--port",
                str(self.port),
                "--db",
                self.db,
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,  # a pipe nobody reads fills up and is never closed
        )
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            try:
                with urllib.request.urlopen(self.base + "/api/meta", timeout=1):
                    return
            except OSError:
                time.sleep(0.1)
        raise AssertionError("the server did not start")

    def kill(self) -> None:
        assert self.proc is not None
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait(10)

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.kill()

    def post(self, path: str, body: dict[str, Any]) -> dict[str, Any]:
        req = urllib.request.Request(
            self.base + path,
            data=json.dumps(body).encode(),
            headers={"Content-Type": "application/json"},
        )
        with urllib.request.urlopen(req, timeout=10) as r:
            return json.loads(r.read())  # type: ignore[no-any-return]

    def get(self, path: str, token: str) -> dict[str, Any]:
        req = urllib.request.Request(self.base + path, headers={"Authorization": f"Bearer {token}"})
        with urllib.request.urlopen(req, timeout=10) as r:
            return json.loads(r.read())  # type: ignore[no-any-return]


@pytest.fixture
def server(tmp_path: Path) -> Iterator[Server]:
    s = Server(tmp_path / "games.db")
    s.start()
    yield s
    s.stop()


async def _my_turn(c: OnlineClient, timeout: float = 20.0) -> dict[str, Any]:
    return await c.wait(lambda s: s["finished"] or bool(s["legal"]), timeout)


def test_two_clients_racing_the_same_seat_get_exactly_one_move_applied(server: Server) -> None:
    g = server.post("/api/online", {"seats": [{"name": "A"}, {"name": "B"}]})
    t0, t1 = g["seats"][0]["token"], g["seats"][1]["token"]

    async def main() -> None:
        # Two tabs of seat 0 and one of seat 1, each its own WebSocket.
        tab1, tab2 = OnlineClient(server.base, g["id"], t0), OnlineClient(server.base, g["id"], t0)
        other = OnlineClient(server.base, g["id"], t1)
        for c in (tab1, tab2, other):
            await c.start()
        rng = random.Random(3)
        applied: list[str] = []
        for _round in range(8):
            state = await _my_turn(tab1)
            await tab2.wait(lambda s, v=state["version"]: s["version"] == v)
            v = state["version"]
            legal = state["legal"]
            m1, m2 = rng.choice(legal), rng.choice(legal)
            r1, r2 = await asyncio.gather(tab1.move(m1, v), tab2.move(m2, v))
            kinds = sorted([r1["type"], r2["type"]])
            assert kinds == ["ack", "error"], (r1, r2)
            loser = r1 if r1["type"] == "error" else r2
            assert "stale" in loser["reason"] or "not your turn" in loser["reason"]
            applied.append(m1 if r1["type"] == "ack" else m2)
            after = await other.wait(lambda s, v=v: s["version"] == v + 1)
            assert after["history"][-1] == applied[-1]
            # Seat 1 answers (any legal move) so that seat 0 is to move again.
            mine = await _my_turn(other)
            ack = await other.move(rng.choice(mine["legal"]))
            assert ack["type"] == "ack"
        final = server.get(f"/api/online/{g['id']}", t1)
        assert final["history"][0::2] == applied and final["version"] == 16
        for c in (tab1, tab2, other):
            await c.close()

    asyncio.run(main())


def test_a_server_killed_between_moves_loses_nothing_and_clients_reconnect(
    server: Server,
) -> None:
    g = server.post(
        "/api/online",
        {"seats": [{"name": "A"}, {"name": "B"}], "layout": "splitzkies"},
    )
    tokens = [g["seats"][0]["token"], g["seats"][1]["token"]]

    async def main() -> None:
        players = [OnlineClient(server.base, g["id"], t) for t in tokens]
        watcher = OnlineClient(server.base, g["id"], g["spectator"]["token"])
        for c in [*players, watcher]:
            await c.start()
        rng = random.Random(5)
        acked: list[tuple[int, str]] = []  # (version after the move, move)
        kills = 0
        while True:
            state = players[0].state
            assert state is not None
            if state["finished"]:
                break
            mover = players[state["to_move"]]
            mine = await _my_turn(mover)
            if mine["finished"]:
                continue
            move = rng.choice(mine["legal"])
            reply = await mover.move(move, mine["version"])
            if reply["type"] == "ack":
                acked.append((reply["version"], move))
                await players[0].wait(lambda s, v=reply["version"]: s["version"] >= v)
            if len(acked) in (10, 25) and kills < len(acked) // 10:
                # SIGKILL between moves: no chance to flush or say goodbye.
                server.kill()
                kills += 1
                await asyncio.sleep(0.3)
                server.start()
                for c in [*players, watcher]:
                    await c.connected(30)  # they reconnect by themselves
                    await c.wait(lambda s: s["version"] >= acked[-1][0], 30)
        final = await watcher.wait(lambda s: s["finished"], 30)
        assert kills == 2
        assert all(c.connects >= 3 for c in [*players, watcher])
        # Every acknowledged move is in the stored game, at its place.
        for version, move in acked:
            assert final["history"][version - 1] == move
        assert final["version"] == len(final["history"]) == len(acked)
        assert final["tray"] == []
        for c in [*players, watcher]:
            await c.close()

    asyncio.run(main())


def test_a_socket_to_a_missing_or_wrong_game_is_closed_with_a_reason(server: Server) -> None:
    # Through a real server (uvicorn), as a browser meets it: the close codes
    # must arrive (a refusal during the handshake would arrive as HTTP 403,
    # which a client cannot tell from a network failure).
    import websockets

    local = server.post("/api/games", {"opponent": "hotseat"})
    ws_base = server.base.replace("http://", "ws://")

    async def close_code(path: str, hello: str | None = None) -> int | None:
        async with websockets.connect(ws_base + path) as ws:
            if hello is not None:  # the online socket looks the game up at the hello
                await ws.send(json.dumps({"type": "hello", "token": hello}))
            try:
                while True:
                    await asyncio.wait_for(ws.recv(), 10)
            except websockets.ConnectionClosed as closed:
                return closed.rcvd.code if closed.rcvd else None
        return None

    async def main() -> list[int | None]:
        return [
            await close_code("/api/online/no-such-game/ws", "t" * 43),
            await close_code(f"/api/online/{local['id']}/ws", local["owner_token"]),
            await close_code("/api/games/no-such-game/ws"),
        ]

    assert asyncio.run(main()) == [4404, 4403, 4404]
