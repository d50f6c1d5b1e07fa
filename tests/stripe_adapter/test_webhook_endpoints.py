"""Registering Caseward's webhook endpoint at Stripe with the restricted key."""

from __future__ import annotations

from collections.abc import Callable

import pytest
import stripe

from integrations.provider import PermissionDenied
from integrations.stripe.adapter import WEBHOOK_EVENTS, StripeAdapter
from integrations.stripe.sandbox import DEMO_PERMISSIONS, AccountKeys, StripeSandbox


def test_register_returns_the_endpoint_and_its_signing_secret(
    adapter: StripeAdapter, setup: stripe.StripeClient
) -> None:
    url = "https://caseward.example/webhooks/stripe/shop_1"
    endpoint_id, secret = adapter.register_webhook_endpoint(url, WEBHOOK_EVENTS)
    assert endpoint_id.startswith("we_") and secret.startswith("whsec_")
    stored = setup.v1.webhook_endpoints.retrieve(endpoint_id)
    assert (stored.url, stored.enabled_events, stored.status) == (
        url,
        list(WEBHOOK_EVENTS),
        "enabled",
    )
    assert "secret" not in stored  # Stripe shows the secret only once
    other_id, other_secret = adapter.register_webhook_endpoint(url, ["refund.updated"])
    assert other_id != endpoint_id and other_secret != secret


def test_the_events_caseward_needs_are_ones_the_sandbox_sends(
    sandbox: StripeSandbox, account: AccountKeys, setup: stripe.StripeClient
) -> None:
    # Arrange every kind of change Caseward listens for, then compare.
    product = setup.v1.products.create(params={"name": "Club"})
    price = setup.v1.prices.create(
        params={
            "product": product.id,
            "currency": "usd",
            "unit_amount": 500,
            "recurring": {"interval": "month"},
        }
    )
    owner = setup.v1.customers.create()
    sub = setup.v1.subscriptions.create(
        params={"customer": owner.id, "items": [{"price": price.id}]}
    )
    setup.v1.subscriptions.update(sub.id, params={"metadata": {"note": "x"}})
    setup.v1.subscriptions.cancel(sub.id)
    paid = setup.v1.payment_intents.create(
        params={
            "amount": 1000,
            "currency": "usd",
            "payment_method": "pm_card_refundFail",
            "confirm": True,
        }
    )
    setup.v1.refunds.create(params={"payment_intent": paid.id, "amount": 100})
    disputed = setup.v1.payment_intents.create(
        params={
            "amount": 1000,
            "currency": "usd",
            "payment_method": "pm_card_createDispute",
            "confirm": True,
        }
    )
    sandbox.advance_clock(120)
    dispute = setup.v1.disputes.list(params={"payment_intent": disputed.id}).data[0]
    sandbox.close_dispute(dispute.id, "won")
    sent = {e.type for e in setup.v1.events.list(params={"limit": 100}).auto_paging_iter()}
    assert set(WEBHOOK_EVENTS) <= sent


def test_a_key_without_webhook_write_is_denied_naming_the_permission(
    sandbox: StripeSandbox, account: AccountKeys, make_adapter: Callable[..., StripeAdapter]
) -> None:
    key = sandbox.add_restricted_key(account.id, {"refunds": "write", "webhook_endpoints": "read"})
    with pytest.raises(PermissionDenied) as denied:
        make_adapter(key.key).register_webhook_endpoint("https://x.example/h", WEBHOOK_EVENTS)
    assert "'rak_webhook_write'" in str(denied.value)
    assert denied.value.http_status == 403


def test_the_demo_key_may_register_endpoints() -> None:
    assert DEMO_PERMISSIONS["webhook_endpoints"] == "write"


def test_register_refuses_what_stripe_would() -> None:
    adapter = StripeAdapter("rk_test_51" + "x" * 40, livemode=False, api_base="http://127.0.0.1:9")
    with pytest.raises(ValueError, match="URL"):
        adapter.register_webhook_endpoint("caseward.example/hook", WEBHOOK_EVENTS)
    with pytest.raises(ValueError, match="event"):
        adapter.register_webhook_endpoint("https://caseward.example/hook", [])
