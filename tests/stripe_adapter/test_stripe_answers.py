"""What the adapter makes of Stripe's less obvious answers: a partial capture's released
rest, a deleted customer's subscriptions, a second cancel, an expired coupon."""

from __future__ import annotations

import pytest
import stripe
from stripe_adapter_support import START, customer, pay, prices, request, subscription

from integrations.provider import (
    ActionKind,
    CustomerFacts,
    PaymentFacts,
    ProviderRejected,
    ProviderStatus,
    SubscriptionFacts,
)
from integrations.stripe.adapter import StripeAdapter
from integrations.stripe.sandbox import StripeSandbox


@pytest.mark.parametrize("by", ["payment_intent", "charge"])
def test_partial_capture_leaves_the_captured_amount_refundable(
    adapter: StripeAdapter, setup: stripe.StripeClient, by: str
) -> None:
    held = pay(setup, 1000, capture_method="manual")
    setup.v1.payment_intents.capture(held.id, params={"amount_to_capture": 600})
    target = held.id if by == "payment_intent" else str(held.latest_charge)
    facts = adapter.facts(ActionKind.REFUND, target)
    assert isinstance(facts, PaymentFacts)
    # Stripe's released 400 is not a refund of captured money.
    assert (facts.amount, facts.captured, facts.refunded, facts.refunds) == (1000, 600, 0, ())
    answer = adapter.submit(request(ActionKind.REFUND, target, 600))
    assert answer.status is ProviderStatus.SUCCEEDED
    after = adapter.facts(ActionKind.REFUND, target)
    assert isinstance(after, PaymentFacts)
    assert (after.captured, after.refunded, [r.amount for r in after.refunds]) == (600, 600, [600])
    with pytest.raises(ProviderRejected) as refused:
        adapter.submit(request(ActionKind.REFUND, target, 1))
    assert refused.value.code == "charge_already_refunded"


def test_a_deleted_customers_subscription_reads_as_canceled(
    adapter: StripeAdapter, setup: stripe.StripeClient
) -> None:
    basic, _ = prices(setup)
    sub = subscription(setup, basic)
    setup.v1.customers.delete(str(sub.customer))
    facts = adapter.facts(ActionKind.SUBSCRIPTION_CANCEL, sub.id)
    assert isinstance(facts, SubscriptionFacts)
    assert (facts.exists, facts.status) == (True, "canceled")
    owner = adapter.facts(ActionKind.CUSTOMER_CREDIT, str(sub.customer))
    assert isinstance(owner, CustomerFacts)
    assert owner.deleted is True


def test_cancelling_a_canceled_subscription_is_a_clear_refusal(
    adapter: StripeAdapter, setup: stripe.StripeClient
) -> None:
    basic, _ = prices(setup)
    sub = subscription(setup, basic)
    setup.v1.subscriptions.cancel(sub.id)
    action = request(ActionKind.SUBSCRIPTION_CANCEL, sub.id, None, None, at_period_end=False)
    with pytest.raises(ProviderRejected) as refused:
        adapter.submit(action)
    assert (refused.value.code, refused.value.http_status) == ("resource_missing", 404)
    assert f"{sub.id}: it was already canceled at " in str(refused.value)


def test_a_missing_subscription_stays_a_plain_refusal(adapter: StripeAdapter) -> None:
    action = request(ActionKind.SUBSCRIPTION_CANCEL, "sub_gone", None, None, at_period_end=False)
    with pytest.raises(ProviderRejected) as refused:
        adapter.submit(action)
    assert refused.value.code == "resource_missing"
    assert "already canceled" not in str(refused.value)


def test_a_discount_whose_coupon_expired_is_no_longer_in_effect(
    adapter: StripeAdapter, setup: stripe.StripeClient, sandbox: StripeSandbox
) -> None:
    owner = customer(setup)
    action = request(ActionKind.DISCOUNT, owner.id, None, None, percent_off=10)
    coupon = setup.v1.coupons.create(params={"percent_off": 10, "redeem_by": int(START) + 60})
    setup.v1.promotion_codes.create(
        params={
            "promotion": {"type": "coupon", "coupon": coupon.id},
            "customer": owner.id,
            "metadata": dict(action.metadata),
        }
    )
    found = adapter.find(action)
    assert found is not None and found.status is ProviderStatus.SUCCEEDED
    sandbox.advance_clock(61)
    expired = adapter.find(action)
    assert expired is not None and expired.status is ProviderStatus.CANCELED
