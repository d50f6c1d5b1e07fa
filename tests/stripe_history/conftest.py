"""Fixtures for the tests of Stripe's history reader: one sandbox for the run, an account
per test.

The sandbox's clock stands still at ``START``, so a history seeded at times before it is
the same in every run; every answer the sandbox gives during a test is checked against
Stripe's published descriptions when the test ends, so the reader is tested against
Stripe's shapes and nothing else. Each test makes its own account, read with a restricted
key holding read permissions only (``READ_ONLY``).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator, Mapping
from typing import Any

import pytest
import stripe
from stripe_history_support import READ_ONLY, START
from stripe_spec import assert_sandbox_answers

from integrations.stripe.history import StripeHistoryReader
from integrations.stripe.sandbox import AccountKeys, Clock, StripeSandbox

_answers: list[bytes] = []


@pytest.fixture(scope="session")
def history_sandbox() -> Iterator[StripeSandbox]:
    box = StripeSandbox(clock=Clock(start=START))
    serve = box.handle_api

    def recording(method: str, target: str, headers: Mapping[str, str], body: bytes) -> Any:
        response = serve(method, target, headers, body)
        if not response.drop and 200 <= response.status < 300:
            _answers.append(response.body)
        return response

    box.handle_api = recording  # type: ignore[method-assign]
    box.start()
    yield box
    box.stop()


@pytest.fixture(autouse=True)
def _answers_match_stripe() -> Iterator[None]:
    """Every answer of the test's sandbox checked against Stripe's specs afterwards."""
    _answers.clear()
    yield
    assert_sandbox_answers(json.loads(raw) for raw in _answers)
    _answers.clear()


@pytest.fixture
def url(history_sandbox: StripeSandbox) -> str:
    served = history_sandbox.url
    assert served is not None
    return served


@pytest.fixture
def account(history_sandbox: StripeSandbox) -> AccountKeys:
    """A test-mode account with a read-only restricted key."""
    return history_sandbox.create_account(restricted_keys=[{"permissions": READ_ONLY}])


@pytest.fixture
def make_reader(url: str) -> Callable[..., StripeHistoryReader]:
    def build(key: str, **options: Any) -> StripeHistoryReader:
        return StripeHistoryReader(key, livemode=False, api_base=url, **options)

    return build


@pytest.fixture
def reader(
    make_reader: Callable[..., StripeHistoryReader], account: AccountKeys
) -> StripeHistoryReader:
    return make_reader(account.restricted_keys[0].key)


@pytest.fixture
def setup(url: str, account: AccountKeys) -> stripe.StripeClient:
    """The SDK on the secret key: the shop's own systems making history now."""
    return stripe.StripeClient(
        account.secret_key, base_addresses={"api": url}, max_network_retries=0
    )


@pytest.fixture
def seed(history_sandbox: StripeSandbox, account: AccountKeys) -> Callable[..., Any]:
    """Seed the account's history in-process (the control API has its own test)."""
    return lambda records: history_sandbox.seed_history(account.id, records)
