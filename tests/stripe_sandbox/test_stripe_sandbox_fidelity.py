"""Behaviours Stripe documents that a simpler fake gets wrong: ``created`` filters on lists,
the released rest of a partial capture, a deleted customer's subscriptions, an expired
coupon's promotion codes, and a malformed ``Stripe-Version``."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
import stripe
from stripe_sandbox_support import START, event_types, pay, raw

from integrations.stripe.sandbox import AccountKeys, StripeSandbox

OLD = int(START)
NEW = int(START) + 100


def _monthly(client: stripe.StripeClient) -> stripe.Price:
    product = client.v1.products.create(params={"name": "Coffee club"})
    return client.v1.prices.create(
        params={
            "product": product.id,
            "currency": "usd",
            "unit_amount": 2000,
            "recurring": {"interval": "month"},
        }
    )


def _one_of_each(client: stripe.StripeClient, sandbox: StripeSandbox) -> dict[str, str]:
    """One object per dated list, created at the sandbox's current second (the dispute
    two sandbox seconds later)."""
    customer = client.v1.customers.create()
    intent = pay(client, 1000, customer=customer.id)
    refund = client.v1.refunds.create(params={"payment_intent": intent.id, "amount": 100})
    coupon = client.v1.coupons.create(params={"percent_off": 10})
    code = client.v1.promotion_codes.create(
        params={"promotion": {"type": "coupon", "coupon": coupon.id}}
    )
    price = _monthly(client)
    sub = client.v1.subscriptions.create(
        params={"customer": customer.id, "items": [{"price": price.id}]}
    )
    disputed = pay(client, 1000, payment_method="pm_card_createDispute")
    sandbox.advance_clock(2)
    dispute = client.v1.disputes.list(params={"payment_intent": disputed.id}).data[0]
    return {
        "customers": customer.id,
        "payment_intents": intent.id,
        "charges": str(intent.latest_charge),
        "refunds": refund.id,
        "coupons": coupon.id,
        "promotion_codes": code.id,
        "prices": price.id,
        "subscriptions": sub.id,
        "disputes": dispute.id,
    }


def test_every_dated_list_filters_on_created(
    client: stripe.StripeClient, sandbox: StripeSandbox
) -> None:
    old = _one_of_each(client, sandbox)
    sandbox.advance_clock(NEW - sandbox.now())
    new = _one_of_each(client, sandbox)
    lists: dict[str, Callable[[dict[str, Any]], stripe.ListObject[Any]]] = {
        "customers": lambda p: client.v1.customers.list(params=p),
        "payment_intents": lambda p: client.v1.payment_intents.list(params=p),
        "charges": lambda p: client.v1.charges.list(params=p),
        "refunds": lambda p: client.v1.refunds.list(params=p),
        "coupons": lambda p: client.v1.coupons.list(params=p),
        "promotion_codes": lambda p: client.v1.promotion_codes.list(params=p),
        "prices": lambda p: client.v1.prices.list(params=p),
        "subscriptions": lambda p: client.v1.subscriptions.list(params=p),
        "disputes": lambda p: client.v1.disputes.list(params=p),
    }
    for name, listing in lists.items():

        def ids(created: object, listing: Callable[..., Any] = listing) -> set[str]:
            return {o.id for o in listing({"created": created, "limit": 100}).data}

        after, before = ids({"gt": OLD + 50}), ids({"lt": OLD + 50})
        assert new[name] in after and old[name] not in after, name
        assert old[name] in before and new[name] not in before, name
        assert ids({"gte": NEW}) == after and ids({"lte": OLD + 2}) == before, name
        assert ids({"gt": OLD + 2, "lt": NEW}) == set(), name
        assert ids({"gte": OLD, "lte": NEW + 2}) == after | before, name
    # Plain created=N means exactly that second.
    assert [c.id for c in client.v1.customers.list(params={"created": NEW}).data] == [
        new["customers"]
    ]
    later = client.v1.events.list(params={"created": {"gte": NEW}, "limit": 100}).data
    earlier = client.v1.events.list(params={"created": {"lt": NEW}, "limit": 100}).data
    assert later and earlier
    assert all(e.created >= NEW for e in later) and all(e.created < NEW for e in earlier)


def test_created_filter_is_validated_like_stripe(url: str, account: AccountKeys) -> None:
    key = account.secret_key
    unknown = raw(url, "GET", "/v1/customers", key, {"created[after]": "1"})
    assert unknown.status_code == 400
    assert unknown.json()["error"]["param"] == "created[after]"
    assert unknown.json()["error"]["code"] == "parameter_unknown"
    not_a_number = raw(url, "GET", "/v1/refunds", key, {"created[gt]": "soon"})
    assert (not_a_number.status_code, not_a_number.json()["error"]["param"]) == (
        400,
        "created[gt]",
    )
    # Lists Stripe documents without a created filter refuse it.
    endpoints = raw(url, "GET", "/v1/webhook_endpoints", key, {"created": "1"})
    assert endpoints.json()["error"]["message"] == "Received unknown parameter: created"


def test_partial_capture_refunds_the_uncaptured_rest(client: stripe.StripeClient) -> None:
    held = pay(client, 1000, capture_method="manual")
    client.v1.payment_intents.capture(held.id, params={"amount_to_capture": 600})
    charge = client.v1.charges.retrieve(held.latest_charge)
    assert (charge.amount, charge.amount_captured, charge.amount_refunded) == (1000, 600, 400)
    assert charge.refunded is False
    released = charge.refunds.data
    assert [(r.amount, r.status, r.balance_transaction) for r in released] == [
        (400, "succeeded", None)
    ]
    assert event_types(client)[-3:] == [
        "charge.captured",
        "refund.created",
        "payment_intent.succeeded",
    ]
    # The captured 600 can still be refunded in full, and no more.
    with pytest.raises(stripe.InvalidRequestError) as over:
        client.v1.refunds.create(params={"payment_intent": held.id, "amount": 601})
    assert over.value.user_message == (
        "Refund amount ($6.01) is greater than unrefunded amount on charge ($6.00)"
    )
    rest = client.v1.refunds.create(params={"payment_intent": held.id})
    assert rest.amount == 600
    charge = client.v1.charges.retrieve(held.latest_charge)
    assert (charge.amount_refunded, charge.refunded) == (1000, True)
    with pytest.raises(stripe.InvalidRequestError) as again:
        client.v1.refunds.create(params={"payment_intent": held.id, "amount": 1})
    assert again.value.code == "charge_already_refunded"


def test_full_capture_releases_nothing(client: stripe.StripeClient) -> None:
    held = pay(client, 1000, capture_method="manual")
    client.v1.payment_intents.capture(held.id)
    charge = client.v1.charges.retrieve(held.latest_charge)
    assert (charge.amount_captured, charge.amount_refunded, charge.refunds.data) == (1000, 0, [])


def test_deleting_a_customer_cancels_its_subscriptions(client: stripe.StripeClient) -> None:
    price = _monthly(client)
    customer = client.v1.customers.create()
    first, second = (
        client.v1.subscriptions.create(
            params={"customer": customer.id, "items": [{"price": price.id}]}
        )
        for _ in range(2)
    )
    other = client.v1.subscriptions.create(
        params={"customer": client.v1.customers.create().id, "items": [{"price": price.id}]}
    )
    client.v1.customers.delete(customer.id)
    for sub in (first, second):
        gone = client.v1.subscriptions.retrieve(sub.id)
        assert (gone.status, gone.canceled_at, gone.ended_at) == ("canceled", OLD, OLD)
    assert client.v1.subscriptions.retrieve(other.id).status == "active"
    assert event_types(client)[-3:] == [
        "customer.subscription.deleted",
        "customer.subscription.deleted",
        "customer.deleted",
    ]
    deleted = client.v1.events.list(params={"type": "customer.subscription.deleted"}).data
    assert {e.data.object.id for e in deleted} == {first.id, second.id}
    assert all(e.data.previous_attributes.status == "active" for e in deleted)


def test_coupon_past_redeem_by_is_invalid_with_its_codes(
    client: stripe.StripeClient, sandbox: StripeSandbox
) -> None:
    coupon = client.v1.coupons.create(params={"percent_off": 20, "redeem_by": OLD + 60})
    code = client.v1.promotion_codes.create(
        params={"promotion": {"type": "coupon", "coupon": coupon.id}, "code": "SORRY20"}
    )
    assert (coupon.valid, code.active) == (True, True)
    sandbox.advance_clock(61)
    assert client.v1.coupons.retrieve(coupon.id).valid is False
    assert client.v1.promotion_codes.retrieve(code.id).active is False
    assert client.v1.promotion_codes.list(params={"active": True}).data == []
    assert [p.id for p in client.v1.promotion_codes.list(params={"active": False}).data] == [
        code.id
    ]
    with pytest.raises(stripe.InvalidRequestError) as expired:
        client.v1.promotion_codes.create(
            params={"promotion": {"type": "coupon", "coupon": coupon.id}}
        )
    assert (expired.value.code, expired.value.param) == ("coupon_expired", "promotion[coupon]")
    # Another code with the same text is no clash: the expired one is not active.
    fresh = client.v1.coupons.create(params={"percent_off": 20})
    again = client.v1.promotion_codes.create(
        params={"promotion": {"type": "coupon", "coupon": fresh.id}, "code": "SORRY20"}
    )
    assert again.active is True


@pytest.mark.parametrize("version", ["2019-2-19", "2026-13-01", "latest", "2024-06-20 beta"])
def test_malformed_stripe_version_is_a_400(url: str, account: AccountKeys, version: str) -> None:
    answer = raw(
        url, "GET", "/v1/customers", account.secret_key, headers={"Stripe-Version": version}
    )
    assert answer.status_code == 400
    error = answer.json()["error"]
    assert (error["type"], error["message"]) == (
        "invalid_request_error",
        f"Invalid Stripe API version: {version}",
    )


@pytest.mark.parametrize("version", ["2024-06-20", "2026-07-29.dahlia", "2025-03-31.basil; x=v1"])
def test_well_formed_stripe_version_is_echoed(url: str, account: AccountKeys, version: str) -> None:
    answer = raw(
        url, "GET", "/v1/customers", account.secret_key, headers={"Stripe-Version": version}
    )
    assert answer.status_code == 200
    assert answer.headers["Stripe-Version"] == version


def test_malformed_stripe_version_through_the_sdk(url: str, account: AccountKeys) -> None:
    bad = stripe.StripeClient(
        account.secret_key,
        base_addresses={"api": url},
        max_network_retries=0,
        stripe_version="2026-7-29",
    )
    with pytest.raises(stripe.InvalidRequestError) as refused:
        bad.v1.customers.create()
    assert refused.value.http_status == 400
    assert "2026-7-29" in str(refused.value.user_message)
