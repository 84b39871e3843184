"""Accounts and the lobby under attack, against a real ``donutbox serve``: a
stranger's wrong passwords never lock the owner out; the per-address limit
counts an IPv6 client's whole /64 (and an IPv4-mapped address as its IPv4
one); a refused lobby socket gets its documented close code and reason
after the handshake, not an HTTP 403 at it.

Client addresses come from ``X-Forwarded-For``: the server trusts it from
127.0.0.1 (uvicorn's ``forwarded_allow_ips``), as behind a reverse proxy."""

from __future__ import annotations

import contextlib
from typing import Any

import pytest

httpx = pytest.importorskip("httpx")
ws_client = pytest.importorskip("websockets.sync.client")

PASSWORD = "the owner's password"


@pytest.fixture
def server(serve: Any, monkeypatch: pytest.MonkeyPatch) -> Any:
    """A ``donutbox serve`` of this test's own whose sign-in attempts per
    address do not refill while it runs (``DONUTBOX_SIGNIN_PER_MINUTE``):
    the counts below hold however slow the machine is."""
    monkeypatch.setenv("DONUTBOX_SIGNIN_PER_MINUTE", "0.0001")
    return serve()


class Browser:
    """One browser (its cookies) on the server, at a client address of
    its choosing for each request."""

    def __init__(self, url: str) -> None:
        self.http = httpx.Client(base_url=url, timeout=30)
        self.csrf = self.http.get("/api/account").json()["csrf"]

    def post(self, path: str, body: dict[str, Any], address: str) -> Any:
        return self.http.post(
            path,
            json=body,
            headers={"X-CSRF-Token": self.csrf, "X-Forwarded-For": address},
        )

    def sign_in(self, name: str, password: str, address: str) -> Any:
        return self.post("/api/account/signin", {"name": name, "password": password}, address)

    def close(self) -> None:
        self.http.close()

    def __enter__(self) -> Browser:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def test_the_right_password_works_after_ten_wrong_ones_from_another_address(
    server: Any,
) -> None:
    owner = Browser(server.url)
    stranger = Browser(server.url)
    try:
        made = owner.post(
            "/api/account/signup", {"name": "owner", "password": PASSWORD}, "10.1.0.1"
        )
        assert made.status_code == 200
        codes = [stranger.sign_in("owner", f"guess {i}", "10.2.0.2").status_code for i in range(10)]
        # The stranger's own address is held back after 5 wrong ones ...
        assert codes == [401] * 5 + [429] * 5
        # ... and the owner, from their own address, is not.
        with Browser(server.url) as again:
            r = again.sign_in("owner", PASSWORD, "10.1.0.1")
        assert r.status_code == 200 and r.json()["user"] == {"name": "owner"}
        # Nor is anyone else with the right password from yet another address.
        with Browser(server.url) as elsewhere:
            assert elsewhere.sign_in("owner", PASSWORD, "10.3.0.3").status_code == 200
    finally:
        owner.close()
        stranger.close()


def test_the_address_limit_counts_an_ipv6_64_and_ipv4_mapped_addresses_as_one(
    server: Any,
) -> None:
    """20 attempts at once per address (accounts.ADDRESS_BURST): 20 from
    20 addresses of one IPv6 /64 use them up, whatever the name; another
    /64 is another address.  ``::ffff:192.0.2.7`` is ``192.0.2.7``."""
    b = Browser(server.url)
    try:
        codes = [
            b.sign_in(f"nobody{i}", "some password", f"2001:db8:5:6::{i + 1:x}").status_code
            for i in range(20)
        ]
        assert codes == [401] * 20
        r = b.sign_in("nobody", "some password", "2001:db8:5:6:ffff:ffff:ffff:fffe")
        assert r.status_code == 429 and r.json()["detail"].startswith("address: too many")
        assert b.sign_in("nobody", "some password", "2001:db8:5:7::1").status_code == 401
        codes = [
            b.sign_in(f"nobody{i}", "some password", address).status_code
            for i, address in enumerate(["192.0.2.7", "::ffff:192.0.2.7"] * 10)
        ]
        assert codes == [401] * 20
        assert b.sign_in("nobody", "some password", "192.0.2.7").status_code == 429
        assert b.sign_in("nobody", "some password", "::ffff:192.0.2.7").status_code == 429
        assert b.sign_in("nobody", "some password", "192.0.2.8").status_code == 401
    finally:
        b.close()


def _closed_with(url: str, headers: dict[str, str]) -> tuple[int | None, str]:
    """Open the lobby socket and read until it closes: (code, reason)."""
    from websockets.exceptions import ConnectionClosed

    with ws_client.connect(url, additional_headers=headers, open_timeout=20) as ws:
        try:
            while True:
                ws.recv(timeout=20)
        except ConnectionClosed as closed:
            assert closed.rcvd is not None
            return closed.rcvd.code, closed.rcvd.reason
    raise AssertionError("unreachable")


def test_lobby_socket_refusals_are_close_codes_with_reasons(server: Any) -> None:
    """Without a session, or from another site's Origin: close 4401; a
    player's fifth socket: close 4429 (docs/community.md); each with a
    one-line reason, after the handshake."""
    url = server.url.replace("http://", "ws://") + "/api/lobby/ws"
    assert _closed_with(url, {}) == (4401, "session: sign in first")
    with Browser(server.url) as ann:
        made = ann.post("/api/account/signup", {"name": "ann", "password": PASSWORD}, "10.4.0.4")
        assert made.status_code == 200
        cookie = "; ".join(f"{k}={v}" for k, v in ann.http.cookies.items())
    evil = {"Cookie": cookie, "Origin": "https://evil.example"}
    assert _closed_with(url, evil) == (4401, "Origin: sockets from another site are refused")
    with contextlib.ExitStack() as stack:
        for _ in range(4):
            ws = stack.enter_context(ws_client.connect(url, additional_headers={"Cookie": cookie}))
            assert '"type": "lobby"' in ws.recv(timeout=20)
        code, reason = _closed_with(url, {"Cookie": cookie})
        assert (code, reason) == (4429, "lobby: at most 4 sockets a player")
