"""Rematch offers (server/lobby/rematch.py): one row per finished lobby game whose
players were offered a rematch: who accepted, who declined, the new game.

Revision ID: 0008
Revises: 0005
Create Date: 2026-12-05
"""

import sqlalchemy as sa
from alembic import op

revision = "0008"
down_revision = "0007"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "rematches",
        sa.Column("game_id", sa.String(32), primary_key=True),
        sa.Column("accepted", sa.Text, nullable=False),
        sa.Column("declined", sa.String(20), nullable=True),
        sa.Column("new_game", sa.String(32), nullable=True),
        sa.Column("created", sa.Float, nullable=False),
    )


def downgrade() -> None:
    op.drop_table("rematches")
