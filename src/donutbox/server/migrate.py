"""The database's schema, brought up to date with Alembic at start-up
(``create_app``): a new database gets every table, one made by an older
donutbox (the ``games`` table only, no ``alembic_version``) upgrades in
place.  New migrations go in ``migrations/versions`` (docs/community.md)."""

from __future__ import annotations

from pathlib import Path

from alembic import command
from alembic.config import Config
from sqlalchemy.engine import Engine

MIGRATIONS = Path(__file__).parent / "migrations"


def upgrade(engine: Engine) -> None:
    cfg = Config()
    cfg.set_main_option("script_location", str(MIGRATIONS))
    with engine.begin() as conn:
        cfg.attributes["connection"] = conn
        command.upgrade(cfg, "head")
