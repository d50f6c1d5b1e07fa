"""Fault injection: every kind, armed by header, from Python and over the control API."""

from __future__ import annotations

import time

import pytest
import requests
import stripe
from stripe_sandbox_support import client_for, pay, raw, wait_until

from integrations.stripe.sandbox import FAULT_HEADER, AccountKeys, SandboxHandle, StripeSandbox


def _with_fault(kind: str) -> stripe.RequestOptions:
    return {"headers": {FAULT_HEADER: kind}}


def test_drop_after_commit_then_retry_replays(
    client: stripe.StripeClient, sandbox: StripeSandbox
) -> None:
    pi = pay(client)
    params: dict[str, object] = {
        "payment_intent": pi.id,
        "amount": 400,
        "metadata": {"action": "a1"},
    }
    sandbox.arm_fault("drop_after_commit", method="POST", path="/v1/refunds")
    with pytest.raises(stripe.APIConnectionError):
        client.v1.refunds.create(params=params, options={"idempotency_key": "a1"})
    refunds = client.v1.refunds.list(params={"payment_intent": pi.id}).data
    assert len(refunds) == 1
    assert refunds[0].metadata["action"] == "a1"
    retried = client.v1.refunds.create(params=params, options={"idempotency_key": "a1"})
    assert retried.id == refunds[0].id
    assert retried.last_response is not None
    assert retried.last_response.headers["Idempotent-Replayed"] == "true"
    assert len(client.v1.refunds.list(params={"payment_intent": pi.id}).data) == 1


def test_drop_before_commit_does_nothing(client: stripe.StripeClient) -> None:
    pi = pay(client)
    options: stripe.RequestOptions = {
        "idempotency_key": "b1",
        "headers": {FAULT_HEADER: "drop_before_commit"},
    }
    with pytest.raises(stripe.APIConnectionError):
        client.v1.refunds.create(params={"payment_intent": pi.id}, options=options)
    assert client.v1.refunds.list().data == []
    done = client.v1.refunds.create(
        params={"payment_intent": pi.id}, options={"idempotency_key": "b1"}
    )
    assert done.last_response is not None
    assert "Idempotent-Replayed" not in done.last_response.headers


def test_error_500_before_commit_is_not_saved(
    client: stripe.StripeClient, url: str, account: AccountKeys
) -> None:
    pi = pay(client)
    with pytest.raises(stripe.APIError) as failed:
        client.v1.refunds.create(
            params={"payment_intent": pi.id},
            options={"idempotency_key": "c1", "headers": {FAULT_HEADER: "error_500_before_commit"}},
        )
    assert failed.value.http_status == 500
    assert failed.value.headers is not None
    assert failed.value.headers["Stripe-Should-Retry"] == "true"
    assert client.v1.refunds.list().data == []
    retry = client.v1.refunds.create(
        params={"payment_intent": pi.id}, options={"idempotency_key": "c1"}
    )
    assert retry.status == "succeeded"


def test_error_500_after_commit_commits(client: stripe.StripeClient) -> None:
    pi = pay(client)
    with pytest.raises(stripe.APIError):
        client.v1.refunds.create(
            params={"payment_intent": pi.id, "amount": 100},
            options={"idempotency_key": "d1", "headers": {FAULT_HEADER: "error_500_after_commit"}},
        )
    assert [r.amount for r in client.v1.refunds.list().data] == [100]
    with pytest.raises(stripe.APIError):  # the saved 500 is what the key answers
        client.v1.refunds.create(
            params={"payment_intent": pi.id, "amount": 100}, options={"idempotency_key": "d1"}
        )
    assert len(client.v1.refunds.list().data) == 1


def test_delay_makes_client_time_out_but_the_refund_happens(
    sandbox: StripeSandbox, url: str, account: AccountKeys, client: stripe.StripeClient
) -> None:
    pi = pay(client)
    impatient = stripe.StripeClient(
        account.secret_key,
        base_addresses={"api": url},
        max_network_retries=0,
        http_client=stripe.RequestsClient(timeout=0.2),
    )
    # The sandbox answers nothing for 500 ms, so a client waiting 200 ms always gives up,
    # however slow the machine (the delay is the behaviour under test).
    sandbox.arm_fault("delay", path="/v1/refunds", ms=500)
    with pytest.raises(stripe.APIConnectionError):
        impatient.v1.refunds.create(
            params={"payment_intent": pi.id}, options={"idempotency_key": "e1"}
        )
    # The provider finishes the work after the client gave up: an unknown outcome.
    wait_until(lambda: client.v1.refunds.list().data, timeout=30)
    assert len(client.v1.refunds.list().data) == 1


def test_delay_after_commit(client: stripe.StripeClient, url: str, account: AccountKeys) -> None:
    # A lower bound only: the sandbox's pause is the behaviour under test, and a loaded
    # machine can only make the answer later.
    started = time.monotonic()
    response = raw(
        url,
        "POST",
        "/v1/customers",
        account.secret_key,
        {"name": "x"},
        {FAULT_HEADER: "delay;ms=150;when=after"},
    )
    assert response.status_code == 200
    assert time.monotonic() - started >= 0.15


def test_armed_faults_match_and_count_down(
    client: stripe.StripeClient, sandbox: StripeSandbox
) -> None:
    pi = pay(client, 1000)
    sandbox.arm_fault("error_500_before_commit", method="POST", path="/v1/refunds*", count=2)
    for _ in range(2):
        with pytest.raises(stripe.APIError):
            client.v1.refunds.create(params={"payment_intent": pi.id, "amount": 100})
    assert client.v1.customers.create().id.startswith("cus_")  # other paths unaffected
    assert client.v1.refunds.create(params={"payment_intent": pi.id, "amount": 100}).amount == 100
    assert sandbox.armed_faults() == []


def test_fault_matching_by_idempotency_key(
    client: stripe.StripeClient, sandbox: StripeSandbox
) -> None:
    pi = pay(client, 1000)
    sandbox.arm_fault("drop_before_commit", idempotency_key="only-this")
    ok = client.v1.refunds.create(
        params={"payment_intent": pi.id, "amount": 100}, options={"idempotency_key": "other"}
    )
    assert ok.amount == 100
    with pytest.raises(stripe.APIConnectionError):
        client.v1.refunds.create(
            params={"payment_intent": pi.id, "amount": 100},
            options={"idempotency_key": "only-this"},
        )


def test_faults_over_the_control_api(
    server: SandboxHandle, client: stripe.StripeClient, account: AccountKeys
) -> None:
    pi = pay(client)
    control = {"Authorization": f"Bearer {server.control_token}"}
    armed = requests.post(
        server.url + "/_sandbox/faults",
        json={"kind": "drop_after_commit", "path": "/v1/refunds", "method": "POST"},
        headers=control,
        timeout=5,
    )
    assert armed.status_code == 200
    assert armed.json()["kind"] == "drop_after_commit"
    listed = requests.get(server.url + "/_sandbox/faults", headers=control, timeout=5).json()
    assert [f["kind"] for f in listed] == ["drop_after_commit"]
    with pytest.raises(stripe.APIConnectionError):
        client.v1.refunds.create(params={"payment_intent": pi.id})
    assert len(client.v1.refunds.list().data) == 1
    requests.post(
        server.url + "/_sandbox/faults",
        json={"kind": "drop_before_commit"},
        headers=control,
        timeout=5,
    )
    assert (
        requests.delete(server.url + "/_sandbox/faults", headers=control, timeout=5).status_code
        == 200
    )
    assert client.v1.customers.create().object == "customer"
    bad = requests.post(
        server.url + "/_sandbox/faults", json={"kind": "explode"}, headers=control, timeout=5
    )
    assert bad.status_code == 400


def test_global_latency(
    sandbox: StripeSandbox, client: stripe.StripeClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The pauses the sandbox takes are recorded rather than timed: that the pause is gone
    # after clearing must not depend on how fast the machine answers.
    pauses: list[float] = []

    def pause(seconds: float) -> None:
        pauses.append(seconds)
        time.sleep(seconds)

    monkeypatch.setattr(sandbox.engine, "_sleep", pause)
    sandbox.set_latency(120)
    started = time.monotonic()
    client.v1.customers.list()
    assert time.monotonic() - started >= 0.12  # a lower bound: the pause is real
    assert pauses == [0.12]
    sandbox.clear_faults()
    client.v1.customers.list()
    assert pauses == [0.12]


def test_faults_also_hit_reads(sandbox: StripeSandbox, url: str, account: AccountKeys) -> None:
    reader = client_for(url, account.secret_key)
    sandbox.arm_fault("drop_before_commit", method="GET", path="/v1/refunds")
    with pytest.raises(stripe.APIConnectionError):
        reader.v1.refunds.list()
    assert reader.v1.refunds.list().data == []
