"""Writes that provably did nothing: Stripe's 429 (``Throttled``) and a refused connection
(``NotSent``); every other transport failure of a write stays ``OutcomeUnknown`` (timeouts:
``test_errors.py``)."""

from __future__ import annotations

import socket
from collections.abc import Callable

import pytest
import stripe
from stripe_adapter_support import pay, request

from integrations.provider import (
    ActionKind,
    NotSent,
    OutcomeUnknown,
    PaymentFacts,
    ProviderError,
    ProviderStatus,
    Throttled,
)
from integrations.stripe.adapter import StripeAdapter
from integrations.stripe.sandbox import RateLimits, StripeSandbox

HOUR = 3600.0


def _closed_port() -> int:
    """A local port nothing listens on (bound, then released)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def test_a_rate_limited_write_is_throttled_with_stripes_wait(
    adapter: StripeAdapter, setup: stripe.StripeClient, sandbox: StripeSandbox
) -> None:
    intent = pay(setup, 1000)
    sandbox.set_rate_limits(RateLimits(test_read=100, test_write=1, per_seconds=HOUR))
    adapter.submit(request(ActionKind.REFUND, intent.id, 100))
    action = request(ActionKind.REFUND, intent.id, 200)
    with pytest.raises(Throttled) as throttled:
        adapter.submit(action)
    assert throttled.value.retry_after is not None
    assert 0 < throttled.value.retry_after <= HOUR
    assert "429" in str(throttled.value)
    facts = adapter.facts(ActionKind.REFUND, intent.id)
    assert isinstance(facts, PaymentFacts)
    assert facts.refunded == 100  # the throttled refund did not happen
    sandbox.set_rate_limits(None)
    again = adapter.submit(action)  # same key: Stripe did not keep it
    assert (again.status, again.replayed) == (ProviderStatus.SUCCEEDED, False)


def test_a_rate_limited_read_is_throttled_too(
    adapter: StripeAdapter, setup: stripe.StripeClient, sandbox: StripeSandbox
) -> None:
    # The worker reads fresh facts before every send: a 429 there means "ask again later".
    intent = pay(setup, 1000)
    sandbox.set_rate_limits(RateLimits(test_read=1, test_write=100, per_seconds=HOUR))
    adapter.facts(ActionKind.REFUND, intent.id)
    with pytest.raises(Throttled) as throttled:
        adapter.facts(ActionKind.REFUND, intent.id)
    assert throttled.value.retry_after is not None
    sandbox.set_rate_limits(None)


def test_a_refused_connection_is_not_sent(make_adapter: Callable[..., StripeAdapter]) -> None:
    key = "rk_test_51NothingListensHereNothingListensHere0000000000"
    adapter = make_adapter(key, api_base=f"http://127.0.0.1:{_closed_port()}")
    with pytest.raises(NotSent) as unsent:
        adapter.submit(request(ActionKind.REFUND, "pi_123", 100))
    assert key not in str(unsent.value)
    with pytest.raises(ProviderError) as unread:
        adapter.facts(ActionKind.REFUND, "pi_123")
    assert not isinstance(unread.value, NotSent)


def test_a_connection_dropped_after_sending_is_still_unknown(
    adapter: StripeAdapter, setup: stripe.StripeClient, sandbox: StripeSandbox
) -> None:
    intent = pay(setup, 1000)
    for when in ("drop_before_commit", "drop_after_commit"):
        sandbox.arm_fault(when, method="POST", path="/v1/refunds")
        with pytest.raises(OutcomeUnknown):
            adapter.submit(request(ActionKind.REFUND, intent.id, 100))
