"""Reads for the Shopify adapter: an order or a customer, as the provider contract's facts.

Every read is one of :mod:`integrations.shopify.documents`' queries, turned into the
contract's dataclasses with integer minor units and lower-case currencies. The sequence
for an order:

1. read it with ``ORDER_FOR_REFUND``; no order is ``exists=False``;
2. refuse it (:class:`IncompleteOrder`) when a list may have been cut at its page size
   or when it was paid in a presentment currency other than the shop's: a refund must
   never be bounded by a partial picture, nor by amounts in the wrong currency;
3. count what was received (successful sales and captures), and each refund with the
   status its refund transactions carry and our action id recovered from its ``note``;
4. list where the goods are (:func:`shipments_of`): one shipment per tracking number of
   each fulfillment that went out, read only, to answer the customer; an order too large
   to bound a refund still says where it is.

Our marker on a write is the text ``caseward_action_id=<id>`` at the end of the field
Shopify keeps as we wrote it: a refund's ``note``, a discount's ``title``. Store credit
transactions keep no text at all, so a credit's action id cannot be recovered (see
:mod:`integrations.shopify._adapter_writes` for how a credit is found all the same).
"""

from __future__ import annotations

import re

from integrations.provider import (
    ACTION_ID_METADATA_KEY,
    CustomerFacts,
    InvalidRequest,
    OrderFacts,
    OrderLine,
    PaymentFacts,
    ProviderCredit,
    ProviderError,
    ProviderRefund,
    ProviderStatus,
    Shipment,
)
from integrations.shopify.documents import (
    CUSTOMER_STORE_CREDIT,
    CUSTOMER_WITH_ORDERS,
    ORDER_FOR_REFUND,
    Fulfillment,
    OrderForRefund,
    Refund,
    Transaction,
    read_customer_store_credit,
    read_customer_with_orders,
    read_order_for_refund,
)
from integrations.shopify.graphql import AdminClient

ORDER_GID = re.compile(r"^gid://shopify/Order/[1-9][0-9]*$")
CUSTOMER_GID = re.compile(r"^gid://shopify/Customer/[1-9][0-9]*$")
# Money received from the customer; an AUTHORIZATION alone has moved nothing.
PAYMENT_KINDS = frozenset({"SALE", "CAPTURE"})
SETTLED = "SUCCESS"
FAILED_STATUSES = frozenset({"FAILURE", "ERROR"})
# Gateway names under which an order was paid through Stripe itself, so its
# ``paymentId`` is a Stripe payment intent or charge id.
STRIPE_GATEWAYS = frozenset({"stripe"})
STRIPE_PAYMENT_PREFIXES = ("pi_", "ch_")
# As many credit transactions per account as CUSTOMER_STORE_CREDIT may ask for.
CREDIT_TRANSACTIONS = 50

_ACTION_ID = re.compile(r"^[A-Za-z0-9_-]{1,100}$")
_MARKER = re.compile(rf"(?:^|\s){ACTION_ID_METADATA_KEY}=([A-Za-z0-9_-]{{1,100}})\s*$")


class IncompleteOrder(ProviderError):
    """The order cannot be read whole in one query (or not in the shop's currency), so
    nothing about it is reported: a refund must not be bounded by part of the picture."""


# ---------------------------------------------------------------- markers


def marker(action_id: str) -> str:
    """The text that names our action on a Shopify object: ``caseward_action_id=<id>``."""
    if not _ACTION_ID.fullmatch(action_id):
        raise InvalidRequest(f"an action id is letters, digits, '-' and '_', not {action_id!r}")
    return f"{ACTION_ID_METADATA_KEY}={action_id}"


def action_id_in(text: str | None) -> str | None:
    """Our action id when ``text`` ends with our marker; the last one wins, so a marker
    quoted earlier in free text (a reason) cannot pose as ours."""
    if not text:
        return None
    found = _MARKER.search(text)
    return found.group(1) if found else None


def metadata_for(text: str | None) -> dict[str, str]:
    action_id = action_id_in(text)
    return {} if action_id is None else {ACTION_ID_METADATA_KEY: action_id}


# ---------------------------------------------------------------- targets


def order_target(target: str) -> str:
    if not ORDER_GID.fullmatch(target):
        raise InvalidRequest(f"a Shopify refund target is an order gid, not {target!r}")
    return target


def customer_target(target: str) -> str:
    if not CUSTOMER_GID.fullmatch(target):
        raise InvalidRequest(
            f"a Shopify credit or discount target is a customer gid, not {target!r}"
        )
    return target


# ---------------------------------------------------------------- orders


def read_order(client: AdminClient, target: str) -> OrderForRefund | None:
    """The order as one read, or None when Shopify has no such order."""
    answer = client.execute(
        ORDER_FOR_REFUND, {"id": order_target(target)}, operation_name="OrderForRefund"
    )
    return read_order_for_refund(answer.data)


def require_whole(order: OrderForRefund) -> OrderForRefund:
    """The order, if it can bound a refund; else :class:`IncompleteOrder`."""
    if not order.complete:
        raise IncompleteOrder(
            f"Shopify order {order.name} ({order.id}) has more lines, transactions, refunds "
            "or fulfillments than one read covers; Caseward will not bound a refund with an "
            "incomplete read, so a person handles this order in Shopify"
        )
    if order.presentment_currency != order.currency:
        raise IncompleteOrder(
            f"Shopify order {order.name} ({order.id}) was paid in "
            f"{order.presentment_currency.upper()}, not the shop's {order.currency.upper()}; "
            "Caseward reads shop-currency amounts only, so a person handles this order"
        )
    return order


def payments(order: OrderForRefund) -> list[Transaction]:
    """The transactions that took the customer's money: settled sales and captures."""
    return [t for t in order.transactions if t.kind in PAYMENT_KINDS and t.status == SETTLED]


def refunded_from(order: OrderForRefund, payment: Transaction) -> int:
    """Refunds made or under way against one payment (failed ones gave nothing back)."""
    return sum(
        t.amount.amount
        for t in order.transactions
        if t.kind == "REFUND" and t.parent_id == payment.id and t.status not in FAILED_STATUSES
    )


def refund_status(refund: Refund) -> tuple[ProviderStatus, int, str | None]:
    """A refund's status, the money it takes back, and why it failed.

    The status is its refund transactions': any still moving makes it pending; failed
    ones count for nothing while another went through; all failed is a failed refund.
    A refund without a transaction moved no money through a gateway (lines or shipping
    recorded only): it is done, for its total.
    """
    money = [t for t in refund.transactions if t.kind == "REFUND"]
    if not money:
        return ProviderStatus.SUCCEEDED, refund.total_refunded.amount, None
    live = [t for t in money if t.status not in FAILED_STATUSES]
    if not live:
        reasons = "; ".join(f"transaction {t.id} {t.status}" for t in money)
        return (
            ProviderStatus.FAILED,
            sum(t.amount.amount for t in money),
            (f"Shopify reported the refund as failed ({reasons})"),
        )
    status = (
        ProviderStatus.SUCCEEDED
        if all(t.status == SETTLED for t in live)
        else ProviderStatus.PENDING
    )
    return status, sum(t.amount.amount for t in live), None


def provider_refund(order: OrderForRefund, refund: Refund) -> ProviderRefund:
    status, amount, failure = refund_status(refund)
    pending = "processing" if status is ProviderStatus.PENDING else None
    return ProviderRefund(
        id=refund.id,
        amount=amount,
        currency=order.currency,
        status=status,
        created=refund.created_at or order.created_at,
        metadata=metadata_for(refund.note),
        failure_reason=failure,
        pending_reason=pending,
    )


def payment_facts(order: OrderForRefund) -> PaymentFacts:
    """The order as a payment: what it cost, what was received, what went back."""
    require_whole(order)
    received = sum(t.amount.amount for t in payments(order))
    return PaymentFacts(
        id=order.id,
        exists=True,
        currency=order.currency,
        amount=order.total.amount,
        captured=received,
        paid=received > 0,
        disputed=order.disputed,
        customer_id=order.customer_id,
        created=order.created_at,
        refunds=tuple(provider_refund(order, refund) for refund in order.refunds),
        order=order_facts(order),
    )


def order_facts(order: OrderForRefund) -> OrderFacts:
    """Lines with what each was paid and what came back, and the shipping dates."""
    require_whole(order)
    refunded: dict[str, int] = {}
    for refund in order.refunds:
        for line in refund.lines:
            refunded[line.line_item_id] = refunded.get(line.line_item_id, 0) + line.subtotal.amount
    shipped = [f for f in order.fulfillments if f.status == SETTLED]
    delivered = [f.delivered_at for f in shipped if f.delivered_at is not None]
    return OrderFacts(
        id=order.id,
        name=order.name,
        currency=order.currency,
        payment_id=stripe_payment_id(order),
        lines=tuple(
            OrderLine(
                id=line.id,
                title=line.title,
                quantity=line.quantity,
                paid=line.quantity * line.unit_price_paid.amount,
                refunded=refunded.get(line.id, 0),
            )
            for line in order.lines
        ),
        # The refund window opens when the first goods left and when the last arrived.
        fulfilled_at=min((f.created_at for f in shipped), default=None),
        delivered_at=max(delivered, default=None),
        total=order.total.amount,
        created_at=order.created_at,
        customer_id=order.customer_id,
        shipments=shipments_of(order),
    )


def shipments_of(order: OrderForRefund) -> tuple[Shipment, ...]:
    """Each parcel of the fulfillments that went out (cancelled or failed ones sent
    nothing), oldest first: one per tracking number, or one untracked."""
    sent = sorted(
        (f for f in order.fulfillments if f.status == SETTLED), key=lambda f: f.created_at
    )
    return tuple(
        Shipment(
            status=shipment_status(fulfillment),
            carrier=tracking.company if tracking else None,
            tracking_number=tracking.number if tracking else None,
            tracking_url=tracking.url if tracking else None,
            estimated_delivery=fulfillment.estimated_delivery_at,
            delivered_at=fulfillment.delivered_at,
            shipped_at=fulfillment.created_at,
        )
        for fulfillment in sent
        for tracking in fulfillment.tracking or (None,)
    )


def shipment_status(fulfillment: Fulfillment) -> str:
    """Shopify's display status in lower case; without one, what its dates say."""
    if fulfillment.display_status:
        return fulfillment.display_status.lower()
    if fulfillment.delivered_at is not None:
        return "delivered"
    return "in_transit" if fulfillment.in_transit_at is not None else "fulfilled"


def customer_orders(client: AdminClient, target: str, limit: int) -> tuple[OrderFacts, ...]:
    """The customer's newest ``limit`` orders, each read whole; an order too large for
    one read is listed with what its summary says (no lines, no payment), so it shows
    but can bound no refund. No such customer: no orders."""
    answer = client.execute(
        CUSTOMER_WITH_ORDERS,
        {"id": customer_target(target), "first": limit},
        operation_name="CustomerWithOrders",
    )
    found = read_customer_with_orders(answer.data)
    if found is None:
        return ()
    orders: list[OrderFacts] = []
    for summary in found.orders:
        order = read_order(client, summary.id)
        if order is not None and order.complete and order.presentment_currency == order.currency:
            orders.append(order_facts(order))
        else:
            orders.append(
                OrderFacts(
                    id=summary.id,
                    name=summary.name,
                    currency=summary.currency,
                    payment_id=None,
                    total=summary.total.amount,
                    created_at=summary.created_at,
                    customer_id=found.id,
                    shipments=shipments_of(order) if order is not None else (),
                )
            )
    return tuple(orders)


def stripe_payment_id(order: OrderForRefund) -> str | None:
    """The Stripe payment behind the order, when it was paid through Stripe."""
    for payment in payments(order):
        gateway = (payment.gateway or "").strip().lower()
        reference = payment.payment_id or ""
        if gateway in STRIPE_GATEWAYS and reference.startswith(STRIPE_PAYMENT_PREFIXES):
            return reference
    return None


# ---------------------------------------------------------------- customers


def customer_facts(client: AdminClient, target: str) -> CustomerFacts:
    """The customer's store credit: balance and recent credits (no marker survives on a
    credit, so their metadata stays empty). Discount codes cannot be listed per customer
    with the documents Caseward sends (``codeDiscountNodeByCode`` needs the code)."""
    answer = client.execute(
        CUSTOMER_STORE_CREDIT,
        {"id": customer_target(target), "transactions": CREDIT_TRANSACTIONS},
        operation_name="CustomerStoreCredit",
    )
    found = read_customer_store_credit(answer.data)
    if found is None:
        return CustomerFacts(id=target, exists=False)
    accounts = found.accounts
    # Balance as the contract counts it (negative: owed to the customer), when the
    # customer has one account; several currencies have no single balance.
    only = accounts[0] if len(accounts) == 1 else None
    return CustomerFacts(
        id=found.customer_id,
        exists=True,
        balance=-only.balance.amount if only else 0,
        balance_currency=only.balance.currency if only else None,
        credits=tuple(
            ProviderCredit(
                id=credit.id,
                amount=-credit.amount.amount,
                currency=credit.amount.currency,
                created=credit.created_at,
            )
            for account in accounts
            for credit in account.credits
            if credit.id is not None  # every credit transaction has one; debits are left out
        ),
    )
