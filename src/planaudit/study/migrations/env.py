"""Alembic's environment for a study database: always run from `Store.migrate`, which
hands over its connection (inside the transaction that holds the database's lock)."""

from alembic import context

from planaudit.study.store import metadata

connection = context.config.attributes["connection"]
context.configure(connection=connection, target_metadata=metadata, render_as_batch=True)
with context.begin_transaction():
    context.run_migrations()
