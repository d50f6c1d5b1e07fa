"""Customers, their orders and the cases opened for them."""

from __future__ import annotations

import uuid
from datetime import datetime
from enum import StrEnum
from typing import Any, cast

from sqlalchemy import (
    JSON,
    ForeignKey,
    Index,
    Integer,
    String,
    Text,
    UniqueConstraint,
    Uuid,
    text,
)
from sqlalchemy.orm import Mapped, mapped_column

from app.clock import utcnow
from app.db import Base, UTCDateTime


class Customer(Base):
    __tablename__ = "customers"
    # A customer is found by their Shopify id (every order webhook, every signed-in chat)
    # or by their email, in any case (helpdesk senders, agents' case search).
    __table_args__ = (
        Index("ix_customers_shop_id_shopify_customer_id", "shop_id", "shopify_customer_id"),
        Index("ix_customers_shop_id_lower_email", "shop_id", text("lower(email)")),
    )

    id: Mapped[uuid.UUID] = mapped_column(Uuid, primary_key=True, default=uuid.uuid4)
    shop_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("shops.id"))
    email: Mapped[str | None] = mapped_column(String(320))
    name: Mapped[str | None] = mapped_column(String(255))
    stripe_customer_id: Mapped[str | None] = mapped_column(String(255))
    shopify_customer_id: Mapped[str | None] = mapped_column(String(255))
    # The customer's id at the merchant's own endpoint (the ``merchant`` provider).
    merchant_customer_id: Mapped[str | None] = mapped_column(String(255))
    created_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow)

    def identity_at(self, provider: str) -> str | None:
        """The customer's own id at ``provider``: the only owner money may reach."""
        column = _IDENTITY_COLUMNS.get(provider)
        return None if column is None else cast("str | None", getattr(self, column))

    def link_at(self, provider: str, provider_customer_id: str) -> None:
        """Record the customer's own id at ``provider`` (:mod:`app.cases.customer_link`)."""
        setattr(self, _IDENTITY_COLUMNS[provider], provider_customer_id)


# The column holding a customer's own id at each provider.
_IDENTITY_COLUMNS = {
    "stripe": "stripe_customer_id",
    "shopify": "shopify_customer_id",
    "merchant": "merchant_customer_id",
}


class Order(Base):
    """A store order and the provider payment behind it (for a Shopify order: our copy,
    see :mod:`app.cases.store_orders`).

    ``lines`` is a list of ``{"id", "title", "quantity", "paid"}`` with ``paid`` in
    minor units: what a line-item refund is bounded by. ``shipments`` is a list of
    ``{"status", "carrier", "tracking_number", "tracking_url", "estimated_delivery",
    "delivered_at", "shipped_at"}`` (times as ISO 8601 strings), oldest first: where the
    goods are, for answering the customer only.
    """

    __tablename__ = "orders"
    __table_args__ = (
        UniqueConstraint("shop_id", "name"),
        Index("uq_orders_shop_shopify_order_id", "shop_id", "shopify_order_id", unique=True),
        # Every refund's checks look up the order its payment paid, the worker's under the
        # action's and the money's locks: found by the payment, not among all the shop's.
        Index("ix_orders_shop_payment_id", "shop_id", "payment_id"),
    )

    id: Mapped[uuid.UUID] = mapped_column(Uuid, primary_key=True, default=uuid.uuid4)
    shop_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("shops.id"))
    customer_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("customers.id"), index=True)
    name: Mapped[str] = mapped_column(String(64))
    currency: Mapped[str] = mapped_column(String(3))
    total: Mapped[int] = mapped_column(Integer)
    payment_provider: Mapped[str] = mapped_column(String(32))
    payment_id: Mapped[str | None] = mapped_column(String(255))
    # The order's gid when it is a Shopify order (our copy of it, refreshed from Shopify).
    shopify_order_id: Mapped[str | None] = mapped_column(String(255))
    lines: Mapped[list[dict[str, Any]]] = mapped_column(JSON, default=list)
    fulfilled_at: Mapped[datetime | None] = mapped_column(UTCDateTime())
    delivered_at: Mapped[datetime | None] = mapped_column(UTCDateTime())
    shipments: Mapped[list[dict[str, Any]]] = mapped_column(JSON, default=list)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow)


class CaseStatus(StrEnum):
    """Where a case stands. ``needs_attention`` always has a named owner.

    Changes follow :data:`app.cases.lifecycle.CASE_MOVES`.
    """

    OPEN = "open"
    AWAITING_APPROVAL = "awaiting_approval"
    EXECUTING = "executing"
    RESOLVED = "resolved"
    NEEDS_ATTENTION = "needs_attention"


class Case(Base):
    __tablename__ = "cases"
    # A shop's cases most recently moved first: the queue and the cases API page by it; the
    # API's page of one status by the second, which a rare status would otherwise read
    # through the shop's whole history to fill.
    __table_args__ = (
        Index("ix_cases_shop_id_updated_at", "shop_id", "updated_at"),
        Index("ix_cases_shop_id_status_updated_at", "shop_id", "status", "updated_at"),
    )

    id: Mapped[uuid.UUID] = mapped_column(Uuid, primary_key=True, default=uuid.uuid4)
    shop_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("shops.id"))
    customer_id: Mapped[uuid.UUID | None] = mapped_column(ForeignKey("customers.id"), index=True)
    subject: Mapped[str] = mapped_column(String(255))
    request_text: Mapped[str] = mapped_column(Text, default="")
    identity_level: Mapped[str] = mapped_column(String(16), default="none")
    status: Mapped[str] = mapped_column(String(32), default=CaseStatus.OPEN)
    owner: Mapped[str | None] = mapped_column(String(255))
    # The conversation the case came from (its replies and status updates go there).
    conversation_id: Mapped[uuid.UUID | None] = mapped_column(
        ForeignKey("conversations.id", use_alter=True), index=True
    )
    # Since when a customer message of the case tried to instruct the assistant
    # (app/drafting/steering.py); staff see the case flagged.
    instruction_attempt_at: Mapped[datetime | None] = mapped_column(UTCDateTime())
    created_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow)
    updated_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow, onupdate=utcnow)

    @property
    def reference(self) -> str:
        """The case's number as the shopper sees it in the chat and staff search by it."""
        return case_reference(self.id)


REFERENCE_PREFIX = "C-"
# How many hex digits of the id the number shows.
REFERENCE_DIGITS = 8


def case_reference(case_id: uuid.UUID) -> str:
    return REFERENCE_PREFIX + case_id.hex[:REFERENCE_DIGITS].upper()
