"""``facts``: what the checks see of payments, customers and subscriptions, fresh from Stripe."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
import stripe
from stripe_adapter_support import START, customer, pay, prices, request, subscription

from integrations.provider import (
    ActionKind,
    CustomerFacts,
    InvalidRequest,
    PaymentFacts,
    ProviderError,
    ProviderStatus,
    SubscriptionFacts,
)
from integrations.stripe.adapter import StripeAdapter
from integrations.stripe.sandbox import StripeSandbox

STARTED = datetime.fromtimestamp(START, UTC)


def test_payment_intent_facts(adapter: StripeAdapter, setup: stripe.StripeClient) -> None:
    owner = customer(setup)
    intent = pay(setup, 2500, customer=owner.id)
    facts = adapter.facts(ActionKind.REFUND, intent.id)
    assert facts == PaymentFacts(
        id=intent.id,
        exists=True,
        currency="usd",
        amount=2500,
        captured=2500,
        paid=True,
        disputed=False,
        customer_id=owner.id,
        created=STARTED,
        refunds=(),
    )


def test_partial_refunds_add_up_on_the_intent_and_on_its_charge(
    adapter: StripeAdapter, setup: stripe.StripeClient
) -> None:
    intent = pay(setup, 1000)
    first = setup.v1.refunds.create(
        params={"payment_intent": intent.id, "amount": 300, "metadata": {"note": "first"}}
    )
    setup.v1.refunds.create(params={"payment_intent": intent.id, "amount": 450})
    charge_id = str(intent.latest_charge)
    for target in (intent.id, charge_id):
        facts = adapter.facts(ActionKind.REFUND, target)
        assert isinstance(facts, PaymentFacts)
        assert facts.captured == 1000
        assert facts.refunded == 750
        assert [r.amount for r in facts.refunds] == [450, 300]  # newest first
        oldest = facts.refunds[-1]
        assert (oldest.id, oldest.status, oldest.currency) == (
            first.id,
            ProviderStatus.SUCCEEDED,
            "usd",
        )
        assert oldest.metadata == {"note": "first"}
    assert adapter.facts(ActionKind.REFUND, charge_id).id == charge_id


def test_uncaptured_payment_has_nothing_captured(
    adapter: StripeAdapter, setup: stripe.StripeClient
) -> None:
    intent = pay(setup, 800, capture_method="manual")
    facts = adapter.facts(ActionKind.REFUND, intent.id)
    assert isinstance(facts, PaymentFacts)
    assert (facts.exists, facts.amount, facts.captured) == (True, 800, 0)


def test_more_refunds_than_a_page_are_all_listed(
    adapter: StripeAdapter, setup: stripe.StripeClient
) -> None:
    intent = pay(setup, 500)
    for _ in range(105):  # the adapter pages by 100
        setup.v1.refunds.create(params={"payment_intent": intent.id, "amount": 1})
    facts = adapter.facts(ActionKind.REFUND, intent.id)
    assert isinstance(facts, PaymentFacts)
    assert len({r.id for r in facts.refunds}) == 105
    assert facts.refunded == 105


def test_failed_refunds_do_not_count_against_the_capture(
    adapter: StripeAdapter, setup: stripe.StripeClient, sandbox: StripeSandbox
) -> None:
    intent = pay(setup, 1000, payment_method="pm_card_refundFail")
    setup.v1.refunds.create(params={"payment_intent": intent.id, "amount": 400})
    sandbox.advance_clock(120)
    facts = adapter.facts(ActionKind.REFUND, intent.id)
    assert isinstance(facts, PaymentFacts)
    (refund,) = facts.refunds
    assert refund.status is ProviderStatus.FAILED
    assert refund.failure_reason is not None
    assert facts.refunded == 0


def test_disputed_charge(
    adapter: StripeAdapter, setup: stripe.StripeClient, sandbox: StripeSandbox
) -> None:
    intent = pay(setup, 1200, payment_method="pm_card_createDispute")
    sandbox.advance_clock(5)
    facts = adapter.facts(ActionKind.REFUND, intent.id)
    assert isinstance(facts, PaymentFacts)
    assert facts.disputed is True


@pytest.mark.parametrize("target", ["pi_doesNotExist0000", "ch_doesNotExist0000"])
def test_a_missing_payment_does_not_exist(adapter: StripeAdapter, target: str) -> None:
    assert adapter.facts(ActionKind.REFUND, target) == PaymentFacts(id=target, exists=False)


def test_a_target_is_read_as_one_id_never_as_a_path_to_another_object(
    adapter: StripeAdapter, setup: stripe.StripeClient
) -> None:
    owner = customer(setup)
    target = f"pi_x/../../customers/{owner.id}"
    assert adapter.facts(ActionKind.REFUND, target) == PaymentFacts(id=target, exists=False)


def test_a_refund_target_must_be_a_payment_intent_or_charge(adapter: StripeAdapter) -> None:
    with pytest.raises(InvalidRequest, match="payment intent or a charge"):
        adapter.facts(ActionKind.REFUND, "in_123")


def test_customer_facts_with_credits_and_discounts(
    adapter: StripeAdapter, setup: stripe.StripeClient
) -> None:
    owner = customer(setup, "grace@example.com")
    credit = adapter.submit(request(ActionKind.CUSTOMER_CREDIT, owner.id, 700))
    discount = adapter.submit(request(ActionKind.DISCOUNT, owner.id, None, percent_off=20))
    facts = adapter.facts(ActionKind.CUSTOMER_CREDIT, owner.id)
    assert isinstance(facts, CustomerFacts)
    assert (facts.exists, facts.deleted, facts.email) == (True, False, "grace@example.com")
    assert (facts.balance, facts.balance_currency) == (-700, "usd")
    assert [(c.id, c.amount, c.currency) for c in facts.credits] == [
        (credit.reference, -700, "usd")
    ]
    (granted,) = facts.discounts
    assert granted.id == discount.reference
    assert (granted.percent_off, granted.amount_off, granted.currency) == (20, None, None)
    assert granted.coupon_id == discount.raw["coupon_id"]
    assert granted.code == discount.raw["code"]
    assert adapter.facts(ActionKind.DISCOUNT, owner.id) == facts


def test_old_balance_transactions_are_left_out(
    adapter: StripeAdapter, setup: stripe.StripeClient, sandbox: StripeSandbox
) -> None:
    owner = customer(setup)
    adapter.submit(request(ActionKind.CUSTOMER_CREDIT, owner.id, 100))
    sandbox.advance_clock(91 * 86400)
    recent = adapter.submit(request(ActionKind.CUSTOMER_CREDIT, owner.id, 200))
    facts = adapter.facts(ActionKind.CUSTOMER_CREDIT, owner.id)
    assert isinstance(facts, CustomerFacts)
    assert [c.id for c in facts.credits] == [recent.reference]
    assert facts.balance == -300


def test_a_deleted_customer(adapter: StripeAdapter, setup: stripe.StripeClient) -> None:
    owner = customer(setup)
    setup.v1.customers.delete(owner.id)
    assert adapter.facts(ActionKind.CUSTOMER_CREDIT, owner.id) == CustomerFacts(
        id=owner.id, exists=True, deleted=True
    )


def test_a_missing_customer(adapter: StripeAdapter) -> None:
    assert adapter.facts(ActionKind.DISCOUNT, "cus_missing") == CustomerFacts(
        id="cus_missing", exists=False
    )


def test_customers_with_an_email_are_the_ones_stripe_lists_under_it(
    adapter: StripeAdapter, setup: stripe.StripeClient
) -> None:
    first, second = customer(setup, "kim@example.com"), customer(setup, "kim@example.com")
    customer(setup, "lee@example.com")
    gone = customer(setup, "kim@example.com")
    setup.v1.customers.delete(gone.id)

    found = adapter.customers_with_email("kim@example.com")

    assert {(c.id, c.email) for c in found} == {
        (first.id, "kim@example.com"),
        (second.id, "kim@example.com"),
    }
    assert len(found) == 2
    assert adapter.customers_with_email("nobody@example.com") == ()
    # Stripe matches the email exactly: an address written with capitals is also asked
    # in lower case, as checkouts most often keep it.
    assert {c.id for c in adapter.customers_with_email("Kim@Example.com")} == {
        first.id,
        second.id,
    }


def test_subscription_facts(adapter: StripeAdapter, setup: stripe.StripeClient) -> None:
    basic, _ = prices(setup)
    sub = subscription(setup, basic, quantity=3)
    facts = adapter.facts(ActionKind.SUBSCRIPTION_CHANGE, sub.id)
    assert isinstance(facts, SubscriptionFacts)
    assert (facts.exists, facts.status, facts.currency) == (True, "active", "usd")
    assert facts.customer_id == sub.customer
    assert facts.cancel_at_period_end is False
    assert [(i.id, i.price_id, i.quantity) for i in facts.items] == [
        (sub["items"].data[0].id, basic, 3)
    ]
    assert facts.current_period_end == datetime.fromtimestamp(
        sub["items"].data[0].current_period_end, UTC
    )
    assert facts.current_period_end > STARTED
    assert adapter.facts(ActionKind.SUBSCRIPTION_CANCEL, sub.id) == facts


def test_a_missing_subscription(adapter: StripeAdapter) -> None:
    assert adapter.facts(ActionKind.SUBSCRIPTION_CANCEL, "sub_missing") == SubscriptionFacts(
        id="sub_missing", exists=False
    )


def test_a_failed_read_is_an_error_not_an_unknown_outcome(
    adapter: StripeAdapter, setup: stripe.StripeClient, sandbox: StripeSandbox
) -> None:
    intent = pay(setup)
    sandbox.arm_fault("error_500_before_commit", method="GET", path="/v1/payment_intents/*")
    with pytest.raises(ProviderError) as failed:
        adapter.facts(ActionKind.REFUND, intent.id)
    assert type(failed.value) is ProviderError
    assert "HTTP 500" in str(failed.value)
