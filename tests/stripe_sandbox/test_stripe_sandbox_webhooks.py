"""Webhook endpoints and signed, retried, pausable delivery."""

from __future__ import annotations

import pytest
import requests
import stripe
from stripe_sandbox_support import client_for, pay, raw, wait_until, webhook_receiver

from integrations.stripe.sandbox import AccountKeys, SandboxHandle, StripeSandbox, signature_header


def _endpoint(client: stripe.StripeClient, url: str, events: list[str]) -> stripe.WebhookEndpoint:
    return client.v1.webhook_endpoints.create(params={"url": url, "enabled_events": events})


def test_endpoint_secret_is_shown_once(client: stripe.StripeClient) -> None:
    endpoint = _endpoint(client, "https://example.com/hook", ["refund.created"])
    assert endpoint.secret.startswith("whsec_")
    assert endpoint.status == "enabled"
    fetched = client.v1.webhook_endpoints.retrieve(endpoint.id)
    assert "secret" not in fetched
    assert [e.id for e in client.v1.webhook_endpoints.list().data] == [endpoint.id]
    deleted = client.v1.webhook_endpoints.delete(endpoint.id)
    assert deleted.to_dict() == {"id": endpoint.id, "object": "webhook_endpoint", "deleted": True}
    assert client.v1.webhook_endpoints.list().data == []


def test_deliveries_are_signed_and_verifiable(
    client: stripe.StripeClient, sandbox: StripeSandbox
) -> None:
    with webhook_receiver() as receiver:
        endpoint = _endpoint(client, receiver.url, ["refund.created", "charge.refunded"])
        pi = pay(client)
        refund = client.v1.refunds.create(params={"payment_intent": pi.id, "amount": 100})
        receiver.wait_for(lambda events: len(events) == 2)
        types = set()
        for delivery in receiver.received:
            event = stripe.Webhook.construct_event(
                delivery.body, delivery.signature, endpoint.secret
            )
            types.add(event.type)
            assert delivery.headers["Content-Type"].startswith("application/json")
        assert types == {"refund.created", "charge.refunded"}
        created = next(r.event for r in receiver.received if r.event["type"] == "refund.created")
        assert created["data"]["object"]["id"] == refund.id
        with pytest.raises(stripe.SignatureVerificationError):
            stripe.Webhook.construct_event(
                receiver.received[0].body, receiver.received[0].signature, "whsec_wrong"
            )
        assert wait_until(lambda: client.v1.events.retrieve(created["id"]).pending_webhooks == 0)


def test_signature_scheme() -> None:
    header = signature_header('{"id": "evt_1"}', "whsec_test", 1_700_000_000)
    timestamp, signature = header.split(",")
    assert timestamp == "t=1700000000"
    stripe.WebhookSignature.verify_header('{"id": "evt_1"}', header, "whsec_test", tolerance=None)
    assert signature.startswith("v1=")


def test_failed_deliveries_are_retried_with_backoff(
    client: stripe.StripeClient, sandbox: StripeSandbox
) -> None:
    with webhook_receiver() as receiver:
        receiver.statuses = [500, 503]
        _endpoint(client, receiver.url, ["customer.created"])
        client.v1.customers.create()
        events = receiver.wait_for(lambda got: len(got) == 3)
        assert len({e["id"] for e in events}) == 1
        assert sandbox.wait_for_webhooks(timeout=30)
        attempts = sandbox.webhook_attempts()
        assert [a.get("status") for a in attempts] == [500, 503, 200]
        assert [a["attempt"] for a in attempts] == [1, 2, 3]


def test_retries_are_bounded(client: stripe.StripeClient, sandbox: StripeSandbox) -> None:
    with webhook_receiver() as receiver:
        receiver.statuses = [500] * 10
        _endpoint(client, receiver.url, ["customer.created"])
        client.v1.customers.create()
        assert sandbox.wait_for_webhooks(timeout=30)
        assert len(receiver.received) == 4  # first try + 3 retries configured by the fixture
        assert sandbox.pending_webhooks() == []


def test_pause_redeliver_and_reorder(client: stripe.StripeClient, sandbox: StripeSandbox) -> None:
    with webhook_receiver() as receiver:
        endpoint = _endpoint(client, receiver.url, ["*"])
        sandbox.pause_webhooks()
        first = client.v1.customers.create()
        client.v1.customers.update(first.id, params={"name": "later"})
        pending = sandbox.pending_webhooks()
        assert len(pending) == 2
        created_id, updated_id = pending[0]["event"], pending[1]["event"]
        # Out of order: the update arrives before the creation it follows.
        sandbox.deliver_event(updated_id)
        sandbox.deliver_event(created_id)
        sandbox.discard_webhooks()
        sandbox.resume_webhooks()
        assert [e["type"] for e in receiver.events()] == ["customer.updated", "customer.created"]
        # A duplicate of an already delivered event.
        results = sandbox.deliver_event(created_id, endpoint.id)
        assert results[0]["ok"] is True
        ids = [e["id"] for e in receiver.events()]
        assert ids == [updated_id, created_id, created_id]
        for delivery in receiver.received:
            stripe.Webhook.construct_event(delivery.body, delivery.signature, endpoint.secret)


def test_paused_deliveries_flow_after_resume(
    client: stripe.StripeClient, sandbox: StripeSandbox
) -> None:
    with webhook_receiver() as receiver:
        _endpoint(client, receiver.url, ["customer.created"])
        sandbox.pause_webhooks()
        client.v1.customers.create()
        client.v1.customers.create()
        assert sandbox.wait_for_webhooks(timeout=30)
        assert receiver.received == []
        sandbox.resume_webhooks()
        receiver.wait_for(lambda got: len(got) == 2)


def test_only_subscribed_types_and_own_account(
    client: stripe.StripeClient, sandbox: StripeSandbox, url: str
) -> None:
    with webhook_receiver() as receiver:
        _endpoint(client, receiver.url, ["refund.failed"])
        other = client_for(url, sandbox.create_account().secret_key)
        _endpoint(other, receiver.url + "?other", ["customer.created"])
        client.v1.customers.create()
        pi = pay(client, payment_method="pm_card_refundFail")
        client.v1.refunds.create(params={"payment_intent": pi.id})
        sandbox.advance_clock(120)
        events = receiver.wait_for(lambda got: len(got) == 1)
        assert events[0]["type"] == "refund.failed"
        assert sandbox.wait_for_webhooks(timeout=30)
        assert len(receiver.received) == 1


def test_webhooks_over_the_control_api(
    server: SandboxHandle, client: stripe.StripeClient, account: AccountKeys
) -> None:
    control = {"Authorization": f"Bearer {server.control_token}"}
    with webhook_receiver() as receiver:
        _endpoint(client, receiver.url, ["customer.created"])
        requests.post(server.url + "/_sandbox/webhooks/pause", headers=control, timeout=5)
        client.v1.customers.create()
        pending = requests.get(
            server.url + "/_sandbox/webhooks/pending", headers=control, timeout=5
        ).json()
        assert len(pending) == 1
        delivered = requests.post(
            server.url + "/_sandbox/webhooks/deliver",
            json={"event": pending[0]["event"]},
            headers=control,
            timeout=5,
        ).json()
        assert delivered[0]["ok"] is True
        requests.post(server.url + "/_sandbox/webhooks/resume", headers=control, timeout=5)
        receiver.wait_for(lambda got: len(got) == 2)  # the redelivery, then the queued one
        attempts = requests.get(
            server.url + "/_sandbox/webhooks/attempts", headers=control, timeout=5
        ).json()
        assert [a["manual"] for a in attempts] == [True, False]
    assert (
        raw(server.url, "GET", "/v1/webhook_endpoints", account.secret_key).json()["data"][0]["url"]
        == receiver.url
    )
