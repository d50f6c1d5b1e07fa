"""Idempotency keys: replay, mismatches, concurrency, expiry, what is (not) saved."""

from __future__ import annotations

import threading

import pytest
import requests
import stripe
from stripe_sandbox_support import pay, raw

from integrations.stripe.sandbox import FAULT_HEADER, AccountKeys, StripeSandbox


def _refund(
    url: str, key: str, idem: str, data: dict[str, object], **headers: str
) -> requests.Response:
    return raw(url, "POST", "/v1/refunds", key, data, {"Idempotency-Key": idem, **headers})


def test_replay_is_byte_identical_and_marked(
    client: stripe.StripeClient, url: str, account: AccountKeys
) -> None:
    pi = pay(client)
    data = {"payment_intent": pi.id, "amount": 250, "metadata[action]": "act_1"}
    first = _refund(url, account.secret_key, "act_1", data)
    second = _refund(url, account.secret_key, "act_1", data)
    assert first.status_code == second.status_code == 200
    assert "Idempotent-Replayed" not in first.headers
    assert second.headers["Idempotent-Replayed"] == "true"
    assert second.content == first.content
    assert second.headers["Original-Request"] == first.headers["Request-Id"]
    assert second.headers["Request-Id"] != first.headers["Request-Id"]
    assert first.headers["Request-Id"].startswith("req_")
    assert len(client.v1.refunds.list(params={"payment_intent": pi.id}).data) == 1


def test_sdk_with_same_key_gets_same_refund(client: stripe.StripeClient) -> None:
    pi = pay(client)
    options: stripe.RequestOptions = {"idempotency_key": "case-7-refund"}
    a = client.v1.refunds.create(params={"payment_intent": pi.id, "amount": 100}, options=options)
    b = client.v1.refunds.create(params={"payment_intent": pi.id, "amount": 100}, options=options)
    assert a.id == b.id
    assert client.v1.charges.retrieve(pi.latest_charge).amount_refunded == 100


def test_execution_errors_are_saved_and_replayed(
    client: stripe.StripeClient, url: str, account: AccountKeys
) -> None:
    pi = pay(client, 500)
    data = {"payment_intent": pi.id, "amount": 900}
    first = _refund(url, account.secret_key, "too-much", data)
    assert first.status_code == 400
    assert first.json()["error"]["code"] == "amount_too_large"
    assert first.headers["Stripe-Should-Retry"] == "false"
    replay = _refund(url, account.secret_key, "too-much", data)
    assert replay.headers["Idempotent-Replayed"] == "true"
    assert replay.content == first.content


def test_validation_errors_are_not_saved(
    client: stripe.StripeClient, url: str, account: AccountKeys
) -> None:
    pi = pay(client)
    bad = _refund(url, account.secret_key, "k-valid", {"payment_intent": pi.id, "reason": "nope"})
    assert bad.status_code == 400
    assert bad.json()["error"]["param"] == "reason"
    good = _refund(
        url, account.secret_key, "k-valid", {"payment_intent": pi.id, "reason": "duplicate"}
    )
    assert good.status_code == 200
    assert "Idempotent-Replayed" not in good.headers


def test_saved_500_is_replayed_and_the_refund_exists_once(
    client: stripe.StripeClient, url: str, account: AccountKeys
) -> None:
    pi = pay(client)
    data = {"payment_intent": pi.id, "amount": 300}
    first = _refund(
        url, account.secret_key, "k500", data, **{FAULT_HEADER: "error_500_after_commit"}
    )
    assert first.status_code == 500
    assert first.json()["error"]["type"] == "api_error"
    assert first.headers["Stripe-Should-Retry"] == "false"
    again = _refund(url, account.secret_key, "k500", data)
    assert again.status_code == 500
    assert again.headers["Idempotent-Replayed"] == "true"
    assert again.content == first.content
    refunds = client.v1.refunds.list(params={"payment_intent": pi.id}).data
    assert [r.amount for r in refunds] == [300]


def test_same_key_other_parameters_or_endpoint(client: stripe.StripeClient) -> None:
    pi = pay(client)
    options: stripe.RequestOptions = {"idempotency_key": "reused"}
    client.v1.refunds.create(params={"payment_intent": pi.id, "amount": 100}, options=options)
    with pytest.raises(stripe.IdempotencyError) as params_changed:
        client.v1.refunds.create(params={"payment_intent": pi.id, "amount": 101}, options=options)
    assert params_changed.value.http_status == 400
    assert params_changed.value.error is not None
    assert params_changed.value.error.type == "idempotency_error"
    assert "same parameters" in str(params_changed.value.user_message)
    assert "'reused'" in str(params_changed.value.user_message)
    with pytest.raises(stripe.IdempotencyError) as other_endpoint:
        client.v1.customers.create(params={}, options=options)
    assert "same endpoint" in str(other_endpoint.value.user_message)


def test_key_longer_than_255_is_refused(
    url: str, account: AccountKeys, client: stripe.StripeClient
) -> None:
    pi = pay(client)
    response = _refund(url, account.secret_key, "k" * 256, {"payment_intent": pi.id})
    assert response.status_code == 400
    assert "1-255 characters" in response.json()["error"]["message"]
    assert client.v1.refunds.list().data == []
    assert _refund(url, account.secret_key, "k" * 255, {"payment_intent": pi.id}).status_code == 200


def test_concurrent_request_with_the_same_key_gets_409(
    client: stripe.StripeClient, url: str, account: AccountKeys
) -> None:
    pi = pay(client)
    data = {"payment_intent": pi.id, "amount": 100}
    results: list[requests.Response] = []

    def send() -> None:
        # Both hold the key for 3 s once they claim it: whichever is second must find it
        # in use, even when a loaded machine starts the two threads far apart.
        results.append(
            _refund(url, account.secret_key, "busy", data, **{FAULT_HEADER: "delay;ms=3000"})
        )

    threads = [threading.Thread(target=send) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=30)
    assert sorted(r.status_code for r in results) == [200, 409]
    done = next(r for r in results if r.status_code == 200)
    busy = next(r for r in results if r.status_code == 409)
    body = busy.json()["error"]
    assert (body["type"], body["code"]) == ("idempotency_error", "idempotency_key_in_use")
    assert busy.headers["Stripe-Should-Retry"] == "true"
    replay = _refund(url, account.secret_key, "busy", data)
    assert replay.headers["Idempotent-Replayed"] == "true"
    assert replay.json()["id"] == done.json()["id"]
    assert len(client.v1.refunds.list().data) == 1


def test_sdk_sees_409_as_retryable_api_error(client: stripe.StripeClient) -> None:
    pi = pay(client)
    outcomes: list[object] = []
    options: stripe.RequestOptions = {
        "idempotency_key": "held",
        "headers": {FAULT_HEADER: "delay:3000"},  # the key stays in use while both arrive
    }

    def send() -> None:
        try:
            outcomes.append(
                client.v1.refunds.create(params={"payment_intent": pi.id}, options=options)
            )
        except stripe.StripeError as exc:
            outcomes.append(exc)

    threads = [threading.Thread(target=send) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=30)
    errors = [o for o in outcomes if isinstance(o, stripe.StripeError)]
    assert len(errors) == 1
    assert isinstance(errors[0], stripe.APIError)
    assert errors[0].http_status == 409
    assert errors[0].error is not None
    assert errors[0].error.code == "idempotency_key_in_use"
    assert errors[0].headers is not None
    assert errors[0].headers["Stripe-Should-Retry"] == "true"


def test_keys_expire_after_24_hours_on_the_clock(
    client: stripe.StripeClient, sandbox: StripeSandbox, url: str, account: AccountKeys
) -> None:
    pi = pay(client, 1000)
    data = {"payment_intent": pi.id, "amount": 100}
    first = _refund(url, account.secret_key, "daily", data)
    sandbox.advance_clock(24 * 3600 - 1)
    assert (
        _refund(url, account.secret_key, "daily", data).headers.get("Idempotent-Replayed") == "true"
    )
    sandbox.advance_clock(1)
    fresh = _refund(url, account.secret_key, "daily", data)
    assert "Idempotent-Replayed" not in fresh.headers
    assert fresh.json()["id"] != first.json()["id"]
    assert client.v1.charges.retrieve(pi.latest_charge).amount_refunded == 200


def test_keys_are_scoped_per_account(
    sandbox: StripeSandbox, url: str, client: stripe.StripeClient, account: AccountKeys
) -> None:
    other = sandbox.create_account()
    other_client = stripe.StripeClient(
        other.secret_key, base_addresses={"api": url}, max_network_retries=0
    )
    mine = client.v1.customers.create(params={"name": "A"}, options={"idempotency_key": "shared"})
    theirs = other_client.v1.customers.create(
        params={"name": "A"}, options={"idempotency_key": "shared"}
    )
    assert mine.id != theirs.id
