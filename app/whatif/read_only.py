"""A session that cannot write: the what-if reads the shop's past through nothing else.

It runs on a connection of its own, in a transaction the database itself keeps from
writing (PostgreSQL's ``SET TRANSACTION READ ONLY``; SQLite's ``query_only``, set for the
connection while the session lasts). A write tried in it fails at the database, whatever
code tries it; the transaction is rolled back at the end, never committed.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from sqlalchemy import Connection, Engine
from sqlalchemy.orm import Session

# How each database is told to refuse writes, and (where the setting outlives the
# transaction) to accept them again before the connection goes back to the pool.
_READ_ONLY = {
    "postgresql": ("SET TRANSACTION READ ONLY", None),
    "sqlite": ("PRAGMA query_only = ON", "PRAGMA query_only = OFF"),
}


@contextmanager
def read_only(bind: Engine | Connection) -> Iterator[Session]:
    """A session on a new connection of ``bind``'s engine whose transaction refuses every
    write; rolled back when the block ends."""
    refuse, accept = _READ_ONLY[bind.engine.dialect.name]
    with bind.engine.connect() as connection:
        connection.exec_driver_sql(refuse)
        # The session joins the connection's transaction; ending it never commits that.
        session = Session(bind=connection, expire_on_commit=False)
        try:
            yield session
        finally:
            session.close()
            connection.rollback()
            if accept is not None:
                connection.exec_driver_sql(accept)
                connection.commit()
