"""The HTTP layer's bounds (issue 12, points 4, 9 and 14): body size, JSON
nesting, blocking work off the event loop, per-address token buckets,
security headers, and /docs served from the package.

Each test says what it would have seen on main before these bounds existed
(the issue's findings, reproduced there)."""

from __future__ import annotations

import asyncio
import contextlib
import json
import random
import sqlite3
import threading
import time
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("fastapi")
from fastapi.testclient import TestClient

from donutbox.core import Game, Rules
from donutbox.core.record import dump
from donutbox.server import jsonsafe, limits, security
from donutbox.server.app import create_app
from donutbox.server.errors import Overloaded
from donutbox.server.storage import make_engine


@pytest.fixture
def db(tmp_path: Path) -> str:
    return f"sqlite:///{tmp_path / 'games.db'}"


@pytest.fixture
def client(db: str):  # type: ignore[no-untyped-def]
    with TestClient(create_app(db, inline_ai=True)) as c:
        yield c


def _finished_record(players: int = 2, seed: int = 5) -> dict[str, Any]:
    game = Game.new(Rules("one-good-match", "squared-away", False), ["A", "B", "C", "D"][:players])
    rng = random.Random(seed)
    while not game.finished:
        game.play(rng.choice(game.legal_moves()))
    return dump(game)


def _one_line(detail: object) -> str:
    assert isinstance(detail, str) and detail and "\n" not in detail, detail
    assert "Traceback" not in detail
    return detail


def _count_games(db: str) -> int:
    # Through the server's own engine: it holds the file's lock while it runs.
    with make_engine(db).connect() as conn:
        return int(conn.exec_driver_sql("select count(*) from games").scalar_one())


# -- point 4: bodies are bounded before anything parses them ----------------------------


def test_a_huge_import_is_refused_unread_with_413(client: TestClient, db: str) -> None:
    """On main a 1.2 MB record was read, replayed (8 s with the loop
    blocked) and stored.  Now: 413 from the Content-Length alone, one line
    naming the body and the cap, nothing stored."""
    record = _finished_record()
    record["moves"] = record["moves"] * 2000  # about 1.2 MB, like the record
    body = json.dumps(record).encode()
    assert len(body) > 1_000_000
    before = _count_games(db)
    r = client.post("/api/games/import", content=body, headers={"content-type": "application/json"})
    assert r.status_code == 413
    detail = _one_line(r.json()["detail"])
    assert (
        detail.startswith("body: too large")
        and str(security.body_cap("POST", "/api/games/import")) in detail
    )
    assert _count_games(db) == before


def test_a_huge_body_without_content_length_is_cut_off(client: TestClient, db: str) -> None:
    """A chunked body (no Content-Length) is counted as it arrives and
    refused once it passes the cap (main read all of it)."""
    cap = security.body_cap("POST", "/api/games")

    def chunks():  # type: ignore[no-untyped-def]
        yield b'{"players": 2, "names": ["'
        for _ in range(cap // 1000 + 2):
            yield b"x" * 1000
        yield b'"]}'

    before = _count_games(db)
    r = client.post("/api/games", content=chunks(), headers={"content-type": "application/json"})
    assert r.status_code == 413
    assert _one_line(r.json()["detail"]).startswith("body: too large")
    assert _count_games(db) == before


def test_every_endpoint_has_a_body_cap(client: TestClient) -> None:
    """Not only import: a move, a hint request, an online game all refuse a
    body over their cap (16 KiB; 32 KiB for a new game, which may carry a
    custom deck), before any route runs: even a path that does not exist
    answers 413, not 404 after reading it."""
    assert security.body_cap("POST", "/api/games") == 32 * 1024
    assert security.body_cap("POST", "/api/online") == security.MAX_BODY == 16 * 1024
    for path in ("/api/games", "/api/online", "/api/games/x/moves", "/api/nowhere"):
        big = b" " * (security.body_cap("POST", path) + 1)
        r = client.post(path, content=big, headers={"content-type": "application/json"})
        assert r.status_code == 413, path
        _one_line(r.json()["detail"])


def test_ordinary_bodies_pass(client: TestClient) -> None:
    """The bounds leave honest requests alone: a new game, and the import
    of a whole 4-player record (about 3 KB)."""
    assert client.post("/api/games", json={"opponent": "random", "seed": 3}).status_code == 200
    record = _finished_record(players=4)
    r = client.post("/api/games/import", json=record)
    assert r.status_code == 200, r.text
    assert r.json()["finished"] is True


def test_run_blocking_keeps_the_event_loop_serving() -> None:
    """Work given to run_blocking leaves the loop free: a 0.6 s blocking
    call runs while the loop ticks every 10 ms.  (On main, replay and
    import ran on the loop: every other request waited.)"""

    def busy() -> int:
        end = time.monotonic() + 0.6
        while time.monotonic() < end:
            time.sleep(0.01)
        return 7

    async def main() -> tuple[int, float]:
        worst = 0.0
        task = asyncio.ensure_future(limits.run_blocking(busy))
        last = time.monotonic()
        while not task.done():
            await asyncio.sleep(0.01)
            now = time.monotonic()
            worst = max(worst, now - last)
            last = now
        return await task, worst

    value, worst_gap = asyncio.run(main())
    assert value == 7
    assert worst_gap < 0.2  # the loop never stalled for the call's 0.6 s


def test_run_blocking_refuses_when_its_queue_is_full(monkeypatch: pytest.MonkeyPatch) -> None:
    """Beyond BLOCKING_QUEUE calls waiting, the next is refused at once
    with Busy (503, one line) instead of queueing without end."""
    monkeypatch.setattr(limits, "BLOCKING_QUEUE", 2)
    release = threading.Event()

    async def main() -> str:
        held = [asyncio.ensure_future(limits.run_blocking(release.wait, 5)) for _ in range(2)]
        await asyncio.sleep(0.05)
        try:
            await limits.run_blocking(lambda: None, what="replay")
        except Overloaded as err:
            reason = err.reason
        else:
            reason = ""
        release.set()
        await asyncio.gather(*held)
        return reason

    reason = asyncio.run(main())
    assert reason == "replay: busy with other requests, try again in a moment"
    assert limits.blocking_waiting() == 0


# -- point 9: nesting is bounded before parsing --------------------------------------------


def test_depth_is_measured_without_recursion() -> None:
    """Worked out by hand: brackets inside strings are not nesting."""
    assert jsonsafe.depth("1") == 0
    assert jsonsafe.depth('{"a": [1, {"b": []}]}') == 4  # object, array, object, array
    assert jsonsafe.depth('["[[[[", "]]"]') == 1
    assert jsonsafe.depth(r'["\"[[[", {}]') == 2
    assert jsonsafe.depth(b"[" * 100_000) == 100_000  # no RecursionError
    assert jsonsafe.depth("[" * 100_000, stop_at=40) == 41


def test_loads_bounded_gives_one_line_errors() -> None:
    """``json.loads("[" * 1000 + "]" * 1000)`` raises RecursionError on
    main's Python; loads_bounded a ValueError naming the document."""
    deep = "[" * 1000 + "]" * 1000
    with pytest.raises(
        jsonsafe.JsonTooDeep, match=r"^message: nested too deeply \(at most 8 levels\)$"
    ):
        jsonsafe.loads_bounded(deep, 8, what="message")
    with pytest.raises(jsonsafe.JsonTooLarge, match=r"^JSON: too large \(12 bytes, at most 10\)$"):
        jsonsafe.loads_bounded('"0123456789"', 32, 10)
    with pytest.raises(ValueError):
        jsonsafe.loads_bounded("{", 32)
    assert jsonsafe.loads_bounded('{"a": [[1]]}', 3) == {"a": [[1]]}


def test_deep_json_over_the_websocket_gets_an_error_and_the_socket_stays(
    client: TestClient,
) -> None:
    """On main ``[[[...]]]`` 1,000 deep (2,000 characters, under the 2,048
    limit) raised RecursionError in the handler and dropped the socket.
    Now: a one-line error, and the same socket still answers a ping."""
    made = client.post("/api/online", json={"seats": [{"name": "A"}, {"name": "B"}]}).json()
    with client.websocket_connect(f"/api/online/{made['id']}/ws") as ws:
        ws.send_text("[" * 1000 + "]" * 1000)
        msg = ws.receive_json()
        assert msg["type"] == "error"
        assert _one_line(msg["reason"]).startswith("message: nested too deeply")
        ws.send_text(json.dumps({"type": "ping", "ref": 1}))
        assert ws.receive_json() == {"type": "pong", "ref": 1}


def test_deep_metadata_in_an_import_is_refused(client: TestClient, db: str) -> None:
    """On main a finished record with metadata 300 deep was imported, and
    its /record then answered 500.  Now the body is refused (422, one line)
    before any parser sees it, and nothing is stored."""
    record = _finished_record()
    nested: Any = "x"
    for _ in range(300):
        nested = [nested]
    record["notes"] = nested
    before = _count_games(db)
    r = client.post("/api/games/import", json=record)
    assert r.status_code == 422
    assert _one_line(r.json()["detail"]) == (
        f"body: nested too deeply (at most {jsonsafe.MAX_DEPTH} levels)"
    )
    assert _count_games(db) == before


def test_deep_metadata_already_stored_gives_no_500(db: str) -> None:
    """A row stored before the bound (metadata 300 deep, written straight
    into the database) is set aside when read: its /record answers 503 with
    one line, and other games still work.  (Main: 500.)"""
    with TestClient(create_app(db, inline_ai=True)) as c:
        imported = c.post("/api/games/import", json=_finished_record()).json()
        gid, auth = imported["id"], {"Authorization": f"Bearer {imported['owner_token']}"}
        other = c.post("/api/games", json={"opponent": "random"}, headers=auth).json()["id"]
    path = db.removeprefix("sqlite:///")
    with contextlib.closing(sqlite3.connect(path)) as conn, conn:
        (text,) = conn.execute("select record from games where id = ?", (gid,)).fetchone()
        record = json.loads(text)
        record["notes"] = json.loads("[" * 300 + "]" * 300)
        conn.execute("update games set record = ? where id = ?", (json.dumps(record), gid))
    with TestClient(create_app(db, inline_ai=True)) as c:
        r = c.get(f"/api/games/{gid}/record", headers=auth)
        assert r.status_code == 503
        assert "stored record is damaged" in _one_line(r.json()["detail"])
        assert c.get(f"/api/games/{other}", headers=auth).status_code == 200


# -- the per-address token bucket -----------------------------------------------------------


def test_address_buckets_by_hand() -> None:
    """burst 3, 2 a second: three at t=0, the fourth refused; at t=0.5 one
    token is back (0.5 s x 2/s); another address is unaffected."""
    b = limits.AddressBuckets(rate=2.0, burst=3)
    assert [b.allow("a", now=0.0) for _ in range(4)] == [True, True, True, False]
    assert b.allow("b", now=0.0)
    assert b.retry_after("a", now=0.0) == pytest.approx(0.5)
    assert b.allow("a", now=0.5) and not b.allow("a", now=0.5)
    assert b.allow("a", now=10.0)  # refilled, never above the burst
    assert [b.allow("a", now=10.0) for _ in range(3)] == [True, True, False]


def test_an_address_key_is_an_ipv4_address_or_an_ipv6_64() -> None:
    """Every per-address limit counts under ``address_key``: an IPv6 client
    can take any address of its /64, so the /64 is its address."""
    key = limits.address_key
    assert key("192.0.2.1") == "192.0.2.1"
    assert key("2001:db8:1:2:3:4:5:6") == key("2001:db8:1:2::1") == "2001:db8:1:2::/64"
    assert key("2001:db8:1:3::1") == "2001:db8:1:3::/64"
    assert key("::ffff:192.0.2.1") == "192.0.2.1"
    assert key("testclient") == "testclient"
    scope = {"type": "http", "client": ("2001:db8:1:2:ffff::9", 443)}
    assert limits.client_address(scope) == "2001:db8:1:2::/64"


def test_address_buckets_forget_the_least_recent() -> None:
    """A flood of addresses cannot grow the table past max_keys."""
    b = limits.AddressBuckets(rate=1.0, burst=1, max_keys=100)
    for i in range(1000):
        b.allow(f"10.0.{i // 256}.{i % 256}", now=0.0)
    assert len(b) == 100


# -- point 14: security headers, and /docs without a CDN ----------------------------------


HEADERS = {
    "content-security-policy": security.CSP,
    "x-frame-options": "DENY",
    "x-content-type-options": "nosniff",
    "referrer-policy": "no-referrer",
}


def test_every_response_carries_the_security_headers(client: TestClient) -> None:
    """The page, the API, a 404, a 422, a 413 and the docs all carry them
    (main sent none)."""
    responses = [
        client.get("/"),
        client.get("/api/meta"),
        client.get("/api/games/nosuchgame"),
        client.post("/api/games", json={"players": 9}),
        client.post("/api/games", content=b" " * (security.MAX_BODY + 1)),
        client.get("/docs"),
        client.get("/openapi.json"),
    ]
    for r in responses:
        for name, value in HEADERS.items():
            assert r.headers.get(name) == value, (r.request.url, r.status_code, name)
    assert "'unsafe-inline'" not in security.CSP.split("script-src", 1)[1].split(";", 1)[0]


def test_docs_are_served_from_the_package(client: TestClient) -> None:
    """Main's /docs loaded Swagger UI from cdn.jsdelivr.net (a blank page
    offline) with an inline script the CSP forbids.  Now every script and
    style it names is served by this server, and it has no inline script."""
    pytest.importorskip("fastapi_offline")
    page = client.get("/docs")
    assert page.status_code == 200
    html = page.text
    assert "cdn." not in html and "http://" not in html and "https://" not in html
    import re

    scripts = re.findall(r"<script([^>]*)>(.*?)</script>", html, re.S)
    assert scripts and all(body.strip() == "" and "src=" in attrs for attrs, body in scripts)
    urls = re.findall(r'(?:src|href)="([^"]+)"', html)
    assert "/docs/assets/swagger-ui-bundle.js" in urls
    for url in urls:
        r = client.get(url)
        assert r.status_code == 200, url
        assert len(r.content) > 100, url
    assert "SwaggerUIBundle" in client.get("/docs/init.js").text


def test_address_buckets_forget_addresses_once_their_bucket_is_full_again() -> None:
    """Per-address bookkeeping expires: an address idle for burst/rate
    seconds (here 10 / 5 = 2 s) has a full bucket again, which is what a new
    address gets, so it is dropped; one seen lately is kept."""
    b = limits.AddressBuckets(rate=5, burst=10)
    for i in range(100):
        assert b.allow(f"10.0.0.{i}", now=0.0)
    assert len(b) == 100
    # 2.5 s later, each new request drops a few of the idle ones (at most 8).
    for i in range(20):
        b.allow("10.9.9.9", now=2.5 + i * 0.01)
    assert len(b) == 1  # only the address seen lately
    # Forgetting changed nothing: an old address starts with a full bucket.
    assert all(b.allow("10.0.0.1", now=3.0) for _ in range(10))
    assert not b.allow("10.0.0.1", now=3.0)


def test_the_trimmer_trims_once_a_burst_of_connections_has_ended() -> None:
    """malloc_trim after a burst (glibc keeps freed pages otherwise): not
    while connections rise, once when they have fallen by 100 or more and
    stopped falling."""
    t = limits.Trimmer()
    calls: list[int] = []
    t._trim = lambda: calls.append(1)
    assert not t.check(5) and not t.check(900) and not t.check(850)
    assert not t.check(3)  # fallen, still falling: not yet
    assert t.check(3) and calls == [1]  # settled: once
    assert not t.check(3) and calls == [1]
