"""The audit's reads are provably read-only: a restricted key with read permissions only
is all the reader needs, it sends nothing but GET requests (one per page), and Stripe's
429 stops it without losing its place."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
import stripe
from stripe_history_support import READ_ONLY, SINCE, WINDOW_START, at, read_stream, record

from integrations.provider import CredentialsRefused, PermissionDenied, Throttled
from integrations.stripe.history import (
    STREAMS,
    TEST_READS_PER_SECOND,
    StripeHistoryReader,
)
from integrations.stripe.sandbox import AccountKeys, RateLimits, StripeSandbox


def test_reading_every_stream_sends_one_get_per_page_and_nothing_else(
    reader: StripeHistoryReader,
    seed: Callable[..., Any],
    setup: stripe.StripeClient,
    history_sandbox: StripeSandbox,
    account: AccountKeys,
) -> None:
    seed(
        [
            *(record("refund", WINDOW_START + i * 60_000, amount=500) for i in range(120)),
            *(record("customer_credit", at(30, i), amount=100, customer="ada") for i in range(5)),
            *(record("discount", at(20, i), percent_off=10, customer="ada") for i in range(3)),
            record("discount", at(20), amount_off=500, promotion_code=False),
            *(record("subscription_cancel", at(10, i)) for i in range(3)),
            record("subscription_change", at(5), new_amount=3000),
        ]
    )
    before = len(history_sandbox.received_requests(account.id))

    pages = sum(len(read_stream(reader, stream).pages) for stream in STREAMS)

    asked = history_sandbox.received_requests(account.id)[before:]
    assert {request.method for request in asked} == {"GET"}
    assert len(asked) == pages
    assert all(request.status == 200 for request in asked)


def test_a_key_that_may_only_read_is_enough_and_each_permission_is_needed(
    history_sandbox: StripeSandbox, make_reader: Callable[..., StripeHistoryReader]
) -> None:
    account = history_sandbox.create_account()
    everything = history_sandbox.add_restricted_key(account.id, READ_ONLY).key
    for stream in STREAMS:
        read_stream(make_reader(everything), stream)
    for resource in READ_ONLY:
        short = history_sandbox.add_restricted_key(account.id, {**READ_ONLY, resource: "none"}).key
        refused = []
        for stream in STREAMS:
            try:
                read_stream(make_reader(short), stream)
            except PermissionDenied as denied:
                refused.append(str(denied))
        assert len(refused) == 1, resource
        assert f"rak_{_STEMS[resource]}_read" in refused[0]


_STEMS = {
    "refunds": "refund",
    "charges": "charge",
    "customers": "customer",
    "coupons": "coupon",
    "promotion_codes": "promotion_code",
    "subscriptions": "subscription",
    "events": "event",
}


def test_keys_caseward_does_not_hold_are_refused(
    account: AccountKeys, make_reader: Callable[..., StripeHistoryReader]
) -> None:
    with pytest.raises(CredentialsRefused, match="secret key"):
        make_reader(account.secret_key)
    with pytest.raises(CredentialsRefused, match="live"):
        StripeHistoryReader("rk_live_" + "x" * 40, livemode=False)
    reader = make_reader(account.restricted_keys[0].key)
    assert reader.requests_per_second == TEST_READS_PER_SECOND == 25
    assert StripeHistoryReader("rk_live_" + "x" * 40, livemode=True).requests_per_second == 100
    assert account.restricted_keys[0].key not in repr(reader)


def test_a_429_raises_throttled_and_the_same_cursor_reads_on(
    reader: StripeHistoryReader,
    seed: Callable[..., Any],
    history_sandbox: StripeSandbox,
    account: AccountKeys,
) -> None:
    seed([record("refund", WINDOW_START + i * 10_000, amount=500 + i) for i in range(250)])
    unlimited = read_stream(reader, "refunds")
    # One read an hour: the first page passes, the second is refused.
    history_sandbox.set_rate_limits(RateLimits(test_read=1, per_seconds=3600.0), account=account.id)
    first = reader.read_page("refunds", since=SINCE, cursor=None)
    with pytest.raises(Throttled) as throttled:
        reader.read_page("refunds", since=SINCE, cursor=first.next_cursor)
    assert throttled.value.retry_after is not None and throttled.value.retry_after > 3000
    history_sandbox.set_rate_limits(RateLimits.off(), account=account.id)

    rest = read_stream(reader, "refunds", cursor=first.next_cursor)

    assert [r.id for r in first.records] + rest.ids == unlimited.ids
    refused = [r for r in history_sandbox.received_requests(account.id) if r.status == 429]
    assert [r.method for r in refused] == ["GET"]
