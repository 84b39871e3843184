"""What is stored to be sent, and every limit on it (docs/community.md,
"Email").

An email is a row of ``email_outbox``, stored in its own transaction
before anything is sent: a request or a move only ever stores a row (in a
thread, off the event loop), never waits for a mail server.  The sender
(sender.py) sends the rows.

Limits, each counted from the stored rows (so they hold across processes
and restarts):

- one address per account, at most ``MAX_ADDRESS`` characters;
- ``CONFIRMS_PER_HOUR`` confirmation emails an hour per account, and as
  many per address whatever the account (nobody can flood a stranger's
  mailbox by signing up accounts);
- ``SENDS_PER_HOUR`` emails an hour per account and per address; beyond,
  a reminder is not stored (logged);
- at most one email per ``dedupe`` key: one reminder per game per deadline,
  one game-over email per game and player, one invitation per table and
  player.
"""

from __future__ import annotations

import logging
import re
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from sqlalchemy import delete, func, select, update
from sqlalchemy.engine import Engine
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from ..errors import Busy, Invalid
from . import compose, tokens
from .config import SmtpConfig
from .rows import MAX_ADDRESS, EmailRow, OutboxRow

log = logging.getLogger("donutbox.server.mail")

CONFIRMS_PER_HOUR = 3
SENDS_PER_HOUR = 20
KINDS = ("confirm", "turn", "invite", "over")
#: A plain address: no spaces, quotes, brackets or commas (nothing a header
#: could be split at), one @, a dotted domain.
ADDRESS = re.compile(r"[A-Za-z0-9.!#$%&'*+/=?^_`{|}~-]{1,64}@[A-Za-z0-9-]+(\.[A-Za-z0-9-]+)+")


@dataclass(frozen=True)
class Pending:
    """A row the sender owns now."""

    id: int
    address: str
    subject: str
    text: str
    html: str
    unsubscribe: str
    attempts: int


def check_address(address: object) -> str:
    if not isinstance(address, str) or not address.strip():
        raise Invalid("address: an email address (name@example.org)")
    address = address.strip()
    if len(address) > MAX_ADDRESS:
        raise Invalid(f"address: at most {MAX_ADDRESS} characters")
    if not ADDRESS.fullmatch(address):
        raise Invalid("address: not an email address (name@example.org)")
    return address.lower()


class Outbox:
    def __init__(self, engine: Engine, config: SmtpConfig) -> None:
        self.engine = engine
        self.config = config
        self._key: bytes | None = None
        #: called after a row is stored (the sender's wake-up)
        self.stored: Callable[[], None] = lambda: None

    @property
    def key(self) -> bytes:
        if self._key is None:
            self._key = tokens.mail_key(self.engine)
        return self._key

    def link(self, path: str) -> str:
        return f"{self.config.base_url}{path}"

    def unsubscribe_link(self, user_id: int, address: str) -> str:
        token = tokens.sign(self.key, "unsub", user_id, address)
        return self.link(f"/api/email/unsubscribe?t={token}")

    # -- the account's settings --------------------------------------------------

    def settings(self, user_id: int) -> dict[str, Any]:
        with Session(self.engine) as db:
            row = db.get(EmailRow, user_id)
            if row is None:
                return {"address": None, "confirmed": False, "reminders": None}
            return {
                "address": row.address,
                "confirmed": row.confirmed,
                "reminders": {"turn": row.turn, "invite": row.invite, "over": row.over},
            }

    def set_address(self, user_id: int, name: str, address: str) -> None:
        """The account's address from now on (unconfirmed), and a
        confirmation email to it; Busy past the hourly confirmations."""
        address = check_address(address)
        now = time.time()
        _ = self.key  # read before the transaction: SQLite has one connection
        with Session(self.engine) as db, db.begin():
            hour = now - 3600
            by_user = db.scalar(
                select(func.count(OutboxRow.id)).where(
                    OutboxRow.user_id == user_id,
                    OutboxRow.kind == "confirm",
                    OutboxRow.created > hour,
                )
            )
            by_address = db.scalar(
                select(func.count(OutboxRow.id)).where(
                    OutboxRow.address == address,
                    OutboxRow.kind == "confirm",
                    OutboxRow.created > hour,
                )
            )
            if (by_user or 0) >= CONFIRMS_PER_HOUR or (by_address or 0) >= CONFIRMS_PER_HOUR:
                raise Busy(
                    f"address: at most {CONFIRMS_PER_HOUR} confirmation emails an hour; "
                    "try again later"
                )
            row = db.get(EmailRow, user_id)
            if row is None:
                row = EmailRow(user_id=user_id, address=address, created=now)
                db.add(row)
            # Mail waiting for the old address is not sent.
            self._drop_pending(db, user_id)
            row.address, row.confirmed, row.created = address, False, now
            row.turn = row.invite = row.over = True
            token = tokens.sign(self.key, "confirm", user_id, address)
            unsubscribe = self.unsubscribe_link(user_id, address)
            letter = compose.confirm(name, self.link(f"/api/email/confirm?t={token}"), unsubscribe)
            db.add(self._row(user_id, address, "confirm", None, letter, unsubscribe, now))
        self.stored()

    def set_reminders(self, user_id: int, turn: bool, invite: bool, over: bool) -> None:
        with Session(self.engine) as db, db.begin():
            row = db.get(EmailRow, user_id)
            if row is None:
                raise Invalid("reminders: add an email address first")
            row.turn, row.invite, row.over = turn, invite, over

    def remove(self, user_id: int) -> None:
        with Session(self.engine) as db, db.begin():
            self._drop_pending(db, user_id)
            row = db.get(EmailRow, user_id)
            if row is not None:
                db.delete(row)

    def confirm(self, token: str) -> str | None:
        """The address a valid confirmation link confirms (None if the link
        is not valid, or the account's address changed since)."""
        claim = tokens.verify(self.key, token, "confirm")
        if claim is None:
            return None
        with Session(self.engine) as db, db.begin():
            row = db.get(EmailRow, claim.user_id)
            if row is None or row.address != claim.address:
                return None
            row.confirmed = True
            return row.address

    def unsubscribe(self, token: str) -> bool:
        """Stop every email to the link's address: its reminders are turned
        off (an unconfirmed address is forgotten), and mail waiting for it
        is not sent.  True if the link was valid."""
        claim = tokens.verify(self.key, token, "unsub")
        if claim is None:
            return False
        with Session(self.engine) as db, db.begin():
            row = db.get(EmailRow, claim.user_id)
            if row is not None and row.address == claim.address:
                self._drop_pending(db, claim.user_id)
                if row.confirmed:
                    row.turn = row.invite = row.over = False
                else:
                    db.delete(row)
        return True

    @staticmethod
    def _drop_pending(db: Session, user_id: int) -> None:
        db.execute(
            update(OutboxRow)
            .where(OutboxRow.user_id == user_id, OutboxRow.state == "pending")
            .values(state="dropped")
        )

    # -- reminders ---------------------------------------------------------------------

    def enqueue(
        self, user_id: int, kind: str, dedupe: str, write: Callable[[str], compose.Letter]
    ) -> bool:
        """Store a reminder of ``kind`` for the account, if it has a
        confirmed address that wants this kind, within the hourly limits,
        and no email of this ``dedupe`` key was stored before.  ``write``
        makes the letter from the unsubscribe link.  True if stored."""
        assert kind in KINDS and kind != "confirm"
        now = time.time()
        _ = self.key  # read before the transaction: SQLite has one connection
        try:
            with Session(self.engine) as db, db.begin():
                row = db.get(EmailRow, user_id)
                if row is None or not row.confirmed or not getattr(row, kind):
                    return False
                if db.scalar(select(OutboxRow.id).where(OutboxRow.dedupe == dedupe)) is not None:
                    return False
                hour = now - 3600
                for column, value in (
                    (OutboxRow.user_id, user_id),
                    (OutboxRow.address, row.address),
                ):
                    sent = db.scalar(
                        select(func.count(OutboxRow.id)).where(
                            column == value, OutboxRow.created > hour
                        )
                    )
                    if (sent or 0) >= SENDS_PER_HOUR:
                        log.info("mail: %s for account %s not stored: hourly limit", kind, user_id)
                        return False
                unsubscribe = self.unsubscribe_link(user_id, row.address)
                letter = write(unsubscribe)
                db.add(self._row(user_id, row.address, kind, dedupe, letter, unsubscribe, now))
        except IntegrityError:
            return False  # another process stored this very reminder first
        self.stored()
        return True

    @staticmethod
    def _row(
        user_id: int,
        address: str,
        kind: str,
        dedupe: str | None,
        letter: compose.Letter,
        unsubscribe: str,
        now: float,
    ) -> OutboxRow:
        return OutboxRow(
            user_id=user_id,
            address=address,
            kind=kind,
            dedupe=dedupe,
            subject=letter.subject,
            body_text=letter.text,
            body_html=letter.html,
            unsubscribe=unsubscribe,
            created=now,
            state="pending",
            next_try=now,
            attempts=0,
        )

    # -- the sender's side --------------------------------------------------------------

    def claim(self, lease: float, limit: int = 20) -> list[Pending]:
        """Rows due now, each taken for ``lease`` seconds (one process sends
        a row; a row whose sender died is taken again once its lease is
        over) and its attempt counted before it is sent."""
        now = time.time()
        out = []
        with Session(self.engine) as db:
            due = db.scalars(
                select(OutboxRow)
                .where(OutboxRow.state == "pending", OutboxRow.next_try <= now)
                .order_by(OutboxRow.next_try)
                .limit(limit)
            ).all()
            rows = [(r.id, r.attempts) for r in due]
        for row_id, attempts in rows:
            with Session(self.engine) as db, db.begin():
                taken = db.execute(
                    update(OutboxRow)
                    .where(
                        OutboxRow.id == row_id,
                        OutboxRow.state == "pending",
                        OutboxRow.attempts == attempts,
                        (OutboxRow.claimed_until.is_(None)) | (OutboxRow.claimed_until < now),
                    )
                    .values(attempts=attempts + 1, claimed_until=now + lease)
                )
                if getattr(taken, "rowcount", 0) != 1:
                    continue
                r = db.get(OutboxRow, row_id)
                assert r is not None
                out.append(
                    Pending(
                        r.id,
                        r.address,
                        r.subject,
                        r.body_text,
                        r.body_html,
                        r.unsubscribe,
                        r.attempts,
                    )
                )
        return out

    def sent(self, row_id: int) -> None:
        with Session(self.engine) as db, db.begin():
            db.execute(
                update(OutboxRow)
                .where(OutboxRow.id == row_id)
                .values(state="sent", sent_at=time.time(), claimed_until=None, error=None)
            )

    def prune(self, before: float) -> int:
        """Delete the rows stored before ``before`` (seconds since the
        epoch) that are done with: sent, failed or dropped, never one still
        to send.  How many were deleted."""
        with Session(self.engine) as db, db.begin():
            gone = db.execute(
                delete(OutboxRow).where(OutboxRow.created < before, OutboxRow.state != "pending")
            )
            return int(getattr(gone, "rowcount", 0) or 0)

    def failed(self, row_id: int, error: str, give_up: bool, retry_at: float) -> None:
        with Session(self.engine) as db, db.begin():
            db.execute(
                update(OutboxRow)
                .where(OutboxRow.id == row_id, OutboxRow.state == "pending")
                .values(
                    state="failed" if give_up else "pending",
                    next_try=retry_at,
                    claimed_until=None,
                    error=error[:200],
                )
            )
