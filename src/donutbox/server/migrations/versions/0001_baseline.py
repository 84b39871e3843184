"""Baseline: the games table (as made before migrations existed) and the
community's tables (accounts, sessions, claims, ratings, lobby games).

Revision ID: 0001
Revises:
Create Date: 2026-12-01
"""

import sqlalchemy as sa
from alembic import op

revision = "0001"
down_revision = None
branch_labels = None
depends_on = None

TZ = sa.DateTime(timezone=True)


def upgrade() -> None:
    have = set(sa.inspect(op.get_bind()).get_table_names())
    if "games" not in have:  # a database made before migrations has it already
        op.create_table(
            "games",
            sa.Column("id", sa.String(32), primary_key=True),
            sa.Column("created", TZ, nullable=False),
            sa.Column("updated", TZ, nullable=False),
            sa.Column("version", sa.Integer, nullable=False),
            sa.Column("title", sa.String(200), nullable=False),
            sa.Column("mode", sa.String(20), nullable=False),
            sa.Column("seats", sa.Text, nullable=False),
            sa.Column("options", sa.Text, nullable=False),
            sa.Column("finished", sa.Boolean, nullable=False),
            sa.Column("record", sa.Text, nullable=False),
        )
    if "quarantine" not in have:  # storage.QuarantineRow (games set aside)
        op.create_table(
            "quarantine",
            sa.Column("id", sa.String(32), primary_key=True),
            sa.Column("at", TZ, nullable=False),
            sa.Column("reason", sa.String(300), nullable=False),
        )
    op.create_table(
        "users",
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("name", sa.String(20), nullable=False),
        sa.Column("name_key", sa.String(20), nullable=False, unique=True),
        sa.Column("password_hash", sa.String(200), nullable=False),
        sa.Column("created", TZ, nullable=False),
    )
    op.create_table(
        "user_sessions",
        sa.Column("digest", sa.String(64), primary_key=True),
        sa.Column(
            "user_id", sa.Integer, sa.ForeignKey("users.id", ondelete="CASCADE"), nullable=False
        ),
        sa.Column("csrf", sa.String(64), nullable=False),
        sa.Column("created", TZ, nullable=False),
        sa.Column("expires", TZ, nullable=False),
    )
    op.create_index("ix_user_sessions_user_id", "user_sessions", ["user_id"])
    op.create_table(
        "claimed_owners",
        sa.Column("owner_digest", sa.String(64), primary_key=True),
        sa.Column(
            "user_id", sa.Integer, sa.ForeignKey("users.id", ondelete="CASCADE"), nullable=False
        ),
        sa.Column("claimed", TZ, nullable=False),
    )
    op.create_index("ix_claimed_owners_user_id", "claimed_owners", ["user_id"])
    op.create_table(
        "ratings",
        sa.Column(
            "user_id", sa.Integer, sa.ForeignKey("users.id", ondelete="CASCADE"), primary_key=True
        ),
        sa.Column("rules_key", sa.String(40), primary_key=True),
        sa.Column("mu", sa.Float, nullable=False),
        sa.Column("sigma", sa.Float, nullable=False),
        sa.Column("games", sa.Integer, nullable=False),
        sa.Column("updated", TZ, nullable=False),
    )
    op.create_table(
        "community_games",
        sa.Column("game_id", sa.String(32), primary_key=True),
        sa.Column("rules_key", sa.String(40), nullable=False),
        sa.Column("rules_label", sa.String(200), nullable=False),
        sa.Column("rated", sa.Boolean, nullable=False),
        sa.Column("settled", sa.Boolean, nullable=False),
        sa.Column("created", TZ, nullable=False),
        sa.Column("ended", TZ, nullable=True),
    )
    op.create_index("ix_community_games_rules_key", "community_games", ["rules_key"])
    op.create_table(
        "community_seats",
        sa.Column(
            "game_id",
            sa.String(32),
            sa.ForeignKey("community_games.game_id", ondelete="CASCADE"),
            primary_key=True,
        ),
        sa.Column("seat", sa.Integer, primary_key=True),
        sa.Column(
            "user_id", sa.Integer, sa.ForeignKey("users.id", ondelete="CASCADE"), nullable=False
        ),
        sa.Column("token", sa.String(64), nullable=False),
        sa.Column("place", sa.Integer, nullable=True),
        sa.Column("score", sa.Integer, nullable=True),
        sa.Column("mu_before", sa.Float, nullable=True),
        sa.Column("sigma_before", sa.Float, nullable=True),
        sa.Column("mu_after", sa.Float, nullable=True),
        sa.Column("sigma_after", sa.Float, nullable=True),
    )
    op.create_index("ix_community_seats_user_id", "community_seats", ["user_id"])


def downgrade() -> None:
    for table in (
        "community_seats",
        "community_games",
        "ratings",
        "claimed_owners",
        "user_sessions",
        "users",
    ):
        op.drop_table(table)
