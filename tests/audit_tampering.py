"""Tampering with the audit trail the way an intruder with database rights could."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from sqlalchemy import text
from sqlalchemy.orm import Session


@contextmanager
def intruder(session: Session) -> Iterator[None]:
    """Someone with full rights on the database, who can get past the append-only
    triggers: only the hash chain is left to tell."""
    if session.get_bind().dialect.name == "postgresql":
        session.execute(text("SET session_replication_role = replica"))
        yield
        session.commit()
        session.execute(text("SET session_replication_role = DEFAULT"))
        return
    triggers = session.execute(
        text(
            "SELECT name, sql FROM sqlite_master "
            "WHERE type = 'trigger' AND tbl_name = 'audit_events'"
        )
    ).all()
    for name, _ in triggers:
        session.execute(text(f"DROP TRIGGER {name}"))
    yield
    for _, sql in triggers:
        session.execute(text(sql))
    session.commit()
