"""Disputes from the createDispute test card, and the events API."""

from __future__ import annotations

import pytest
import requests
import stripe
from stripe_sandbox_support import START, pay, raw
from stripe_spec import assert_stripe_object, require_specs

from integrations.stripe.sandbox import AccountKeys, SandboxHandle, StripeSandbox


def test_dispute_arrives_shortly_after_and_can_be_closed(
    client: stripe.StripeClient, sandbox: StripeSandbox
) -> None:
    pi = pay(client, 4200, payment_method="pm_card_createDispute")
    assert client.v1.disputes.list().data == []
    sandbox.advance_clock(2)
    disputes = client.v1.disputes.list(params={"charge": pi.latest_charge}).data
    assert len(disputes) == 1
    dispute = disputes[0]
    assert (dispute.amount, dispute.reason, dispute.status) == (
        4200,
        "fraudulent",
        "needs_response",
    )
    assert (dispute.charge, dispute.payment_intent, dispute.is_charge_refundable) == (
        pi.latest_charge,
        pi.id,
        False,
    )
    assert client.v1.disputes.retrieve(dispute.id).id == dispute.id
    created = client.v1.events.list(params={"type": "charge.dispute.created"}).data
    assert created[0].data.object.id == dispute.id

    closed = sandbox.close_dispute(dispute.id, "won")
    assert closed["status"] == "won"
    event = client.v1.events.list(params={"type": "charge.dispute.closed"}).data[0]
    assert (event.data.object.status, event.data.previous_attributes.status) == (
        "won",
        "needs_response",
    )


def test_merchant_can_accept_a_dispute(client: stripe.StripeClient, sandbox: StripeSandbox) -> None:
    pi = pay(client, payment_method="pm_card_createDispute")
    sandbox.advance_clock(5)
    dispute = client.v1.disputes.list(params={"payment_intent": pi.id}).data[0]
    lost = client.v1.disputes.close(dispute.id)
    assert lost.status == "lost"
    with pytest.raises(stripe.InvalidRequestError):
        client.v1.refunds.create(params={"payment_intent": pi.id})


def test_close_dispute_over_control_api(
    client: stripe.StripeClient, sandbox: StripeSandbox, server: SandboxHandle
) -> None:
    pi = pay(client, payment_method="pm_card_createDispute")
    control = {"Authorization": f"Bearer {server.control_token}"}
    advanced = requests.post(
        server.url + "/_sandbox/clock/advance", json={"seconds": 3}, headers=control, timeout=5
    )
    assert advanced.json()["now"] == START + 3
    dispute = client.v1.disputes.list().data[0]
    response = requests.post(
        server.url + f"/_sandbox/disputes/{dispute.id}/close",
        json={"status": "lost"},
        headers=control,
        timeout=5,
    )
    assert response.status_code == 200
    assert client.v1.disputes.retrieve(dispute.id).status == "lost"
    assert client.v1.charges.retrieve(pi.latest_charge).disputed is True


def test_events_carry_request_and_filters(client: stripe.StripeClient) -> None:
    customer = client.v1.customers.create(options={"idempotency_key": "make-customer"})
    pi = pay(client, customer=customer.id)
    client.v1.refunds.create(params={"payment_intent": pi.id})
    created = client.v1.events.list(params={"type": "customer.created"}).data[0]
    assert created.request.idempotency_key == "make-customer"
    assert created.request.id.startswith("req_")
    assert (created.livemode, created.pending_webhooks, created.api_version) == (
        False,
        0,
        "2026-07-29.dahlia",
    )
    assert created.created == int(START)
    assert client.v1.events.retrieve(created.id).data.object.id == customer.id
    charges = client.v1.events.list(params={"type": "charge.*"}).data
    assert {e.type for e in charges} == {"charge.succeeded", "charge.refunded"}
    both = client.v1.events.list(params={"types": ["refund.created", "customer.created"]}).data
    assert [e.type for e in both] == ["refund.created", "customer.created"]


def test_scheduled_transitions_have_no_request(
    client: stripe.StripeClient, sandbox: StripeSandbox
) -> None:
    pay(client, payment_method="pm_card_createDispute")
    sandbox.advance_clock(2)
    event = client.v1.events.list(params={"type": "charge.dispute.created"}).data[0]
    assert (event.request.id, event.request.idempotency_key) == (None, None)
    assert event.created == int(START) + 2


def test_dispute_and_event_objects_match_stripe_schema(
    client: stripe.StripeClient, sandbox: StripeSandbox, url: str, account: AccountKeys
) -> None:
    require_specs()
    pay(client, payment_method="pm_card_createDispute")
    sandbox.advance_clock(2)
    dispute = client.v1.disputes.list().data[0]
    assert_stripe_object(raw(url, "GET", f"/v1/disputes/{dispute.id}", account.secret_key).json())
    assert_stripe_object(raw(url, "GET", "/v1/disputes", account.secret_key).json())
    events = raw(url, "GET", "/v1/events", account.secret_key, {"limit": 100}).json()
    assert_stripe_object(events)
    for event in events["data"]:
        assert_stripe_object(event["data"]["object"])
