"""The moderation tables (migration 0004; what fills them: moderation/service.py):
banned accounts, players' reports, and the log of every moderation action."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import DateTime, ForeignKey, Integer, String
from sqlalchemy.orm import Mapped, mapped_column

from ..accounts import CommunityBase

#: The longest reason a report or an action keeps.
MAX_REASON = 500


class BanRow(CommunityBase):
    __tablename__ = "bans"
    user_id: Mapped[int] = mapped_column(
        ForeignKey("users.id", ondelete="CASCADE"), primary_key=True
    )
    reason: Mapped[str] = mapped_column(String(MAX_REASON))
    at: Mapped[datetime] = mapped_column(DateTime(timezone=True))


class ReportRow(CommunityBase):
    __tablename__ = "reports"
    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    at: Mapped[datetime] = mapped_column(DateTime(timezone=True), index=True)
    reporter_id: Mapped[int] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"), index=True)
    target_id: Mapped[int] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"), index=True)
    game_id: Mapped[str | None] = mapped_column(String(32), nullable=True)
    reason: Mapped[str] = mapped_column(String(MAX_REASON))


class ModerationLogRow(CommunityBase):
    __tablename__ = "moderation_log"
    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    at: Mapped[datetime] = mapped_column(DateTime(timezone=True), index=True)
    #: who acted: the operator (admin commands) or the reporting player
    actor: Mapped[str] = mapped_column(String(40))
    action: Mapped[str] = mapped_column(String(20))
    target: Mapped[str] = mapped_column(String(80))
    detail: Mapped[str] = mapped_column(String(MAX_REASON))
