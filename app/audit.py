"""The append-only, tamper-evident audit trail.

Every state change that matters calls :func:`record` inside the same transaction
as the change. Each shop's events form a hash chain: an event's hash covers its
content and the previous event's hash, so editing, deleting or reordering any
row breaks every later link, and :func:`verify_chain` names the first break.
The chain head is a row locked for the append, which serialises writers per shop.
"""

from __future__ import annotations

import hashlib
import json
import re
import uuid
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import JSON, ForeignKey, Integer, String, UniqueConstraint, Uuid, select
from sqlalchemy.orm import Mapped, Session, mapped_column

from app.clock import utcnow
from app.db import Base, UTCDateTime, locked_row

GENESIS_HASH = "0" * 64


class AuditEvent(Base):
    __tablename__ = "audit_events"
    __table_args__ = (UniqueConstraint("shop_id", "seq"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    shop_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("shops.id"), index=True)
    seq: Mapped[int] = mapped_column(Integer)
    kind: Mapped[str] = mapped_column(String(64))
    actor: Mapped[str] = mapped_column(String(255))
    case_id: Mapped[uuid.UUID | None] = mapped_column(Uuid, index=True)
    action_id: Mapped[uuid.UUID | None] = mapped_column(Uuid, index=True)
    data: Mapped[dict[str, Any]] = mapped_column(JSON)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime())
    prev_hash: Mapped[str] = mapped_column(String(64))
    hash: Mapped[str] = mapped_column(String(64))


class AuditHead(Base):
    """The last link of a shop's chain; locked while an event is appended."""

    __tablename__ = "audit_heads"

    shop_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("shops.id"), primary_key=True)
    seq: Mapped[int] = mapped_column(Integer)
    hash: Mapped[str] = mapped_column(String(64))


# Card numbers (13-19 digits, optionally grouped) and provider secrets never enter the trail.
_CARD_NUMBER = re.compile(r"\b(?:\d[ -]?){12,18}\d\b")
_SECRET = re.compile(r"\b(sk|rk|whsec|shpat|shpss)_(live_|test_)?[A-Za-z0-9]{8,}")


def redact(value: Any) -> Any:
    """Mask card numbers and secrets anywhere in an event's data."""
    if isinstance(value, str):
        masked = _SECRET.sub(lambda m: f"{m.group(1)}_{m.group(2) or ''}[redacted]", value)
        return _CARD_NUMBER.sub("[card number redacted]", masked)
    if isinstance(value, Mapping):
        return {str(k): redact(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [redact(v) for v in value]
    return value


def record(
    session: Session,
    *,
    shop_id: uuid.UUID,
    kind: str,
    actor: str,
    data: Mapping[str, Any] | None = None,
    case_id: uuid.UUID | None = None,
    action_id: uuid.UUID | None = None,
    now: datetime | None = None,
) -> AuditEvent:
    """Append one event to the shop's chain in the caller's transaction."""
    head = locked_row(session, AuditHead, shop_id=shop_id, seq=0, hash=GENESIS_HASH)
    created_at = now or utcnow()
    event = AuditEvent(
        shop_id=shop_id,
        seq=head.seq + 1,
        kind=kind,
        actor=actor,
        case_id=case_id,
        action_id=action_id,
        data=redact(dict(data or {})),
        created_at=created_at,
        prev_hash=head.hash,
    )
    event.hash = event_hash(event)
    head.seq, head.hash = event.seq, event.hash
    session.add(event)
    session.flush()
    return event


def event_hash(event: AuditEvent) -> str:
    content = {
        "shop_id": str(event.shop_id),
        "seq": event.seq,
        "kind": event.kind,
        "actor": event.actor,
        "case_id": str(event.case_id) if event.case_id else None,
        "action_id": str(event.action_id) if event.action_id else None,
        "data": event.data,
        "created_at": _timestamp(event.created_at),
        "prev_hash": event.prev_hash,
    }
    canonical = json.dumps(content, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(canonical.encode()).hexdigest()


def _timestamp(moment: datetime) -> str:
    # SQLite hands back naive datetimes; the chain must hash the same text either way.
    return moment.replace(tzinfo=None).isoformat(timespec="microseconds")


@dataclass(frozen=True)
class ChainReport:
    events: int
    broken_at: int | None = None
    problem: str | None = None

    @property
    def intact(self) -> bool:
        return self.broken_at is None


def verify_chain(session: Session, shop_id: uuid.UUID) -> ChainReport:
    """Recompute the shop's chain; report the first event whose link does not hold."""
    expected_prev, expected_seq, count = GENESIS_HASH, 1, 0
    events = session.scalars(
        select(AuditEvent).where(AuditEvent.shop_id == shop_id).order_by(AuditEvent.seq)
    )
    for event in events:
        count += 1
        if event.seq != expected_seq:
            return ChainReport(count, expected_seq, f"event {expected_seq} is missing")
        if event.prev_hash != expected_prev:
            return ChainReport(count, event.seq, "does not link to the previous event")
        if event_hash(event) != event.hash:
            return ChainReport(count, event.seq, "content does not match its hash")
        expected_prev, expected_seq = event.hash, event.seq + 1
    head = session.get(AuditHead, shop_id)
    if head is not None and (head.seq, head.hash) != (expected_seq - 1, expected_prev):
        return ChainReport(count, head.seq, "events after this one were removed")
    return ChainReport(count)
