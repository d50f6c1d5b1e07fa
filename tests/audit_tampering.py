"""Tampering with the audit trail the way an intruder with database rights could."""

from __future__ import annotations

import hashlib
import uuid
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from typing import Any

from sqlalchemy import delete, select, text, update
from sqlalchemy.orm import Session

from app.audit import GENESIS_HASH, AuditEvent, AuditHead, canonical, sealed_content


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


def reseal_without_key(
    session: Session,
    shop_id: uuid.UUID,
    *,
    edit: Mapping[int, Mapping[str, Any]],
    drop_key_ids_from: int | None = None,
) -> None:
    """Edit events and recompute every link from the first changed one with plain
    SHA-256 (the published formula: all an intruder without the audit key can
    compute), moving the head to match.
    ``drop_key_ids_from`` also blanks key ids from that event on, posing as old events."""
    events = session.scalars(
        select(AuditEvent).where(AuditEvent.shop_id == shop_id).order_by(AuditEvent.seq)
    ).all()
    first_changed = min([*edit, drop_key_ids_from or len(events) + 1])
    previous = GENESIS_HASH
    with intruder(session):
        for event in events:
            if event.seq < first_changed:
                previous = event.hash
                continue
            values: dict[str, Any] = {**edit.get(event.seq, {}), "prev_hash": previous}
            if drop_key_ids_from is not None and event.seq >= drop_key_ids_from:
                values["key_id"] = None
            forged = AuditEvent(**{**_columns(event), **values})
            values["hash"] = hashlib.sha256(_plain_content(forged)).hexdigest()
            session.execute(update(AuditEvent).where(AuditEvent.id == event.id).values(**values))
            previous = values["hash"]
        session.execute(update(AuditHead).where(AuditHead.shop_id == shop_id).values(hash=previous))


def cut_tail(session: Session, shop_id: uuid.UUID, *, keep: int) -> None:
    """Delete every event after ``keep`` and rewind the head row onto event ``keep``:
    what is left is a whole, valid chain."""
    kept_hash = session.scalar(
        select(AuditEvent.hash).where(AuditEvent.shop_id == shop_id, AuditEvent.seq == keep)
    )
    with intruder(session):
        session.execute(
            delete(AuditEvent).where(AuditEvent.shop_id == shop_id, AuditEvent.seq > keep)
        )
        session.execute(
            update(AuditHead).where(AuditHead.shop_id == shop_id).values(seq=keep, hash=kept_hash)
        )


def _columns(event: AuditEvent) -> dict[str, Any]:
    return {column.key: getattr(event, column.key) for column in AuditEvent.__table__.columns}


def _plain_content(event: AuditEvent) -> bytes:
    return canonical(sealed_content(event))
