"""The outbox's guarantees (docs/deploy.md, "Email: --smtp"), with a real
database and a real local SMTP server: a crash after the mail server took
an email and before it was marked sent costs at most one more copy; a mail
server that is down fails no move (the email waits in the outbox)."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

import pytest

pytest.importorskip("aiosmtpd")
from community_helpers import signed_up
from fastapi.testclient import TestClient
from sqlalchemy import select
from sqlalchemy.orm import Session

from donutbox.server import migrate
from donutbox.server.accounts import UserRow, now
from donutbox.server.app import create_app
from donutbox.server.mail import sender as sender_module
from donutbox.server.mail.config import parse_smtp_url
from donutbox.server.mail.outbox import Outbox
from donutbox.server.mail.rows import OutboxRow
from donutbox.server.mail.sender import Sender, deliver
from donutbox.server.storage import make_engine
from mail_helpers import smtp_server

BASE = "http://testserver"


def test_a_crash_between_sending_and_marking_sends_at_most_once_more(tmp_path: Path) -> None:
    engine = make_engine(f"sqlite:///{tmp_path / 'o.db'}")
    assert migrate.upgrade(engine)
    with Session(engine) as db, db.begin():
        db.add(UserRow(id=1, name="ann", name_key="ann", password_hash="x", created=now()))
    with smtp_server() as (box, url):
        outbox = Outbox(engine, parse_smtp_url(url, BASE))
        outbox.set_address(1, "ann", "ann@example.org")
        # A sender takes the row for half a second, hands it to the mail
        # server, and dies before marking it sent.
        (taken,) = outbox.claim(0.5)
        deliver(outbox.config, taken)
        assert len(box.wait_for("ann@example.org", 1)) == 1

        async def senders() -> list[int]:
            sender = Sender(outbox)
            counts = [await sender.send_due()]  # its lease still runs: left alone
            await asyncio.sleep(0.6)
            counts.append(await sender.send_due())  # the lease is over: sent again
            counts.append(await sender.send_due())  # and marked: never a third time
            return counts

        assert asyncio.run(senders()) == [0, 1, 0]
        assert len(box.to("ann@example.org")) == 2
        with Session(engine) as db:
            row = db.scalars(select(OutboxRow)).one()
            assert (row.state, row.attempts) == ("sent", 2)
    engine.dispose()


def test_a_mail_server_that_is_down_fails_no_move_and_the_email_waits(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(sender_module, "POLL_SECONDS", 0.2)
    with smtp_server() as (_, url):
        pass  # started and stopped: nothing listens on its port now
    app = create_app(f"sqlite:///{tmp_path / 'd.db'}", inline_ai=True, smtp_url=url)
    with TestClient(app) as c:
        app.state.test_client = c
        (ann,) = signed_up(app, "ann")
        r = ann.post("/api/account/email", {"address": "ann@example.org"})
        assert r.status_code == 200  # stored; the sending fails later, elsewhere
        engine = app.state.hub.store.engine

        def row() -> OutboxRow:
            with Session(engine) as db:
                return db.scalars(select(OutboxRow)).one()

        deadline = time.monotonic() + 10
        while row().error is None:
            assert time.monotonic() < deadline, "never tried"
            time.sleep(0.05)
        assert row().state == "pending" and row().attempts >= 1  # to be tried again
        # Moves go on meanwhile.
        made = c.post(
            "/api/online", json={"seats": [{"name": "A"}, {"name": "B"}], "clock": {"days": 1}}
        ).json()
        auth = {"Authorization": f"Bearer {made['seats'][0]['token']}"}
        st = c.get(f"/api/online/{made['id']}", headers=auth).json()
        if st["to_move"] != 0:
            auth = {"Authorization": f"Bearer {made['seats'][1]['token']}"}
            st = c.get(f"/api/online/{made['id']}", headers=auth).json()
        r = c.post(
            f"/api/online/{made['id']}/moves",
            json={"move": st["legal"][0], "version": st["version"]},
            headers=auth,
        )
        assert r.status_code == 200 and r.json()["version"] == 1


def test_old_rows_done_with_are_deleted_and_none_still_to_send(tmp_path: Path) -> None:
    """Rows older than KEEP_DAYS go once sent, failed or dropped; a row
    still pending stays whatever its age, and so do recent rows."""
    engine = make_engine(f"sqlite:///{tmp_path / 'p.db'}")
    assert migrate.upgrade(engine)
    with Session(engine) as db, db.begin():
        db.add(UserRow(id=1, name="ann", name_key="ann", password_hash="x", created=now()))
    day = 86400.0
    ages = {"sent": 31, "failed": 40, "dropped": 90, "pending": 60}
    with Session(engine) as db, db.begin():
        for i, (state, days) in enumerate([*ages.items(), ("sent", 29), ("failed", 1)]):
            db.add(
                OutboxRow(
                    user_id=1,
                    address="ann@example.org",
                    kind="turn",
                    dedupe=f"turn:g{i}:0",
                    subject="s",
                    body_text="t",
                    body_html="h",
                    unsubscribe="u",
                    created=time.time() - days * day,
                    state=state,
                    next_try=0.0,
                )
            )
    outbox = Outbox(engine, parse_smtp_url("smtp://127.0.0.1:1", BASE))
    assert sender_module.KEEP_DAYS == 30
    assert asyncio.run(Sender(outbox).prune()) == 3
    with Session(engine) as db:
        left = sorted(
            (r.state, round((time.time() - r.created) / day)) for r in db.scalars(select(OutboxRow))
        )
    assert left == [("failed", 1), ("pending", 60), ("sent", 29)]
    engine.dispose()
