"""What the owner is told, and where: one alert per cause, and the shop's Slack webhook."""

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
    LargeBinary,
    String,
    Text,
    UniqueConstraint,
    Uuid,
    text,
)
from sqlalchemy.orm import Mapped, mapped_column

from app.clock import utcnow
from app.db import Base, UTCDateTime


class AlertKind(StrEnum):
    """What the owner must hear about."""

    BRAKE_TRIPPED = "brake_tripped"  # sending is paused until a person resumes it
    UNCLEAR_TOO_LONG = "unclear_too_long"  # an outcome is unclear past its attention time
    # A refund the provider had taken, and the customer had been told of, failed after all.
    REFUND_FAILED_AFTER_TOLD = "refund_failed_after_told"


# Written as it stood at revision 0030, for the sweep's index of what is owed.
UNDELIVERED = "delivered_at IS NULL"


class Alert(Base):
    """One thing the owner must hear, kept in the transaction of its cause and delivered
    after it (by a job, and by the sweep for anything a job did not deliver)."""

    __tablename__ = "alerts"
    __table_args__ = (
        # One alert per cause, however often the cause is announced.
        UniqueConstraint("shop_id", "kind", "cause"),
        # The sweep reads only what is still owed, every few seconds.
        Index(
            "ix_alerts_undelivered_next_attempt_at",
            "next_attempt_at",
            postgresql_where=text(UNDELIVERED),
            sqlite_where=text(UNDELIVERED),
        ),
    )

    id: Mapped[uuid.UUID] = mapped_column(Uuid, primary_key=True, default=uuid.uuid4)
    shop_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("shops.id"))
    kind: Mapped[str] = mapped_column(String(32))
    # What makes it one: the action's id, or the moment a brake tripped.
    cause: Mapped[str] = mapped_column(String(64))
    case_id: Mapped[uuid.UUID | None] = mapped_column(ForeignKey("cases.id"))
    action_id: Mapped[uuid.UUID | None] = mapped_column(ForeignKey("actions.id"))
    amount: Mapped[int | None] = mapped_column(Integer)
    currency: Mapped[str | None] = mapped_column(String(3))
    # Why, as Caseward said it (app.words.Sentence.to_dict): a brake's reason. Never a
    # customer's words or name.
    facts: Mapped[dict[str, Any] | None] = mapped_column(JSON)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow)
    # Each channel owed, and when it was delivered.
    email_owed: Mapped[bool] = mapped_column(Boolean)
    emailed_at: Mapped[datetime | None] = mapped_column(UTCDateTime())
    slack_owed: Mapped[bool] = mapped_column(Boolean)
    posted_at: Mapped[datetime | None] = mapped_column(UTCDateTime())
    # Deliveries begun, and when the next may begin (backing off after each).
    attempts: Mapped[int] = mapped_column(Integer, default=0)
    next_attempt_at: Mapped[datetime] = mapped_column(UTCDateTime())
    last_error: Mapped[str | None] = mapped_column(Text)
    # Every owed channel delivered.
    delivered_at: Mapped[datetime | None] = mapped_column(UTCDateTime())


class AlertSettings(Base):
    """Where a shop's alerts go besides its owners' email: a Slack incoming webhook, its
    address encrypted at rest (a hint shown), signed with a secret of the shop's."""

    __tablename__ = "alert_settings"

    shop_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("shops.id"), primary_key=True)
    encrypted_slack_url: Mapped[bytes | None] = mapped_column(LargeBinary)
    slack_url_hint: Mapped[str | None] = mapped_column(String(64))
    encrypted_signing_secret: Mapped[bytes | None] = mapped_column(LargeBinary)
    # The kinds posted to Slack (email always tells every kind).
    slack_kinds: Mapped[list[str]] = mapped_column(JSON, default=list)
    changed_by: Mapped[str] = mapped_column(String(255))
    changed_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow)
