"""The email tables (made by migration 0006)."""

from __future__ import annotations

from sqlalchemy import Boolean, Float, ForeignKey, Integer, String, Text
from sqlalchemy.orm import Mapped, mapped_column

from ..accounts import CommunityBase

#: The longest address taken (RFC 5321's path limit, less the brackets).
MAX_ADDRESS = 254


class EmailRow(CommunityBase):
    """An account's one address and the reminders it wants."""

    __tablename__ = "email_addresses"
    user_id: Mapped[int] = mapped_column(
        ForeignKey("users.id", ondelete="CASCADE"), primary_key=True
    )
    address: Mapped[str] = mapped_column(String(MAX_ADDRESS))
    confirmed: Mapped[bool] = mapped_column(Boolean, default=False)
    turn: Mapped[bool] = mapped_column(Boolean, default=True)
    invite: Mapped[bool] = mapped_column(Boolean, default=True)
    over: Mapped[bool] = mapped_column(Boolean, default=True)
    created: Mapped[float] = mapped_column(Float)


class OutboxRow(CommunityBase):
    """One email to send (or sent, or given up on): kept, so that what was
    sent is known (``dedupe``: at most one reminder per game per deadline)
    and the hourly limits can count."""

    __tablename__ = "email_outbox"
    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"), index=True)
    address: Mapped[str] = mapped_column(String(MAX_ADDRESS), index=True)
    kind: Mapped[str] = mapped_column(String(10))  # confirm, turn, invite, over
    #: e.g. ``turn:<game>:<deadline>``: a second email with the same key is
    #: never stored (a unique index, so two processes cannot both store it)
    dedupe: Mapped[str | None] = mapped_column(String(120), unique=True, nullable=True)
    subject: Mapped[str] = mapped_column(String(200))
    body_text: Mapped[str] = mapped_column(Text)
    body_html: Mapped[str] = mapped_column(Text)
    unsubscribe: Mapped[str] = mapped_column(String(600))
    created: Mapped[float] = mapped_column(Float, index=True)
    #: pending, sent, failed
    state: Mapped[str] = mapped_column(String(10), index=True)
    next_try: Mapped[float] = mapped_column(Float)
    attempts: Mapped[int] = mapped_column(Integer, default=0)
    #: a sender owns the row until then (another process leaves it alone)
    claimed_until: Mapped[float | None] = mapped_column(Float, nullable=True)
    sent_at: Mapped[float | None] = mapped_column(Float, nullable=True)
    error: Mapped[str | None] = mapped_column(String(200), nullable=True)


class MailKeyRow(CommunityBase):
    """The key that signs the links in emails (made once, shared by every
    process on the database, kept across restarts)."""

    __tablename__ = "mail_keys"
    name: Mapped[str] = mapped_column(String(20), primary_key=True)
    key: Mapped[str] = mapped_column(String(64))
