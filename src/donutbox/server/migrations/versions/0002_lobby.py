"""The lobby in the database (lobby/store.py): open tables, where each player
is, invitations, presence, each process's lobby sockets, and the rows locked
to take turns.  Before, the lobby lived in one process's memory: nothing to
carry over.

Revision ID: 0002
Revises: 0001
Create Date: 2026-12-01
"""

import sqlalchemy as sa
from alembic import op

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "lobby_tables",
        sa.Column("id", sa.String(16), primary_key=True),
        sa.Column("rules", sa.Text, nullable=False),
        sa.Column("rules_key", sa.String(40), nullable=False),
        sa.Column("rules_label", sa.String(200), nullable=False),
        sa.Column("players", sa.Integer, nullable=False),
        sa.Column("clock", sa.Text, nullable=True),
        sa.Column("rated", sa.Boolean, nullable=False),
        sa.Column("takebacks", sa.Boolean, nullable=False),
        sa.Column("host_id", sa.Integer, nullable=False),
        sa.Column("host_name", sa.String(20), nullable=False),
        sa.Column("seated", sa.Integer, nullable=False),
        sa.Column("joins", sa.Integer, nullable=False),
        sa.Column("created", sa.Float, nullable=False),
        sa.Column("starting", sa.Float, nullable=True),
    )
    op.create_index("ix_lobby_tables_created", "lobby_tables", ["created"])
    op.create_table(
        "lobby_places",
        sa.Column(
            "user_id", sa.Integer, sa.ForeignKey("users.id", ondelete="CASCADE"), primary_key=True
        ),
        sa.Column("name", sa.String(20), nullable=False),
        sa.Column("table_id", sa.String(16), nullable=True),
        sa.Column("seq", sa.Integer, nullable=False),
        sa.Column("rules", sa.Text, nullable=True),
        sa.Column("rules_key", sa.String(40), nullable=True),
        sa.Column("rules_label", sa.String(200), nullable=True),
        sa.Column("players", sa.Integer, nullable=True),
        sa.Column("rating", sa.Float, nullable=True),
        sa.Column("since", sa.Float, nullable=False),
    )
    op.create_index("ix_lobby_places_table_id", "lobby_places", ["table_id"])
    op.create_table(
        "lobby_invites",
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("to_id", sa.Integer, nullable=False),
        sa.Column("from_id", sa.Integer, nullable=False),
        sa.Column("from_name", sa.String(20), nullable=False),
        sa.Column("table_id", sa.String(16), nullable=False),
        sa.Column("rules_label", sa.String(200), nullable=False),
    )
    op.create_index("ix_lobby_invites_to_id", "lobby_invites", ["to_id"])
    op.create_table(
        "lobby_presence",
        sa.Column("user_id", sa.Integer, primary_key=True),
        sa.Column("name", sa.String(20), nullable=False),
        sa.Column("seen", sa.Float, nullable=False),
    )
    op.create_index("ix_lobby_presence_seen", "lobby_presence", ["seen"])
    op.create_table(
        "lobby_sockets",
        sa.Column("origin", sa.String(80), primary_key=True),
        sa.Column("user_id", sa.Integer, primary_key=True),
        sa.Column("name", sa.String(20), nullable=False),
        sa.Column("sockets", sa.Integer, nullable=False),
        sa.Column("until", sa.Float, nullable=False),
    )
    op.create_index("ix_lobby_sockets_until", "lobby_sockets", ["until"])
    locks = op.create_table(
        "lobby_locks",
        sa.Column("name", sa.String(20), primary_key=True),
        sa.Column("n", sa.Integer, nullable=False),
    )
    op.bulk_insert(locks, [{"name": "queue", "n": 0}, {"name": "tables", "n": 0}])


def downgrade() -> None:
    for table in (
        "lobby_locks",
        "lobby_sockets",
        "lobby_presence",
        "lobby_invites",
        "lobby_places",
        "lobby_tables",
    ):
        op.drop_table(table)
