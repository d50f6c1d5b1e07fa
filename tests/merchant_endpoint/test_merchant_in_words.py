"""What an approver reads for an action of the merchant's own endpoint: its own ids, named
as the endpoint's, and whose money it is; never another provider's wording (no
"original payment method", which only the endpoint knows)."""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from typing import Any

from app.approvals.in_words import describe_action


@dataclass(frozen=True)
class Item:
    """A merchant proposal (or its action) as far as the words go."""

    shop_id: uuid.UUID = field(default_factory=uuid.uuid4)
    provider: str = "merchant"
    kind: str = "refund"
    target: str = "pay_1001"
    customer_ref: str | None = "cust_maya"
    amount: int | None = 4800
    currency: str | None = "usd"
    line_items: list[dict[str, Any]] = field(default_factory=list)
    params: dict[str, Any] = field(default_factory=dict)


def test_a_refund_names_the_endpoints_payment_and_its_customer() -> None:
    assert describe_action(Item(params={"reason": "damaged"})) == (
        "Refund $48.00 of payment pay_1001 at your own endpoint to its customer cust_maya "
        "(reason: damaged)."
    )
    assert describe_action(Item(customer_ref=None)) == (
        "Refund $48.00 of payment pay_1001 at your own endpoint "
        "(the case's customer is not linked there)."
    )


def test_a_refund_of_lines_names_each_line_by_its_id() -> None:
    item = Item(line_items=[{"line_id": "apron-natural", "amount": 3000}])

    assert describe_action(item) == (
        "Refund $48.00 of payment pay_1001 at your own endpoint to its customer cust_maya, "
        "for $30.00 of line apron-natural (not on the order on file)."
    )


@dataclass(frozen=True)
class OrderOnFile:
    name: str = "#1001"
    lines: tuple[dict[str, Any], ...] = (
        {"id": "apron-natural", "title": "Linen apron", "quantity": 2, "paid": 6000},
    )


def test_an_order_on_file_that_the_payment_paid_is_named_with_its_lines() -> None:
    item = Item(line_items=[{"line_id": "apron-natural", "amount": 3000, "quantity": 1}])

    assert describe_action(item, order=OrderOnFile()) == (
        "Refund $48.00 of payment pay_1001 at your own endpoint to its customer cust_maya, "
        "which paid order #1001, for 1 \u00d7 “Linen apron” ($30.00)."
    )


def test_a_credit_names_the_endpoints_customer() -> None:
    item = Item(
        kind="customer_credit",
        target="cust_maya",
        amount=500,
        params={"description": "for the torn apron"},
    )

    assert describe_action(item, locale="fr_FR") == (
        "Add 5,00\u00a0$US of credit to the balance of customer cust_maya at your own "
        "endpoint, described as “for the torn apron”."
    )
