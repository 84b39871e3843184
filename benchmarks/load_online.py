"""Load test of online play: bots over real WebSockets against one server,
or against several server processes sharing a database and a broker.

    python benchmarks/load_online.py --games 200 --seconds 120
    python benchmarks/load_online.py --games 500 --processes 2 \
        --db postgresql+psycopg://... --broker redis://...

starts `donutbox serve` (``--processes`` of them, each on its own port; a
fresh SQLite file for one process without ``--db``), creates ``--games``
online games of two human seats, and connects two bots to each (``--games``
x 2 WebSockets, all in this process, one asyncio loop).  With several
processes the games are made on each in turn and a game's two bots are on
*different* processes (seat 0 on process i, seat 1 on process i + 1), as a
load balancer without sticky sessions would spread them: every move then
crosses the broker to reach the opponent.  Each bot waits for its turn,
"thinks" a random ``--think`` seconds, and sends a legal move over its
socket.

Measured per move (this process's monotonic clock):
- round trip: from sending the move to receiving, on the mover's socket, the
  new state (the server has validated, stored and broadcast it);
- seen by the opponent: from sending to the opponent's socket receiving it.

At the end every game is read back through the HTTP API (a fresh request)
and its history must hold every acknowledged move in order: nothing lost.
Give ``--url`` to test a server that is already running instead.  Server CPU
is the sum over the server processes (their main process: the bots' games
have no AI seats).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import http.client
import json
import os
import random
import signal
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path
from typing import Any

import websockets

SERVE = [sys.executable, "-m", "donutbox.cli", "serve"]


def _free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _http(base: str, path: str, body: dict[str, Any] | None = None, token: str = "") -> Any:
    headers = {"Content-Type": "application/json"}
    if token:
        headers["Authorization"] = f"Bearer {token}"
    data = None if body is None else json.dumps(body).encode()
    req = urllib.request.Request(base + path, data=data, headers=headers)
    with urllib.request.urlopen(req, timeout=30) as r:
        return json.loads(r.read())


class Bot:
    def __init__(self, game: GameRun, seat: int, token: str) -> None:
        self.game = game
        self.seat = seat
        self.token = token
        self.version = -1
        self.state: dict[str, Any] | None = None
        self.changed = asyncio.Event()
        self.ws: Any = None

    async def connect(self, base: str) -> None:
        url = base.replace("http://", "ws://") + f"/api/online/{self.game.id}/ws"
        self.ws = await websockets.connect(url, max_size=2**22, open_timeout=60)
        await self.ws.send(json.dumps({"type": "hello", "token": self.token}))
        asyncio.get_running_loop().create_task(self.read())

    async def read(self) -> None:
        try:
            async for raw in self.ws:
                now = time.monotonic()
                msg = json.loads(raw)
                kind = msg["type"]
                if kind == "state":
                    st = msg["state"]
                    if st["version"] > self.version:
                        self.version = st["version"]
                        self.state = st
                        self.game.arrived(self.seat, st["version"], now)
                        self.changed.set()
                elif kind == "ack":
                    self.game.acked(msg["version"])
                elif kind == "error":
                    self.game.errors.append(msg["reason"])
        except websockets.WebSocketException as err:
            self.game.errors.append(f"socket closed: {err}")

    async def play(self, rng: random.Random, think: tuple[float, float], stop: float) -> None:
        while time.monotonic() < stop:
            st = self.state
            if st is not None and st["finished"]:
                return
            if st is None or not st["legal"]:
                self.changed.clear()
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self.changed.wait(), 5)
                continue
            await asyncio.sleep(rng.uniform(*think))
            if time.monotonic() >= stop:
                return
            move = rng.choice(st["legal"])
            self.game.sent(st["version"] + 1, move, time.monotonic())
            await self.ws.send(json.dumps({"type": "move", "move": move, "version": st["version"]}))
            # Wait for the new state before thinking again.
            while self.version <= st["version"]:
                self.changed.clear()
                try:
                    await asyncio.wait_for(self.changed.wait(), 30)
                except TimeoutError:
                    self.game.errors.append("no state within 30 s of a move")
                    return


class GameRun:
    def __init__(self, created: dict[str, Any]) -> None:
        self.id = created["id"]
        self.tokens = [s["token"] for s in created["seats"]]
        self.pending: dict[int, tuple[str, float, int]] = {}  # version -> move, t0, mover
        self.acks: set[int] = set()
        self.errors: list[str] = []
        self.round_trip: list[float] = []
        self.seen: list[float] = []
        self.bots: list[Bot] = []

    def sent(self, version: int, move: str, t0: float) -> None:
        self.pending[version] = (move, t0, -1)

    def acked(self, version: int) -> None:
        self.acks.add(version)

    def arrived(self, seat: int, version: int, now: float) -> None:
        p = self.pending.get(version)
        if p is None:
            return
        _, t0, _ = p
        # No takebacks here: version v is ply v, made by seat (v - 1) mod 2.
        if seat == (version - 1) % len(self.bots):
            self.round_trip.append(now - t0)
        else:
            self.seen.append(now - t0)


async def _loop_lag(stop: float) -> list[float]:
    """How late this process's event loop wakes from 50 ms sleeps."""
    out = []
    while time.monotonic() < stop:
        t = time.monotonic()
        await asyncio.sleep(0.05)
        out.append(time.monotonic() - t - 0.05)
    return out


def _pct(xs: list[float], q: float) -> float:
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(q * len(xs)))] * 1000


async def run(args: argparse.Namespace, bases: list[str]) -> dict[str, Any]:
    rng = random.Random(args.seed)
    games = []
    for i in range(args.games):
        created = _http(
            bases[i % len(bases)],
            "/api/online",
            {"seats": [{"name": f"bot{i}a"}, {"name": f"bot{i}b"}]},
        )
        games.append(GameRun(created))
    where: list[tuple[Bot, str]] = []
    for i, g in enumerate(games):
        g.bots = [Bot(g, seat, tok) for seat, tok in enumerate(g.tokens)]
        for seat, b in enumerate(g.bots):
            where.append((b, bases[(i + seat) % len(bases)]))
    base = bases[0]
    for k in range(0, len(where), 100):  # not a thousand handshakes at once
        await asyncio.gather(*(b.connect(url) for b, url in where[k : k + 100]))
    start = time.monotonic()
    stop = start + args.seconds
    cpu_start = time.process_time()
    lag = asyncio.get_running_loop().create_task(_loop_lag(stop))
    await asyncio.gather(
        *(
            b.play(random.Random(rng.random()), (args.think_min, args.think_max), stop)
            for g in games
            for b in g.bots
        )
    )
    elapsed = time.monotonic() - start
    bots_cpu = time.process_time() - cpu_start
    lags = await lag
    await asyncio.sleep(1.0)  # let the last broadcasts arrive
    lost = 0
    checked = 0
    for g in games:
        stored = _http(base, f"/api/online/{g.id}", token=g.tokens[0])
        acked_moves = [g.pending[v][0] for v in sorted(g.acks)]
        if stored["history"][: len(acked_moves)] != acked_moves or len(stored["history"]) != len(
            acked_moves
        ):
            lost += 1
        checked += 1
        for b in g.bots:
            await b.ws.close()
    rt = [x for g in games for x in g.round_trip]
    seen = [x for g in games for x in g.seen]
    errors = [e for g in games for e in g.errors]
    return {
        "processes": len(bases),
        "games": args.games,
        "sockets": 2 * args.games,
        "seconds": round(elapsed, 1),
        "think": [args.think_min, args.think_max],
        "moves": len(rt),
        "moves_per_second": round(len(rt) / elapsed, 1),
        "round_trip_ms": {
            "median": round(statistics.median(rt) * 1000, 2) if rt else None,
            "p90": round(_pct(rt, 0.90), 2) if rt else None,
            "p99": round(_pct(rt, 0.99), 2) if rt else None,
            "max": round(max(rt) * 1000, 2) if rt else None,
        },
        "seen_by_opponent_ms": {
            "median": round(statistics.median(seen) * 1000, 2) if seen else None,
            "p99": round(_pct(seen, 0.99), 2) if seen else None,
        },
        # The bots share the machine: if their own event loop lags, the
        # round trips above include that delay (reported so it can be seen).
        "bots_cpu_seconds": round(bots_cpu, 1),
        "bots_loop_lag_ms": {
            "median": round(statistics.median(lags) * 1000, 2),
            "p99": round(_pct(lags, 0.99), 2),
        },
        "games_checked": checked,
        "games_with_lost_moves": lost,
        "errors": len(errors),
        "first_errors": errors[:5],
    }


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--games", type=int, default=200)
    ap.add_argument("--seconds", type=float, default=120.0, help="how long the bots play")
    ap.add_argument("--think-min", type=float, default=1.0, help="seconds (default 1)")
    ap.add_argument("--think-max", type=float, default=3.0, help="seconds (default 3)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--url", help="already running servers, comma-separated (default: start them)")
    ap.add_argument("--db", help="database URL for the started servers (default: a temp file)")
    ap.add_argument(
        "--processes",
        type=int,
        default=1,
        help="server processes (more than 1: give --db, --broker)",
    )
    ap.add_argument("--broker", help="Redis URL for the started servers (donutbox serve --broker)")
    ap.add_argument("--json", metavar="FILE", help="also write the results here")
    args = ap.parse_args()
    if args.processes > 1 and not (args.db and args.broker):
        ap.error("--processes above 1 needs --db (e.g. PostgreSQL) and --broker (Redis)")
    procs: list[subprocess.Popen[bytes]] = []
    bases = args.url.split(",") if args.url else []
    try:
        if not bases:
            _start_servers(args, procs, bases)
        cpu0 = sum(_cpu(p) for p in procs)
        result = asyncio.run(run(args, bases))
        result["server_cpu_seconds"] = (
            round(sum(_cpu(p) for p in procs) - cpu0, 1) if procs else None
        )
    finally:
        _stop_servers(procs)
    text = json.dumps(result, indent=2)
    print(text)
    if args.json:
        Path(args.json).write_text(text + "\n")
    ok = result["games_with_lost_moves"] == 0 and result["errors"] == 0
    return 0 if ok else 1


#: Seconds a started server has to answer (imports, migrations, one
#: process at a time on the schema lock).
START_LIMIT = 60.0


def _start_servers(
    args: argparse.Namespace, procs: list[subprocess.Popen[bytes]], bases: list[str]
) -> None:
    """Start ``args.processes`` servers together (into ``procs`` at once, so
    that the caller stops them whatever happens) and wait for each to
    answer; SystemExit with the one that did not, and its last words."""
    db = args.db or f"sqlite:///{Path(tempfile.mkdtemp()) / 'load.db'}"
    # Every bot game is made from this one address: lift the per-address
    # creation and request limits for the servers started here
    # (docs/online.md); the processes share one key prefix of their own.
    env = {
        **os.environ,
        "DONUTBOX_CREATE_BURST": str(args.games + 10),
        "DONUTBOX_REQUEST_BURST": str(10 * args.games + 1000),
        "DONUTBOX_BROKER_PREFIX": f"load-{os.getpid()}-{int(time.time())}",
    }
    extra = ["--broker", args.broker] if args.broker else []
    logs = []
    for _ in range(args.processes):
        port = _free_port()
        log = tempfile.TemporaryFile()  # noqa: SIM115 (open while the server runs)
        logs.append(log)
        procs.append(
            subprocess.Popen(
                [
                    sys.executable,
                    "-m",
                    "donutbox.cli",
                    "serve",
                    "--port",
                    str(port),
                    "--db",
                    db,
                    *extra,
                ],
                stdout=subprocess.DEVNULL,
                stderr=log,
                env=env,
                start_new_session=True,  # stopped with its AI workers
            )
        )
        bases.append(f"http://127.0.0.1:{port}")
    started = time.monotonic()
    for i, (base, proc) in enumerate(zip(bases, procs, strict=True)):
        while True:
            try:  # a short wait: the socket listens before the app is made
                with urllib.request.urlopen(base + "/api/meta", timeout=2) as r:
                    r.read()
                break
            except (OSError, http.client.HTTPException):
                pass
            waited = time.monotonic() - started
            if proc.poll() is not None or waited > START_LIMIT:
                logs[i].seek(0)
                said = logs[i].read().decode(errors="replace").strip().splitlines()
                why = said[-1] if said else "nothing said"
                state = f"exited {proc.returncode}" if proc.poll() is not None else "not answering"
                raise SystemExit(f"server {i + 1} ({base}) {state} after {waited:.0f} s: {why}")
            time.sleep(0.1)


def _stop_servers(procs: list[subprocess.Popen[bytes]]) -> None:
    """SIGTERM, then SIGKILL (with their AI workers) what is left after 30 s:
    no server outlives the benchmark."""
    for proc in procs:
        with contextlib.suppress(ProcessLookupError):
            proc.send_signal(signal.SIGTERM)
    deadline = time.monotonic() + 30
    for proc in procs:
        try:
            proc.wait(max(0.1, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(10)


def _cpu(proc: subprocess.Popen[bytes] | None) -> float:
    """CPU seconds used so far by the server process (Linux /proc)."""
    if proc is None:
        return 0.0
    fields = Path(f"/proc/{proc.pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


if __name__ == "__main__":
    sys.exit(main())
