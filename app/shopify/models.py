"""The app's install in one shop: the offline access token, encrypted at rest.

One row per installed shop. Uninstalling deletes the row (the tokens are worthless
then, and keeping them would only be a liability); the shop and its evidence stay.
"""

from __future__ import annotations

import uuid
from datetime import datetime

from sqlalchemy import ForeignKey, LargeBinary, String
from sqlalchemy.orm import Mapped, mapped_column

from app.db import Base, UTCDateTime


class ShopifyInstall(Base):
    __tablename__ = "shopify_installs"

    shop_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("shops.id"), primary_key=True)
    encrypted_access_token: Mapped[bytes] = mapped_column(LargeBinary)
    scopes: Mapped[str] = mapped_column(String(1024))
    # Expiring offline tokens (apps created since April 2026) last an hour and come with a
    # refresh token; both are None for a non-expiring token.
    access_token_expires_at: Mapped[datetime | None] = mapped_column(UTCDateTime())
    encrypted_refresh_token: Mapped[bytes | None] = mapped_column(LargeBinary)
    refresh_token_expires_at: Mapped[datetime | None] = mapped_column(UTCDateTime())
    installed_at: Mapped[datetime] = mapped_column(UTCDateTime())
    refreshed_at: Mapped[datetime | None] = mapped_column(UTCDateTime())
