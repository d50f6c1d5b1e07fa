"""Alembic environment: the URL comes from the caller or from DATABASE_URL."""

from __future__ import annotations

from alembic import context

import app.models  # noqa: F401  (registers every table on the metadata)
from app.db import Base, make_engine
from app.settings import Settings

config = context.config
target_metadata = Base.metadata


def database_url() -> str:
    return config.get_main_option("sqlalchemy.url") or Settings.from_env().database_url


def run_migrations_offline() -> None:
    context.configure(url=database_url(), target_metadata=target_metadata, literal_binds=True)
    with context.begin_transaction():
        context.run_migrations()


def run_migrations_online() -> None:
    engine = make_engine(database_url())
    with engine.connect() as connection:
        sqlite = connection.dialect.name == "sqlite"
        if sqlite:
            # Batch mode copies a table into a new one and drops the old: with foreign keys
            # enforced, rows pointing at it would refuse the drop. SQLite reads this pragma
            # only outside a transaction, so it goes to the driver before any begins; the
            # check below stands in for it afterwards.
            connection.connection.driver_connection.execute("PRAGMA foreign_keys=OFF")
        context.configure(
            connection=connection, target_metadata=target_metadata, render_as_batch=sqlite
        )
        with context.begin_transaction():
            context.run_migrations()
            if sqlite and (broken := connection.exec_driver_sql("PRAGMA foreign_key_check").all()):
                raise RuntimeError(f"the migration left rows pointing nowhere: {broken[:5]}")
    engine.dispose()


if context.is_offline_mode():
    run_migrations_offline()
else:
    run_migrations_online()
