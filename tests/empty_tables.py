"""Empty every table of a test's PostgreSQL database after it, for the next test."""

from __future__ import annotations

from sqlalchemy import Engine, text

from app import models  # noqa: F401  (every table on Base.metadata)
from app.db import Base


def empty_tables(engine: Engine) -> None:
    """Delete every row of every table; nothing on SQLite, where each test or module has
    its own copy of the migrated file."""
    if engine.dialect.name != "postgresql":
        return
    deletes = "; ".join(f"DELETE FROM {table.name}" for table in Base.metadata.sorted_tables)
    with engine.begin() as connection:
        # DELETE, not TRUNCATE: a test leaves a few rows, and TRUNCATE costs about 20 ms a
        # table whatever it holds. As a replica the session fires no triggers, so the
        # append-only audit table empties too and no foreign key orders the deletes (it
        # takes a superuser, as creating and dropping the test databases does).
        connection.execute(text("SET LOCAL session_replication_role = replica"))
        connection.execute(text(deletes))
