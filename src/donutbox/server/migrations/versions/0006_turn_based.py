"""Turn-based games (docs/online.md, "Turn-based games"): each game's running
turn's wall-clock deadline and the human seat to move, copied out of its
record and options so that the deadline sweep and the "waiting for your
move" list find games without loading them.  Games stored before have
neither until their next move (none of them is turn-based).

Email (docs/community.md, "Email"; server/mail/rows.py): each account's
address and reminders, the outbox, and the key that signs the links.

Revision ID: 0006
Revises: 0005
Create Date: 2026-12-05
"""

import sqlalchemy as sa
from alembic import op

revision = "0006"
down_revision = "0005"
branch_labels = None
depends_on = None


def upgrade() -> None:
    # storage.make_engine creates a missing games table from the model, new
    # columns included: add only what is not there.
    have = {c["name"] for c in sa.inspect(op.get_bind()).get_columns("games")}
    with op.batch_alter_table("games") as batch:
        if "deadline_at" not in have:
            batch.add_column(sa.Column("deadline_at", sa.Float, nullable=True))
        if "to_move" not in have:
            batch.add_column(sa.Column("to_move", sa.Integer, nullable=True))
    indexes = {i["name"] for i in sa.inspect(op.get_bind()).get_indexes("games")}
    if "ix_games_deadline_at" not in indexes:
        op.create_index("ix_games_deadline_at", "games", ["deadline_at"])
    op.create_table(
        "email_addresses",
        sa.Column(
            "user_id", sa.Integer, sa.ForeignKey("users.id", ondelete="CASCADE"), primary_key=True
        ),
        sa.Column("address", sa.String(254), nullable=False),
        sa.Column("confirmed", sa.Boolean, nullable=False),
        sa.Column("turn", sa.Boolean, nullable=False),
        sa.Column("invite", sa.Boolean, nullable=False),
        sa.Column("over", sa.Boolean, nullable=False),
        sa.Column("created", sa.Float, nullable=False),
    )
    op.create_table(
        "email_outbox",
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column(
            "user_id", sa.Integer, sa.ForeignKey("users.id", ondelete="CASCADE"), nullable=False
        ),
        sa.Column("address", sa.String(254), nullable=False),
        sa.Column("kind", sa.String(10), nullable=False),
        sa.Column("dedupe", sa.String(120), nullable=True, unique=True),
        sa.Column("subject", sa.String(200), nullable=False),
        sa.Column("body_text", sa.Text, nullable=False),
        sa.Column("body_html", sa.Text, nullable=False),
        sa.Column("unsubscribe", sa.String(600), nullable=False),
        sa.Column("created", sa.Float, nullable=False),
        sa.Column("state", sa.String(10), nullable=False),
        sa.Column("next_try", sa.Float, nullable=False),
        sa.Column("attempts", sa.Integer, nullable=False),
        sa.Column("claimed_until", sa.Float, nullable=True),
        sa.Column("sent_at", sa.Float, nullable=True),
        sa.Column("error", sa.String(200), nullable=True),
    )
    for column in ("user_id", "address", "created", "state"):
        op.create_index(f"ix_email_outbox_{column}", "email_outbox", [column])
    op.create_table(
        "mail_keys",
        sa.Column("name", sa.String(20), primary_key=True),
        sa.Column("key", sa.String(64), nullable=False),
    )


def downgrade() -> None:
    for table in ("mail_keys", "email_outbox", "email_addresses"):
        op.drop_table(table)
    op.drop_index("ix_games_deadline_at", "games")
    with op.batch_alter_table("games") as batch:
        batch.drop_column("to_move")
        batch.drop_column("deadline_at")
