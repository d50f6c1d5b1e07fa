"""Seeding a past history through the sandbox's control API: all at once, at the times
given, refused whole when a record is wrong, and read back whole by the reader."""

from __future__ import annotations

from collections import Counter
from datetime import UTC, datetime, timedelta

import pytest
from stripe_history_support import START, WINDOW_START, read_stream, record

from integrations.stripe import seeding
from integrations.stripe.history import STREAMS, StripeHistoryReader
from integrations.stripe.sandbox import AccountKeys, StripeSandbox


def test_the_control_api_seeds_a_history_the_reader_reads_back(
    history_sandbox: StripeSandbox,
    url: str,
    account: AccountKeys,
    reader: StripeHistoryReader,
) -> None:
    end = datetime.fromtimestamp(START, UTC)
    counts = {
        "refund": 130,
        "customer_credit": 20,
        "discount": 25,
        "subscription_cancel": 15,
        "subscription_change": 5,
    }
    records = seeding.spread_history(counts, start=end - timedelta(days=89), end=end)
    assert Counter(r["kind"] for r in records) == counts
    assert all(WINDOW_START < r["created"] <= START for r in records)
    assert all(
        r["created"] >= START - 29 * 86400 for r in records if r["kind"] == "subscription_change"
    )

    seeded = seeding.seed_history(url, history_sandbox.control_token, account.id, records)

    read = [record_id for stream in STREAMS for record_id in read_stream(reader, stream).ids]
    assert sorted(read) == sorted(seeded.ids)
    assert len(set(seeded.ids)) == len(records)


def test_a_wrong_record_is_refused_and_nothing_is_written(
    history_sandbox: StripeSandbox,
    url: str,
    account: AccountKeys,
    reader: StripeHistoryReader,
) -> None:
    good = [record("refund", WINDOW_START + i, amount=500) for i in range(3)]
    wrongs: list[tuple[dict[str, object], str]] = [
        (record("refund", WINDOW_START, amount=-5), "record 3: amount"),
        (record("discount", WINDOW_START, percent_off=10, amount_off=5), "record 3: give exactly"),
        (record("gift", WINDOW_START), "record 3: kind"),
        (record("refund", WINDOW_START, amount=5, tip=1), "record 3: unknown fields"),
    ]
    for wrong, reason in wrongs:
        with pytest.raises(ValueError, match=reason):
            seeding.seed_history(url, history_sandbox.control_token, account.id, [*good, wrong])
    over = [
        record("refund", WINDOW_START, amount=600, payment="p", payment_amount=1000),
        record("refund", WINDOW_START + 1, amount=600, payment="p"),
    ]
    with pytest.raises(ValueError, match="more than it captured"):
        seeding.seed_history(url, history_sandbox.control_token, account.id, over)

    assert read_stream(reader, "refunds").ids == []


def test_the_seeding_control_needs_the_control_token(url: str, account: AccountKeys) -> None:
    with pytest.raises(ValueError, match="control token"):
        seeding.seed_history(url, "not-the-token", account.id, [])
