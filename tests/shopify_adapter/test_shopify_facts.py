"""``facts`` and ``order``: what the adapter reads from a Shopify order or customer."""

from __future__ import annotations

from collections.abc import Callable
from datetime import timedelta

import pytest
from shopify_adapter_support import OWNER, request

from integrations.provider import (
    ACTION_ID_METADATA_KEY,
    ActionKind,
    CustomerFacts,
    PaymentFacts,
    ProviderError,
    ProviderStatus,
)
from integrations.shopify.adapter import IncompleteOrder, ShopifyAdapter
from integrations.shopify.documents import (
    ORDER_FOR_REFUND,
    REFUND_CREATE,
    OrderForRefund,
    read_order_for_refund,
    refund_create_variables,
)
from integrations.shopify.graphql import AdminClient
from integrations.shopify.money import Amount
from integrations.shopify.sandbox import SandboxShop, ShopifySandbox


def payment(adapter: ShopifyAdapter, order_id: str) -> PaymentFacts:
    facts = adapter.facts(ActionKind.REFUND, order_id)
    assert isinstance(facts, PaymentFacts)
    return facts


def read_order(client: AdminClient, order_id: str) -> OrderForRefund:
    found = read_order_for_refund(client.execute(ORDER_FOR_REFUND, {"id": order_id}).data)
    assert found is not None
    return found


def test_a_fresh_order_in_minor_units(adapter: ShopifyAdapter, order: str, customer: str) -> None:
    facts = payment(adapter, order)

    assert (facts.id, facts.exists, facts.currency) == (order, True, "usd")
    assert (facts.amount, facts.captured, facts.refunded) == (10100, 10100, 0)
    assert facts.paid and not facts.disputed
    assert facts.customer_id == customer
    assert facts.created is not None and facts.refunds == ()


@pytest.mark.parametrize(
    ("status", "disputed"),
    [("NEEDS_RESPONSE", True), ("UNDER_REVIEW", True), ("LOST", True), ("WON", False)],
)
def test_a_disputed_order_is_reported_so_the_guard_refuses_to_refund_it(
    sandbox: ShopifySandbox, adapter: ShopifyAdapter, order: str, status: str, disputed: bool
) -> None:
    sandbox.open_dispute(order, status=status)

    assert payment(adapter, order).disputed is disputed


def test_a_partially_refunded_order_names_our_refund_and_counts_everyone_s(
    sandbox: ShopifySandbox, adapter: ShopifyAdapter, merchant: AdminClient, order: str
) -> None:
    apron = sandbox.line_items(order)[0]
    ours = request(
        ActionKind.REFUND,
        order,
        4800,
        reason="One apron arrived torn",
        line_items=[{"line_id": apron, "quantity": 1}],
    )
    adapter.submit(ours)
    # Shipping refunded by the merchant in the admin: a note without our marker.
    (sale,) = [t for t in read_order(merchant, order).transactions if t.kind == "SALE"]
    merchant.execute(
        REFUND_CREATE,
        refund_create_variables(
            key="merchant-refund-1",
            order_id=order,
            parent_transaction_id=sale.id,
            gateway=sale.gateway or "",
            amount=Amount(500, "usd"),
            note="Shipping refunded at the customer's request",
        ),
    )

    facts = payment(adapter, order)

    assert (facts.captured, facts.refunded) == (10100, 5300)
    first, second = facts.refunds
    assert (first.amount, first.currency, first.status) == (4800, "usd", ProviderStatus.SUCCEEDED)
    assert first.metadata == {ACTION_ID_METADATA_KEY: ours.action_id}
    assert (second.amount, second.metadata) == (500, {})


def test_a_yen_order_has_no_minor_digits(
    sandbox: ShopifySandbox, make_adapter: Callable[..., ShopifyAdapter]
) -> None:
    kyoto = sandbox.create_shop("kyoto-kitchen", currency="JPY", owner_user_id=OWNER)
    adapter = make_adapter(kyoto)
    order = sandbox.seed_order(
        kyoto.domain,
        customer_id=None,
        currency="JPY",
        lines=[{"title": "Knife", "quantity": 1, "price": 12800}],
        shipping=700,
    )

    answer = adapter.submit(request(ActionKind.REFUND, order, 700, "jpy", shipping=700))
    facts = payment(adapter, order)

    assert answer.raw["amount"] == 700
    assert (facts.currency, facts.amount, facts.captured, facts.refunded) == (
        "jpy",
        13500,
        13500,
        700,
    )


def test_an_unknown_order_does_not_exist(adapter: ShopifyAdapter, shop: SandboxShop) -> None:
    facts = payment(adapter, "gid://shopify/Order/999999999")

    assert facts.exists is False


def test_an_order_too_large_for_one_read_is_refused(
    sandbox: ShopifySandbox, shop: SandboxShop, adapter: ShopifyAdapter
) -> None:
    order = sandbox.seed_order(
        shop.domain,
        customer_id=None,
        currency="USD",
        lines=[{"title": f"Napkin {n}", "quantity": 1, "price": 300} for n in range(31)],
    )

    with pytest.raises(IncompleteOrder, match="incomplete read"):
        adapter.facts(ActionKind.REFUND, order)
    with pytest.raises(IncompleteOrder, match="incomplete read"):
        adapter.order(order)
    assert issubclass(IncompleteOrder, ProviderError)


def test_order_lines_paid_and_refunded_with_shipping_dates(
    sandbox: ShopifySandbox, shop: SandboxShop, adapter: ShopifyAdapter, customer: str
) -> None:
    order = sandbox.seed_order(
        shop.domain,
        customer_id=customer,
        currency="USD",
        lines=[
            {"title": "Apron", "quantity": 2, "price": 4800},
            {"title": "Tea towel", "quantity": 3, "price": 1200},
        ],
        fulfilled_at=sandbox.now() - 3 * 86400,
        delivered_at=sandbox.now() - 2 * 86400,
    )
    apron, towel = sandbox.line_items(order)
    adapter.submit(
        request(ActionKind.REFUND, order, 2400, line_items=[{"line_id": towel, "quantity": 2}])
    )

    facts = adapter.order(order)

    assert facts is not None
    assert (facts.id, facts.currency, facts.payment_id) == (order, "usd", None)
    assert [(line.id, line.quantity, line.paid, line.refunded) for line in facts.lines] == [
        (apron, 2, 9600, 0),
        (towel, 3, 3600, 2400),
    ]
    assert facts.fulfilled_at is not None and facts.delivered_at is not None
    assert facts.delivered_at - facts.fulfilled_at == timedelta(days=1)


def test_a_customer_with_no_store_credit_yet(adapter: ShopifyAdapter, customer: str) -> None:
    facts = adapter.facts(ActionKind.CUSTOMER_CREDIT, customer)

    assert isinstance(facts, CustomerFacts)
    assert (facts.id, facts.exists, facts.deleted) == (customer, True, False)
    assert (facts.balance, facts.balance_currency, facts.credits) == (0, None, ())


def test_an_unknown_customer_does_not_exist(adapter: ShopifyAdapter, shop: SandboxShop) -> None:
    facts = adapter.facts(ActionKind.DISCOUNT, "gid://shopify/Customer/999999999")

    assert isinstance(facts, CustomerFacts) and facts.exists is False


def test_a_fresh_refund_on_an_old_order_is_dated_by_itself_for_the_duplicate_window(
    sandbox: ShopifySandbox, adapter: ShopifyAdapter, shop: SandboxShop, customer: str
) -> None:
    """A refund made today on an order placed a month ago counts as today's: the guard's
    duplicate window (72 hours) sees it, which the order's own date would hide."""
    placed = sandbox.now() - timedelta(days=30).total_seconds()
    old = sandbox.seed_order(
        shop.domain,
        customer_id=customer,
        currency="USD",
        lines=[{"title": "Apron", "quantity": 2, "price": 4800}],
        created_at=placed,
    )
    adapter.submit(request(ActionKind.REFUND, old, 4800, reason="One apron arrived torn"))

    facts = payment(adapter, old)

    (refund,) = facts.refunds
    assert facts.created is not None and refund.created is not None
    assert refund.created - facts.created >= timedelta(days=29)
    assert abs(refund.created.timestamp() - sandbox.now()) < 60
