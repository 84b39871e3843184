"""Email (docs/community.md, "Email"; docs/deploy.md, "Email: --smtp"),
read from a real local SMTP server (aiosmtpd): an address confirmed by a
signed link; a reminder to the player to move in a turn-based game, once
per deadline; the game-over email; one-click unsubscribe without signing
in; retries with a bound; the hourly limits; and nothing at all without
``--smtp``.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("aiosmtpd")
from community_helpers import Player, signed_up
from fastapi.testclient import TestClient

from donutbox.server import online
from donutbox.server.app import create_app
from donutbox.server.mail import outbox as outbox_module
from donutbox.server.mail import sender as sender_module
from donutbox.server.mail.config import SmtpUrlError, parse_smtp_url
from mail_helpers import Mailbox, link, parts, smtp_server, unsubscribe_url

BASE = "http://testserver"


@pytest.fixture
def mailed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[Any, Mailbox]]:
    monkeypatch.setattr(sender_module, "POLL_SECONDS", 0.2)
    monkeypatch.setattr(sender_module, "BACKOFF", 0.2)
    monkeypatch.setattr(online, "DAY_SECONDS", 3600.0)
    with smtp_server() as (box, url):
        app = create_app(
            f"sqlite:///{tmp_path / 'm.db'}", inline_ai=True, smtp_url=url, public_url=BASE
        )
        with TestClient(app) as c:
            app.state.test_client = c
            yield app, box


def _path(url: str) -> str:
    assert url.startswith(BASE + "/"), url
    return url[len(BASE) :]


def _confirmed(app: Any, box: Mailbox, p: Player, address: str) -> None:
    r = p.post("/api/account/email", {"address": address})
    assert r.status_code == 200, r.text
    assert r.json()["confirmed"] is False
    (msg,) = box.wait_for(address, 1)
    r = p.client.get(_path(link(msg, rf"{BASE}/api/email/confirm\?t=\S+")))
    assert r.status_code == 200 and "confirmed" in r.text
    assert p.get("/api/account/email").json()["confirmed"] is True


def _table_game(players: list[Player], **table: Any) -> tuple[str, list[str]]:
    r = players[0].post("/api/lobby/tables", {"players": len(players), **table})
    assert r.status_code == 200, r.text
    game = players[1].post(f"/api/lobby/tables/{r.json()['id']}/join").json()["game"]
    tokens = []
    for p in players:
        mine = [g for g in p.get("/api/lobby").json()["games"] if g["game"] == game]
        tokens.append(mine[0]["token"])
    return game, tokens


def _state(p: Player, game: str, token: str) -> dict[str, Any]:
    r = p.get(f"/api/online/{game}", headers={"Authorization": f"Bearer {token}"})
    assert r.status_code == 200, r.text
    return r.json()  # type: ignore[no-any-return]


def _move(p: Player, game: str, token: str) -> dict[str, Any]:
    st = _state(p, game, token)
    r = p.post(
        f"/api/online/{game}/moves",
        {"move": st["legal"][0], "version": st["version"]},
        headers={"Authorization": f"Bearer {token}"},
    )
    assert r.status_code == 200, r.text
    return r.json()  # type: ignore[no-any-return]


def test_the_smtp_url_is_read_or_refused_in_one_line() -> None:
    c = parse_smtp_url("smtp://bot%40x:p%3Ass@mail.example:2525?starttls=1&from=a@b.org", BASE)
    assert (c.host, c.port, c.user, c.password, c.starttls, c.tls, c.sender) == (
        "mail.example",
        2525,
        "bot@x",
        "p:ss",
        True,
        False,
        "a@b.org",
    )
    assert "p:ss" not in c.describe()
    c = parse_smtp_url("smtps://mail.example", BASE)
    assert (c.port, c.tls, c.sender) == (465, True, "donutbox@mail.example")
    assert parse_smtp_url("smtp://h", BASE).port == 25
    for bad, said in [
        ("http://h", "smtp:// or smtps://"),
        ("smtp://", "no host"),
        ("smtp://h:99999", "port"),
        ("smtp://h?tls=1", "unknown option tls"),
        ("smtp://h?from=a@b.org%0D%0ABcc:x@y.org", "from="),
    ]:
        with pytest.raises(SmtpUrlError, match=said):
            parse_smtp_url(bad, BASE)


def test_without_smtp_nothing_is_offered_or_stored(tmp_path: Path) -> None:
    app = create_app(f"sqlite:///{tmp_path / 'n.db'}", inline_ai=True)
    with TestClient(app) as c:
        app.state.test_client = c
        (ann,) = signed_up(app, "ann")
        assert ann.get("/api/account/email").json() == {
            "enabled": False,
            "address": None,
            "confirmed": False,
            "reminders": None,
        }
        r = ann.post("/api/account/email", {"address": "ann@example.org"})
        assert r.status_code == 404
        assert r.json()["detail"] == "email: this server sends no email (started without --smtp)"
        assert c.get("/api/email/unsubscribe?t=x").status_code == 404


def test_an_address_gets_nothing_but_its_confirmation_until_confirmed(mailed) -> None:  # type: ignore[no-untyped-def]
    app, box = mailed
    ann, bob = signed_up(app, "ann", "bob")
    assert ann.post("/api/account/email", {"address": "Ann@Example.org"}).status_code == 200
    (msg,) = box.wait_for("ann@example.org", 1)  # kept in lower case
    assert msg["From"] == "play@donutbox.test"
    assert msg["Subject"] == "donutbox: confirm your email address"
    text, html = parts(msg)
    assert "account ann" in text and "account ann" in html
    assert unsubscribe_url(msg).startswith(f"{BASE}/api/email/unsubscribe?t=")
    assert msg["List-Unsubscribe-Post"] == "List-Unsubscribe=One-Click"
    # Unconfirmed: a turn-based game sends it nothing.
    _confirmed(app, box, bob, "bob@example.org")
    _table_game([ann, bob], clock={"days": 1})
    time.sleep(1.0)
    assert len(box.to("ann@example.org")) == 1
    # A link altered by one character opens nothing, and changes nothing.
    url = _path(link(msg, rf"{BASE}/api/email/confirm\?t=\S+"))
    forged = url[:-1] + ("A" if url[-1] != "A" else "B")
    r = Player(app, "stranger").get(forged)
    assert r.status_code == 400 and "not valid" in r.text
    assert ann.get("/api/account/email").json()["confirmed"] is False
    # A new address: the old address's link opens nothing.
    assert ann.post("/api/account/email", {"address": "ann2@example.org"}).status_code == 200
    assert Player(app, "stranger").get(url).status_code == 400
    assert ann.get("/api/account/email").json()["address"] == "ann2@example.org"


def test_each_move_emails_the_player_to_move_once_per_deadline(mailed) -> None:  # type: ignore[no-untyped-def]
    app, box = mailed
    ann, bob = signed_up(app, "ann", "bob")
    addresses = ["ann@example.org", "bob@example.org"]
    for p, a in zip([ann, bob], addresses, strict=True):
        _confirmed(app, box, p, a)
    players = [ann, bob]
    game, tokens = _table_game(players, clock={"days": 2})
    st = _state(ann, game, tokens[0])
    first = st["to_move"]
    # The game's start: the first player to move is told.
    (_, turn) = box.wait_for(addresses[first], 2)
    assert turn["Subject"] == f"donutbox: your move against {players[1 - first].name}"
    text, html = parts(turn)
    assert f"{BASE}/#/play/{game}" in text and f'href="{BASE}/#/play/{game}"' in html
    assert tokens[first] not in text + html  # never a seat's secret link
    assert "Move before " in text
    # Each move: the other player, once.
    _move(players[first], game, tokens[first])
    box.wait_for(addresses[1 - first], 2)
    _move(players[1 - first], game, tokens[1 - first])
    box.wait_for(addresses[first], 3)
    # The same deadline again (the hook run twice): no second email.
    s = app.state.hub.sessions[game]
    notifier = app.state.mail.notifier
    app.state.test_client.portal.call(notifier.game_changed, s)
    time.sleep(1.0)
    assert len(box.to(addresses[first])) == 3 and len(box.to(addresses[1 - first])) == 2
    # The page opens /#/play/<game> through the player's own seat link.
    r = players[first].get(f"/api/account/seat/{game}")
    assert r.json()["link"] == f"/#/online/{game}/{tokens[first]}"
    assert Player(app, "x").get(f"/api/account/seat/{game}").status_code == 401
    (cat,) = signed_up(app, "cat")
    assert cat.get(f"/api/account/seat/{game}").status_code == 404
    # A resign ends it: both are told the result.
    v = _state(ann, game, tokens[0])["version"]
    ann.post(
        f"/api/online/{game}/resign",
        {"version": v},
        headers={"Authorization": f"Bearer {tokens[0]}"},
    )
    over_ann = box.wait_for(addresses[0], 4 if first == 0 else 3)[-1]
    over_bob = box.wait_for(addresses[1], 3 if first == 0 else 4)[-1]
    assert "you placed 2nd of 2 (by resignation)" in parts(over_ann)[0]
    assert "you placed 1st of 2 (by resignation)" in parts(over_bob)[0]


def test_one_click_unsubscribe_without_signing_in_stops_the_mail(mailed) -> None:  # type: ignore[no-untyped-def]
    app, box = mailed
    ann, bob = signed_up(app, "ann", "bob")
    for p, a in [(ann, "ann@example.org"), (bob, "bob@example.org")]:
        _confirmed(app, box, p, a)
    players, addresses = [ann, bob], ["ann@example.org", "bob@example.org"]
    game, tokens = _table_game(players, clock={"days": 1})
    first = _state(ann, game, tokens[0])["to_move"]
    (_, turn) = box.wait_for(addresses[first], 2)
    stranger = Player(app, "nobody")  # no session, no cookie
    # A forged link unsubscribes nothing.
    url = _path(unsubscribe_url(turn))
    assert stranger.get(url[:-2] + "xx").status_code == 400
    assert players[first].get("/api/account/email").json()["reminders"]["turn"] is True
    r = stranger.get(url)
    assert r.status_code == 200 and "Unsubscribed" in r.text
    assert players[first].get("/api/account/email").json()["reminders"] == {
        "turn": False,
        "invite": False,
        "over": False,
    }
    # The other moves, then it is this player's move again: no email.
    _move(players[first], game, tokens[first])
    box.wait_for(addresses[1 - first], 2)
    _move(players[1 - first], game, tokens[1 - first])
    time.sleep(1.0)
    assert len(box.to(addresses[first])) == 2
    # RFC 8058's one-click POST works too (the other player's mail program).
    (_, theirs) = box.wait_for(addresses[1 - first], 2)
    r = stranger.post(
        _path(unsubscribe_url(theirs)),
        content=b"List-Unsubscribe=One-Click",
        csrf=False,
        headers={"Content-Type": "application/x-www-form-urlencoded"},
    )
    assert r.status_code == 200
    assert players[1 - first].get("/api/account/email").json()["reminders"]["turn"] is False


def test_a_refused_email_is_tried_again_and_given_up_after_five_tries(mailed) -> None:  # type: ignore[no-untyped-def]
    app, box = mailed
    (ann,) = signed_up(app, "ann")
    box.refuse = 2  # the mail server says "try later" twice
    assert ann.post("/api/account/email", {"address": "ann@example.org"}).status_code == 200
    box.wait_for("ann@example.org", 1)
    assert box.refused == 2
    box.refuse = 100
    (bob,) = signed_up(app, "bob")
    assert bob.post("/api/account/email", {"address": "bob@example.org"}).status_code == 200
    from sqlalchemy import select
    from sqlalchemy.orm import Session

    from donutbox.server.mail.rows import OutboxRow

    def row() -> OutboxRow:
        with Session(app.state.hub.store.engine) as db:
            return db.scalars(select(OutboxRow).where(OutboxRow.address == "bob@example.org")).one()

    deadline = time.monotonic() + 30
    while row().state != "failed":
        assert time.monotonic() < deadline, "never given up"
        time.sleep(0.1)
    assert row().attempts == sender_module.ATTEMPTS and box.refused == 2 + sender_module.ATTEMPTS
    assert "451" in (row().error or "")
    assert box.to("bob@example.org") == []


def test_every_input_is_bounded(mailed, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    app, box = mailed
    (ann,) = signed_up(app, "ann")
    for bad, said in [
        ("a" * 250 + "@x.org", "at most 254 characters"),
        ("ann@example.org\r\nBcc: eve@example.org", "address: not an email address"),
        ("ann", "address: not an email address"),
        ("<ann@example.org>", "address: not an email address"),
    ]:
        r = ann.post("/api/account/email", {"address": bad})
        assert r.status_code == 422, r.text
        assert r.json()["detail"].startswith("address: ") and said in r.json()["detail"]
    assert ann.get("/api/account/email").json()["address"] is None
    # Confirmations: three an hour per account...
    for i in range(3):
        assert ann.post("/api/account/email", {"address": f"a{i}@example.org"}).status_code == 200
    r = ann.post("/api/account/email", {"address": "a3@example.org"})
    assert r.status_code == 429
    assert r.json()["detail"].startswith("address: at most 3 confirmation emails an hour")
    # ... and per address, whoever asks (no mail bomb by signing up accounts).
    others = signed_up(app, "bob", "cat", "dan", "eve")
    for p in others[:3]:
        assert p.post("/api/account/email", {"address": "victim@example.org"}).status_code == 200
    assert (
        others[3].post("/api/account/email", {"address": "victim@example.org"}).status_code == 429
    )
    assert len(box.wait_for("victim@example.org", 3)) == 3
    # Reminders: at most SENDS_PER_HOUR an hour to an account.
    monkeypatch.setattr(outbox_module, "SENDS_PER_HOUR", 2)
    outbox = app.state.mail.outbox
    _confirmed(app, box, others[0], "bob@example.org")  # bob's 2nd email this hour
    from donutbox.server.mail import compose

    letter = compose.invitation("x", "y", BASE, BASE)
    assert outbox.enqueue(2, "invite", "test:1", lambda u: letter) is False  # the limit
    assert outbox.enqueue(2, "invite", "test:2", lambda u: letter) is False


def test_serve_refuses_an_smtp_url_it_cannot_use_in_one_line(cli: Any, tmp_path: Path) -> None:
    from socket import socket

    with socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = str(sock.getsockname()[1])
    db = f"sqlite:///{tmp_path / 'g.db'}"
    done = cli("serve", "--port", port, "--db", db, "--smtp", "smtp://mail.example:99999")
    assert done.returncode == 2
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    assert lines[0].endswith("--smtp: the port must be a number from 1 to 65535"), lines
