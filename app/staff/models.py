"""Staff API tokens, stored the way Stripe and GitHub store API keys: only a hash.

The token itself is shown once, when it is issued. The database keeps its SHA-256
(the token carries 256 random bits, so a plain hash cannot be reversed by guessing),
a short prefix a person can recognise in a list, its expiry, its revocation and its
last use. A token names a shop and a user; what that user may do is read from
``staff_members`` on every request, never from the token.
"""

from __future__ import annotations

import uuid
from datetime import datetime

from sqlalchemy import ForeignKey, String, Uuid
from sqlalchemy.orm import Mapped, mapped_column

from app.clock import utcnow
from app.db import Base, UTCDateTime


class StaffToken(Base):
    __tablename__ = "staff_tokens"

    id: Mapped[uuid.UUID] = mapped_column(Uuid, primary_key=True, default=uuid.uuid4)
    shop_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("shops.id"), index=True)
    user_id: Mapped[str] = mapped_column(String(255))
    token_hash: Mapped[str] = mapped_column(String(64), unique=True)
    # The first characters of the token, enough for a person to tell tokens apart.
    prefix: Mapped[str] = mapped_column(String(16))
    label: Mapped[str | None] = mapped_column(String(255))
    created_by: Mapped[str] = mapped_column(String(255))
    created_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow)
    expires_at: Mapped[datetime] = mapped_column(UTCDateTime())
    revoked_at: Mapped[datetime | None] = mapped_column(UTCDateTime())
    revoked_by: Mapped[str | None] = mapped_column(String(255))
    last_used_at: Mapped[datetime | None] = mapped_column(UTCDateTime())
