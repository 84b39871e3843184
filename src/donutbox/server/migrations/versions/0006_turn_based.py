"""Turn-based games (docs/online.md, "Turn-based games"): each game's running
turn's wall-clock deadline and the human seat to move, copied out of its
record and options so that the deadline sweep and the "waiting for your
move" list find games without loading them.  Games stored before have
neither until their next move (none of them is turn-based).

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


def downgrade() -> None:
    op.drop_index("ix_games_deadline_at", "games")
    with op.batch_alter_table("games") as batch:
        batch.drop_column("to_move")
        batch.drop_column("deadline_at")
