"""Alembic's environment for donutbox: run by ``migrate.upgrade`` with the
server's own connection (no alembic.ini, no logging set-up)."""

from alembic import context

connection = context.config.attributes["connection"]
context.configure(connection=connection, target_metadata=None)
with context.begin_transaction():
    context.run_migrations()
