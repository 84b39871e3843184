"""Slow clients against a real uvicorn server (issue 12, point 7): half-sent
headers are dropped after the deadline, one address cannot hold more than
its share of connections, and a normal client is served meanwhile.

On main ``donutbox serve`` ran uvicorn's stock protocol: it has no header
timeout, so every one of these slow connections stayed open for ever
(~20,000 of them exhausted the file limit), and there was no per-address
cap.  The server here runs in a thread on a free loopback port with the
same options ``donutbox serve`` uses (``limits.uvicorn_options()``), the
deadline shortened to keep the test quick."""

from __future__ import annotations

import contextlib
import json
import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

pytest.importorskip("uvicorn")
import httpx
import uvicorn

from donutbox.server import limits
from donutbox.server.app import create_app

DEADLINE = 0.6
CAP = 8


class QuickProtocol(limits.GuardedHttpProtocol):
    header_timeout = DEADLINE
    max_per_address = CAP
    guard = limits._Guard()


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextlib.contextmanager
def _serving(tmp_path: Path, **overrides: object) -> Iterator[str]:
    port = _free_port()
    options = limits.uvicorn_options()
    options["http"] = QuickProtocol
    options.update(overrides)
    config = uvicorn.Config(
        create_app(f"sqlite:///{tmp_path / 'games.db'}", inline_ai=True),
        host="127.0.0.1",
        port=port,
        log_level="warning",
        **options,
    )
    srv = uvicorn.Server(config)
    thread = threading.Thread(target=srv.run, daemon=True)
    thread.start()
    for _ in range(200):
        if srv.started:
            break
        time.sleep(0.02)
    assert srv.started
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        srv.should_exit = True
        thread.join(10)


@pytest.fixture
def server(tmp_path: Path) -> Iterator[str]:
    """No proxy in front: 127.0.0.1 is a client like any other."""
    with _serving(tmp_path, proxy_headers=False) as base:
        yield base


def _closed_by_server(sock: socket.socket, within: float) -> bool:
    """True if the server closes ``sock`` within ``within`` seconds."""
    sock.settimeout(within)
    try:
        return sock.recv(1024) == b""
    except TimeoutError:
        return False
    except OSError:  # reset: closed as well
        return True


def _slow(base: str, first: bytes) -> socket.socket:
    host, port = base.removeprefix("http://").split(":")
    sock = socket.create_connection((host, int(port)))
    if first:
        sock.sendall(first)
    return sock


def test_half_sent_headers_are_dropped_after_the_deadline(server: str) -> None:
    """A request line without its end, a silent connection, and one that
    trickles a header byte every 0.2 s (each before the deadline) are all
    closed once DEADLINE has passed since they opened."""
    partial = _slow(server, b"GET /api/meta HTTP/1.1\r\nHost: x\r\n")
    silent = _slow(server, b"")
    trickle = _slow(server, b"GET /api/meta HTTP/1.1\r\n")
    start = time.monotonic()
    try:
        with contextlib.suppress(OSError):
            for ch in b"X-Slow: 1234567":
                trickle.sendall(bytes([ch]))
                time.sleep(0.2)
                if time.monotonic() - start > DEADLINE + 1.5:
                    break
        assert _closed_by_server(trickle, 0.1) or _closed_by_server(trickle, DEADLINE + 1.5)
        assert _closed_by_server(partial, DEADLINE + 1.5)
        assert _closed_by_server(silent, DEADLINE + 1.5)
        assert time.monotonic() - start < DEADLINE + 4
    finally:
        for s in (partial, silent, trickle):
            s.close()


def test_a_complete_request_is_not_cut_by_the_deadline(server: str) -> None:
    """The deadline covers the headers only: a keep-alive client making
    requests for longer than it is served on one connection throughout."""
    with httpx.Client(base_url=server) as c:
        end = time.monotonic() + DEADLINE * 2.5
        n = 0
        while time.monotonic() < end:
            assert c.get("/api/meta").status_code == 200
            n += 1
            time.sleep(0.1)
        assert n >= 10


def test_one_address_holds_at_most_its_cap(server: str) -> None:
    """CAP slow connections from 127.0.0.1 are held; the next is closed at
    once.  Another address (127.0.0.2: all of 127/8 is loopback on Linux)
    is served meanwhile; once the slow ones are dropped, 127.0.0.1 is
    served again."""
    slow = [_slow(server, b"GET / HTTP/1.1\r\n") for _ in range(CAP)]
    try:
        time.sleep(0.1)
        extra = _slow(server, b"")
        assert _closed_by_server(extra, 0.5)
        extra.close()
        port = int(server.rsplit(":", 1)[1])
        try:
            other = socket.create_connection(("127.0.0.1", port), source_address=("127.0.0.2", 0))
        except OSError:
            pytest.skip("no second loopback address here")
        other.sendall(b"GET /api/meta HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        other.settimeout(5)
        answer = b""
        while chunk := other.recv(65536):
            answer += chunk
        other.close()
        assert answer.startswith(b"HTTP/1.1 200")
    finally:
        for s in slow:
            s.close()
    time.sleep(0.2)
    assert httpx.get(f"{server}/api/meta").status_code == 200


def test_websockets_count_until_they_close(server: str) -> None:
    """An open WebSocket is one of its address's connections: with CAP of
    them open (spectators, introduced: an address may hold only
    limits.MAX_UNINTRODUCED_PER_ADDRESS before their hello), a new
    connection is closed at once; once they close, the count is back to
    zero (no leak) and the address is served again."""
    from websockets.sync.client import connect

    made = httpx.post(f"{server}/api/online", json={"seats": [{"name": "A"}, {"name": "B"}]})
    ws_url = server.replace("http://", "ws://") + f"/api/online/{made.json()['id']}/ws"
    hello = json.dumps({"type": "hello", "token": made.json()["spectator"]["token"]})
    time.sleep(0.1)  # the POST's connection is gone
    with contextlib.ExitStack() as stack:
        for _ in range(CAP):
            ws = stack.enter_context(connect(ws_url))
            ws.send(hello)
            assert json.loads(ws.recv(timeout=10))["type"] == "welcome"
        extra = _slow(server, b"")
        assert _closed_by_server(extra, 0.5)
        extra.close()
    time.sleep(0.3)
    assert QuickProtocol.guard.per_address == {}
    assert httpx.get(f"{server}/api/meta").status_code == 200


def test_a_body_that_never_finishes_gets_408(server: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Headers complete, then a body that stops half-way: answered 408 with
    one line once BODY_TIMEOUT has passed, and the connection is closed.
    (Main waited for the rest of the body for ever.)"""
    from donutbox.server import security

    monkeypatch.setattr(security, "BODY_TIMEOUT", 0.5)
    sock = _slow(
        server,
        b"POST /api/games HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
        b'Content-Length: 100\r\n\r\n{"players": ',
    )
    sock.settimeout(5)
    answer = b""
    start = time.monotonic()
    try:
        while chunk := sock.recv(65536):
            answer += chunk
    finally:
        sock.close()
    assert 0.4 < time.monotonic() - start < 4
    head, _, body = answer.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 408")
    assert body == b'{"detail": "body: not received within 0.5 seconds"}'


def test_a_trusted_proxy_is_not_capped(tmp_path: Path) -> None:
    """Behind a reverse proxy every client arrives from the proxy's address:
    with proxy headers on (uvicorn's default, trusting 127.0.0.1), that
    address is not capped, while any other still is."""
    with _serving(tmp_path) as base:
        port = int(base.rsplit(":", 1)[1])
        held = [_slow(base, b"GET / HTTP/1.1\r\n") for _ in range(CAP + 4)]
        try:
            time.sleep(0.1)
            assert not any(_closed_by_server(s, 0.005) for s in held)  # all well before DEADLINE
            try:
                others = [
                    socket.create_connection(("127.0.0.1", port), source_address=("127.0.0.2", 0))
                    for _ in range(CAP + 1)
                ]
            except OSError:
                pytest.skip("no second loopback address here")
            assert _closed_by_server(others[-1], 0.5)
            for s in others:
                s.close()
        finally:
            for s in held:
                s.close()


def test_requests_beyond_an_addresss_rate_get_429(
    server: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """API requests from the network share a bucket per address (burst 5,
    1 a second here): the sixth in a row gets 429 with one line and
    Retry-After; an import costs 10 tokens, more than the whole burst;
    another address is unaffected; static files are not counted.  (Main
    had no per-address limit: one machine could take all the server's time.)"""
    from donutbox.server import security

    monkeypatch.setattr(security, "REQUESTS", limits.AddressBuckets(rate=1.0, burst=5))
    port = int(server.rsplit(":", 1)[1])

    def get(path: str, source: str, method: str = "GET") -> tuple[int, str, str | None]:
        sock = socket.create_connection(("127.0.0.1", port), source_address=(source, 0))
        body = b"{}" if method == "POST" else b""
        sock.sendall(
            f"{method} {path} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n"
            f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\n\r\n".encode()
            + body
        )
        sock.settimeout(5)
        answer = b""
        while chunk := sock.recv(65536):
            answer += chunk
        sock.close()
        head, _, payload = answer.partition(b"\r\n\r\n")
        lines = head.decode().split("\r\n")
        fields = dict(line.lower().split(": ", 1) for line in lines[1:])
        return int(lines[0].split()[1]), payload.decode(), fields.get("retry-after")

    try:
        socket.create_connection(("127.0.0.1", port), source_address=("127.0.0.3", 0)).close()
    except OSError:
        pytest.skip("no second loopback address here")
    statuses = [get("/api/meta", "127.0.0.2")[0] for _ in range(6)]
    assert statuses == [200] * 5 + [429]
    status, payload, retry = get("/api/meta", "127.0.0.2")
    assert status == 429 and retry is not None and 1 <= int(retry) <= 2
    detail = json.loads(payload)["detail"]
    assert detail.startswith("rate limit: too many requests from your address; try again in ")
    assert get("/static/style.css", "127.0.0.2")[0] == 200  # not an API request
    assert get("/api/games/import", "127.0.0.3", "POST")[0] == 429  # costs 10 > burst 5
    assert get("/api/meta", "127.0.0.3")[0] == 200  # the refused import took nothing
