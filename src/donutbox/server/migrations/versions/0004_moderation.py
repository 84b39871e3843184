"""Moderation (moderation/service.py): banned accounts, players' reports, the log
of every moderation action, and a lobby game's ``voided`` flag (games
before: not voided).

Revision ID: 0004
Revises: 0003
Create Date: 2026-12-05
"""

import sqlalchemy as sa
from alembic import op

revision = "0004"
down_revision = "0003"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("community_games") as batch:
        batch.add_column(sa.Column("voided", sa.Boolean, nullable=False, server_default=sa.false()))
    op.create_table(
        "bans",
        sa.Column(
            "user_id", sa.Integer, sa.ForeignKey("users.id", ondelete="CASCADE"), primary_key=True
        ),
        sa.Column("reason", sa.String(500), nullable=False),
        sa.Column("at", sa.DateTime(timezone=True), nullable=False),
    )
    op.create_table(
        "reports",
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("at", sa.DateTime(timezone=True), nullable=False),
        sa.Column(
            "reporter_id", sa.Integer, sa.ForeignKey("users.id", ondelete="CASCADE"), nullable=False
        ),
        sa.Column(
            "target_id", sa.Integer, sa.ForeignKey("users.id", ondelete="CASCADE"), nullable=False
        ),
        sa.Column("game_id", sa.String(32), nullable=True),
        sa.Column("reason", sa.String(500), nullable=False),
    )
    op.create_index("ix_reports_at", "reports", ["at"])
    op.create_index("ix_reports_reporter_id", "reports", ["reporter_id"])
    op.create_index("ix_reports_target_id", "reports", ["target_id"])
    op.create_table(
        "moderation_log",
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("actor", sa.String(40), nullable=False),
        sa.Column("action", sa.String(20), nullable=False),
        sa.Column("target", sa.String(80), nullable=False),
        sa.Column("detail", sa.String(500), nullable=False),
    )
    op.create_index("ix_moderation_log_at", "moderation_log", ["at"])


def downgrade() -> None:
    for table in ("moderation_log", "reports", "bans"):
        op.drop_table(table)
    with op.batch_alter_table("community_games") as batch:
        batch.drop_column("voided")
