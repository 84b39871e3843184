"""Bot accounts (docs/bots.md): which accounts are bots and who owns them,
their API tokens (SHA-256 digests only) and the challenges sent to bots.

Revision ID: 0007
Revises: 0005
Create Date: 2026-12-05
"""

import sqlalchemy as sa
from alembic import op

revision = "0007"
down_revision = "0006"
branch_labels = None
depends_on = None


def _user(name: str, primary_key: bool = False) -> "sa.Column[int]":
    return sa.Column(
        name,
        sa.Integer,
        sa.ForeignKey("users.id", ondelete="CASCADE"),
        primary_key=primary_key,
        nullable=False,
    )


def upgrade() -> None:
    op.create_table(
        "bot_accounts",
        _user("user_id", primary_key=True),
        _user("owner_id"),
        sa.Column("created", sa.DateTime(timezone=True), nullable=False),
    )
    op.create_index("ix_bot_accounts_owner_id", "bot_accounts", ["owner_id"])
    op.create_table(
        "bot_tokens",
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        _user("bot_id"),
        sa.Column("digest", sa.String(64), nullable=False, unique=True),
        sa.Column("created", sa.DateTime(timezone=True), nullable=False),
        sa.Column("last_used", sa.DateTime(timezone=True), nullable=True),
        sa.Column("revoked", sa.DateTime(timezone=True), nullable=True),
    )
    op.create_index("ix_bot_tokens_bot_id", "bot_tokens", ["bot_id"])
    op.create_table(
        "bot_challenges",
        sa.Column("id", sa.String(16), primary_key=True),
        _user("challenger_id"),
        _user("dest_id"),
        sa.Column("rules", sa.Text, nullable=False),
        sa.Column("rules_key", sa.String(40), nullable=False),
        sa.Column("rules_label", sa.String(200), nullable=False),
        sa.Column("clock", sa.Text, nullable=False),
        sa.Column("rated", sa.Boolean, nullable=False),
        sa.Column("status", sa.String(12), nullable=False),
        sa.Column("reason", sa.String(100), nullable=True),
        sa.Column("game_id", sa.String(32), nullable=True),
        sa.Column("created", sa.DateTime(timezone=True), nullable=False),
    )
    op.create_index("ix_bot_challenges_dest_id", "bot_challenges", ["dest_id"])
    op.create_index("ix_bot_challenges_challenger_id", "bot_challenges", ["challenger_id"])


def downgrade() -> None:
    for table in ("bot_challenges", "bot_tokens", "bot_accounts"):
        op.drop_table(table)
