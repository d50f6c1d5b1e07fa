"""PaymentIntents and charges: confirm, capture, cancel, declines, currencies, lists."""

from __future__ import annotations

import pytest
import stripe
from stripe_sandbox_support import event_types, pay


def test_automatic_capture_creates_a_paid_charge(client: stripe.StripeClient) -> None:
    customer = client.v1.customers.create()
    pi = pay(client, 2500, customer=customer.id, metadata={"order": "1001"})
    assert (pi.status, pi.amount_received, pi.amount_capturable) == ("succeeded", 2500, 0)
    assert pi.payment_method.startswith("pm_") and pi.payment_method != "pm_card_visa"
    charge = client.v1.charges.retrieve(pi.latest_charge)
    assert (charge.amount, charge.amount_captured, charge.amount_refunded) == (2500, 2500, 0)
    assert (charge.paid, charge.captured, charge.refunded, charge.disputed) == (
        True,
        True,
        False,
        False,
    )
    assert (charge.status, charge.payment_intent, charge.customer) == (
        "succeeded",
        pi.id,
        customer.id,
    )
    assert charge.payment_method_details.card.last4 == "4242"
    assert charge.refunds.url == f"/v1/charges/{charge.id}/refunds"
    assert event_types(client) == [
        "customer.created",
        "payment_intent.created",
        "charge.succeeded",
        "payment_intent.succeeded",
    ]


def test_create_then_confirm(client: stripe.StripeClient) -> None:
    pi = client.v1.payment_intents.create(params={"amount": 1000, "currency": "usd"})
    assert (pi.status, pi.latest_charge) == ("requires_payment_method", None)
    with pytest.raises(stripe.InvalidRequestError) as no_method:
        client.v1.payment_intents.confirm(pi.id)
    assert no_method.value.code == "payment_intent_unexpected_state"
    confirmed = client.v1.payment_intents.confirm(
        pi.id, params={"payment_method": "pm_card_mastercard"}
    )
    assert confirmed.status == "succeeded"
    with pytest.raises(stripe.InvalidRequestError) as twice:
        client.v1.payment_intents.confirm(pi.id)
    assert "status of succeeded" in str(twice.value.user_message)


def test_manual_capture_full_and_partial(client: stripe.StripeClient) -> None:
    held = pay(client, 3000, capture_method="manual")
    assert (held.status, held.amount_capturable) == ("requires_capture", 3000)
    charge = client.v1.charges.retrieve(held.latest_charge)
    assert (charge.captured, charge.amount_captured, charge.paid) == (False, 0, True)
    with pytest.raises(stripe.InvalidRequestError) as too_much:
        client.v1.payment_intents.capture(held.id, params={"amount_to_capture": 3001})
    assert too_much.value.param == "amount_to_capture"
    captured = client.v1.payment_intents.capture(held.id, params={"amount_to_capture": 2000})
    assert (captured.status, captured.amount_received) == ("succeeded", 2000)
    charge = client.v1.charges.retrieve(held.latest_charge)
    assert (charge.captured, charge.amount_captured) == (True, 2000)
    with pytest.raises(stripe.InvalidRequestError) as over:
        client.v1.refunds.create(params={"payment_intent": held.id, "amount": 2001})
    assert over.value.code == "amount_too_large"
    with pytest.raises(stripe.InvalidRequestError) as again:
        client.v1.payment_intents.capture(held.id)
    assert again.value.code == "payment_intent_unexpected_state"


def test_cancel_releases_and_refuses_after_success(client: stripe.StripeClient) -> None:
    held = pay(client, 1000, capture_method="manual")
    canceled = client.v1.payment_intents.cancel(
        held.id, params={"cancellation_reason": "abandoned"}
    )
    assert (canceled.status, canceled.cancellation_reason) == ("canceled", "abandoned")
    done = pay(client)
    with pytest.raises(stripe.InvalidRequestError) as refused:
        client.v1.payment_intents.cancel(done.id)
    assert refused.value.user_message == (
        "You cannot cancel this PaymentIntent because it has a status of succeeded. Only a "
        "PaymentIntent with one of the following statuses may be canceled: "
        "requires_payment_method, requires_capture, requires_confirmation, requires_action, "
        "processing."
    )


def test_declined_card_is_a_402_card_error(client: stripe.StripeClient) -> None:
    with pytest.raises(stripe.CardError) as declined:
        pay(client, 1000, payment_method="pm_card_chargeDeclined")
    err = declined.value
    assert (err.http_status, err.code, err.user_message) == (
        402,
        "card_declined",
        "Your card was declined.",
    )
    assert err.json_body is not None
    body = err.json_body["error"]
    assert body["decline_code"] == "generic_decline"
    assert body["type"] == "card_error"
    pi = client.v1.payment_intents.retrieve(body["payment_intent"]["id"])
    assert pi.status == "requires_payment_method"
    assert pi.last_payment_error.code == "card_declined"
    failed = client.v1.charges.retrieve(body["charge"])
    assert (failed.status, failed.paid, failed.failure_code) == ("failed", False, "card_declined")
    assert "charge.failed" in event_types(client)
    with pytest.raises(stripe.InvalidRequestError):
        client.v1.refunds.create(params={"charge": failed.id})


@pytest.mark.parametrize(
    ("currency", "amount", "too_small"), [("usd", 1999, 49), ("jpy", 3000, 49), ("kwd", 2500, 199)]
)
def test_currencies_and_minimum_amounts(
    client: stripe.StripeClient, currency: str, amount: int, too_small: int
) -> None:
    pi = pay(client, amount, currency)
    charge = client.v1.charges.retrieve(pi.latest_charge)
    assert (charge.amount_captured, charge.currency) == (amount, currency)
    with pytest.raises(stripe.InvalidRequestError) as small:
        pay(client, too_small, currency)
    assert (small.value.code, small.value.param) == ("amount_too_small", "amount")
    with pytest.raises(stripe.InvalidRequestError) as bad:
        pay(client, amount, "xyz")
    assert bad.value.param == "currency"


def test_lists_filter_by_customer_and_payment_intent(client: stripe.StripeClient) -> None:
    alice = client.v1.customers.create()
    a1, a2 = pay(client, customer=alice.id), pay(client, customer=alice.id)
    other = pay(client)
    assert [p.id for p in client.v1.payment_intents.list(params={"customer": alice.id}).data] == [
        a2.id,
        a1.id,
    ]
    assert [c.id for c in client.v1.charges.list(params={"customer": alice.id}).data] == [
        a2.latest_charge,
        a1.latest_charge,
    ]
    assert [c.id for c in client.v1.charges.list(params={"payment_intent": other.id}).data] == [
        other.latest_charge
    ]
    assert len(client.v1.charges.list().data) == 3


def test_charge_metadata_update(client: stripe.StripeClient) -> None:
    pi = pay(client)
    charge = client.v1.charges.update(pi.latest_charge, params={"metadata": {"note": "vip"}})
    assert charge.metadata["note"] == "vip"
    event = client.v1.events.list(params={"type": "charge.updated"}).data[0]
    assert event.data.previous_attributes.to_dict() == {"metadata": {"note": None}}
