"""The read-only audit of a shop's past money actions: scans, what they read, what they found.

One :class:`HistoryScan` per shop and provider is current at a time: re-running the audit
starts a new scan, and when it completes the previous one is superseded and its records
and findings deleted in the same transaction, so a report never counts anything twice.

A scan reads each of its reader's streams page by page (``integrations/history.py``). After
every page, in one transaction, the page's records are kept (:class:`HistoryRecord`, once
per scan and provider id) and the stream's next cursor and counts are written to
``streams``; a scan that stopped (a restart, a crash) resumes from the cursors. When every
stream is read, the findings (:class:`HistoryFinding`) are computed from the kept records
and the shop's policy as it stands (the draft policy a read-only shop is trying out).

``streams`` holds, per stream name: ``{"cursor": str | None, "done": bool, "records":
int, "pages": int, "oldest": ISO time | None, "newest": ISO time | None, "order":
"newest_first" | "oldest_first" | None, "seconds": float}``: the oldest (or, for a stream
paged oldest first, the newest) record time seen tells how much of the window the stream
has read, and ``seconds`` how long reading it took so far (what the progress bar and
"time left" use, :func:`app.history_audit.scan.scan_progress`).
"""

from __future__ import annotations

import uuid
from datetime import datetime
from enum import StrEnum
from typing import Any

from sqlalchemy import (
    JSON,
    Boolean,
    ForeignKey,
    Index,
    Integer,
    String,
    Text,
    UniqueConstraint,
    Uuid,
)
from sqlalchemy.orm import Mapped, mapped_column

from app.clock import utcnow
from app.db import Base, UTCDateTime


class ScanStatus(StrEnum):
    QUEUED = "queued"
    RUNNING = "running"
    # Every stream read and the findings computed: this is the shop's report.
    DONE = "done"
    # The provider refused the key or an error a person must look at; ``error`` says what.
    FAILED = "failed"
    # A newer scan of the same shop and provider completed: nothing of this one is kept.
    SUPERSEDED = "superseded"


class HistoryScan(Base):
    __tablename__ = "history_scans"
    __table_args__ = (Index("ix_history_scans_shop_provider", "shop_id", "provider"),)

    id: Mapped[uuid.UUID] = mapped_column(Uuid, primary_key=True, default=uuid.uuid4)
    shop_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("shops.id"))
    provider: Mapped[str] = mapped_column(String(32))
    status: Mapped[str] = mapped_column(String(16), default=ScanStatus.QUEUED)
    window_days: Mapped[int] = mapped_column(Integer)
    # The start of the window: records created before it are not read.
    since: Mapped[datetime] = mapped_column(UTCDateTime())
    streams: Mapped[dict[str, Any]] = mapped_column(JSON, default=dict)
    # Requests the provider received, throttled ones included (not those the reader held
    # back itself, knowing they would be throttled).
    requests: Mapped[int] = mapped_column(Integer, default=0)
    requested_by: Mapped[str] = mapped_column(String(255))
    error: Mapped[str | None] = mapped_column(Text)
    # The same reason as Caseward said it (app.words.Sentence.to_dict), for the admin to
    # show in its reader's language.
    error_sentence: Mapped[dict[str, Any] | None] = mapped_column(JSON)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow)
    started_at: Mapped[datetime | None] = mapped_column(UTCDateTime())
    # The last page kept: a running scan silent for long has lost its worker.
    heartbeat_at: Mapped[datetime | None] = mapped_column(UTCDateTime())
    # The earliest the next request may start (the reader's pace after the last one, or
    # the wait the provider asked for): the next slice or a resumed scan keeps to it.
    not_before: Mapped[datetime | None] = mapped_column(UTCDateTime())
    # Runs in a row that ended before the provider answered a page (each run counts itself
    # at its start; an answer sets it back to 0): past a limit the scan fails.
    stalled_runs: Mapped[int] = mapped_column(Integer, default=0, server_default="0")
    finished_at: Mapped[datetime | None] = mapped_column(UTCDateTime())


class HistoryRecord(Base):
    """One past money action as the provider reported it (``PastMoneyAction``)."""

    __tablename__ = "history_records"
    __table_args__ = (
        UniqueConstraint("scan_id", "record_id"),
        Index("ix_history_records_scan_kind_created", "scan_id", "kind", "created"),
    )

    id: Mapped[uuid.UUID] = mapped_column(Uuid, primary_key=True, default=uuid.uuid4)
    scan_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("history_scans.id"))
    shop_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("shops.id"), index=True)
    provider: Mapped[str] = mapped_column(String(32))
    kind: Mapped[str] = mapped_column(String(32))
    # The provider's own id of the record.
    record_id: Mapped[str] = mapped_column(String(255))
    created: Mapped[datetime] = mapped_column(UTCDateTime())
    customer: Mapped[str | None] = mapped_column(String(255))
    amount: Mapped[int | None] = mapped_column(Integer)
    currency: Mapped[str | None] = mapped_column(String(3))
    percent_off: Mapped[int | None] = mapped_column(Integer)
    payment: Mapped[str | None] = mapped_column(String(255))
    payment_amount: Mapped[int | None] = mapped_column(Integer)
    payment_disputed: Mapped[bool] = mapped_column(Boolean, default=False)
    status: Mapped[str | None] = mapped_column(String(32))
    caseward_action_id: Mapped[str | None] = mapped_column(String(64))
    detail: Mapped[dict[str, str]] = mapped_column(JSON, default=dict)


class HistoryFinding(Base):
    """What a check would have stopped or questioned: the rule, the records, the money."""

    __tablename__ = "history_findings"
    __table_args__ = (
        # A finding is its rule over its records: computed twice, kept once.
        # Also the index of a scan's findings by rule.
        UniqueConstraint("scan_id", "rule", "records_key"),
    )

    id: Mapped[uuid.UUID] = mapped_column(Uuid, primary_key=True, default=uuid.uuid4)
    scan_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("history_scans.id"))
    shop_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("shops.id"), index=True)
    rule: Mapped[str] = mapped_column(String(48))
    # The provider ids of the records the finding names, and the SHA-256 hex of their
    # sorted ids joined by newlines (the key: the same records under one rule, one finding).
    records: Mapped[list[str]] = mapped_column(JSON)
    records_key: Mapped[str] = mapped_column(String(64))
    # When it happened (the newest record's time): the report groups findings by week.
    occurred_at: Mapped[datetime] = mapped_column(UTCDateTime())
    customer: Mapped[str | None] = mapped_column(String(255))
    money_at_risk: Mapped[int] = mapped_column(Integer)
    # None only when nothing is at risk and nothing in the scan names a currency.
    currency: Mapped[str | None] = mapped_column(String(3))
    # Why, as a catalogue sentence (``app.words.Sentence.to_dict``), said in the reader's words.
    reason: Mapped[dict[str, Any]] = mapped_column(JSON)
