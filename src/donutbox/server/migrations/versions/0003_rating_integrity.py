"""Rating integrity (ratings/model.py): each seat's weight (how much a rated
game counted for it) and each rating's count of different opponents in its
counted games.  Games settled before counted fully (weight 1); the
opponents of existing ratings are counted from their games.

Revision ID: 0003
Revises: 0002
Create Date: 2026-12-05
"""

import sqlalchemy as sa
from alembic import op

revision = "0003"
down_revision = "0002"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("community_seats") as batch:
        batch.add_column(sa.Column("weight", sa.Float, nullable=True))
    with op.batch_alter_table("ratings") as batch:
        batch.add_column(sa.Column("opponents", sa.Integer, nullable=False, server_default="0"))
    op.execute("UPDATE community_seats SET weight = 1.0 WHERE mu_after IS NOT NULL")
    op.execute(
        "UPDATE ratings SET opponents = ("
        " SELECT COUNT(DISTINCT other.user_id) FROM community_seats mine"
        " JOIN community_seats other"
        "  ON other.game_id = mine.game_id AND other.user_id <> mine.user_id"
        " JOIN community_games g ON g.game_id = mine.game_id"
        " WHERE mine.user_id = ratings.user_id AND g.rules_key = ratings.rules_key"
        "  AND g.rated AND mine.weight > 0)"
    )


def downgrade() -> None:
    with op.batch_alter_table("ratings") as batch:
        batch.drop_column("opponents")
    with op.batch_alter_table("community_seats") as batch:
        batch.drop_column("weight")
