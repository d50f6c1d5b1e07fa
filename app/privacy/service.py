"""A customer's data, handed over on request and erased on request, money facts kept.

Where a customer's personal data lives in Caseward, and what erasure does to it:

- ``customers``: email and name are set to nothing; the provider ids stay (the books
  need them to match refunds to payments).
- ``cases``: subject and request text are replaced by :data:`ERASED`.
- ``provider_events``: raw webhook payloads that name the customer become
  ``{"erased": true}``.
- ``data_exports``: earlier exports of their data are deleted.
- Orders, proposals, actions and attempts hold no personal data (amounts, currencies,
  provider ids, statuses) and are kept.
- The audit chain holds none either (ids, amounts, codes, statuses; never a customer's
  words or contact details), so it is kept whole and still verifies.

So the books still balance after an erasure (every refund, its amount, approvals and
provider status), the chain still verifies (nothing in it changed), and nothing left
names the person. Each erasure and each export is itself audited, by ids only.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Sequence
from datetime import datetime
from typing import Any

from sqlalchemy import CursorResult, or_, select, update
from sqlalchemy.orm import Session

from app import audit
from app.actors import Actor
from app.cases.models import Case, Customer, Order
from app.crypto import SecretBox
from app.execution.models import Action, ProviderEvent
from app.privacy.models import DataExport
from app.shops.models import Shop

ERASED = "(erased at the customer's request)"


def customers_named(
    session: Session, shop: Shop, *, shopify_ids: Sequence[str], emails: Sequence[str]
) -> list[Customer]:
    """The shop's customers a privacy request names, by Shopify id or email."""
    conditions = []
    if shopify_ids:
        conditions.append(Customer.shopify_customer_id.in_(shopify_ids))
    if emails:
        conditions.append(Customer.email.in_(emails))
    if not conditions:
        return []
    return list(
        session.scalars(select(Customer).where(Customer.shop_id == shop.id, or_(*conditions)))
    )


def erase_customers(
    session: Session,
    shop: Shop,
    customers: Sequence[Customer],
    *,
    request_ref: str,
    actor: Actor,
    now: datetime,
    payloads: bool = True,
) -> int:
    """Erase what identifies each customer (see the list above); returns how many.

    ``payloads=False`` leaves stored webhook payloads to the caller (a shop's erasure
    blanks them all at once rather than searching them for each customer)."""
    erased_events = _erase_payloads(session, shop, customers) if payloads else {}
    for customer in customers:
        erased_cases: CursorResult[Any] = session.execute(  # type: ignore[assignment]
            update(Case)
            .where(Case.customer_id == customer.id)
            .values(subject=ERASED, request_text=ERASED)
        )
        cases = erased_cases.rowcount
        _delete_exports(session, shop, customer)
        customer.email, customer.name = None, None
        audit.record(
            session,
            shop_id=shop.id,
            kind="customer.erased",
            actor=actor,
            data={
                "customer_id": str(customer.id),
                "request": request_ref,
                "cases": cases,
                "provider_events": erased_events.get(customer.id, 0),
            },
            now=now,
        )
    session.flush()
    return len(customers)


def erase_shop(
    session: Session, shop: Shop, *, request_ref: str, actor: Actor, now: datetime
) -> int:
    """Everything that identifies any of the shop's customers, every payload included."""
    customers = list(session.scalars(select(Customer).where(Customer.shop_id == shop.id)))
    erased = erase_customers(
        session, shop, customers, request_ref=request_ref, actor=actor, now=now, payloads=False
    )
    session.execute(
        update(ProviderEvent)
        .where(ProviderEvent.shop_id == shop.id)
        .values(payload={"erased": True})
    )
    return erased


def export_customers(
    session: Session,
    shop: Shop,
    customers: Sequence[Customer],
    *,
    request_ref: str,
    box: SecretBox,
    actor: Actor,
    now: datetime,
) -> DataExport:
    """Everything Caseward holds about the customers, for the shop owner to hand over."""
    content = {
        "shop": shop.domain,
        "request": request_ref,
        "created_at": now.isoformat(),
        "customers": [_customer_record(session, customer) for customer in customers],
    }
    export = DataExport(
        id=uuid.uuid4(),
        shop_id=shop.id,
        request_ref=request_ref,
        customer_ids=[str(customer.id) for customer in customers],
        encrypted_content=box.encrypt(json.dumps(content, ensure_ascii=False)),
        created_at=now,
    )
    session.add(export)
    audit.record(
        session,
        shop_id=shop.id,
        kind="customer.data_exported",
        actor=actor,
        data={
            "export_id": str(export.id),
            "request": request_ref,
            "customer_ids": export.customer_ids,
        },
        now=now,
    )
    session.flush()
    return export


def _customer_record(session: Session, customer: Customer) -> dict[str, Any]:
    cases = session.scalars(select(Case).where(Case.customer_id == customer.id))
    orders = session.scalars(select(Order).where(Order.customer_id == customer.id))
    return {
        "email": customer.email,
        "name": customer.name,
        "stripe_customer_id": customer.stripe_customer_id,
        "shopify_customer_id": customer.shopify_customer_id,
        "orders": [
            {
                "name": o.name,
                "currency": o.currency,
                "total": o.total,
                "created_at": _iso(o.created_at),
            }
            for o in orders
        ],
        "cases": [
            {
                "subject": case.subject,
                "request_text": case.request_text,
                "status": case.status,
                "created_at": _iso(case.created_at),
                "actions": [
                    {
                        "kind": a.kind,
                        "amount": a.amount,
                        "currency": a.currency,
                        "status": a.status,
                        "provider_ref": a.provider_ref,
                    }
                    for a in session.scalars(select(Action).where(Action.case_id == case.id))
                ],
            }
            for case in cases
        ],
    }


def _erase_payloads(
    session: Session, shop: Shop, customers: Sequence[Customer]
) -> dict[uuid.UUID, int]:
    """Blank, in one pass, the shop's stored webhook payloads that name any of the
    customers (by Shopify id under a ``customer`` object, or by email anywhere); returns
    how many named each customer."""
    wanted = [
        (
            customer.id,
            (customer.shopify_customer_id or "").rsplit("/", 1)[-1],
            (customer.email or "").lower(),
        )
        for customer in customers
    ]
    erased: dict[uuid.UUID, int] = {}
    if not wanted:
        return erased
    for event in session.scalars(select(ProviderEvent).where(ProviderEvent.shop_id == shop.id)):
        named = [
            cid for cid, shopify_id, email in wanted if _names(event.payload, shopify_id, email)
        ]
        if named:
            event.payload = {"erased": True}
            for cid in named:
                erased[cid] = erased.get(cid, 0) + 1
    return erased


def _names(value: Any, shopify_id: str, email: str) -> bool:
    if isinstance(value, dict):
        customer = value.get("customer")
        if (
            shopify_id
            and isinstance(customer, dict)
            and str(customer.get("id", "")).rsplit("/", 1)[-1] == shopify_id
        ):
            return True
        return any(_names(item, shopify_id, email) for item in value.values())
    if isinstance(value, list):
        return any(_names(item, shopify_id, email) for item in value)
    return bool(email) and isinstance(value, str) and value.lower() == email


def _delete_exports(session: Session, shop: Shop, customer: Customer) -> None:
    exports = session.scalars(select(DataExport).where(DataExport.shop_id == shop.id))
    for export in exports:
        if str(customer.id) in export.customer_ids:
            session.delete(export)


def _iso(moment: datetime) -> str:
    return moment.isoformat()


# Shopify's mandatory privacy topics, answered from the stored (verified) webhook.
PRIVACY_TOPICS = ("customers/data_request", "customers/redact", "shop/redact")


def answer_shopify_request(
    session: Session,
    shop: Shop,
    topic: str,
    payload: dict[str, Any],
    *,
    box: SecretBox,
    actor: Actor,
    now: datetime,
) -> str:
    """Do what a privacy topic asks; returns what was done, in words for the log."""
    if topic == "shop/redact":
        erased = erase_shop(
            session, shop, request_ref=f"shop/redact:{shop.domain}", actor=actor, now=now
        )
        return f"erased {erased} customers and every stored payload"
    person = _object(payload, "customer")
    shopify_id = str(person.get("id") or "")
    email = str(person.get("email") or "")
    customers = customers_named(
        session,
        shop,
        shopify_ids=[f"gid://shopify/Customer/{shopify_id}", shopify_id] if shopify_id else [],
        emails=[email] if email else [],
    )
    if topic == "customers/redact":
        erased = erase_customers(
            session,
            shop,
            customers,
            request_ref=f"customers/redact:{shopify_id}",
            actor=actor,
            now=now,
        )
        return f"erased {erased} customers"
    request = _object(payload, "data_request")
    export = export_customers(
        session,
        shop,
        customers,
        request_ref=f"customers/data_request:{request.get('id', '')}",
        box=box,
        actor=actor,
        now=now,
    )
    return f"exported {len(export.customer_ids)} customers as {export.id}"


def _object(payload: dict[str, Any], name: str) -> dict[str, Any]:
    value = payload.get(name)
    return value if isinstance(value, dict) else {}
