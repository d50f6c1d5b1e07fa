"""A scan stopped anywhere resumes from the cursor it stored: no record lost, none read
twice, and a page asked for twice is the same page."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from typing import Any

import pytest
import stripe
from stripe_history_support import SINCE, WINDOW_START, at, read_stream, record

from integrations.stripe.history import STREAMS, StripeHistoryReader
from integrations.stripe.sandbox import AccountKeys


@pytest.fixture
def history(seed: Callable[..., Any], setup: stripe.StripeClient) -> None:
    """A history of a few pages in every stream, of every kind of step a cursor stands at:
    pages of a list, one customer's transactions part read, coupons yet to ask about."""
    records = [
        *(record("refund", WINDOW_START + i * 30_000, amount=500 + i) for i in range(210)),
        *(record("customer_credit", at(60, i), amount=100, customer="regular") for i in range(210)),
        *(record("customer_credit", at(50, i), amount=100, customer=f"c{i}") for i in range(3)),
        *(record("refund", at(40, i), amount=700) for i in range(105)),  # customers, no balance
        *(record("discount", at(30, i), percent_off=10) for i in range(101)),
        *(record("discount", at(20, i), percent_off=20, promotion_code=False) for i in range(4)),
        *(record("subscription_cancel", at(10, i)) for i in range(101)),
        *(record("subscription_change", at(5, i), new_quantity=2) for i in range(3)),
    ]
    seed(records)


@pytest.mark.usefixtures("history")
@pytest.mark.parametrize("stream", STREAMS)
def test_a_scan_resumes_exactly_from_any_stored_cursor(
    stream: str, make_reader: Callable[..., StripeHistoryReader], account: AccountKeys
) -> None:
    key = account.restricted_keys[0].key
    whole = read_stream(make_reader(key), stream)
    assert len(whole.ids) == len(set(whole.ids))
    assert len(whole.pages) > 2
    # Each stored cursor, as a scan restarted in a new process would take it up.
    for stop in _some(range(1, len(whole.pages)), 8):
        resumed = read_stream(make_reader(key), stream, cursor=whole.cursors[stop])
        already = [r.id for page in whole.pages[:stop] for r in page]
        assert already + resumed.ids == whole.ids, f"resumed at page {stop}"
        assert resumed.pages == whole.pages[stop:]


@pytest.mark.usefixtures("history")
def test_a_page_asked_for_twice_is_the_same_page(reader: StripeHistoryReader) -> None:
    for stream in STREAMS:
        whole = read_stream(reader, stream)
        for cursor in _some(whole.cursors, 4):
            first = reader.read_page(stream, since=SINCE, cursor=cursor)
            assert reader.read_page(stream, since=SINCE, cursor=cursor) == first


def test_what_is_not_a_cursor_stream_or_time_is_refused(reader: StripeHistoryReader) -> None:
    not_cursors = [
        ("refunds", "re_123"),
        ("refunds", "[1]"),
        ("refunds", '{"after": 5}'),
        ("customer_credits", '{"waiting": []}'),
        ("discounts", '{"unasked": ["x"]}'),
    ]
    for stream, cursor in not_cursors:
        with pytest.raises(ValueError, match="not a cursor"):
            reader.read_page(stream, since=SINCE, cursor=cursor)
    with pytest.raises(ValueError, match="no stream 'orders'"):
        reader.read_page("orders", since=SINCE, cursor=None)
    with pytest.raises(ValueError, match="aware"):
        reader.read_page("refunds", since=datetime(2025, 1, 1), cursor=None)


def _some(items: Any, count: int) -> list[Any]:
    """About ``count`` of ``items``, spread from the first to the last."""
    chosen = list(items)
    step = max(1, len(chosen) // count)
    return [*chosen[::step], *chosen[-1:]]
