"""Abuse benchmark: one local ``donutbox serve``, the attacks of issue 12 in
turn, and a normal client playing an online game throughout.

    python benchmarks/abuse.py                 # about four minutes
    python benchmarks/abuse.py --seconds 8     # shorter attacks

Loopback only (the server is started here, on 127.0.0.1, with a fresh
SQLite file), bounded in count and time, stops by itself.  Not run in CI.

The **normal client** is a separate process (so the attackers' work in this
one does not slow its measurements): it plays online games of two human
seats over two WebSockets, a move every 0.1 s, timing each move's round trip
(sent -> the mover's socket has the new state), and times ``GET /api/meta``
every 0.1 s.  At the end it reads every game back: each acknowledged move
must be stored (nothing lost).

The **attacks** come from other loopback addresses (127.0.0.2 and up: a
stranger's machine, not the normal client's), one after the other.  The
request floods come from one address (``--flood-addresses`` for more), 8 to
32 requests in flight; the connection attacks from 16 (so that 1,000
connections fit under the per-address cap and meet the header deadline):

- sign-in lockout: an account's owner signs up, a stranger tries ten wrong
  passwords for it from another address, then the owner signs in with the
  right one (its status is the outcome);
- sign-in floods: 160 sign-ins with wrong passwords for made-up names
  (each a full Argon2id check) from 8 addresses: 8 in flight (as many
  checks as the limits allow, none refused for load), then 32 in flight
  from 8 other addresses;
- import flood: imports of a 1.2 MB record, then of a real one (two
  attacks; at most 1,000 and 3,000);
- game-creation flood: up to 2,000 online games (as fast as allowed);
- slow headers: 1,000 connections sending half a request, re-opened
  when dropped, from 16 addresses;
- spectator flood: 1,000 spectator sockets on the normal client's game;
- unknown-id flood: 20,000 requests for games that do not exist;
- AI-queue flood (last: its AI work outlives it): 4 games of 3 ``mcts``
  seats at 30 s a move, plus hints.

The normal client also signs up a **bystander** account and reads
``GET /api/lobby`` every 0.1 s (its session and lobby state read from the
database): a second table gives its p50 and p99 during each attack as a
ratio to the baseline's in the same run, and the server's resident memory
growth (peak during the attack minus before).

For each: the normal client's p99 move round trip and GET time during the
attack, and the server's resident memory before and after (after a few
seconds' settling).  Printed as a Markdown table; ``--out`` saves JSON.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import functools
import json
import os
import random
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from donutbox.core.record import dump

HERE = Path(__file__).resolve().parent
SRC = HERE.parent / "src"
ATTACKERS = [f"127.0.0.{i}" for i in range(2, 18)]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _rss_mb(pid: int) -> float:
    """Resident memory of ``pid`` and its children (the AI worker), MB."""
    total = 0
    pids = [pid]
    with contextlib.suppress(OSError):
        children = Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
        pids += [int(c) for c in children]
    for p in pids:
        with contextlib.suppress(OSError):
            for line in Path(f"/proc/{p}/status").read_text().splitlines():
                if line.startswith("VmRSS:"):
                    total += int(line.split()[1])
    return total / 1024


def _own_rss_mb(pid: int) -> float:
    with contextlib.suppress(OSError):
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return 0.0


def _rss_parts_mb(pid: int) -> dict[str, float]:
    """Where ``pid``'s resident memory is (``/proc/PID/smaps``), MB: the
    main heap (glibc's brk arena), anonymous mappings of at most 1 MiB
    (CPython's object arenas are 1 MiB mmaps, so are glibc's big single
    allocations), larger anonymous mappings (thread arenas: 64 MiB
    reservations, thread stacks), and files (the interpreter, libraries)."""
    parts = {"heap": 0.0, "anon <= 1 MiB": 0.0, "anon > 1 MiB": 0.0, "files": 0.0}
    with contextlib.suppress(OSError):
        kind, size = "files", 0
        for line in Path(f"/proc/{pid}/smaps").read_text().splitlines():
            head = line.split()
            if not head:
                continue
            if "-" in head[0] and len(head) >= 5:  # a mapping's first line
                lo, hi = (int(x, 16) for x in head[0].split("-"))
                size = hi - lo
                name = head[5] if len(head) > 5 else ""
                if name == "[heap]":
                    kind = "heap"
                elif name and not name.startswith("["):
                    kind = "files"
                else:
                    kind = "anon <= 1 MiB" if size <= (1 << 20) + 4096 else "anon > 1 MiB"
            elif head[0] == "Rss:":
                parts[kind] += int(head[1]) / 1024
    return {k: round(v, 1) for k, v in parts.items()}


def _malloc_stats(pid: int, path: Path) -> dict[str, float]:
    """CPython's allocator, MB: its object arenas (``arenas``: 1 MiB each),
    the bytes in blocks in use, and the free bytes inside those arenas
    (``free``: kept, not given back: fragmentation).  From the server's
    ``sys._debugmallocstats()`` (SIGUSR1, _server_with_malloc_stats.py)."""
    done = path.read_text().count("--- end ---") if path.exists() else 0
    os.kill(pid, signal.SIGUSR1)
    for _ in range(100):
        time.sleep(0.05)
        if path.exists() and path.read_text().count("--- end ---") > done:
            break
    text = path.read_text().rsplit("--- malloc stats ---", 1)[-1]
    out: dict[str, float] = {}
    for line in text.splitlines():
        key, _, value = line.partition("=")
        value = value.strip().replace(",", "")
        if not value.isdigit():
            continue
        key = key.strip()
        if key.startswith("# arenas allocated current"):
            out["arenas"] = int(value)
        elif key.startswith("# bytes in allocated blocks"):
            out["used"] = round(int(value) / 2**20, 1)
        elif key.startswith("# bytes in available blocks"):
            out["free"] = round(int(value) / 2**20, 1)
    return out


def _cpu_s(pid: int) -> float:
    """CPU seconds (user + system) ``pid`` has used so far."""
    with contextlib.suppress(OSError, ValueError, IndexError):
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    return 0.0


def _load() -> float:
    with contextlib.suppress(OSError, ValueError):
        return float(Path("/proc/loadavg").read_text().split()[0])
    return 0.0


class _PeakRss:
    """The highest resident size of ``pid`` seen while running (sampled
    every 0.1 s in a thread: a peak shorter than that may be missed)."""

    def __init__(self, pid: int) -> None:
        import threading

        self.pid = pid
        self.peak = _own_rss_mb(pid)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while not self._stop.wait(0.1):
            self.peak = max(self.peak, _own_rss_mb(self.pid))

    def stop(self) -> float:
        self._stop.set()
        self._thread.join()
        return max(self.peak, _own_rss_mb(self.pid))


def _p(values: list[float], q: float) -> float | None:
    if not values:
        return None
    values = sorted(values)
    return values[min(len(values) - 1, int(q * len(values)))]


# -- the normal client (a separate process) ---------------------------------------------


async def _client(base: str, events_path: str, stop_path: str) -> None:
    import httpx
    import websockets

    out = open(events_path, "a", buffering=1)  # noqa: SIM115

    def event(kind: str, ms: float | None, ok: bool = True, note: str = "") -> None:
        t = time.time()
        start = t - (ms or 0) / 1000  # when the request was sent
        line = {"t": t, "start": start, "kind": kind, "ms": ms, "ok": ok, "note": note}
        out.write(json.dumps(line))
        out.write("\n")

    games: list[dict[str, Any]] = []
    rng = random.Random(1)
    stopping = False

    async def gets() -> None:
        async with httpx.AsyncClient(base_url=base, timeout=30) as http:
            while not stopping:
                t = time.perf_counter()
                try:
                    r = await http.get("/api/meta")
                    event("get", (time.perf_counter() - t) * 1000, r.status_code == 200)
                except Exception as err:
                    event("get", None, False, type(err).__name__)
                await asyncio.sleep(0.1)

    async def play_one(http: Any) -> None:
        try:
            made = await http.post("/api/online", json={"seats": [{"name": "A"}, {"name": "B"}]})
        except Exception as err:  # a server too busy to answer in 30 s
            event("create", None, False, type(err).__name__)
            await asyncio.sleep(1)
            return
        if made.status_code != 200:
            event("create", None, False, f"{made.status_code} {made.text[:100]}")
            await asyncio.sleep(1)
            return
        g = made.json()
        tokens = [s["token"] for s in g["seats"]]
        record = {
            "id": g["id"],
            "token": tokens[0],
            "acked": 0,
            "spectator": g["spectator"]["token"],
        }
        games.append(record)
        Path(stop_path + ".game").write_text(json.dumps(record))
        url = base.replace("http://", "ws://") + f"/api/online/{g['id']}/ws"
        socks = [await websockets.connect(url, max_size=2**22) for _ in tokens]
        states: list[dict[str, Any] | None] = [None, None]
        for s, tok in zip(socks, tokens, strict=True):
            await s.send(json.dumps({"type": "hello", "token": tok}))

        async def until_state(i: int, above: int, limit: float = 30) -> dict[str, Any]:
            end = time.monotonic() + limit
            while True:
                left = end - time.monotonic()
                if left <= 0:
                    raise TimeoutError
                msg = json.loads(await asyncio.wait_for(socks[i].recv(), left))
                if msg["type"] == "state" and msg["state"]["version"] > above:
                    states[i] = msg["state"]
                    return msg["state"]

        try:
            for i in range(2):
                await until_state(i, -1)
            version = 0
            while not stopping:
                st = states[0]
                assert st is not None
                if st["finished"] or st.get("to_move") not in (0, 1):
                    break
                seat = st["to_move"]
                legal = states[seat]["legal"]  # type: ignore[index]
                if not legal:
                    await until_state(seat, version)
                    continue
                move = rng.choice(legal)
                t = time.perf_counter()
                await socks[seat].send(
                    json.dumps({"type": "move", "move": move, "version": version})
                )
                try:
                    new = await until_state(seat, version)
                except TimeoutError:
                    event("move", None, False, "no state within 30 s")
                    break
                event("move", (time.perf_counter() - t) * 1000)
                version = new["version"]
                record["acked"] = version
                await until_state(1 - seat, version - 1)
                await asyncio.sleep(0.1)
        except Exception as err:
            event("move", None, False, f"{type(err).__name__}: {err}"[:200])
        finally:
            for s in socks:
                with contextlib.suppress(Exception):
                    await s.close()

    async def lobby_reads() -> None:
        # A signed-in bystander reading the lobby (its session looked up and
        # its lobby state read from the database, on the server's shared
        # thread pool): what a sign-in flood may slow down.
        async with httpx.AsyncClient(base_url=base, timeout=30) as http:
            csrf = (await http.get("/api/account")).json()["csrf"]
            made = await http.post(
                "/api/account/signup",
                json={"name": f"bystander{os.getpid()}", "password": "bystander password"},
                headers={"X-CSRF-Token": csrf},
            )
            if made.status_code != 200:
                event("lobby", None, False, f"sign-up {made.status_code} {made.text[:100]}")
                return
            while not stopping:
                t = time.perf_counter()
                try:
                    r = await http.get("/api/lobby")
                    ok = r.status_code == 200
                    ms = (time.perf_counter() - t) * 1000
                    event("lobby", ms, ok, "" if ok else f"lobby: {r.status_code} {r.text[:80]}")
                except Exception as err:
                    ms = (time.perf_counter() - t) * 1000
                    event("lobby", ms, False, f"lobby: {type(err).__name__}")
                await asyncio.sleep(0.1)

    getter = asyncio.ensure_future(gets())
    reader = asyncio.ensure_future(lobby_reads())
    async with httpx.AsyncClient(base_url=base, timeout=30) as http:
        while not os.path.exists(stop_path):
            player = asyncio.ensure_future(play_one(http))
            while not player.done():
                await asyncio.sleep(0.2)
                if os.path.exists(stop_path):
                    stopping = True
            await player
        stopping = True
        await getter
        await reader
        lost = []
        for g in games:
            try:
                r = await http.get(
                    f"/api/online/{g['id']}", headers={"Authorization": f"Bearer {g['token']}"}
                )
                stored = r.json().get("version", -1) if r.status_code == 200 else -1
            except Exception:  # a server too busy to answer in 30 s
                stored = -1
            if stored < g["acked"]:
                lost.append({"game": g["id"], "acked": g["acked"], "stored": stored})
        out.write(json.dumps({"summary": True, "games": len(games), "lost": lost}) + "\n")
    out.close()


# -- attacks ------------------------------------------------------------------------------------


#: Addresses the request floods come from (``--flood-addresses``): one, a
#: single machine, by default.
FLOOD_ADDRESSES = 1


def _http_clients(base: str, n: int) -> list[Any]:
    import httpx

    return [
        httpx.AsyncClient(
            base_url=base,
            timeout=30,
            transport=httpx.AsyncHTTPTransport(local_address=ATTACKERS[i % FLOOD_ADDRESSES]),
        )
        for i in range(n)
    ]


async def _flood(
    base: str, make: Any, count: int, seconds: float, concurrency: int = 16
) -> dict[str, int]:
    """``count`` requests (``make(client, i)`` returns a response), at most
    ``concurrency`` at once, stopping at ``seconds``; counts per status."""
    clients = _http_clients(base, concurrency)
    statuses: dict[str, int] = {}
    end = time.monotonic() + seconds
    counter = iter(range(count))

    async def worker(c: Any) -> None:
        for i in counter:
            if time.monotonic() > end:
                return
            try:
                r = await make(c, i)
                key = str(r.status_code)
            except Exception as err:
                key = type(err).__name__
            statuses[key] = statuses.get(key, 0) + 1

    await asyncio.gather(*(worker(c) for c in clients))
    for c in clients:
        await c.aclose()
    return statuses


def _finished_record() -> dict[str, Any]:
    sys.path.insert(0, str(SRC))
    from donutbox.core import Game, Rules

    game = Game.new(Rules("one-good-match", "squared-away", False), ["A", "B"], 3)
    rng = random.Random(3)
    while not game.finished:
        game.play(rng.choice(game.legal_moves()))
    return dump(game)


async def attack_import_huge(base: str, seconds: float, _game: dict[str, Any]) -> dict[str, Any]:
    record = _finished_record()
    huge = dict(record, moves=record["moves"] * 1400)  # about 1.2 MB, the size
    body = json.dumps(huge).encode()
    headers = {"content-type": "application/json"}
    statuses = await _flood(
        base,
        lambda c, i: c.post("/api/games/import", content=body, headers=headers),
        1000,
        seconds,
        8,
    )
    return {f"{len(body) // 1024} KB records": statuses}


async def attack_import_real(base: str, seconds: float, _game: dict[str, Any]) -> dict[str, Any]:
    body = json.dumps(_finished_record()).encode()
    headers = {"content-type": "application/json"}
    statuses = await _flood(
        base,
        lambda c, i: c.post("/api/games/import", content=body, headers=headers),
        3000,
        seconds,
        8,
    )
    return {f"{len(body)} byte records": statuses}


async def attack_create(base: str, seconds: float, _game: dict[str, Any]) -> dict[str, Any]:
    seats = {"seats": [{"name": "X"}, {"name": "Y"}]}
    return {
        "online games": await _flood(
            base, lambda c, i: c.post("/api/online", json=seats), 2000, seconds, 16
        )
    }


async def attack_ai(base: str, seconds: float, _game: dict[str, Any]) -> dict[str, Any]:
    body = {"opponent": "mcts", "seconds": 30, "players": 4, "human_seat": 3}
    made = await _flood(base, lambda c, i: c.post("/api/games", json=body), 4, 5, 4)
    await asyncio.sleep(seconds)
    return {"mcts games": made}


async def attack_slow_headers(base: str, seconds: float, _game: dict[str, Any]) -> dict[str, Any]:
    host, port = base.removeprefix("http://").split(":")
    end = time.monotonic() + seconds
    opened = dropped = refused = failed = 0
    target = 1000

    async def one(i: int) -> None:
        nonlocal opened, dropped, refused, failed
        while time.monotonic() < end:
            try:
                reader, writer = await asyncio.open_connection(
                    host, int(port), local_addr=(ATTACKERS[i % len(ATTACKERS)], 0)
                )
            except OSError:
                failed += 1
                await asyncio.sleep(0.5)
                continue
            opened += 1
            start = time.monotonic()
            try:
                writer.write(b"GET /api/meta HTTP/1.1\r\nHost: x\r\n")
                await writer.drain()
                while time.monotonic() < end:
                    try:
                        data = await asyncio.wait_for(reader.read(1), 1.0)
                    except TimeoutError:
                        writer.write(b"X")  # one more header byte, never the end
                        await writer.drain()
                        continue
                    if data == b"":
                        if time.monotonic() - start < 0.5:
                            refused += 1
                            await asyncio.sleep(0.5)
                        else:
                            dropped += 1
                        break
            except OSError:
                dropped += 1
            finally:
                writer.close()
                with contextlib.suppress(Exception):
                    await writer.wait_closed()

    await asyncio.gather(*(one(i) for i in range(target)))
    return {
        "connections opened": opened,
        "dropped at the deadline": dropped,
        "closed at once (per-address cap)": refused,
        "connect failed": failed,
    }


async def attack_spectators(base: str, seconds: float, game: dict[str, Any]) -> dict[str, Any]:
    import websockets

    url = base.replace("http://", "ws://") + f"/api/online/{game['id']}/ws"
    hello = json.dumps({"type": "hello", "token": game["spectator"]})
    socks: list[Any] = []
    outcome: dict[str, int] = {}
    end = time.monotonic() + seconds

    async def one(i: int) -> None:
        try:
            ws = await websockets.connect(
                url, local_addr=(ATTACKERS[i % len(ATTACKERS)], 0), open_timeout=20
            )
        except Exception as err:
            outcome[type(err).__name__] = outcome.get(type(err).__name__, 0) + 1
            return
        socks.append(ws)
        try:
            await ws.send(hello)
            while time.monotonic() < end:
                await asyncio.wait_for(ws.recv(), max(0.1, end - time.monotonic()))
        except TimeoutError:
            pass
        except Exception as err:
            key = f"closed: {getattr(ws, 'close_code', None) or type(err).__name__}"
            outcome[key] = outcome.get(key, 0) + 1
            return
        outcome["held"] = outcome.get("held", 0) + 1

    # Joining is slow while each join is announced to every reader (the
    # cost grows with the square of the spectators): bounded here.
    with contextlib.suppress(TimeoutError):
        await asyncio.wait_for(asyncio.gather(*(one(i) for i in range(1000))), seconds + 60)
    outcome["connected"] = len(socks)
    for ws in socks:
        with contextlib.suppress(Exception):
            await ws.close()
    return {"spectators": outcome}


async def attack_unknown(base: str, seconds: float, _game: dict[str, Any]) -> dict[str, Any]:
    paths = ("/api/games/{}", "/api/online/{}", "/api/games/{}/record", "/api/games/{}/replay/3")

    def make(c: Any, i: int) -> Any:
        gid = f"{random.getrandbits(72):018x}"
        return c.get(paths[i % len(paths)].format(gid))

    return {"requests": await _flood(base, make, 20000, seconds, 32)}


async def _signed_out_client(base: str, address: str) -> tuple[Any, str]:
    """A client from ``address`` with the CSRF cookie a sign-in needs, and
    the token to send back."""
    import httpx

    http = httpx.AsyncClient(
        base_url=base, timeout=60, transport=httpx.AsyncHTTPTransport(local_address=address)
    )
    csrf = (await http.get("/api/account")).json()["csrf"]
    return http, csrf


def _count(statuses: dict[str, int], key: str) -> None:
    statuses[key] = statuses.get(key, 0) + 1


async def attack_lockout(base: str, seconds: float, _game: dict[str, Any]) -> dict[str, Any]:
    """An account's owner signs up (from ``LOCKOUT_OWNER``); a stranger
    tries ten wrong passwords for it from another address; then the owner
    signs in with the right one."""
    name = f"victim{random.getrandbits(24):06x}"
    password = "the owner's password"
    owner, owner_csrf = await _signed_out_client(base, LOCKOUT_OWNER)
    stranger, stranger_csrf = await _signed_out_client(base, LOCKOUT_STRANGER)
    try:
        made = await owner.post(
            "/api/account/signup",
            json={"name": name, "password": password},
            headers={"X-CSRF-Token": owner_csrf},
        )
        owner.cookies.clear()
        owner_csrf = (await owner.get("/api/account")).json()["csrf"]
        wrong: dict[str, int] = {}
        for i in range(10):
            r = await stranger.post(
                "/api/account/signin",
                json={"name": name, "password": f"guess number {i}"},
                headers={"X-CSRF-Token": stranger_csrf},
            )
            _count(wrong, str(r.status_code))
        right = await owner.post(
            "/api/account/signin",
            json={"name": name, "password": password},
            headers={"X-CSRF-Token": owner_csrf},
        )
    finally:
        await owner.aclose()
        await stranger.aclose()
    return {
        "sign-up": made.status_code,
        "10 wrong passwords from a stranger's address": wrong,
        "the owner's right password, from the owner's address": right.status_code,
    }


#: The lockout's two addresses (apart from the floods').
LOCKOUT_OWNER = "127.0.0.20"
LOCKOUT_STRANGER = "127.0.0.21"
#: The sign-in floods: attempts in all, from how many addresses.
SIGNIN_FLOOD = 160
SIGNIN_ADDRESSES = 8


async def attack_signin_flood(
    base: str, seconds: float, _game: dict[str, Any], in_flight: int, first: int
) -> dict[str, Any]:
    """``SIGNIN_FLOOD`` sign-ins with wrong passwords for made-up names (each
    one a full password check: an unknown name is checked against a dummy
    hash) from ``SIGNIN_ADDRESSES`` addresses (``ATTACKERS[first:]``: each
    flood has addresses of its own, whose attempts nothing else used),
    ``in_flight`` at once."""
    addresses = ATTACKERS[first : first + SIGNIN_ADDRESSES]
    statuses: dict[str, int] = {}
    clients = []
    for i in range(in_flight):
        try:
            clients.append(await _signed_out_client(base, addresses[i % len(addresses)]))
        except Exception as err:  # a server too busy to answer GET /api/account
            _count(statuses, f"GET /api/account: {type(err).__name__}")
    counter = iter(range(SIGNIN_FLOOD))
    end = time.monotonic() + max(seconds, 30)
    answered: list[float] = []
    details: dict[str, str] = {}

    async def worker(http: Any, csrf: str) -> None:
        for i in counter:
            if time.monotonic() > end:
                return
            t = time.perf_counter()
            try:
                r = await http.post(
                    "/api/account/signin",
                    json={"name": f"x{i:05d}{random.getrandbits(20):05x}", "password": "guess it"},
                    headers={"X-CSRF-Token": csrf},
                )
                _count(statuses, str(r.status_code))
                details.setdefault(str(r.status_code), r.text[:120])
            except Exception as err:
                _count(statuses, type(err).__name__)
            answered.append((time.perf_counter() - t) * 1000)

    start = time.monotonic()
    await asyncio.gather(*(worker(h, c) for h, c in clients))
    took = time.monotonic() - start
    for h, _ in clients:
        await h.aclose()
    return {
        "sign-ins": statuses,
        "first answer of each status": details,
        "flood seconds": round(took, 1),
        "attacker's p50 / p99 answer ms": [
            round(_p(answered, 0.5) or 0),
            round(_p(answered, 0.99) or 0),
        ],
    }


async def _accounts(base: str, n: int, tag: str) -> list[tuple[Any, str]]:
    """``n`` throwaway accounts signed up from the attackers' addresses in
    turn: each a signed-in client and its CSRF token."""
    out = []
    for i in range(n):
        http, csrf = await _signed_out_client(base, ATTACKERS[i % len(ATTACKERS)])
        r = await http.post(
            "/api/account/signup",
            json={"name": f"{tag}{i:03d}{random.getrandbits(12):03x}", "password": "throwaway!"},
            headers={"X-CSRF-Token": csrf},
        )
        if r.status_code != 200:
            await http.aclose()
            continue
        out.append((http, r.json()["csrf"]))
    return out


async def _lobby_tables(http: Any) -> int:
    return len((await http.get("/api/lobby")).json()["tables"])


#: The lobby fill: throwaway accounts, each opening a table and leaving.
FILL_ACCOUNTS = 120


async def attack_lobby_fill(base: str, seconds: float, _game: dict[str, Any]) -> dict[str, Any]:
    """``FILL_ACCOUNTS`` throwaway accounts each open a table, then go away
    (no request, no socket); the tables are counted at once, and again once
    the lobby's sweep has run past the away time (run the server with
    ``--server-env DONUTBOX_LOBBY_AWAY_SECONDS=20`` to see it within the
    attack's minute; the default is 180 s)."""
    accounts = await _accounts(base, FILL_ACCOUNTS, "fill")
    opened: dict[str, int] = {}
    for http, csrf in accounts:
        r = await http.post(
            "/api/lobby/tables",
            json={"players": 4, "rated": False},
            headers={"X-CSRF-Token": csrf},
        )
        _count(opened, str(r.status_code))
    http0 = accounts[0][0]
    at_once = await _lobby_tables(http0)
    for http, _ in accounts[1:]:
        await http.aclose()
    away = float(os.environ.get("DONUTBOX_LOBBY_AWAY_SECONDS", "180"))
    deadline = time.monotonic() + max(seconds, away + 40)
    left = at_once
    while time.monotonic() < deadline and left > 0:
        await asyncio.sleep(5)
        left = await _lobby_tables(http0)
    await http0.aclose()
    return {
        "accounts": len(accounts),
        "tables opened": opened,
        "tables open at once": at_once,
        "tables open after the away time and a sweep": left,
    }


#: The push amplification: lobby sockets watching, and the churn's rate.
PUSH_SOCKETS = 40
CHURN_PER_SECOND = 15


async def attack_lobby_push(base: str, seconds: float, _game: dict[str, Any]) -> dict[str, Any]:
    """``PUSH_SOCKETS`` signed-in lobby sockets (as many players watching
    the lobby) while one client opens and leaves a table
    ``CHURN_PER_SECOND`` times a second: the states each socket is sent a
    second."""
    import websockets

    accounts = await _accounts(base, PUSH_SOCKETS + 1, "push")
    churner, churn_csrf = accounts[0]
    ws_base = base.replace("http://", "ws://")
    received = [0] * (len(accounts) - 1)
    stop = asyncio.Event()

    async def watch(i: int, http: Any) -> None:
        cookie = "; ".join(f"{k}={v}" for k, v in http.cookies.items())
        async with websockets.connect(
            ws_base + "/api/lobby/ws", additional_headers={"Cookie": cookie, "Origin": base}
        ) as ws:
            await ws.recv()  # the state on connecting
            while not stop.is_set():
                try:
                    await asyncio.wait_for(ws.recv(), 0.5)
                    received[i] += 1
                except TimeoutError:
                    continue

    watchers = [asyncio.ensure_future(watch(i, h)) for i, (h, _) in enumerate(accounts[1:])]
    await asyncio.sleep(1)
    changes: dict[str, int] = {}
    start = time.monotonic()
    while time.monotonic() - start < seconds:
        t = time.monotonic()
        r = await churner.post(
            "/api/lobby/tables",
            json={"players": 2, "rated": False},
            headers={"X-CSRF-Token": churn_csrf},
        )
        _count(changes, f"open {r.status_code}")
        if r.status_code == 200:
            r = await churner.post(
                f"/api/lobby/tables/{r.json()['id']}/leave", headers={"X-CSRF-Token": churn_csrf}
            )
            _count(changes, f"leave {r.status_code}")
        await asyncio.sleep(max(0.0, 1 / CHURN_PER_SECOND - (time.monotonic() - t)))
    took = time.monotonic() - start
    await asyncio.sleep(1.5)  # the last pushes
    stop.set()
    await asyncio.gather(*watchers, return_exceptions=True)
    for http, _ in accounts:
        await http.aclose()
    rates = sorted(n / took for n in received)
    return {
        "sockets": len(received),
        "changes": changes,
        "churn seconds": round(took, 1),
        "pushes a socket a second (mean, max)": [
            round(sum(rates) / max(1, len(rates)), 2),
            round(rates[-1], 2) if rates else None,
        ],
    }


async def attack_abandonment(base: str, seconds: float, _game: dict[str, Any]) -> dict[str, Any]:
    """Two accounts in a rated game (a table, the default clock); the one
    who walks away tries to start another rated game: queue, open a rated
    table."""
    (a, a_csrf), (b, b_csrf) = await _accounts(base, 2, "quit")
    t = (
        await a.post("/api/lobby/tables", json={"players": 2}, headers={"X-CSRF-Token": a_csrf})
    ).json()
    joined = await b.post(f"/api/lobby/tables/{t['id']}/join", headers={"X-CSRF-Token": b_csrf})
    queue = await a.post("/api/lobby/queue", json={"players": 2}, headers={"X-CSRF-Token": a_csrf})
    table = await a.post("/api/lobby/tables", json={"players": 2}, headers={"X-CSRF-Token": a_csrf})
    for http in (a, b):
        await http.aclose()
    return {
        "joined": joined.status_code,
        "queue while a rated game is being played": [queue.status_code, queue.json().get("detail")],
        "rated table meanwhile": table.status_code,
    }


#: The farm: rated games between two accounts of one person.
FARM_GAMES = 4


async def _paced(send: Any, *args: Any, **kw: Any) -> Any:
    """``send(*args, **kw)`` repeated while the server answers 429 (a
    patient farmer waits out the per-address limits)."""
    for _ in range(200):
        r = await send(*args, **kw)
        if r.status_code != 429:
            return r
        await asyncio.sleep(float(r.headers.get("retry-after", "0.2") or 0.2))
    return r


async def _play_out(http: Any, game: str, tokens: list[str]) -> None:
    """Both seats play their first legal move until the game is over."""
    auth = [{"Authorization": f"Bearer {t}"} for t in tokens]
    path = f"/api/online/{game}"
    for _ in range(2000):
        state = (await _paced(http.get, path, headers=auth[0])).json()
        if state["finished"]:
            return
        seat = state["to_move"]
        mine = (await _paced(http.get, path, headers=auth[seat])).json()
        body = {"move": mine["legal"][0], "version": mine["version"]}
        await _paced(http.post, f"{path}/moves", json=body, headers=auth[seat])
    raise RuntimeError("the farmed game did not end")


async def attack_rating_farming(base: str, seconds: float, _game: dict[str, Any]) -> dict[str, Any]:
    """One person, two fresh accounts signed up from one address, plays
    ``FARM_GAMES`` rated table games against himself to the end (each seat
    its first legal move), then both queue for quick match: how much each
    game counted, the ratings shown, the leaderboard, the pairing."""
    players = []
    for i in range(2):
        http, csrf = await _signed_out_client(base, ATTACKERS[0])
        name = f"farm{i}{random.getrandbits(24):06x}"
        r = await _paced(
            http.post,
            "/api/account/signup",
            json={"name": name, "password": "throwaway!"},
            headers={"X-CSRF-Token": csrf},
        )
        if r.status_code != 200:
            return {"second account": [r.status_code, r.json().get("detail")]}
        players.append((http, {"X-CSRF-Token": r.json()["csrf"]}, name))
    (a, a_csrf, a_name), (b, b_csrf, b_name) = players
    weights: list[Any] = []
    try:
        for _ in range(FARM_GAMES):
            t = await _paced(a.post, "/api/lobby/tables", json={"players": 2}, headers=a_csrf)
            join = f"/api/lobby/tables/{t.json()['id']}/join"
            joined = await _paced(b.post, join, headers=b_csrf)
            game = joined.json()["game"]
            tokens = []
            for http, _, _ in players:
                games = (await _paced(http.get, "/api/lobby")).json()["games"]
                tokens.append(next(g["token"] for g in games if g["game"] == game))
            await _play_out(a, game, tokens)
            history = (await _paced(a.get, f"/api/players/{a_name}")).json()["history"]
            entry = next((h for h in history if h["game"] == game), None)
            weights.append(None if entry is None else entry["rating"].get("weight"))
        shown = {}
        for name in (a_name, b_name):
            ratings = (await _paced(a.get, f"/api/players/{name}")).json()["ratings"]
            shown[name] = [
                f"{r['rating']}{'?' if r.get('provisional') else ''}" for r in ratings.values()
            ]
        boards = (await _paced(a.get, "/api/leaderboard")).json()["boards"]
        listed = [e["name"] for board in boards for e in board["players"]]
        first = await a.post("/api/lobby/queue", json={"players": 2}, headers=a_csrf)
        second = await b.post("/api/lobby/queue", json={"players": 2}, headers=b_csrf)
    finally:
        for http, _, _ in players:
            await http.aclose()
    return {
        "rated games played": len(weights),
        "weight each game counted with": weights,
        "ratings shown (? = provisional)": shown,
        "farm accounts on the leaderboard": [n for n in listed if n in (a_name, b_name)],
        "quick match paired them": bool(first.json().get("game") or second.json().get("game")),
    }


ATTACKS = [
    ("lobby fill", attack_lobby_fill),
    ("lobby push amplification", attack_lobby_push),
    ("abandonment", attack_abandonment),
    ("rating farming", attack_rating_farming),
    ("sign-in lockout", attack_lockout),
    (
        "sign-in flood, 160 from 8 addresses, 8 in flight",
        functools.partial(attack_signin_flood, in_flight=8, first=0),
    ),
    (
        "sign-in flood, 160 from 8 addresses, 32 in flight",
        functools.partial(attack_signin_flood, in_flight=32, first=8),
    ),
    ("import flood, 1.2 MB records", attack_import_huge),
    ("import flood, real records", attack_import_real),
    ("game-creation flood", attack_create),
    ("slow headers", attack_slow_headers),
    ("spectator flood", attack_spectators),
    ("unknown-id flood", attack_unknown),
    ("AI-queue flood", attack_ai),
]


# -- the run --------------------------------------------------------------------------------------


def _stats(events: list[dict[str, Any]], t0: float, t1: float) -> dict[str, Any]:
    moves = [e["ms"] for e in events if e.get("kind") == "move" and e["ok"] and t0 <= e["t"] <= t1]
    gets = [e["ms"] for e in events if e.get("kind") == "get" and e["ok"] and t0 <= e["t"] <= t1]
    # A lobby read's time whatever its answer (a read that failed after
    # waiting long was slowed down as much as one that succeeded), by when
    # it was sent (a read sent during the attack and answered after it is
    # the attack's).
    lobby = [
        e["ms"]
        for e in events
        if e.get("kind") == "lobby" and e["ms"] is not None and t0 <= e["start"] <= t1
    ]
    failed = [e for e in events if not e.get("ok", True) and t0 <= e.get("t", 0) <= t1]
    return {
        "lobby_reads": len(lobby),
        "lobby_p50_ms": _p(lobby, 0.5),
        "lobby_p99_ms": _p(lobby, 0.99),
        "moves": len(moves),
        "move_p50_ms": _p(moves, 0.5),
        "move_p99_ms": _p(moves, 0.99),
        "move_max_ms": max(moves) if moves else None,
        "gets": len(gets),
        "get_p99_ms": _p(gets, 0.99),
        "failed": len(failed),
        "failures": sorted({e.get("note", "") for e in failed})[:5],
    }


def _move_cpu_ms(games: int) -> tuple[float, int]:
    """The server's work for a move, without the network: the engine
    playing it on a copy, the record, the state of each of two seats and a
    spectator with its legal moves, encoded; CPU ms a move over ``games``
    random games (``--move-cpu`` runs it under each allocator)."""
    sys.path.insert(0, str(SRC))
    import orjson

    from donutbox.core import Game, Rules
    from donutbox.summary import sorted_moves

    rng = random.Random(7)
    moves = 0
    t = time.process_time()
    for g in range(games):
        game = Game.new(Rules("one-good-match", "squared-away", False), ["A", "B"], g)
        while not game.finished:
            trial = game.copy()
            trial.play(rng.choice(trial.legal_moves()))
            game = trial
            record = dump(game)
            for seat in (0, 1, -1):
                view = game.view(seat)
                state = view.to_dict()
                legal = sorted_moves(view.legal_moves()) if seat >= 0 else []
                state["legal"] = [str(m) for m in legal]
                orjson.dumps({"type": "state", "state": state, "record": record})
            moves += 1
    return (time.process_time() - t) / moves * 1000, moves


def _move_cpu(repeat: int) -> None:
    for _ in range(repeat):
        for allocator in ("pymalloc", "malloc"):
            out = subprocess.run(
                [sys.executable, __file__, "--move-cpu-child"],
                env=dict(os.environ, PYTHONMALLOC=allocator),
                capture_output=True,
                text=True,
                check=True,
            ).stdout.split()
            print(f"PYTHONMALLOC={allocator}: {float(out[0]):.2f} ms a move ({out[1]} moves)")


def _read_events(path: str) -> list[dict[str, Any]]:
    out = []
    with contextlib.suppress(OSError), open(path) as f:
        for line in f:
            with contextlib.suppress(ValueError):
                out.append(json.loads(line))
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--seconds", type=float, default=15.0, help="length of each attack")
    ap.add_argument("--settle", type=float, default=5.0, help="seconds after each attack")
    ap.add_argument("--out", help="write the figures as JSON here")
    ap.add_argument(
        "--flood-addresses",
        type=int,
        default=1,
        help="loopback addresses the request floods come from (1 to 16; default 1)",
    )
    ap.add_argument(
        "--only",
        action="append",
        metavar="ATTACK",
        help="run only the attacks whose name starts with this (repeatable), e.g. 'spectator'",
    )
    ap.add_argument(
        "--py-spy",
        metavar="DIR",
        help="record the server with py-spy during each attack: DIR/<n>.txt, collapsed stacks",
    )
    ap.add_argument(
        "--server-env",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="an environment variable for the server only, e.g. PYTHONMALLOC=malloc",
    )
    ap.add_argument(
        "--malloc-stats",
        action="store_true",
        help="also read CPython's allocator statistics before and after each attack",
    )
    ap.add_argument(
        "--repeat", type=int, default=1, help="run the chosen attacks this many times (1 to 5)"
    )
    ap.add_argument(
        "--move-cpu",
        action="store_true",
        help="only measure the CPU a move costs under CPython's allocator and glibc's "
        "(PYTHONMALLOC=malloc), --repeat pairs",
    )
    ap.add_argument("--move-cpu-child", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--client", nargs=3, metavar=("URL", "EVENTS", "STOP"), help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.client:
        asyncio.run(_client(*args.client))
        return 0
    if args.move_cpu_child:
        ms, moves = _move_cpu_ms(40)
        print(ms, moves)
        return 0
    if args.move_cpu:
        _move_cpu(max(1, min(5, args.repeat)))
        return 0
    if not 1 <= args.seconds <= 60:
        ap.error("--seconds must be from 1 to 60")
    if not 1 <= args.flood_addresses <= len(ATTACKERS):
        ap.error(f"--flood-addresses must be from 1 to {len(ATTACKERS)}")
    global FLOOD_ADDRESSES
    FLOOD_ADDRESSES = args.flood_addresses

    work = Path(tempfile.mkdtemp(prefix="donutbox-abuse-"))
    port = _free_port()
    base = f"http://127.0.0.1:{port}"
    env = dict(os.environ, PYTHONPATH=str(SRC))
    server_env = dict(env, **dict(kv.split("=", 1) for kv in args.server_env))
    stats_path = work / "malloc-stats.txt"
    if args.malloc_stats:
        server_env["DONUTBOX_MALLOC_STATS"] = str(stats_path)
    entry = ["-m", "donutbox"]
    if args.malloc_stats:
        entry = [str(HERE / "_server_with_malloc_stats.py")]
    server = subprocess.Popen(
        [
            sys.executable,
            *entry,
            "serve",
            "--host",
            "127.0.0.1",
            "--port",
            str(port),
            "--db",
            f"sqlite:///{work / 'games.db'}",
        ],
        env=server_env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    events_path, stop_path = str(work / "events.jsonl"), str(work / "stop")
    client = None
    results: list[dict[str, Any]] = []
    try:
        import httpx

        for _ in range(100):
            with contextlib.suppress(Exception):
                if httpx.get(base + "/api/meta", timeout=1).status_code == 200:
                    break
            time.sleep(0.2)
        else:
            raise SystemExit(
                "the server did not start: " + (server.stderr.read() if server.stderr else "")
            )
        client = subprocess.Popen(
            [sys.executable, __file__, "--client", base, events_path, stop_path], env=env
        )
        for _ in range(100):
            if os.path.exists(stop_path + ".game"):
                break
            time.sleep(0.1)
        time.sleep(2)
        start_rss = _own_rss_mb(server.pid)
        load_start = _load()
        cpu0, t0 = _cpu_s(server.pid), time.time()
        time.sleep(args.seconds)
        results.append(
            {
                "attack": "none (baseline)",
                "t0": t0,
                "t1": time.time(),
                "rss_before": start_rss,
                "rss_peak": max(start_rss, _own_rss_mb(server.pid)),
                "rss_after": _own_rss_mb(server.pid),
                "load_before": load_start,
                "server_cpu_s": _cpu_s(server.pid) - cpu0,
                "load": _load(),
                "outcome": {},
            }
        )
        chosen = [
            (name, attack)
            for name, attack in ATTACKS
            if not args.only or any(name.startswith(o) for o in args.only)
        ] * max(1, min(5, args.repeat))
        for n, (name, attack) in enumerate(chosen):
            game = json.loads(Path(stop_path + ".game").read_text())
            spy = None
            if args.py_spy:
                Path(args.py_spy).mkdir(parents=True, exist_ok=True)
                spy = subprocess.Popen(
                    [
                        *("py-spy", "record", "--pid", str(server.pid), "--rate", "200"),
                        *("--format", "raw", "--output", str(Path(args.py_spy) / f"{n}.txt")),
                        *("--duration", str(int(args.seconds + 2))),
                    ],
                    stdout=subprocess.DEVNULL,
                    stderr=subprocess.DEVNULL,
                )
                time.sleep(1)
            before = _own_rss_mb(server.pid)
            load_before = _load()
            peak = _PeakRss(server.pid)
            parts_before = _rss_parts_mb(server.pid)
            stats_before = _malloc_stats(server.pid, stats_path) if args.malloc_stats else None
            cpu0, t0 = _cpu_s(server.pid), time.time()
            print(f"{name} ...", file=sys.stderr, flush=True)
            own0 = time.process_time()
            outcome = asyncio.run(attack(base, args.seconds, game))
            attacker_cpu = time.process_time() - own0
            t1, cpu1, load = time.time(), _cpu_s(server.pid), _load()
            if spy is not None:
                with contextlib.suppress(subprocess.TimeoutExpired):
                    spy.wait(30)
            time.sleep(args.settle)
            results.append(
                {
                    "attack": name,
                    "t0": t0,
                    "t1": t1,
                    "rss_before": before,
                    "rss_peak": peak.stop(),
                    "rss_after": _own_rss_mb(server.pid),
                    "load_before": load_before,
                    "rss_with_workers": _rss_mb(server.pid),
                    "rss_parts_before": parts_before,
                    "rss_parts_after": _rss_parts_mb(server.pid),
                    "malloc_stats": None
                    if stats_before is None
                    else [stats_before, _malloc_stats(server.pid, stats_path)],
                    "server_cpu_s": cpu1 - cpu0,
                    "attacker_cpu_s": attacker_cpu,
                    "load": load,
                    "outcome": outcome,
                }
            )
            if server.poll() is not None:
                results[-1]["server_died"] = server.returncode
                break
        Path(stop_path).write_text("stop")
        if client is not None:
            client.wait(60)
    finally:
        Path(stop_path).write_text("stop")
        if client is not None and client.poll() is None:
            client.terminate()
        alive = server.poll() is None
        if alive:
            os.killpg(server.pid, signal.SIGTERM)
            with contextlib.suppress(subprocess.TimeoutExpired):
                server.wait(15)
        if server.poll() is None:
            os.killpg(server.pid, signal.SIGKILL)
    events = _read_events(events_path)
    summary = next((e for e in events if e.get("summary")), {"games": 0, "lost": ["no summary"]})
    for r in results:
        r.update(_stats(events, r["t0"], r["t1"]))
    print(
        f"\nserver alive to the end: {alive}; normal client's games: {summary['games']}, "
        f"moves lost: {len(summary['lost'])}\n"
    )
    server_start = results[0]["rss_before"] if results else 0.0
    print(
        "| attack | s | server CPU s | load before -> after | moves | p50 move ms | p99 move ms "
        "| p99 GET ms | failed | RSS MB before / peak / after | after vs before | after vs start |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")

    def f(x: float | None) -> str:
        return "-" if x is None else f"{x:.1f}"

    for r in results:
        print(
            f"| {r['attack']} | {r['t1'] - r['t0']:.1f} | {r['server_cpu_s']:.1f} | "
            f"{r['load_before']:.1f} -> {r['load']:.1f} | {r['moves']} | {f(r['move_p50_ms'])} | "
            f"{f(r['move_p99_ms'])} | {f(r['get_p99_ms'])} | {r['failed']} | "
            f"{r['rss_before']:.0f} / {r['rss_peak']:.0f} / {r['rss_after']:.0f} | "
            f"{100 * (r['rss_after'] / r['rss_before'] - 1):+.0f}% | "
            f"{100 * (r['rss_after'] / server_start - 1):+.0f}% |"
        )
    print()
    base_lobby = results[0] if results else {}
    print(
        "| attack | lobby reads | p50 lobby ms (x baseline) | p99 lobby ms (x baseline) "
        "| RSS growth MB (peak - before) |"
    )
    print("|---|---|---|---|---|")

    def ratio(r: dict[str, Any], key: str) -> str:
        b = base_lobby.get(key)
        if r.get(key) is None or not b:
            return f(r.get(key))
        return f"{r[key]:.1f} ({r[key] / b:.1f}x)"

    for r in results:
        print(
            f"| {r['attack']} | {r['lobby_reads']} | {ratio(r, 'lobby_p50_ms')} | "
            f"{ratio(r, 'lobby_p99_ms')} | {r['rss_peak'] - r['rss_before']:+.0f} |"
        )
    print()
    for r in results:
        if r["outcome"]:
            print(f"- {r['attack']}: {json.dumps(r['outcome'])}")
        if "attacker_cpu_s" in r:
            print(f"  the attacking process's own CPU: {r['attacker_cpu_s']:.1f} s")
        if "rss_parts_after" in r:
            print(f"  RSS parts MB: {r['rss_parts_before']} -> {r['rss_parts_after']}")
        if r.get("malloc_stats"):
            print(f"  CPython allocator: {r['malloc_stats'][0]} -> {r['malloc_stats'][1]}")
        if r["failures"]:
            print(f"  client failures: {r['failures']}")
    if args.malloc_stats and stats_path.exists():
        full = [line for line in stats_path.read_text().splitlines() if line.startswith("gc2")]
        print(f"\nfull garbage collections in the server: {len(full)}")
        for line in full:
            print(f"- {line}")
    if args.out:
        Path(args.out).write_text(
            json.dumps({"results": results, "summary": summary, "alive": alive}, indent=1)
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
