"""``submit`` and ``find`` for refunds: one ``refundCreate`` under the action's key,
marked with our action id, bounded by Shopify, recognisable after an unclear outcome."""

from __future__ import annotations

import threading

import pytest
from shopify_adapter_support import mutations_received, refunds_at_shopify, request, wait_until

from integrations.provider import (
    ActionKind,
    OutcomeUnknown,
    PaymentFacts,
    ProviderAnswer,
    ProviderRejected,
    ProviderStatus,
)
from integrations.shopify.adapter import ShopifyAdapter
from integrations.shopify.sandbox import Fault, SandboxShop, ShopifySandbox


def test_a_full_refund_with_lines_and_shipping(
    sandbox: ShopifySandbox, shop: SandboxShop, adapter: ShopifyAdapter, order: str
) -> None:
    (apron,) = sandbox.line_items(order)
    action = request(
        ActionKind.REFUND,
        order,
        10100,
        reason="Order never arrived",
        line_items=[{"line_id": apron, "quantity": 2}],
        shipping=500,
    )

    answer = adapter.submit(action)

    assert answer.status is ProviderStatus.SUCCEEDED and answer.replayed is False
    assert answer.raw["amount"] == 10100
    assert answer.raw["note"] == f"Order never arrived\ncaseward_action_id={action.action_id}"
    assert mutations_received(sandbox, shop.domain, "RefundCreate") == [action.idempotency_key]
    facts = adapter.facts(ActionKind.REFUND, order)
    assert isinstance(facts, PaymentFacts)
    assert facts.refunded == facts.captured == 10100
    lines = adapter.order(order)
    assert lines is not None and [(line.paid, line.refunded) for line in lines.lines] == [
        (9600, 9600)
    ]


def test_a_line_item_refund_is_bounded_per_line(
    sandbox: ShopifySandbox, shop: SandboxShop, adapter: ShopifyAdapter, order: str
) -> None:
    (apron,) = sandbox.line_items(order)
    adapter.submit(
        request(ActionKind.REFUND, order, 4800, line_items=[{"line_id": apron, "quantity": 1}])
    )
    after_one = adapter.order(order)
    assert after_one is not None
    assert [(line.quantity, line.paid, line.refunded) for line in after_one.lines] == [
        (2, 9600, 4800)
    ]

    with pytest.raises(ProviderRejected) as refused:
        adapter.submit(
            request(ActionKind.REFUND, order, 9600, line_items=[{"line_id": apron, "quantity": 2}])
        )

    assert "Refundable quantity: 1" in str(refused.value)
    assert "refundLineItems.0.quantity" in str(refused.value)
    assert refunds_at_shopify(sandbox, shop.domain, order) == 1


def test_an_over_refund_is_refused_by_shopify_and_nothing_is_made(
    sandbox: ShopifySandbox, shop: SandboxShop, adapter: ShopifyAdapter, order: str
) -> None:
    with pytest.raises(ProviderRejected) as refused:
        adapter.submit(request(ActionKind.REFUND, order, 20000))

    message = str(refused.value)
    assert "Refund amount 200.0 exceeds the refundable amount 101.0" in message
    assert "(field transactions.0.amount)" in message
    assert len(mutations_received(sandbox, shop.domain, "RefundCreate")) == 1
    assert refunds_at_shopify(sandbox, shop.domain, order) == 0


def test_a_refund_in_another_currency_is_refused_before_sending(
    sandbox: ShopifySandbox, shop: SandboxShop, adapter: ShopifyAdapter, order: str
) -> None:
    with pytest.raises(ProviderRejected, match="in EUR but Shopify order #1001 is in USD"):
        adapter.submit(request(ActionKind.REFUND, order, 1000, "eur"))

    assert mutations_received(sandbox, shop.domain, "RefundCreate") == []


def test_a_dropped_answer_is_unknown_then_found_and_a_resend_makes_no_second_refund(
    sandbox: ShopifySandbox, shop: SandboxShop, adapter: ShopifyAdapter, order: str
) -> None:
    action = request(ActionKind.REFUND, order, 3000, reason="Late delivery")
    sandbox.arm_fault(Fault(kind="drop_after_commit", operation="refundCreate"))

    with pytest.raises(OutcomeUnknown):
        adapter.submit(action)
    found = adapter.find(action)
    again = adapter.submit(action)

    assert found is not None
    assert (found.status, found.raw["amount"]) == (ProviderStatus.SUCCEEDED, 3000)
    assert (again.reference, again.replayed) == (found.reference, True)
    assert refunds_at_shopify(sandbox, shop.domain, order) == 1
    assert mutations_received(sandbox, shop.domain, "RefundCreate") == [action.idempotency_key]


def test_a_resend_racing_the_first_send_is_unknown_never_a_second_refund(
    sandbox: ShopifySandbox, shop: SandboxShop, adapter: ShopifyAdapter, order: str
) -> None:
    action = request(ActionKind.REFUND, order, 3000)
    hold = sandbox.arm_fault(Fault(kind="hold", operation="refundCreate"))
    first: dict[str, ProviderAnswer] = {}
    sender = threading.Thread(target=lambda: first.update(answer=adapter.submit(action)))
    sender.start()
    assert wait_until(lambda: any(h.waiting for h in sandbox.holds()))

    # The order shows nothing yet, so only the key stands between us and a second refund.
    with pytest.raises(OutcomeUnknown):
        adapter.submit(action)
    sandbox.release_hold(hold.id)
    sender.join(timeout=10)

    assert first["answer"].status is ProviderStatus.SUCCEEDED
    assert refunds_at_shopify(sandbox, shop.domain, order) == 1
    found = adapter.find(action)
    assert found is not None and found.reference == first["answer"].reference


def test_find_shows_nothing_for_a_refund_never_sent(adapter: ShopifyAdapter, order: str) -> None:
    adapter.submit(request(ActionKind.REFUND, order, 1000))

    assert adapter.find(request(ActionKind.REFUND, order, 1000)) is None


def test_pending_and_failed_refunds_as_shopify_reports_them(
    sandbox: ShopifySandbox, shop: SandboxShop, adapter: ShopifyAdapter, order: str
) -> None:
    sandbox.set_refund_status(shop.domain, "PENDING")
    pending = adapter.submit(request(ActionKind.REFUND, order, 1000))
    sandbox.set_refund_status(shop.domain, "FAILURE")
    failing = request(ActionKind.REFUND, order, 2000)
    failed = adapter.submit(failing)

    assert pending.status is ProviderStatus.PENDING
    assert failed.status is ProviderStatus.FAILED
    assert failed.failure_reason is not None and "FAILURE" in failed.failure_reason
    found = adapter.find(failing)
    assert found is not None and found.status is ProviderStatus.FAILED
    facts = adapter.facts(ActionKind.REFUND, order)
    assert isinstance(facts, PaymentFacts)
    # The failed refund gave nothing back; the pending one still counts.
    assert facts.refunded == 1000


def test_a_stripe_paid_order_names_its_payment_intent(
    sandbox: ShopifySandbox, shop: SandboxShop, adapter: ShopifyAdapter, customer: str
) -> None:
    order = sandbox.seed_order(
        shop.domain,
        customer_id=customer,
        currency="USD",
        lines=[{"title": "Apron", "quantity": 1, "price": 4800}],
        gateway="stripe",
        payment_reference="pi_3PqApron0001",
    )

    facts = adapter.order(order)
    answer = adapter.submit(request(ActionKind.REFUND, order, 4800))

    assert facts is not None and facts.payment_id == "pi_3PqApron0001"
    assert answer.status is ProviderStatus.SUCCEEDED
    transactions = answer.raw["transactions"]
    assert isinstance(transactions, list)
    assert [t["gateway"] for t in transactions] == ["stripe"]


def test_a_shopify_payments_order_names_no_stripe_payment(
    adapter: ShopifyAdapter, order: str
) -> None:
    facts = adapter.order(order)

    assert facts is not None and facts.payment_id is None
