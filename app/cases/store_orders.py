"""Our copy of a customer's Shopify orders: what the case file shows and links.

Shopify is the truth about an order; the copy lets a case file show a customer's orders
without a round trip, and records which Stripe payment paid each one (the order's
payment reference), so a refund made in either place counts against the same money.
A Shopify refund's order is read fresh from Shopify
(:func:`app.execution.evaluation.evaluate_draft`); the checks read the copy only for a
refund through a provider that knows nothing of the order's lines (Stripe, the merchant's
endpoint), to bound each line by what the order paid for it and by our own refunds of that
line (``evaluation._order_for``). The sequence of a refresh:

1. a case is opened for a customer with a Shopify identity, or Shopify reports an order
   of theirs changed (``orders/updated``, ``refunds/create``): the refresh is queued
   after the commit, once per customer while it waits
   (:func:`app.execution.queueing.enqueue_order_refresh`);
2. the job reads the customer's newest orders through the shop's Shopify adapter;
3. each is written into our copy by its gid (an order we knew by name only is linked),
   and the refresh is audited with counts only: no names, no amounts of the person.
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping, Sequence
from datetime import datetime

from sqlalchemy import or_, select
from sqlalchemy.orm import Session

from app import audit
from app.actors import Actor
from app.cases.models import Case, Customer, Order
from integrations.provider import OrderFacts

# How many of a customer's newest orders a case file shows.
ORDERS_SHOWN = 10


def refresh_store_orders(
    session: Session,
    *,
    customer: Customer,
    orders: Sequence[OrderFacts],
    actor: Actor,
    now: datetime,
) -> tuple[int, int]:
    """Write ``orders`` (as Shopify reported them just now) into our copy; returns how
    many were added and how many updated."""
    by_gid = {order.id: order for order in orders}
    names = [order.name for order in orders]
    known = {
        (row.shopify_order_id or row.name): row
        for row in session.scalars(
            select(Order).where(
                Order.shop_id == customer.shop_id,
                or_(Order.shopify_order_id.in_(by_gid), Order.name.in_(names)),
            )
        )
    }
    added = updated = 0
    for gid, facts in by_gid.items():
        row = known.get(gid) or known.get(facts.name)
        if row is None:
            row = Order(shop_id=customer.shop_id, customer_id=customer.id, created_at=now)
            session.add(row)
            added += 1
        else:
            updated += 1
        _copy(row, facts)
    session.flush()
    audit.record(
        session,
        shop_id=customer.shop_id,
        kind="customer.orders_refreshed",
        actor=actor,
        data={"customer_id": str(customer.id), "added": added, "updated": updated},
        now=now,
    )
    return added, updated


def _copy(row: Order, facts: OrderFacts) -> None:
    row.shopify_order_id = facts.id
    row.name = facts.name
    row.currency = facts.currency
    row.total = facts.total if facts.total is not None else sum(line.paid for line in facts.lines)
    # Paid through Stripe: the Stripe payment; otherwise Shopify took the money itself.
    row.payment_provider = "stripe" if facts.payment_id else "shopify"
    row.payment_id = facts.payment_id or facts.id
    row.lines = [
        {"id": line.id, "title": line.title, "quantity": line.quantity, "paid": line.paid}
        for line in facts.lines
    ]
    row.fulfilled_at = facts.fulfilled_at
    row.delivered_at = facts.delivered_at
    row.shipments = [
        {
            "status": shipment.status,
            "carrier": shipment.carrier,
            "tracking_number": shipment.tracking_number,
            "tracking_url": shipment.tracking_url,
            "estimated_delivery": _iso(shipment.estimated_delivery),
            "delivered_at": _iso(shipment.delivered_at),
            "shipped_at": _iso(shipment.shipped_at),
        }
        for shipment in facts.shipments
    ]
    if facts.created_at is not None:
        row.created_at = facts.created_at


def _iso(moment: datetime | None) -> str | None:
    return moment.isoformat() if moment is not None else None


def customers_of_order_change(
    session: Session, shop_id: uuid.UUID, topic: str, payload: object
) -> list[uuid.UUID]:
    """Our customers whose Shopify order a webhook says changed: ``orders/updated`` names
    the order's customer; ``refunds/create`` only the order, known to us by its gid."""
    if not isinstance(payload, Mapping):
        return []
    if topic == "orders/updated":
        customer = payload.get("customer")
        gid = customer.get("admin_graphql_api_id") if isinstance(customer, Mapping) else None
        if not isinstance(gid, str):
            return []
        condition = Customer.shopify_customer_id == gid
    elif topic == "refunds/create":
        order_id = payload.get("order_id")
        if isinstance(order_id, bool) or not isinstance(order_id, int):
            return []
        condition = Customer.id.in_(
            select(Order.customer_id).where(
                Order.shop_id == shop_id,
                Order.shopify_order_id == f"gid://shopify/Order/{order_id}",
            )
        )
    else:
        return []
    return list(
        session.scalars(
            select(Customer.id).where(
                Customer.shop_id == shop_id,
                Customer.shopify_customer_id.is_not(None),
                condition,
            )
        )
    )


def shopify_customer_of(session: Session, case: Case) -> uuid.UUID | None:
    """The case's customer, when Shopify knows them: their orders are worth refreshing."""
    if case.customer_id is None:
        return None
    customer = session.get(Customer, case.customer_id)
    return customer.id if customer is not None and customer.shopify_customer_id else None
