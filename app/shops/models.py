"""The tenant and who may act for it: shops, staff roles, versioned policies."""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Any

from sqlalchemy import JSON, Boolean, ForeignKey, Integer, String, UniqueConstraint, Uuid
from sqlalchemy.orm import Mapped, mapped_column

from app.clock import utcnow
from app.db import Base, UTCDateTime


class Shop(Base):
    """One installed store.

    ``writes_enabled`` is protection mode: a new shop is read-only, and no write
    reaches a provider until a signed-in person turns writes on. ``kill_switch``
    stops every queued execution of the shop at once.
    """

    __tablename__ = "shops"

    id: Mapped[uuid.UUID] = mapped_column(Uuid, primary_key=True, default=uuid.uuid4)
    # The permanent myshopify.com domain: Shopify's stable identifier for a store.
    domain: Mapped[str] = mapped_column(String(255), unique=True)
    name: Mapped[str] = mapped_column(String(255))
    # The currency the store sells in (lower-case ISO 4217), as Shopify reports it when
    # the app is installed or its token refreshed; None until Shopify has said.
    currency: Mapped[str | None] = mapped_column(String(3))
    created_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow)
    writes_enabled: Mapped[bool] = mapped_column(Boolean, default=False)
    writes_enabled_by: Mapped[str | None] = mapped_column(String(255))
    writes_enabled_at: Mapped[datetime | None] = mapped_column(UTCDateTime())
    kill_switch: Mapped[bool] = mapped_column(Boolean, default=False)
    # Set when the merchant uninstalls the app: nothing more is sent for the shop, and
    # its evidence stays.
    uninstalled_at: Mapped[datetime | None] = mapped_column(UTCDateTime())


class StaffRole:
    """What a staff member may do. Anything else is denied."""

    VIEWER = "viewer"  # reads cases
    PROPOSER = "proposer"  # reads, proposes actions
    APPROVER = "approver"  # proposes, approves up to ``approval_limits``
    OWNER = "owner"  # approves up to ``approval_limits``, changes settings

    CAN_PROPOSE = (PROPOSER, APPROVER, OWNER)
    CAN_APPROVE = (APPROVER, OWNER)
    OWNER_ONLY = (OWNER,)


class StaffMember(Base):
    __tablename__ = "staff_members"
    __table_args__ = (UniqueConstraint("shop_id", "user_id"),)

    id: Mapped[uuid.UUID] = mapped_column(Uuid, primary_key=True, default=uuid.uuid4)
    shop_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("shops.id"))
    # The identity the staff token carries (Shopify's user id, ``sub``).
    user_id: Mapped[str] = mapped_column(String(255))
    email: Mapped[str | None] = mapped_column(String(320))
    # As people know them: Shopify's first and last name, or a name given in Caseward.
    name: Mapped[str | None] = mapped_column(String(255))
    role: Mapped[str] = mapped_column(String(32))
    # Currency -> highest amount (minor units) this person may approve; absent means none.
    approval_limits: Mapped[dict[str, int]] = mapped_column(JSON, default=dict)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow)


class ShopPolicy(Base):
    """An immutable version of a shop's policy; a change writes a new version."""

    __tablename__ = "shop_policies"
    __table_args__ = (UniqueConstraint("shop_id", "version"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    shop_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("shops.id"))
    version: Mapped[int] = mapped_column(Integer)
    rules: Mapped[dict[str, Any]] = mapped_column(JSON)
    created_by: Mapped[str] = mapped_column(String(255))
    created_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow)
