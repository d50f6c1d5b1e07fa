"""``submit`` and ``find`` for every kind: one write under our key, recognisable afterwards."""

from __future__ import annotations

from dataclasses import replace

import pytest
import stripe
from stripe_adapter_support import customer, pay, prices, request, subscription

from integrations.provider import (
    ACTION_ID_METADATA_KEY,
    ActionKind,
    IdempotencyConflict,
    InvalidRequest,
    PaymentFacts,
    ProviderStatus,
    SubscriptionFacts,
)
from integrations.stripe.adapter import StripeAdapter
from integrations.stripe.sandbox import StripeSandbox


def test_refund_on_a_payment_intent_with_a_stripe_reason(
    adapter: StripeAdapter, setup: stripe.StripeClient
) -> None:
    intent = pay(setup, 1000)
    action = request(ActionKind.REFUND, intent.id, 400, reason="requested_by_customer")
    answer = adapter.submit(action)
    assert answer.status is ProviderStatus.SUCCEEDED
    assert answer.replayed is False
    refund = setup.v1.refunds.retrieve(answer.reference)
    assert (refund.amount, refund.payment_intent, refund.reason) == (
        400,
        intent.id,
        "requested_by_customer",
    )
    assert refund.metadata is not None
    assert refund.metadata.to_dict() == dict(action.metadata)
    found = adapter.find(action)
    assert found is not None
    assert (found.reference, found.status, found.replayed) == (
        answer.reference,
        ProviderStatus.SUCCEEDED,
        False,
    )


def test_refund_on_a_charge_keeps_our_own_reason_in_metadata(
    adapter: StripeAdapter, setup: stripe.StripeClient
) -> None:
    intent = pay(setup, 1000)
    charge_id = str(intent.latest_charge)
    answer = adapter.submit(request(ActionKind.REFUND, charge_id, 250, reason="arrived broken"))
    refund = setup.v1.refunds.retrieve(answer.reference)
    assert (refund.charge, refund.reason) == (charge_id, None)
    assert refund.metadata is not None
    assert refund.metadata["caseward_reason"] == "arrived broken"


def test_the_same_key_twice_is_replayed_not_repeated(
    adapter: StripeAdapter, setup: stripe.StripeClient
) -> None:
    intent = pay(setup, 1000)
    action = request(ActionKind.REFUND, intent.id, 300)
    first = adapter.submit(action)
    again = adapter.submit(action)
    assert (first.replayed, again.replayed) == (False, True)
    assert again.reference == first.reference
    facts = adapter.facts(ActionKind.REFUND, intent.id)
    assert isinstance(facts, PaymentFacts)
    assert facts.refunded == 300


def test_a_refund_found_later_reports_its_current_status(
    adapter: StripeAdapter, setup: stripe.StripeClient, sandbox: StripeSandbox
) -> None:
    intent = pay(setup, 1000, payment_method="pm_card_refundFail")
    action = request(ActionKind.REFUND, intent.id, 1000)
    assert adapter.submit(action).status is ProviderStatus.SUCCEEDED
    sandbox.advance_clock(120)
    found = adapter.find(action)
    assert found is not None
    assert found.status is ProviderStatus.FAILED
    assert found.failure_reason is not None


def test_find_pages_through_every_refund_and_never_writes(
    adapter: StripeAdapter, setup: stripe.StripeClient
) -> None:
    intent = pay(setup, 500)
    ours = request(ActionKind.REFUND, intent.id, 5)
    answer = adapter.submit(ours)
    for _ in range(100):  # ours is now on the second page
        setup.v1.refunds.create(params={"payment_intent": intent.id, "amount": 1})
    events_before = len(setup.v1.events.list(params={"limit": 100}).data)
    found = adapter.find(ours)
    assert found is not None
    assert found.reference == answer.reference
    assert adapter.find(request(ActionKind.REFUND, intent.id, 5)) is None
    assert len(setup.v1.events.list(params={"limit": 100}).data) == events_before


def test_customer_credit(adapter: StripeAdapter, setup: stripe.StripeClient) -> None:
    owner = customer(setup)
    action = request(ActionKind.CUSTOMER_CREDIT, owner.id, 1500, description="Late delivery")
    answer = adapter.submit(action)
    assert answer.status is ProviderStatus.SUCCEEDED
    assert answer.reference.startswith("cbtxn_")
    assert (answer.raw["amount"], answer.raw["description"]) == (-1500, "Late delivery")
    assert answer.raw["metadata"] == dict(action.metadata)
    assert setup.v1.customers.retrieve(owner.id).balance == -1500
    assert adapter.submit(action).replayed is True
    assert setup.v1.customers.retrieve(owner.id).balance == -1500
    found = adapter.find(action)
    assert found is not None
    assert found.reference == answer.reference
    assert adapter.find(request(ActionKind.CUSTOMER_CREDIT, owner.id, 1500)) is None


def test_percent_discount_is_a_single_use_code_for_the_customer(
    adapter: StripeAdapter, setup: stripe.StripeClient
) -> None:
    owner = customer(setup)
    action = request(ActionKind.DISCOUNT, owner.id, 900, percent_off=15, code="SORRY-15")
    answer = adapter.submit(action)
    assert answer.status is ProviderStatus.SUCCEEDED
    code = setup.v1.promotion_codes.retrieve(answer.reference)
    assert (code.code, code.customer, code.max_redemptions) == ("SORRY-15", owner.id, 1)
    assert code.metadata is not None
    assert code.metadata[ACTION_ID_METADATA_KEY] == action.action_id
    coupon = setup.v1.coupons.retrieve(str(answer.raw["coupon_id"]))
    assert (coupon.percent_off, coupon.amount_off, coupon.duration) == (15, None, "once")
    assert coupon.max_redemptions == 1
    assert coupon.metadata is not None
    assert coupon.metadata[ACTION_ID_METADATA_KEY] == action.action_id
    assert answer.raw["code"] == "SORRY-15"

    again = adapter.submit(action)
    assert (again.replayed, again.reference) == (True, answer.reference)
    assert len(setup.v1.coupons.list().data) == 1
    found = adapter.find(action)
    assert found is not None
    assert (found.reference, found.raw["coupon_id"]) == (answer.reference, coupon.id)


def test_amount_discount_repeating(adapter: StripeAdapter, setup: stripe.StripeClient) -> None:
    owner = customer(setup)
    answer = adapter.submit(
        request(ActionKind.DISCOUNT, owner.id, 500, duration="repeating", duration_in_months=3)
    )
    coupon = setup.v1.coupons.retrieve(str(answer.raw["coupon_id"]))
    assert (coupon.amount_off, coupon.currency, coupon.percent_off) == (500, "usd", None)
    assert (coupon.duration, coupon.duration_in_months) == ("repeating", 3)


def test_a_deactivated_code_is_found_as_canceled(
    adapter: StripeAdapter, setup: stripe.StripeClient
) -> None:
    owner = customer(setup)
    action = request(ActionKind.DISCOUNT, owner.id, 500)
    answer = adapter.submit(action)
    setup.v1.promotion_codes.update(answer.reference, params={"active": False})
    found = adapter.find(action)
    assert found is not None
    assert found.status is ProviderStatus.CANCELED


def test_cancel_at_period_end(adapter: StripeAdapter, setup: stripe.StripeClient) -> None:
    basic, _ = prices(setup)
    sub = subscription(setup, basic)
    action = request(ActionKind.SUBSCRIPTION_CANCEL, sub.id, at_period_end=True)
    assert adapter.find(action) is None
    answer = adapter.submit(action)
    assert (answer.reference, answer.status) == (sub.id, ProviderStatus.SUCCEEDED)
    facts = adapter.facts(ActionKind.SUBSCRIPTION_CANCEL, sub.id)
    assert isinstance(facts, SubscriptionFacts)
    assert (facts.status, facts.cancel_at_period_end) == ("active", True)
    assert facts.metadata[ACTION_ID_METADATA_KEY] == action.action_id
    found = adapter.find(action)
    assert found is not None
    assert found.status is ProviderStatus.SUCCEEDED

    setup.v1.subscriptions.update(sub.id, params={"cancel_at_period_end": False})
    withdrawn = adapter.find(action)
    assert withdrawn is not None
    assert withdrawn.status is ProviderStatus.CANCELED


def test_cancel_now(adapter: StripeAdapter, setup: stripe.StripeClient) -> None:
    basic, _ = prices(setup)
    sub = subscription(setup, basic)
    action = request(ActionKind.SUBSCRIPTION_CANCEL, sub.id, at_period_end=False)
    assert adapter.find(action) is None
    answer = adapter.submit(action)
    assert (answer.reference, answer.status, answer.raw["status"]) == (
        sub.id,
        ProviderStatus.SUCCEEDED,
        "canceled",
    )
    found = adapter.find(action)
    assert found is not None
    assert found.status is ProviderStatus.SUCCEEDED


def test_subscription_change(adapter: StripeAdapter, setup: stripe.StripeClient) -> None:
    basic, pro = prices(setup)
    sub = subscription(setup, basic)
    item_id = sub["items"].data[0].id
    more_of_the_same = request(
        ActionKind.SUBSCRIPTION_CHANGE, sub.id, items=[[basic, 3]], proration_behavior="none"
    )
    adapter.submit(more_of_the_same)
    facts = adapter.facts(ActionKind.SUBSCRIPTION_CHANGE, sub.id)
    assert isinstance(facts, SubscriptionFacts)
    assert [(i.id, i.price_id, i.quantity) for i in facts.items] == [(item_id, basic, 3)]

    action = request(ActionKind.SUBSCRIPTION_CHANGE, sub.id, items=[[pro, 2]])
    assert adapter.find(action) is None
    answer = adapter.submit(action)
    assert (answer.reference, answer.status) == (sub.id, ProviderStatus.SUCCEEDED)
    facts = adapter.facts(ActionKind.SUBSCRIPTION_CHANGE, sub.id)
    assert isinstance(facts, SubscriptionFacts)
    assert [(i.price_id, i.quantity) for i in facts.items] == [(pro, 2)]
    found = adapter.find(action)
    assert found is not None
    assert found.reference == sub.id
    # The items Stripe needs are computed from the current ones; once the change has
    # landed, a resend would differ, and Stripe's key check stops it from landing twice.
    with pytest.raises(IdempotencyConflict):
        adapter.submit(action)


@pytest.mark.parametrize(
    ("kind", "amount", "params", "problem"),
    [
        (ActionKind.REFUND, None, {}, "positive amount"),
        (ActionKind.REFUND, 0, {}, "positive amount"),
        (ActionKind.SUBSCRIPTION_CANCEL, None, {}, "at_period_end"),
        (ActionKind.SUBSCRIPTION_CHANGE, None, {"items": []}, "non-empty list"),
        (ActionKind.SUBSCRIPTION_CHANGE, None, {"items": [{"quantity": 2}]}, "(price, quantity)"),
        (ActionKind.DISCOUNT, None, {"percent_off": 120}, "percent_off"),
        (ActionKind.DISCOUNT, 500, {"duration": "repeating"}, "duration_in_months"),
    ],
)
def test_an_incomplete_request_is_refused_before_anything_is_sent(
    adapter: StripeAdapter,
    kind: ActionKind,
    amount: int | None,
    params: dict[str, object],
    problem: str,
) -> None:
    target = {ActionKind.REFUND: "pi_x", ActionKind.DISCOUNT: "cus_x"}.get(kind, "sub_x")
    with pytest.raises(InvalidRequest, match=problem):
        adapter.submit(replace(request(kind, target, amount), params=params))


def test_a_kind_given_as_plain_text_is_dispatched_exactly(
    adapter: StripeAdapter, setup: stripe.StripeClient
) -> None:
    intent = pay(setup, 1000)
    action = replace(request(ActionKind.REFUND, intent.id, 100), kind="refund")  # type: ignore[arg-type]
    assert adapter.submit(action).reference.startswith("re_")
    assert adapter.facts("refund", intent.id).exists  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="not a valid ActionKind"):
        adapter.submit(replace(action, kind="refund_everything"))  # type: ignore[arg-type]
