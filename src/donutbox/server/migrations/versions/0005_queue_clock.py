"""Quick match pools players by time control: the clock a queued player
asked for (JSON, like ``lobby_tables.clock``).  Rows queued before have
none and are matched with the default clock's pool.

Revision ID: 0005
Revises: 0004
Create Date: 2026-12-05
"""

import sqlalchemy as sa
from alembic import op

revision = "0005"
down_revision = "0004"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("lobby_places") as batch:
        batch.add_column(sa.Column("clock", sa.Text, nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("lobby_places") as batch:
        batch.drop_column("clock")
