"""The database's schema, brought up to date with Alembic at start-up
(``create_app``): a new database gets every table, one made by an older
donutbox (the ``games`` table only, no ``alembic_version``) upgrades in
place.  New migrations go in ``migrations/versions`` (docs/community.md)."""

from __future__ import annotations

import logging
from pathlib import Path

from alembic import command
from alembic.config import Config
from sqlalchemy import text
from sqlalchemy.engine import Engine
from sqlalchemy.exc import SQLAlchemyError

from .storage import _brief

log = logging.getLogger("donutbox.storage")

MIGRATIONS = Path(__file__).parent / "migrations"
#: Seconds a migration waits for a table lock at most (PostgreSQL).
MIGRATION_LOCK_WAIT = 30


def upgrade(engine: Engine) -> bool:
    """Bring the schema to the newest revision; False (and one log line) if
    the database cannot be read or written: the server still starts, as
    storage.py's faults policy has it (the games it can read are served;
    the community's routes answer with an error)."""
    cfg = Config()
    cfg.set_main_option("script_location", str(MIGRATIONS))
    try:
        with engine.begin() as conn:
            if engine.dialect.name == "postgresql":
                # A table another session keeps locked (a transaction left
                # open) fails the migration in one log line, not a hang.
                conn.execute(text(f"SET LOCAL lock_timeout = '{MIGRATION_LOCK_WAIT}s'"))
            cfg.attributes["connection"] = conn
            command.upgrade(cfg, "head")
    except SQLAlchemyError as err:
        log.error("storage: could not migrate the database (%s)", _brief(err))
        return False
    return True
