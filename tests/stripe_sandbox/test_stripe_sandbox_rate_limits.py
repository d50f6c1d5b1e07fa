"""Stripe's per-account rate limit: off unless asked for; past it a 429 that ran nothing.

Windows here are an hour long, so whether a request is over the limit never depends on
how fast the machine runs the test.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import requests
import stripe
from stripe_sandbox_support import raw

from integrations.stripe.sandbox import AccountKeys, RateLimits, SandboxHandle, StripeSandbox

HOUR = 3600.0
ROOT = Path(__file__).resolve().parents[2]


def _control(server: SandboxHandle, path: str, body: dict[str, Any]) -> requests.Response:
    return requests.post(
        server.url + "/_sandbox" + path,
        json=body,
        headers={"Authorization": f"Bearer {server.control_token}"},
        timeout=5,
    )


def test_stripe_documents_25_per_second_in_test_mode_and_100_in_live() -> None:
    limits = RateLimits()
    assert (limits.test_read, limits.test_write, limits.live_read, limits.live_write) == (
        25,
        25,
        100,
        100,
    )
    assert limits.per_seconds == 1.0
    assert RateLimits.parse("stripe") == limits
    assert RateLimits.parse("test=2/1,per=60") == RateLimits(
        test_read=2, test_write=1, per_seconds=60.0
    )
    with pytest.raises(ValueError, match="READ/WRITE"):
        RateLimits.parse("test=2")


def test_over_the_write_limit_is_stripes_429_and_nothing_runs(
    sandbox: StripeSandbox, client: stripe.StripeClient, url: str, account: AccountKeys
) -> None:
    sandbox.set_rate_limits(RateLimits(test_read=100, test_write=2, per_seconds=HOUR))
    client.v1.customers.create(params={"email": "a@example.com"})
    client.v1.customers.create(params={"email": "b@example.com"})
    with pytest.raises(stripe.RateLimitError) as limited:
        client.v1.customers.create(
            params={"email": "c@example.com"}, options={"idempotency_key": "k-429"}
        )
    error = limited.value
    assert error.http_status == 429
    assert error.json_body is not None
    body = error.json_body["error"]
    assert body["request_log_url"].startswith("https://dashboard.stripe.com/test/logs/req_")
    del body["request_log_url"]
    assert body == {
        "code": "rate_limit",
        "doc_url": "https://stripe.com/docs/error-codes/rate-limit",
        "message": "Request rate limit exceeded. Learn more about rate limits here "
        "https://stripe.com/docs/rate-limits.",
        "type": "invalid_request_error",
    }
    assert error.headers is not None
    assert error.headers["Stripe-Should-Retry"] == "true"
    assert 0 < int(error.headers["Retry-After"]) <= HOUR
    # Reads have their own budget, and they show the third customer was never made.
    emails = [c.email for c in client.v1.customers.list().data]
    assert emails == ["b@example.com", "a@example.com"]
    # The key was not used up: once allowed, the same key runs with other parameters.
    sandbox.set_rate_limits(None)
    made = raw(
        url,
        "POST",
        "/v1/customers",
        account.secret_key,
        {"email": "d@example.com"},
        headers={"Idempotency-Key": "k-429"},
    )
    assert made.status_code == 200
    assert "Idempotent-Replayed" not in made.headers
    assert made.json()["email"] == "d@example.com"


def test_reads_are_limited_apart_from_writes(
    sandbox: StripeSandbox, client: stripe.StripeClient
) -> None:
    sandbox.set_rate_limits(RateLimits(test_read=1, test_write=5, per_seconds=HOUR))
    client.v1.customers.list()
    with pytest.raises(stripe.RateLimitError):
        client.v1.customers.list()
    assert client.v1.customers.create().object == "customer"


def test_limits_per_account_through_the_control_api(
    sandbox: StripeSandbox,
    server: SandboxHandle,
    account: AccountKeys,
    make_client: Callable[[str], stripe.StripeClient],
) -> None:
    other = sandbox.create_account()
    limited, free = make_client(account.secret_key), make_client(other.secret_key)
    answer = _control(
        server,
        f"/accounts/{account.id}/rate_limits",
        {"limits": {"test_write": 1, "per_seconds": HOUR}},
    )
    assert answer.status_code == 200
    limited.v1.customers.create()
    with pytest.raises(stripe.RateLimitError):
        limited.v1.customers.create()
    for _ in range(3):
        free.v1.customers.create()
    # A sandbox-wide limit, with the first account exempted.
    assert _control(server, "/rate_limits", {"limits": {"test_write": 1, "per_seconds": HOUR}}).ok
    assert _control(server, f"/accounts/{account.id}/rate_limits", {"limits": "off"}).ok
    for _ in range(3):
        limited.v1.customers.create()
    free.v1.customers.create()  # counting starts when a limit applies
    with pytest.raises(stripe.RateLimitError):
        free.v1.customers.create()
    bad = _control(server, "/rate_limits", {"limits": {"test_write": 0}})
    assert bad.status_code == 400
    assert _control(server, f"/accounts/{account.id}/rate_limits", {"limits": None}).ok
    with pytest.raises(stripe.RateLimitError):
        limited.v1.customers.create()


def test_live_and_test_mode_have_their_own_limits(
    sandbox: StripeSandbox, make_client: Callable[[str], stripe.StripeClient]
) -> None:
    keys = sandbox.create_account(
        live=True, rate_limits=RateLimits(test_write=1, live_write=2, per_seconds=HOUR)
    )
    assert keys.live_secret_key is not None
    test, live = make_client(keys.secret_key), make_client(keys.live_secret_key)
    test.v1.customers.create()
    live.v1.customers.create()
    live.v1.customers.create()
    with pytest.raises(stripe.RateLimitError):
        test.v1.customers.create()
    with pytest.raises(stripe.RateLimitError):
        live.v1.customers.create()


def test_the_process_takes_rate_limits_from_its_flags() -> None:
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "integrations.stripe.sandbox",
            "--port",
            "0",
            "--rate-limits",
            "test=50/1,per=3600",
        ],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "STRIPE_SANDBOX_CONTROL_TOKEN": "test-token"},
    )
    try:
        assert process.stdout is not None
        printed: dict[str, str] = {}
        while "STRIPE_SANDBOX_SECRET_KEY" not in printed:
            line = process.stdout.readline()
            assert line, "the sandbox exited before printing its keys"
            name, _, value = line.strip().partition("=")
            printed[name] = value
        client = stripe.StripeClient(
            printed["STRIPE_SANDBOX_SECRET_KEY"],
            base_addresses={"api": printed["STRIPE_SANDBOX_URL"]},
            max_network_retries=0,
        )
        client.v1.customers.create()
        with pytest.raises(stripe.RateLimitError):
            client.v1.customers.create()
    finally:
        process.send_signal(signal.SIGTERM)
        process.wait(timeout=10)
