"""A shop's credentials for one provider, encrypted at rest."""

from __future__ import annotations

import uuid
from datetime import datetime

from sqlalchemy import Boolean, ForeignKey, LargeBinary, String, UniqueConstraint, Uuid, true
from sqlalchemy.orm import Mapped, mapped_column

from app.clock import utcnow
from app.db import Base, UTCDateTime


class Connection(Base):
    __tablename__ = "connections"
    __table_args__ = (UniqueConstraint("shop_id", "provider"),)

    id: Mapped[uuid.UUID] = mapped_column(Uuid, primary_key=True, default=uuid.uuid4)
    shop_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("shops.id"))
    provider: Mapped[str] = mapped_column(String(32))
    account_id: Mapped[str | None] = mapped_column(String(255))
    livemode: Mapped[bool] = mapped_column(Boolean)
    # Only ciphertext is stored; ``key_hint`` is the masked form shown to people.
    encrypted_secret: Mapped[bytes] = mapped_column(LargeBinary)
    key_hint: Mapped[str] = mapped_column(String(64))
    # The secret the provider signs webhooks with for this connection.
    encrypted_webhook_secret: Mapped[bytes | None] = mapped_column(LargeBinary)
    # Where a merchant's own endpoint takes Caseward's requests (the ``merchant`` provider).
    endpoint_url: Mapped[str | None] = mapped_column(String(255))
    # A helpdesk's (``gorgias``): draft a ticket's case into an internal note as each
    # customer message arrives, rather than only when an agent asks.
    prepare_on_arrival: Mapped[bool] = mapped_column(Boolean, default=True, server_default=true())
    created_by: Mapped[str] = mapped_column(String(255))
    created_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow)
