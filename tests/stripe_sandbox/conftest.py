"""Fixtures for the Stripe sandbox tests: a fresh sandbox per test on a frozen clock.

Every test talks to the sandbox only through the real ``stripe`` SDK or raw HTTP, like
the product will; time only moves when a test advances the sandbox clock.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator, Mapping
from typing import Any

import pytest
import stripe
from stripe_sandbox_support import START, client_for
from stripe_spec import assert_sandbox_answers

from integrations.stripe.sandbox import AccountKeys, Clock, SandboxHandle, StripeSandbox


@pytest.fixture
def sandbox() -> Iterator[StripeSandbox]:
    """A sandbox on a frozen clock with fast webhook retries.

    Every successful JSON answer it gives during the test is checked against Stripe's
    published descriptions afterwards, so no object shape escapes the spec check.
    """
    box = StripeSandbox(
        clock=Clock(start=START),
        refund_failure_delay=60.0,
        dispute_delay=2.0,
        webhook_retry_delays=(0.05, 0.1, 0.2),
        webhook_timeout=30.0,  # a slow answer on a loaded machine is not a failed delivery
    )
    answers: list[bytes] = []
    serve = box.handle_api

    def recording(method: str, target: str, headers: Mapping[str, str], body: bytes) -> Any:
        response = serve(method, target, headers, body)
        if not response.drop and 200 <= response.status < 300:
            answers.append(response.body)
        return response

    box.handle_api = recording  # type: ignore[method-assign]
    yield box
    box.stop()
    assert_sandbox_answers(json.loads(raw) for raw in answers)


@pytest.fixture
def server(sandbox: StripeSandbox) -> SandboxHandle:
    """The sandbox serving HTTP on a free port."""
    return sandbox.start()


@pytest.fixture
def url(server: SandboxHandle) -> str:
    """Base URL of the running sandbox."""
    return server.url


@pytest.fixture
def account(sandbox: StripeSandbox) -> AccountKeys:
    """A test-mode account with a secret key."""
    return sandbox.create_account()


@pytest.fixture
def client(url: str, account: AccountKeys) -> stripe.StripeClient:
    """The SDK with the account's secret key."""
    return client_for(url, account.secret_key)


@pytest.fixture
def make_client(url: str) -> Callable[[str], stripe.StripeClient]:
    """Build an SDK client for any key."""
    return lambda key: client_for(url, key)
