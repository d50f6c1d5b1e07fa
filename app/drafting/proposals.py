"""From a drafted step to an exact proposal: Caseward, not the drafter, sets the amount.

The drafter names an order of the case and which of its lines (and how many); the
amount is what those lines were paid, pro rata for part of a line (rounded down, so a
refund never exceeds what was paid for the items), and the currency is the order's. A
pick that names an order outside the case, a line outside the order or more items than
the line holds is refused here, before anything is proposed.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from app.cases.models import Customer, Order
from app.drafting.result import LinePick, StepProposal
from app.execution.evaluation import Draft
from app.guard import LineItemRef
from integrations.provider import ActionKind


class StepRefused(ValueError):
    """The drafted step does not fit the case's facts; the message says how."""


def share_paid(paid: int, of_quantity: int, quantity: int) -> int:
    """What ``quantity`` of a line's ``of_quantity`` items were paid, the line having been
    paid ``paid``: all of it for all of them, else the share, rounded down."""
    return paid if quantity >= of_quantity else paid * quantity // of_quantity


def line_amount(line: dict[str, Any], quantity: int) -> int:
    return share_paid(int(line["paid"]), int(line["quantity"]), quantity)


def picked_lines(order: Order, picks: Sequence[LinePick]) -> list[tuple[dict[str, Any], int]]:
    """Each picked line of ``order`` with its quantity; every line in full when none."""
    lines = {str(line["id"]): line for line in order.lines}
    if not picks:
        return [(line, int(line["quantity"])) for line in order.lines]
    chosen = []
    for pick in picks:
        line = lines.get(pick.line_id)
        if line is None:
            raise StepRefused(f"line {pick.line_id} is not a line of order {order.name}")
        if pick.quantity > int(line["quantity"]):
            raise StepRefused(
                f"order {order.name} has {line['quantity']} of line {pick.line_id}, "
                f"not {pick.quantity}"
            )
        chosen.append((line, pick.quantity))
    return chosen


# Steps that go to the customer's own account, not back to a payment.
TO_THE_CUSTOMERS_ACCOUNT = (ActionKind.CUSTOMER_CREDIT, ActionKind.DISCOUNT)


def customer_account(customer: Customer, *, shopify_connected: bool) -> tuple[str, str | None]:
    """Where store credit or a discount goes: the provider and the customer's own id there
    (None while Caseward does not know it). Shopify when the shop is connected there and
    knows the customer, else Stripe."""
    if shopify_connected and customer.shopify_customer_id:
        return "shopify", customer.shopify_customer_id
    return "stripe", customer.stripe_customer_id


def draft_for(
    step: StepProposal,
    *,
    order: Order,
    customer: Customer,
    shopify_connected: bool,
    credit_bonus_percent: int = 0,
) -> Draft:
    """The exact proposal ``step`` describes for ``order`` of ``customer``.

    A refund goes to the order at Shopify when Shopify holds it and the shop is
    connected there, else to the Stripe payment that paid it. Store credit goes to the
    customer at Shopify when known there, else at Stripe, worth what the lines were paid
    plus the shop's ``credit_bonus_percent`` (rounded down); a discount on a replacement
    goes to the same customer, worth what the lines were paid, once."""
    lines = picked_lines(order, step.lines)
    amount = sum(line_amount(line, quantity) for line, quantity in lines)
    if amount <= 0:
        raise StepRefused(f"nothing was paid for the picked lines of order {order.name}")
    if step.kind == ActionKind.REFUND:
        through_shopify = shopify_connected and order.shopify_order_id is not None
        target = order.shopify_order_id if through_shopify else order.payment_id
        if not target:
            raise StepRefused(f"order {order.name} has no payment on file")
        items = tuple(
            LineItemRef(
                line_id=str(line["id"]),
                amount_minor=line_amount(line, quantity),
                quantity=quantity if through_shopify else None,
            )
            for line, quantity in lines
        )
        return Draft(
            kind=ActionKind.REFUND,
            provider="shopify" if through_shopify else "stripe",
            target=str(target),
            customer_ref=None,
            amount=amount,
            currency=order.currency,
            line_items=items if (through_shopify or step.lines) else (),
            params={} if through_shopify else {"reason": "requested_by_customer"},
            reason=step.reason,
        )
    if step.kind in TO_THE_CUSTOMERS_ACCOUNT:
        provider, target = customer_account(customer, shopify_connected=shopify_connected)
        if not target:
            raise StepRefused("the customer has no account to credit")
        if step.kind == ActionKind.DISCOUNT:
            # A replacement's discount: the value of the lines, off one order.
            return Draft(
                kind=ActionKind.DISCOUNT,
                provider=provider,
                target=target,
                customer_ref=target,
                amount=amount,
                currency=order.currency,
                line_items=(),
                params={"amount_off": amount, "duration": "once"},
                reason=step.reason,
            )
        return Draft(
            kind=ActionKind.CUSTOMER_CREDIT,
            provider=provider,
            target=target,
            customer_ref=target,
            amount=amount * (100 + credit_bonus_percent) // 100,
            currency=order.currency,
            line_items=(),
            params={},
            reason=step.reason,
        )
    raise StepRefused(f"a drafter may not propose a {step.kind.value}")
