"""Every field a person reviews is bound into the approval digest.

An approval names a digest; the action is sent only while the proposal still has that
digest under the shop's current policy. So each reviewed field, changed alone, must give
a new digest: shop, provider, kind, target, customer, amount, currency, each line item's
id and amount, the parameters and the policy version. Line items are a set: listing the
same ones in another order is the same review.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any

import pytest

from app.cases.digest import digest_of

POLICY_VERSION = 3
SHOP = uuid.UUID("7d7c1b8e-4a55-4f1e-9c33-0e0e2b8d6a11")


@dataclass(frozen=True)
class Reviewed:
    """What an approver sees of a proposal."""

    shop_id: uuid.UUID = SHOP
    provider: str = "stripe"
    kind: str = "refund"
    target: str = "pi_3Apron"
    customer_ref: str | None = "cus_Maya"
    amount: int | None = 4800
    currency: str | None = "usd"
    line_items: list[dict[str, Any]] = field(
        default_factory=lambda: [
            {"line_id": "apron-natural", "amount": 3000},
            {"line_id": "throw-oat", "amount": 1800},
        ]
    )
    params: dict[str, Any] = field(default_factory=lambda: {"reason": "requested_by_customer"})


REVIEWED = Reviewed()


def _lines(*pairs: tuple[str, int]) -> list[dict[str, Any]]:
    return [{"line_id": line_id, "amount": amount} for line_id, amount in pairs]


# Each changes one reviewed field and nothing else.
CHANGES: dict[str, Callable[[Reviewed], Reviewed]] = {
    "shop": lambda r: replace(r, shop_id=uuid.UUID("0b0e7f5c-93a2-4b8e-8d0b-5a3f0c9d2e44")),
    "provider": lambda r: replace(r, provider="shopify"),
    "kind": lambda r: replace(r, kind="customer_credit"),
    "target": lambda r: replace(r, target="pi_3Other"),
    "customer": lambda r: replace(r, customer_ref="cus_Someone"),
    "customer removed": lambda r: replace(r, customer_ref=None),
    "amount": lambda r: replace(r, amount=4700),
    "amount by one cent": lambda r: replace(r, amount=4801),
    "amount removed": lambda r: replace(r, amount=None),
    "currency": lambda r: replace(r, currency="eur"),
    "line item id": lambda r: replace(
        r, line_items=_lines(("apron-blue", 3000), ("throw-oat", 1800))
    ),
    "line item amount": lambda r: replace(
        r, line_items=_lines(("apron-natural", 2900), ("throw-oat", 1800))
    ),
    "line item amounts swapped": lambda r: replace(
        r, line_items=_lines(("apron-natural", 1800), ("throw-oat", 3000))
    ),
    "line item added": lambda r: replace(
        r, line_items=[*r.line_items, {"line_id": "napkin", "amount": 500}]
    ),
    "line item removed": lambda r: replace(r, line_items=r.line_items[:1]),
    "param value": lambda r: replace(r, params={"reason": "duplicate"}),
    "param added": lambda r: replace(r, params={**r.params, "note": "torn seam"}),
    "param removed": lambda r: replace(r, params={}),
}


@pytest.mark.parametrize("change", list(CHANGES))
def test_changing_one_reviewed_field_changes_the_digest(change: str) -> None:
    changed = CHANGES[change](REVIEWED)
    assert changed != REVIEWED

    assert digest_of(changed, POLICY_VERSION) != digest_of(REVIEWED, POLICY_VERSION), (
        f"an approval of the reviewed proposal must not cover a changed {change}"
    )


def test_a_nested_parameter_changed_deep_inside_changes_the_digest() -> None:
    before = replace(REVIEWED, params={"items": [{"price": "price_a", "quantity": 1}]})
    after = replace(REVIEWED, params={"items": [{"price": "price_a", "quantity": 2}]})

    assert digest_of(after, POLICY_VERSION) != digest_of(before, POLICY_VERSION)


def test_a_new_policy_version_changes_the_digest() -> None:
    assert digest_of(REVIEWED, POLICY_VERSION + 1) != digest_of(REVIEWED, POLICY_VERSION), (
        "an approval given under one policy must not cover the checks of another"
    )


def test_the_same_line_items_in_another_order_are_the_same_review() -> None:
    reordered = replace(REVIEWED, line_items=list(reversed(REVIEWED.line_items)))

    assert digest_of(reordered, POLICY_VERSION) == digest_of(REVIEWED, POLICY_VERSION)


def test_parameters_in_another_key_order_are_the_same_review() -> None:
    # Parameters come back from the database's JSON column in its own key order.
    before = replace(REVIEWED, params={"reason": "damaged", "note": "torn seam"})
    after = replace(REVIEWED, params={"note": "torn seam", "reason": "damaged"})

    assert digest_of(after, POLICY_VERSION) == digest_of(before, POLICY_VERSION)


def test_the_digest_of_a_reviewed_proposal_stays_the_same_across_releases() -> None:
    # Approvals store this value; a release that computed it differently would silently
    # void every approval given before it, sending approvers back to review again.
    assert digest_of(REVIEWED, POLICY_VERSION) == (
        "583b3eadf073e0dfe742510753b8e244ba173bd89d1bfc47f33145e08059fa27"
    )


# A Shopify refund names each line's quantity too (Shopify refunds lines by quantity).
BY_QUANTITY = replace(
    REVIEWED,
    provider="shopify",
    target="gid://shopify/Order/1001",
    line_items=[
        {"line_id": "gid://shopify/LineItem/1", "amount": 4800, "quantity": 2},
        {"line_id": "gid://shopify/LineItem/2", "amount": 1800, "quantity": 1},
    ],
)

QUANTITY_CHANGES: dict[str, Callable[[Reviewed], Reviewed]] = {
    "quantity": lambda r: replace(
        r, line_items=[{**r.line_items[0], "quantity": 1}, r.line_items[1]]
    ),
    "quantity left out": lambda r: replace(
        r,
        line_items=[
            {"line_id": r.line_items[0]["line_id"], "amount": r.line_items[0]["amount"]},
            r.line_items[1],
        ],
    ),
    "line item id": lambda r: replace(
        r, line_items=[{**r.line_items[0], "line_id": "gid://shopify/LineItem/3"}, r.line_items[1]]
    ),
    "line item amount": lambda r: replace(
        r, line_items=[{**r.line_items[0], "amount": 4700}, r.line_items[1]]
    ),
}


@pytest.mark.parametrize("change", list(QUANTITY_CHANGES))
def test_changing_a_line_refunded_by_quantity_changes_the_digest(change: str) -> None:
    changed = QUANTITY_CHANGES[change](BY_QUANTITY)

    assert digest_of(changed, POLICY_VERSION) != digest_of(BY_QUANTITY, POLICY_VERSION), (
        f"an approval of the reviewed lines must not cover a changed {change}"
    )
