"""One order's money seen from two providers: the linen shop's Shopify order #1001 was paid
through Stripe by ``pi_linen``, so a refund through Shopify (target: the order) and one
through Stripe (target: the payment) give back the same $96.00."""

from __future__ import annotations

from guard_builders import PAYMENT, aprons, check, in_flight, past, payment, propose, usd

from app.guard import CheckName, InFlightStatus, Outcome, ProposedAction
from integrations.provider import PaymentFacts, ProviderStatus

ORDER = "gid://shopify/Order/1001"


def _through_shopify(amount: int) -> ProposedAction:
    return propose(amount=usd(amount), target=ORDER, provider="shopify", money_ref=PAYMENT)


def _order_as_payment() -> PaymentFacts:
    """Shopify's view: the order as a payment, nothing refunded there."""
    return payment(id=ORDER)


def test_a_refund_of_the_order_itself_goes_with_the_order() -> None:
    verdict = check(_through_shopify(4800), _order_as_payment(), order=aprons())

    assert verdict.outcome is Outcome.NEEDS_APPROVAL
    matched = verdict.check(CheckName.ORDER_MATCHES)
    assert matched.reason == "The refund is of order #1001 itself."
    # What a reviewer (and the stored verdict) sees beside the words.
    assert matched.facts == {"order": ORDER, "order_payment": PAYMENT, "target": ORDER}


def test_our_stripe_refund_of_the_same_money_in_flight_counts_against_a_shopify_refund() -> None:
    ours = [
        in_flight("act_s", usd(6000), status=InFlightStatus.UNKNOWN, money_ref=PAYMENT),
        in_flight("act_o", usd(9600), target="pi_other", money_ref="pi_other"),
    ]

    fits = check(_through_shopify(3600), _order_as_payment(), in_flight=ours, order=aprons())
    too_much = check(_through_shopify(3700), _order_as_payment(), in_flight=ours, order=aprons())

    assert fits.outcome is Outcome.NEEDS_APPROVAL
    assert too_much.reasons == (
        "Refund of $37.00 exceeds what is left to refund "
        "($36.00 of $96.00 captured: $0.00 refunded, $60.00 in flight).",
    )
    facts = too_much.check(CheckName.REFUNDABLE_REMAINING).facts
    assert facts["in_flight_actions"] == ["act_s"]


def test_our_settled_stripe_refund_counts_as_refunded_for_a_shopify_refund() -> None:
    history = [
        past("act_s", usd(4800), money_ref=PAYMENT),
        past("act_f", usd(4800), money_ref=PAYMENT, status=ProviderStatus.FAILED),
        past("act_x", usd(4800), target="pi_other", money_ref="pi_other"),
    ]

    verdict = check(_through_shopify(4900), _order_as_payment(), history=history, order=aprons())

    assert verdict.reasons == (
        "Refund of $49.00 exceeds what is left to refund "
        "($48.00 of $96.00 captured: $48.00 refunded, $0.00 in flight).",
    )
    facts = verdict.check(CheckName.REFUNDABLE_REMAINING).facts
    assert facts["refunded_elsewhere"] == ["act_s"]


def test_a_refund_through_the_same_provider_is_counted_from_its_facts_only() -> None:
    """Shopify's own facts already show our earlier Shopify refunds; counting our record
    as well would count the same money twice."""
    history = [past("act_1", usd(4800), target=ORDER, provider="shopify", money_ref=PAYMENT)]

    verdict = check(_through_shopify(9600), _order_as_payment(), history=history, order=aprons())

    assert verdict.check(CheckName.REFUNDABLE_REMAINING).passed
