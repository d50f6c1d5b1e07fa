"""Subscriptions: create, change, cancel (now or at period end), and the clock."""

from __future__ import annotations

import pytest
import stripe
from stripe_sandbox_support import START, event_types, raw
from stripe_spec import assert_stripe_object, require_specs

from integrations.stripe.sandbox import AccountKeys, StripeSandbox


@pytest.fixture
def monthly(client: stripe.StripeClient) -> stripe.Price:
    product = client.v1.products.create(params={"name": "Coffee club"})
    return client.v1.prices.create(
        params={
            "product": product.id,
            "currency": "usd",
            "unit_amount": 2000,
            "recurring": {"interval": "month"},
        }
    )


def test_create_retrieve_list(client: stripe.StripeClient, monthly: stripe.Price) -> None:
    customer = client.v1.customers.create()
    sub = client.v1.subscriptions.create(
        params={"customer": customer.id, "items": [{"price": monthly.id, "quantity": 2}]}
    )
    assert (sub.status, sub.customer, sub.currency, sub.cancel_at_period_end) == (
        "active",
        customer.id,
        "usd",
        False,
    )
    item = sub["items"].data[0]
    assert (item.price.id, item.quantity) == (monthly.id, 2)
    assert item.current_period_start == int(START)
    assert item.current_period_end == int(START) + 30 * 86400  # mid-June to mid-July 2025
    inline = client.v1.subscriptions.create(
        params={
            "customer": customer.id,
            "items": [
                {
                    "price_data": {
                        "currency": "usd",
                        "product": monthly.product,
                        "unit_amount": 900,
                        "recurring": {"interval": "year"},
                    }
                }
            ],
            "trial_period_days": 14,
        }
    )
    assert inline.status == "trialing"
    assert inline.trial_end == int(START) + 14 * 86400
    assert client.v1.subscriptions.retrieve(sub.id).id == sub.id
    listed = client.v1.subscriptions.list(params={"customer": customer.id})
    assert [s.id for s in listed.data] == [inline.id, sub.id]
    assert [s.id for s in client.v1.subscriptions.list(params={"status": "trialing"}).data] == [
        inline.id
    ]
    assert "customer.subscription.created" in event_types(client)


def test_update_items_and_cancel_at_period_end(
    client: stripe.StripeClient, monthly: stripe.Price
) -> None:
    customer = client.v1.customers.create()
    sub = client.v1.subscriptions.create(
        params={"customer": customer.id, "items": [{"price": monthly.id}]}
    )
    item_id = sub["items"].data[0].id
    bigger = client.v1.prices.create(
        params={
            "product": monthly.product,
            "currency": "usd",
            "unit_amount": 3000,
            "recurring": {"interval": "month"},
        }
    )
    changed = client.v1.subscriptions.update(
        sub.id,
        params={
            "items": [{"id": item_id, "price": bigger.id, "quantity": 3}],
            "metadata": {"case": "c4"},
        },
    )
    line = changed["items"].data[0]
    assert (line.id, line.price.id, line.quantity) == (item_id, bigger.id, 3)
    assert changed.metadata["case"] == "c4"
    ending = client.v1.subscriptions.update(sub.id, params={"cancel_at_period_end": True})
    assert ending.cancel_at_period_end is True
    assert ending.cancel_at == line.current_period_end
    assert ending.status == "active"
    update = client.v1.events.list(params={"type": "customer.subscription.updated"}).data[0]
    assert update.data.previous_attributes.cancel_at_period_end is False


def test_cancel_is_immediate_and_final(client: stripe.StripeClient, monthly: stripe.Price) -> None:
    customer = client.v1.customers.create()
    sub = client.v1.subscriptions.create(
        params={"customer": customer.id, "items": [{"price": monthly.id}]}
    )
    canceled = client.v1.subscriptions.cancel(
        sub.id, params={"cancellation_details": {"comment": "moving abroad"}}
    )
    assert (canceled.status, canceled.canceled_at, canceled.ended_at) == (
        "canceled",
        int(START),
        int(START),
    )
    assert canceled.cancellation_details.comment == "moving abroad"
    assert "customer.subscription.deleted" in event_types(client)
    # A second DELETE finds no such subscription, as on Stripe; a retrieve still sees it.
    with pytest.raises(stripe.InvalidRequestError) as twice:
        client.v1.subscriptions.cancel(sub.id)
    assert (twice.value.http_status, twice.value.code) == (404, "resource_missing")
    assert twice.value.user_message == f"No such subscription: '{sub.id}'"
    assert client.v1.subscriptions.retrieve(sub.id).status == "canceled"
    with pytest.raises(stripe.InvalidRequestError) as changed:
        client.v1.subscriptions.update(sub.id, params={"cancel_at_period_end": True})
    assert changed.value.http_status == 400
    assert changed.value.user_message == (
        "A canceled subscription can only update its cancellation_details and metadata."
    )
    assert (
        client.v1.subscriptions.update(sub.id, params={"metadata": {"note": "x"}}).metadata["note"]
        == "x"
    )
    assert client.v1.subscriptions.list(params={"customer": customer.id}).data == []
    assert [s.id for s in client.v1.subscriptions.list(params={"status": "canceled"}).data] == [
        sub.id
    ]
    assert [s.id for s in client.v1.subscriptions.list(params={"status": "all"}).data] == [sub.id]


def test_the_clock_ends_trials_and_period_end_cancellations(
    client: stripe.StripeClient, sandbox: StripeSandbox, monthly: stripe.Price
) -> None:
    customer = client.v1.customers.create()
    trial = client.v1.subscriptions.create(
        params={"customer": customer.id, "items": [{"price": monthly.id}], "trial_period_days": 7}
    )
    leaving = client.v1.subscriptions.create(
        params={
            "customer": customer.id,
            "items": [{"price": monthly.id}],
            "cancel_at_period_end": True,
        }
    )
    sandbox.advance_clock(8 * 86400)
    assert client.v1.subscriptions.retrieve(trial.id).status == "active"
    assert client.v1.subscriptions.retrieve(leaving.id).status == "active"
    sandbox.advance_clock(30 * 86400)
    gone = client.v1.subscriptions.retrieve(leaving.id)
    assert (gone.status, gone.cancellation_details.reason) == ("canceled", "cancellation_requested")
    renewed = client.v1.subscriptions.retrieve(trial.id)
    assert renewed["items"].data[0].current_period_start > int(START) + 7 * 86400


def test_subscription_objects_match_stripe_schema(
    client: stripe.StripeClient, url: str, account: AccountKeys, monthly: stripe.Price
) -> None:
    require_specs()
    customer = client.v1.customers.create()
    sub = client.v1.subscriptions.create(
        params={"customer": customer.id, "items": [{"price": monthly.id}]}
    )
    assert_stripe_object(raw(url, "GET", f"/v1/subscriptions/{sub.id}", account.secret_key).json())
    assert_stripe_object(
        raw(url, "DELETE", f"/v1/subscriptions/{sub.id}", account.secret_key).json()
    )
    assert_stripe_object(
        raw(url, "GET", "/v1/subscriptions", account.secret_key, {"status": "all"}).json()
    )
    assert_stripe_object(raw(url, "GET", f"/v1/prices/{monthly.id}", account.secret_key).json())
