"""Fixtures for the Stripe adapter tests: a fresh Stripe sandbox per test, over real HTTP.

The adapter runs on a restricted key holding exactly the permissions its refusal message
asks merchants for, so these tests also prove that list is enough. Setup (payments,
customers, subscriptions) goes through the SDK with the account's secret key, the way a
shop's own systems would have created them.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from datetime import UTC, datetime

import pytest
import stripe
from stripe_adapter_support import ADAPTER_PERMISSIONS, START

from integrations.stripe.adapter import StripeAdapter
from integrations.stripe.sandbox import AccountKeys, Clock, SandboxHandle, StripeSandbox


@pytest.fixture
def sandbox() -> Iterator[StripeSandbox]:
    """A sandbox on a frozen clock: time moves only when a test advances it."""
    box = StripeSandbox(clock=Clock(start=START), dispute_delay=2.0)
    yield box
    box.stop()


@pytest.fixture
def server(sandbox: StripeSandbox) -> SandboxHandle:
    return sandbox.start()


@pytest.fixture
def account(sandbox: StripeSandbox) -> AccountKeys:
    """A test-mode account with a secret key and the adapter's restricted key."""
    return sandbox.create_account(restricted_keys=[{"permissions": ADAPTER_PERMISSIONS}])


@pytest.fixture
def restricted_key(account: AccountKeys) -> str:
    return account.restricted_keys[0].key


@pytest.fixture
def setup(server: SandboxHandle, account: AccountKeys) -> stripe.StripeClient:
    """The SDK on the secret key, for arranging what the adapter then reads."""
    return stripe.StripeClient(
        account.secret_key, base_addresses={"api": server.url}, max_network_retries=0
    )


@pytest.fixture
def pauses() -> list[float]:
    """Pauses the adapter asked for between retries (it never really sleeps in tests)."""
    return []


@pytest.fixture
def make_adapter(
    server: SandboxHandle, sandbox: StripeSandbox, pauses: list[float]
) -> Callable[..., StripeAdapter]:
    """Build an adapter on any key, with the sandbox's clock and recorded pauses."""

    def build(key: str, **options: object) -> StripeAdapter:
        settings: dict[str, object] = {
            "livemode": False,
            "api_base": server.url,
            "timeout_seconds": 30.0,  # tests of timeouts set their own
            "sleep": pauses.append,
            "now": lambda: datetime.fromtimestamp(sandbox.now(), UTC),
        }
        settings.update(options)
        return StripeAdapter(key, **settings)  # type: ignore[arg-type]

    return build


@pytest.fixture
def adapter(make_adapter: Callable[..., StripeAdapter], restricted_key: str) -> StripeAdapter:
    return make_adapter(restricted_key)
