"""Accounts: sign up, in and out, wrong passwords, CSRF, session expiry,
rate-limited sign-ins, password change, a guest's games claimed."""

from __future__ import annotations

import asyncio
import sys
import threading
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from argon2 import PasswordHasher
from community_helpers import PASSWORD, Player, running_app
from sqlalchemy import select, update
from sqlalchemy.orm import Session

from donutbox.server.accounts import ClaimRow, SessionRow, UserRow
from donutbox.server.passwords import HashPool


@pytest.fixture
def app(tmp_path: Path):  # type: ignore[no-untyped-def]
    with running_app(f"sqlite:///{tmp_path / 'c.db'}") as application:
        yield application


def test_sign_up_in_and_out(app) -> None:  # type: ignore[no-untyped-def]
    ann = Player(app, "ann")
    r = ann.sign_up()
    assert r.status_code == 200 and r.json()["user"] == {"name": "ann"}
    cookie = r.headers["set-cookie"]
    assert "donutbox_session=" in cookie and "HttpOnly" in cookie and "SameSite=lax" in cookie
    assert ann.get("/api/account").json()["user"] == {"name": "ann"}
    assert ann.post("/api/account/signout").status_code == 200
    assert ann.get("/api/account").json()["user"] is None
    assert ann.sign_in().status_code == 200
    assert ann.get("/api/account").json()["user"] == {"name": "ann"}
    # Names are unique whatever the case.
    assert Player(app, "ANN").sign_up().json() == {"detail": "name: already taken"}


def test_bad_names_and_passwords_name_the_field(app) -> None:  # type: ignore[no-untyped-def]
    for name, password, field in [
        ("a", PASSWORD, "name"),
        ("no spaces", PASSWORD, "name"),
        ("émile", PASSWORD, "name"),
        ("x" * 21, PASSWORD, "name"),
        ("bob", "short", "password"),
        ("bob", "x" * 129, "password"),
    ]:
        r = Player(app, name).sign_up(password)
        assert r.status_code == 422, (name, password)
        detail = r.json()["detail"]
        assert detail.startswith(field) and "\n" not in detail


def test_wrong_passwords_and_unknown_names_get_the_same_answer(app) -> None:  # type: ignore[no-untyped-def]
    Player(app, "ann").sign_up()
    wrong = Player(app, "ann").sign_in("not the password")
    unknown = Player(app, "nobody").sign_in(PASSWORD)
    assert wrong.status_code == unknown.status_code == 401
    assert wrong.json() == unknown.json() == {"detail": "password: wrong user name or password"}


def test_csrf_refusals(app) -> None:  # type: ignore[no-untyped-def]
    ann = Player(app, "ann")
    ann.fetch_csrf()
    body = {"name": "ann", "password": PASSWORD}
    # No header, a wrong header, another site's Origin: refused, nothing made.
    assert ann.post("/api/account/signup", body, csrf=False).status_code == 403
    r = ann.post("/api/account/signup", body, headers={"X-CSRF-Token": "x" * 32})
    assert r.status_code == 403 and r.json()["detail"].startswith("X-CSRF-Token")
    r = ann.post("/api/account/signup", body, headers={"Origin": "https://evil.example"})
    assert r.status_code == 403 and r.json()["detail"].startswith("Origin")
    assert Player(app, "ann").sign_in().status_code == 401
    assert ann.sign_up().status_code == 200
    # Signed in: the pre-session cookie no longer counts, the session's does.
    old = ann.csrf
    table = {"players": 2}
    assert ann.post("/api/lobby/tables", table, csrf=False).status_code == 403
    r = ann.post("/api/lobby/tables", table, headers={"X-CSRF-Token": old + "x"})
    assert r.status_code == 403
    assert ann.post("/api/lobby/tables", table).status_code == 200
    assert ann.post("/api/account/signout", csrf=False).status_code == 403


def test_an_expired_session_signs_nobody_in(app) -> None:  # type: ignore[no-untyped-def]
    ann = Player(app, "ann")
    ann.sign_up()
    assert ann.get("/api/lobby").status_code == 200
    with Session(app.state.hub.store.engine) as db, db.begin():
        db.execute(update(SessionRow).values(expires=datetime.now(UTC) - timedelta(seconds=1)))
    assert ann.get("/api/account").json()["user"] is None
    r = ann.get("/api/lobby")
    assert r.status_code == 401 and r.json() == {"detail": "session: sign in first"}


def test_wrong_passwords_are_limited_per_name_and_address(app) -> None:  # type: ignore[no-untyped-def]
    # No refill while the test runs (the machine is slow: Argon2 takes time).
    accounts = app.state.community.accounts
    accounts.by_address.rate = accounts.failures.rate = 1e-9
    Player(app, "ann").sign_up()
    Player(app, "bob").sign_up()
    # 5 wrong passwords for a name from one address (accounts.FAILURE_BURST),
    # then that name is refused from that address, even with its password.
    codes = [Player(app, "ann").sign_in("wrong password").status_code for _ in range(5)]
    assert codes == [401] * 5
    r = Player(app, "ann").sign_in()
    assert r.status_code == 429 and r.json()["detail"].startswith("name: too many wrong")
    # Another name from the same address is not.
    assert Player(app, "bob").sign_in().status_code == 200
    # Every attempt counts for the address (20 at once: the 2 sign-ups, the
    # 5 wrong ones, the one refused and bob's: 9), so 11 are left.
    codes = [Player(app, f"user{i}").sign_in().status_code for i in range(11)]
    assert codes == [401] * 11
    r = Player(app, "bob").sign_in()
    assert r.status_code == 429 and r.json()["detail"].startswith("address: too many")


def test_a_hash_with_older_parameters_verifies_and_is_made_again(app) -> None:  # type: ignore[no-untyped-def]
    """A password hashed with argon2-cffi's defaults (64 MiB, t=3, 4 lanes)
    still signs in, and its hash is then made with the server's parameters
    (19 MiB, t=2, 1 lane: OWASP's first Argon2id configuration)."""
    ann = Player(app, "ann")
    ann.sign_up()
    new_params = "$argon2id$v=19$m=19456,t=2,p=1$"
    engine = app.state.hub.store.engine
    with Session(engine) as db:
        assert db.scalars(select(UserRow.password_hash)).one().startswith(new_params)
    old = PasswordHasher(time_cost=3, memory_cost=65536, parallelism=4).hash(PASSWORD)
    with Session(engine) as db, db.begin():
        db.execute(update(UserRow).values(password_hash=old))
    assert Player(app, "ann").sign_in("wrong password").status_code == 401
    with Session(engine) as db:
        assert db.scalars(select(UserRow.password_hash)).one() == old
    assert Player(app, "ann").sign_in().status_code == 200
    with Session(engine) as db:
        assert db.scalars(select(UserRow.password_hash)).one().startswith(new_params)
    assert Player(app, "ann").sign_in().status_code == 200


def test_a_full_password_queue_answers_503_at_once(app) -> None:  # type: ignore[no-untyped-def]
    """The hashing pool's threads and queue all taken: a sign-in is refused
    at once with 503, a one-line reason and Retry-After, and nobody is
    signed in; such refusals cost the address none of its 20 attempts
    (25 of them, then the same sign-in works once the pool is free)."""
    Player(app, "ann").sign_up()
    accounts = app.state.community.accounts
    accounts.by_address.rate = 1e-9  # no refill while the test runs
    accounts.hashing = HashPool(threads=1, queue=1)
    release = threading.Event()
    portal = app.state.test_client.portal
    held = [portal.start_task_soon(accounts.hashing.run, release.wait) for _ in range(2)]
    try:
        ann = Player(app, "ann")
        r = ann.sign_in()
        assert r.status_code == 503 and r.headers["retry-after"] == "1"
        assert r.json() == {"detail": "sign-in: busy with other requests, try again in a moment"}
        assert ann.get("/api/account").json()["user"] is None
        codes = [Player(app, "ann").sign_in().status_code for _ in range(24)]
        assert codes == [503] * 24
    finally:
        release.set()
    for future in held:
        future.result(timeout=10)
    assert Player(app, "ann").sign_in().status_code == 200


def test_password_change_signs_out_other_sessions(app) -> None:  # type: ignore[no-untyped-def]
    here, there = Player(app, "ann"), Player(app, "ann")
    here.sign_up()
    there.sign_in()
    r = here.post("/api/account/password", {"old_password": "wrong one", "new_password": "x" * 9})
    assert r.status_code == 401
    r = here.post("/api/account/password", {"old_password": PASSWORD, "new_password": "short"})
    assert r.status_code == 422 and r.json()["detail"].startswith("new_password")
    r = here.post("/api/account/password", {"old_password": PASSWORD, "new_password": "n" * 12})
    assert r.status_code == 200
    assert here.get("/api/account").json()["user"] == {"name": "ann"}
    assert there.get("/api/account").json()["user"] is None
    assert Player(app, "ann").sign_in().status_code == 401
    assert Player(app, "ann").sign_in("n" * 12).status_code == 200


def test_a_guests_local_games_are_claimed_by_the_account(app) -> None:  # type: ignore[no-untyped-def]
    ann = Player(app, "ann")
    game = ann.client.post("/api/games", json={"opponent": "hotseat"}).json()
    owner = {"Authorization": f"Bearer {game['owner_token']}"}
    ann.sign_up()
    assert ann.get("/api/account/games").json() == []
    r = ann.post("/api/account/claim", headers=owner)
    assert r.status_code == 200
    games = ann.get("/api/account/games").json()
    assert [g["id"] for g in games] == [game["id"]] and not games[0]["finished"]
    # The record of an unfinished game stays hidden.
    assert ann.get(f"/api/account/games/{game['id']}/record").status_code == 403
    # Another account cannot claim the same browser's games.
    bob = Player(app, "bob")
    bob.sign_up()
    assert bob.post("/api/account/claim", headers=owner).status_code == 403
    assert bob.get(f"/api/account/games/{game['id']}/record").status_code == 404
    assert bob.post("/api/account/claim").status_code == 422


def test_a_made_up_owner_token_is_not_claimed(app) -> None:  # type: ignore[no-untyped-def]
    """Only a token that owns a local game may be claimed: a made-up one
    gets a one-line 404 and nothing is stored; an online game's seat token
    owns no local game either."""
    ann = Player(app, "ann")
    ann.sign_up()
    online = ann.client.post("/api/online", json={"seats": [{"name": "A"}, {"name": "B"}]})
    seat_token = online.json()["seats"][0]["token"]
    for token in ("m" * 43, seat_token):
        r = ann.post("/api/account/claim", headers={"Authorization": f"Bearer {token}"})
        assert r.status_code == 404
        assert r.json() == {"detail": "Authorization: this owner token owns no game"}
    with Session(app.state.hub.store.engine) as db:
        assert db.scalars(select(ClaimRow)).all() == []
    assert ann.get("/api/account/games").json() == []


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="per-thread nice is Linux's")
def test_the_hashing_threads_yield_the_cpu() -> None:
    """A hashing thread runs 10 nice levels below this process's own
    threads (read from /proc, the kernel's view of that thread)."""

    def nice_of(tid: int) -> int:
        fields = Path(f"/proc/self/task/{tid}/stat").read_text().rsplit(")", 1)[1].split()
        return int(fields[16])  # the 19th field of stat: nice

    pool = HashPool(threads=1, queue=0)
    try:
        tid = asyncio.run(pool.run(threading.get_native_id))
        assert nice_of(tid) == nice_of(threading.get_native_id()) + 10
    finally:
        pool.close()
