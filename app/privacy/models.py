"""Exports of what Caseward holds about one customer, kept encrypted for the shop owner;
and the privacy requests (stored Shopify webhooks) still to be answered."""

from __future__ import annotations

import uuid
from datetime import datetime

from sqlalchemy import JSON, ForeignKey, Index, LargeBinary, String, Uuid, text
from sqlalchemy.orm import Mapped, mapped_column

from app.db import Base, UTCDateTime
from app.execution.models import ProviderEvent

# Shopify's mandatory privacy topics, answered from the stored (verified) webhook.
PRIVACY_TOPICS = ("customers/data_request", "customers/redact", "shop/redact")

# A stored privacy request its job has not answered yet (the job replaces the payload by
# ``{"answered": ...}``). Written out, not built from parameters: the sweep's read carries
# this very text, so PostgreSQL can use the index below in any plan, generic ones too.
UNANSWERED_PRIVACY_REQUEST = (
    "provider = 'shopify' AND type IN ("
    + ", ".join(f"'{topic}'" for topic in PRIVACY_TOPICS)
    + ") AND (payload ->> 'answered') IS NULL"
)

# The sweep asks every few seconds which requests are still unanswered: only those are
# indexed, so it never reads every webhook every shop was sent.
Index(
    "ix_provider_events_unanswered_privacy",
    ProviderEvent.received_at,
    postgresql_where=text(UNANSWERED_PRIVACY_REQUEST),
    sqlite_where=text(UNANSWERED_PRIVACY_REQUEST),
)


class DataExport(Base):
    __tablename__ = "data_exports"

    id: Mapped[uuid.UUID] = mapped_column(Uuid, primary_key=True, default=uuid.uuid4)
    shop_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("shops.id"), index=True)
    # The provider's name for the request (Shopify's data_request id), to answer it by.
    request_ref: Mapped[str] = mapped_column(String(255))
    # Whose data it holds (our customer ids), so erasing a customer deletes it too.
    customer_ids: Mapped[list[str]] = mapped_column(JSON, default=list)
    # The export's JSON, encrypted like provider keys: it is personal data.
    encrypted_content: Mapped[bytes] = mapped_column(LargeBinary)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime())
