"""Exports of what Caseward holds about one customer, kept encrypted for the shop owner."""

from __future__ import annotations

import uuid
from datetime import datetime

from sqlalchemy import JSON, ForeignKey, LargeBinary, String, Uuid
from sqlalchemy.orm import Mapped, mapped_column

from app.db import Base, UTCDateTime


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
