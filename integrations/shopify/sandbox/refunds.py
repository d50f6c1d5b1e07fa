"""Refund arithmetic for one order: what Shopify would suggest, and what it would accept.

``suggest`` answers ``Order.suggestedRefund``: the chosen lines (capped at what is still
refundable), shipping, the total capped at the money still held, and how to split it
across the payments that can take it. ``create`` is ``refundCreate``: it checks the
whole input first and answers ``userErrors`` (with the input path in ``field``) without
changing anything, or records the refund, its refund lines and one ``REFUND``
transaction per requested transaction, each against its parent payment. A payment never
gives back more than it took: that bound is what stops an over-refund here, as at
Shopify, whatever the caller computed.
"""

from __future__ import annotations

import secrets
import string
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from graphql import GraphQLError

from .money import AmountError, graphql_amount, to_minor
from .state import (
    PAYMENT_KINDS,
    SETTLED,
    Order,
    Refund,
    RefundLine,
    Shop,
    Store,
    Transaction,
    parse_gid,
    parse_iso,
)

JSON = dict[str, Any]

REFUND_KINDS = ("REFUND", "SUGGESTED_REFUND")
RESTOCKING = ("RETURN", "CANCEL", "LEGACY_RESTOCK")


@dataclass
class SuggestedLine:
    line_id: int
    quantity: int
    subtotal: int


@dataclass
class SuggestedTransaction:
    parent: Transaction
    amount: int
    maximum: int


@dataclass
class Suggestion:
    """What ``Order.suggestedRefund`` reports, in minor units."""

    lines: list[SuggestedLine]
    subtotal: int
    shipping: int
    shipping_maximum: int
    amount: int
    maximum: int
    transactions: list[SuggestedTransaction]


def refundable_money(order: Order) -> int:
    """Money the order still holds: settled payments less refunds made or pending."""
    return sum(order.parent_remaining(t) for t in order.refundable_payments())


def _allocate(order: Order, amount: int) -> list[SuggestedTransaction]:
    """Split ``amount`` across the payments that can take it, oldest first."""
    split: list[SuggestedTransaction] = []
    left = amount
    for parent in order.refundable_payments():
        if left <= 0:
            break
        room = order.parent_remaining(parent)
        take = min(room, left)
        split.append(SuggestedTransaction(parent, take, room))
        left -= take
    return split


def suggest(
    order: Order,
    *,
    refund_line_items: Sequence[Mapping[str, Any]] | None,
    refund_shipping: bool | None,
    shipping_amount: str | None,
    suggest_full_refund: bool,
) -> Suggestion:
    """``Order.suggestedRefund`` for the asked lines and shipping."""
    lines: list[SuggestedLine] = []
    if suggest_full_refund:
        asked = [(line.id, order.refundable_quantity(line)) for line in order.lines]
    else:
        asked = []
        for item in refund_line_items or ():
            line_id = parse_gid(item["lineItemId"], "LineItem")
            line = order.line(line_id) if line_id is not None else None
            if line is None:
                raise GraphQLError(f"Line item {item['lineItemId']} does not exist on the order.")
            asked.append((line.id, int(item["quantity"])))
    for line_id, quantity in asked:
        line = order.line(line_id)
        assert line is not None
        take = max(0, min(quantity, order.refundable_quantity(line)))
        if take:
            lines.append(SuggestedLine(line_id, take, take * line.price))
    shipping_left = order.shipping - order.refunded_shipping
    shipping = 0
    if suggest_full_refund or refund_shipping:
        shipping = shipping_left
    elif shipping_amount is not None:
        try:
            shipping = min(max(to_minor(shipping_amount, order.currency), 0), shipping_left)
        except AmountError as exc:
            raise GraphQLError(str(exc)) from None
    subtotal = sum(line.subtotal for line in lines)
    maximum = refundable_money(order)
    amount = min(subtotal + shipping, maximum)
    return Suggestion(
        lines=lines,
        subtotal=subtotal,
        shipping=shipping,
        shipping_maximum=shipping_left,
        amount=amount,
        maximum=maximum,
        transactions=_allocate(order, amount),
    )


@dataclass
class RefundOutcome:
    """``refundCreate``'s result: the refund, or the user errors that stopped it."""

    refund: Refund | None
    order: Order | None
    user_errors: list[JSON] = field(default_factory=list)


def _error(path: Sequence[str | int], message: str) -> JSON:
    return {"field": [str(part) for part in path], "message": message}


def _payment_reference() -> str:
    """A refund transaction's payment id, shaped like Shopify Payments' (``r...``)."""
    alphabet = string.ascii_letters + string.digits
    return "r" + "".join(secrets.choice(alphabet) for _ in range(25))


def create(store: Store, shop: Shop, refund_input: Mapping[str, Any], now: float) -> RefundOutcome:
    """Validate ``RefundInput`` as a whole; record the refund only when all of it holds."""
    order_id = parse_gid(refund_input["orderId"], "Order")
    order = shop.orders.get(order_id) if order_id is not None else None
    if order is None:
        return RefundOutcome(None, None, [_error(["orderId"], "Order does not exist")])
    errors: list[JSON] = []
    currency = refund_input.get("currency")
    if currency is not None and currency != order.currency:
        errors.append(
            _error(["currency"], f"Currency must match the order currency {order.currency}.")
        )
    lines = _lines(order, refund_input.get("refundLineItems") or (), errors)
    shipping = _shipping(order, refund_input.get("shipping") or {}, errors)
    planned = _transactions(order, refund_input.get("transactions") or (), errors)
    if errors:
        return RefundOutcome(None, order, errors)

    for refund_line in lines:
        refund_line.id = store.next_id()
    transactions = [
        Transaction(
            id=store.next_id(),
            kind="REFUND",
            status=shop.refund_status,
            gateway=parent.gateway,
            amount=amount,
            created_at=now,
            parent_id=parent.id,
            payment_id=_payment_reference(),
            test=parent.test,
        )
        for parent, amount in planned
    ]
    processed = refund_input.get("processedAt")
    refund = Refund(
        id=store.next_id(),
        created_at=now,
        processed_at=parse_iso(processed) if processed else now,
        note=refund_input.get("note"),
        lines=lines,
        transaction_ids=[t.id for t in transactions],
        shipping=shipping,
    )
    order.transactions.extend(transactions)
    order.refunds.append(refund)
    order.updated_at = now
    return RefundOutcome(refund, order)


def _lines(
    order: Order, items: Sequence[Mapping[str, Any]], errors: list[JSON]
) -> list[RefundLine]:
    """``refundLineItems``: each line exists and keeps enough unrefunded quantity."""
    lines: list[RefundLine] = []
    asked: dict[int, int] = {}
    for index, item in enumerate(items):
        path: list[str | int] = ["refundLineItems", index]
        line_id = parse_gid(item["lineItemId"], "LineItem")
        line = order.line(line_id) if line_id is not None else None
        quantity = int(item["quantity"])
        if line is None:
            errors.append(_error([*path, "lineItemId"], "Line item does not exist."))
            continue
        asked[line.id] = asked.get(line.id, 0) + quantity
        refundable = order.refundable_quantity(line)
        if quantity <= 0:
            errors.append(_error([*path, "quantity"], "Quantity must be greater than 0."))
        elif asked[line.id] > refundable:
            errors.append(
                _error(
                    [*path, "quantity"],
                    "Quantity cannot refund more items than were purchased. Refundable "
                    f"quantity: {refundable}.",
                )
            )
        restock = item.get("restockType") or "NO_RESTOCK"
        lines.append(RefundLine(0, line.id, quantity, restock, quantity * line.price))
    return lines


def _shipping(order: Order, given: Mapping[str, Any], errors: list[JSON]) -> int:
    """``shipping``: all of what is left, or an amount no larger than that."""
    left = order.shipping - order.refunded_shipping
    if given.get("fullRefund"):
        return left
    if given.get("amount") is None:
        return 0
    try:
        amount = to_minor(given["amount"], order.currency)
    except AmountError as exc:
        errors.append(_error(["shipping", "amount"], str(exc)))
        return 0
    if amount < 0 or amount > left:
        errors.append(
            _error(
                ["shipping", "amount"],
                "Shipping refund amount exceeds the refundable shipping amount "
                f"({graphql_amount(left, order.currency)}).",
            )
        )
    return amount


def _transactions(
    order: Order, items: Sequence[Mapping[str, Any]], errors: list[JSON]
) -> list[tuple[Transaction, int]]:
    """``transactions``: each a refund of this order, against a payment of the same
    gateway that still holds the amount (counting earlier items of the same input)."""
    planned: list[tuple[Transaction, int]] = []
    taken: dict[int, int] = {}
    for index, item in enumerate(items):
        path: list[str | int] = ["transactions", index]
        problem = _transaction_problem(order, item)
        if problem is not None:
            errors.append(_error([*path, problem[0]], problem[1]))
            continue
        amount = to_minor(item["amount"], order.currency)
        parent = _parent_for(order, item)
        assert parent is not None
        room = order.parent_remaining(parent) - taken.get(parent.id, 0)
        if amount > room:
            errors.append(
                _error(
                    [*path, "amount"],
                    f"Refund amount {graphql_amount(amount, order.currency)} exceeds the "
                    f"refundable amount {graphql_amount(max(room, 0), order.currency)} of "
                    "the parent transaction.",
                )
            )
            continue
        taken[parent.id] = taken.get(parent.id, 0) + amount
        planned.append((parent, amount))
    return planned


def _amount_problem(amount: object, currency: str) -> str | None:
    try:
        minor = to_minor(amount, currency)
    except AmountError as exc:
        return str(exc)
    return None if minor > 0 else "Amount must be greater than 0."


def _transaction_problem(order: Order, item: Mapping[str, Any]) -> tuple[str, str] | None:
    """What is wrong with one ``OrderTransactionInput`` on its own (field, message)."""
    if item["kind"] not in REFUND_KINDS:
        return "kind", "Kind must be refund."
    if parse_gid(item["orderId"], "Order") != order.id:
        return "orderId", "Order does not match the refund's order."
    amount_problem = _amount_problem(item["amount"], order.currency)
    if amount_problem is not None:
        return "amount", amount_problem
    parent = _parent_for(order, item)
    if parent is None:
        return "parentId", "Parent transaction does not exist or cannot be refunded."
    if item["gateway"] != parent.gateway:
        return "gateway", "Gateway does not match the parent transaction's."
    return None


def _parent_for(order: Order, item: Mapping[str, Any]) -> Transaction | None:
    """The payment a refund transaction goes against: the named one, else the oldest
    payment through the same gateway with money left (else the oldest at all, so that
    asking too much is reported as such)."""
    payments = [t for t in order.transactions if t.kind in PAYMENT_KINDS and t.status == SETTLED]
    if item.get("parentId") is not None:
        parent_id = parse_gid(item["parentId"], "OrderTransaction")
        return next((t for t in payments if t.id == parent_id), None)
    same_gateway = [t for t in payments if t.gateway == item["gateway"]]
    with_room = [t for t in same_gateway if order.parent_remaining(t) > 0]
    candidates = with_room or same_gateway
    return candidates[0] if candidates else None
