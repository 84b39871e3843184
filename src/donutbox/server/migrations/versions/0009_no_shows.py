"""No-shows (server/ratings/no_shows.py): each lobby seat of an aborted rated
game whose player never arrived is marked, so that repeated no-shows pause
that player's rated play.  Seats stored before are not no-shows.

Revision ID: 0009
Revises: 0008
Create Date: 2026-12-05
"""

import sqlalchemy as sa
from alembic import op

revision = "0009"
down_revision = "0008"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("community_seats") as batch:
        batch.add_column(
            sa.Column("no_show", sa.Boolean, nullable=False, server_default=sa.false())
        )


def downgrade() -> None:
    with op.batch_alter_table("community_seats") as batch:
        batch.drop_column("no_show")
