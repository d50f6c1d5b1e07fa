"""Each stream of Stripe's history, read page by page over a seeded history: across page
boundaries, up to the window's start and not past it, with the facts the audit's checks
need on every record."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from typing import Any

import pytest
import stripe
from stripe_history_support import (
    DAY,
    READ_ONLY,
    SINCE,
    START,
    WINDOW_START,
    at,
    ids_of,
    metadata,
    read_stream,
    record,
)

from integrations.provider import ActionKind
from integrations.stripe.history import StripeHistoryReader
from integrations.stripe.sandbox import AccountKeys, Clock, StripeSandbox


def test_refunds_come_with_their_payment_across_pages_and_up_to_the_window(
    reader: StripeHistoryReader, seed: Callable[..., Any], setup: stripe.StripeClient
) -> None:
    inside = [record("refund", WINDOW_START + 1 + i * 30_000, amount=500 + i) for i in range(230)]
    planted = [
        record(
            "refund",
            at(10),
            amount=2000,
            payment="twice",
            payment_amount=5000,
            customer="ada",
            disputed=True,
            reason="requested_by_customer",
            metadata=metadata("act_7"),
        ),
        record("refund", at(10, 60), amount=2000, payment="twice", customer="ada"),
        record("refund", at(5), amount=300, status="pending"),
        record("refund", at(4), amount=400, status="failed"),
        record("refund", WINDOW_START, amount=700),  # on the window's first second
    ]
    before = [record("refund", WINDOW_START - 1 - i, amount=900) for i in range(3)]
    seeded = seed(inside + planted + before)
    # A partial capture releases the rest of the authorization as a refund: no money
    # went back, so it is no money action; a refund made after it is one.
    intent = setup.v1.payment_intents.create(
        params={
            "amount": 1000,
            "currency": "usd",
            "payment_method": "pm_card_visa",
            "confirm": True,
            "capture_method": "manual",
        }
    )
    setup.v1.payment_intents.capture(intent.id, params={"amount_to_capture": 600})
    made_now = setup.v1.refunds.create(params={"payment_intent": intent.id, "amount": 100})

    read = read_stream(reader, "refunds")

    expected = ids_of({"records": seeded["records"][: len(inside) + len(planted)]})
    assert sorted(read.ids) == sorted([*expected, made_now.id])
    assert len(read.pages) == 3  # 236 refunds, 100 a page
    records = read.by_id()
    first, second = (records[r["id"]] for r in seeded["records"][230:232])
    payment = seeded["payments"]["twice"]["payment_intent"]
    assert (first.payment, second.payment) == (payment, payment)
    assert first.kind is ActionKind.REFUND and first.provider == "stripe"
    assert (first.amount, first.currency, first.payment_amount) == (2000, "usd", 5000)
    assert first.payment_disputed and second.payment_disputed
    assert first.customer == seeded["customers"]["ada"] == second.customer
    assert first.caseward_action_id == "act_7" and second.caseward_action_id is None
    assert first.detail == {"reason": "requested_by_customer"}
    assert first.created == datetime.fromtimestamp(at(10), UTC)
    pending, failed = (records[r["id"]] for r in seeded["records"][232:234])
    assert (pending.status, failed.status, first.status) == ("pending", "failed", "succeeded")
    clean = records[seeded["records"][0]["id"]]
    assert not clean.payment_disputed and clean.payment_amount == clean.amount == 500
    assert records[made_now.id].payment == intent.id
    assert records[made_now.id].payment_amount == 600


def test_credits_are_read_customer_by_customer(
    reader: StripeHistoryReader,
    seed: Callable[..., Any],
    setup: stripe.StripeClient,
    history_sandbox: StripeSandbox,
    account: AccountKeys,
) -> None:
    regular = [
        record("customer_credit", WINDOW_START + i * 50_000, amount=100 + i, customer="regular")
        for i in range(130)
    ]
    edge = [record("customer_credit", WINDOW_START, amount=55, customer="regular")]
    too_old = [
        record("customer_credit", WINDOW_START - 10 * DAY + i, amount=66, customer="regular")
        for i in range(150)
    ]
    others = [
        record("customer_credit", at(20, i), amount=1000, customer=f"other-{i}") for i in range(120)
    ]
    paying_only = [record("refund", at(30, i), amount=800) for i in range(30)]
    seeded = seed(too_old + regular + edge + others + paying_only)
    # Made now by the shop's own systems: a debit is no credit; our own credit carries our id.
    customer = setup.v1.customers.create(params={"email": "grace@example.com"})
    setup.v1.customers.balance_transactions.create(
        customer.id, params={"amount": 500, "currency": "usd"}
    )
    ours = setup.v1.customers.balance_transactions.create(
        customer.id,
        params={"amount": -2500, "currency": "usd", "metadata": dict(metadata("act_9"))},
    )
    asked_before = len(history_sandbox.received_requests(account.id))

    read = read_stream(reader, "customer_credits")

    records = seeded["records"]
    expected = [r["id"] for r in records[150 : 150 + 131 + 120]]
    assert sorted(read.ids) == sorted([*expected, ours.id])
    found = read.by_id()
    assert all(found[r["id"]].customer == seeded["customers"]["regular"] for r in records[150:281])
    mine = found[ours.id]
    assert (mine.kind, mine.amount, mine.currency) == (ActionKind.CUSTOMER_CREDIT, 2500, "usd")
    assert (mine.customer, mine.caseward_action_id) == (customer.id, "act_9")
    assert found[records[150]["id"]].created == datetime.fromtimestamp(WINDOW_START, UTC)
    # Customers who only paid never had a balance: nobody asked Stripe for theirs.
    asked = [
        r.path
        for r in history_sandbox.received_requests(account.id)[asked_before:]
        if r.path.endswith("/balance_transactions")
    ]
    paying = {r["customer"] for r in records[-30:]}
    assert not [path for path in asked if path.split("/")[3] in paying]
    # Each customer with a balance once; the regular one until the window's start: two
    # pages of a longer history.
    assert len(asked) == 122 + 1


def test_a_customer_deleted_while_the_scan_runs_is_passed_over(
    reader: StripeHistoryReader, seed: Callable[..., Any], setup: stripe.StripeClient
) -> None:
    seeded = seed(
        [record("customer_credit", at(9, i), amount=100, customer=f"c{i}") for i in range(3)]
    )
    listed = reader.read_page("customer_credits", since=SINCE, cursor=None)
    assert listed.records == ()
    setup.v1.customers.delete(seeded["customers"]["c1"])

    rest = read_stream(reader, "customer_credits", cursor=listed.next_cursor)

    kept = seeded["records"]
    assert sorted(rest.ids) == sorted([kept[0]["id"], kept[2]["id"]])


def test_discounts_count_each_code_and_each_coupon_granted_without_one(
    reader: StripeHistoryReader, seed: Callable[..., Any], setup: stripe.StripeClient
) -> None:
    codes = [
        record(
            "discount",
            WINDOW_START + i * 60_000,
            **(
                {"percent_off": 5 + i % 20} if i % 3 else {"amount_off": 300 + i, "currency": "eur"}
            ),
            **({"customer": f"buyer-{i}"} if i % 2 else {}),
        )
        for i in range(120)
    ]
    big = record(
        "discount", at(3), percent_off=80, code="SORRY80", customer="ada", metadata=metadata("a1")
    )
    lone = [
        record("discount", at(80, i * 600), percent_off=10, promotion_code=False)
        for i in range(110)
    ]
    old_coupon = record("discount", WINDOW_START - DAY, amount_off=1000, promotion_code=False)
    too_old = [record("discount", WINDOW_START - 2 * DAY + i, percent_off=5) for i in range(5)]
    seeded = seed([*codes, big, *lone, old_coupon, *too_old])
    # A code made today for a coupon older than the window: the code is the discount.
    fresh = setup.v1.promotion_codes.create(
        params={
            "promotion": {"type": "coupon", "coupon": seeded["records"][231]["coupon"]},
            "code": "WELCOMEBACK",
        }
    )

    read = read_stream(reader, "discounts")

    records = seeded["records"]
    expected = [r["id"] for r in records[:231]] + [fresh.id]
    assert sorted(read.ids) == sorted(expected)
    coupons_with_codes = {r["coupon"] for r in records[:121]}
    assert not coupons_with_codes & set(read.ids)
    found = read.by_id()
    planted = found[records[120]["id"]]
    assert planted.kind is ActionKind.DISCOUNT
    assert (planted.percent_off, planted.amount, planted.currency) == (80, None, None)
    assert planted.customer == seeded["customers"]["ada"]
    assert planted.caseward_action_id == "a1" and planted.status == "active"
    assert planted.detail == {
        "code": "SORRY80",
        "coupon": records[120]["coupon"],
        "duration": "once",
    }
    amount_off = found[records[0]["id"]]
    assert (amount_off.amount, amount_off.currency, amount_off.percent_off) == (300, "eur", None)
    assert amount_off.customer is None and found[records[1]["id"]].customer is not None
    coupon_alone = found[records[121]["id"]]
    assert (coupon_alone.id, coupon_alone.customer) == (records[121]["coupon"], None)
    assert coupon_alone.detail == {"coupon": coupon_alone.id, "duration": "once"}
    assert found[fresh.id].amount == 1000 and found[fresh.id].detail["code"] == "WELCOMEBACK"


def test_subscriptions_canceled_in_the_window_then_changes_stripe_still_lists(
    reader: StripeHistoryReader, seed: Callable[..., Any], setup: stripe.StripeClient
) -> None:
    canceled = [
        record("subscription_cancel", WINDOW_START + 1 + i * 70_000, amount=1500)
        for i in range(105)
    ]
    long_running = record(
        "subscription_cancel", at(2), started=at(400), customer="ada", metadata=metadata("c1")
    )
    canceled_before = [
        record("subscription_cancel", WINDOW_START - 1 - i, started=at(200)) for i in range(3)
    ]
    changes = [
        record("subscription_change", at(29 - i), amount=1000, new_amount=2500) for i in range(4)
    ]
    out_of_reach = [record("subscription_change", at(40 + i), new_quantity=3) for i in range(2)]
    seeded = seed([*canceled, long_running, *canceled_before, *changes, *out_of_reach])
    # Made now through the API: a subscription started (no change), its metadata edited (no
    # money moved), its quantity changed by Caseward, then a cancellation scheduled by hand.
    product = setup.v1.products.create(params={"name": "Coffee club"})
    price = setup.v1.prices.create(
        params={
            "product": product.id,
            "currency": "usd",
            "unit_amount": 1200,
            "recurring": {"interval": "month"},
            "nickname": "Monthly beans",
        }
    )
    customer = setup.v1.customers.create()
    running = setup.v1.subscriptions.create(
        params={"customer": customer.id, "items": [{"price": price.id}]}
    )
    setup.v1.subscriptions.update(running.id, params={"metadata": {"note": "gift"}})
    item = running["items"].data[0].id
    setup.v1.subscriptions.update(
        running.id,
        params={"items": [{"id": item, "quantity": 2}], "metadata": dict(metadata("act_3"))},
    )
    setup.v1.subscriptions.update(running.id, params={"cancel_at_period_end": True})
    stripe_events = setup.v1.events.list(params={"type": "customer.subscription.updated"}).data
    by_hand, by_caseward, _metadata_only = (e.id for e in stripe_events[:3])

    read = read_stream(reader, "subscriptions")

    records = seeded["records"]
    expected = [r["id"] for r in records[:106]] + [r["id"] for r in records[109:113]]
    assert sorted(read.ids) == sorted([*expected, by_caseward, by_hand])
    found = read.by_id()
    ended = found[records[105]["id"]]
    assert ended.kind is ActionKind.SUBSCRIPTION_CANCEL
    assert (ended.created, ended.status) == (datetime.fromtimestamp(at(2), UTC), "canceled")
    assert (ended.customer, ended.caseward_action_id) == (seeded["customers"]["ada"], "c1")
    assert (ended.amount, ended.currency) == (None, "usd")
    assert ended.detail["reason"] == "cancellation_requested"
    change = found[records[109]["id"]]
    assert change.kind is ActionKind.SUBSCRIPTION_CHANGE
    assert change.customer == records[109]["customer"]
    assert change.created == datetime.fromtimestamp(at(29), UTC)
    assert change.detail["changed"] == "items"
    mine = found[by_caseward]
    assert (mine.caseward_action_id, mine.customer, mine.status) == ("act_3", customer.id, "active")
    assert mine.detail == {"plan": "Monthly beans", "changed": "items"}
    # The scheduled cancellation is not ours, although our id stays in the metadata.
    assert found[by_hand].caseward_action_id is None
    assert found[by_hand].detail["changed"] == "cancel_at_period_end, cancel_at"


@pytest.fixture
def moving_clock() -> Iterator[StripeSandbox]:
    """A sandbox of its own, whose clock a test may move (the shared one stands still)."""
    box = StripeSandbox(clock=Clock(start=START))
    box.start()
    yield box
    box.stop()


def test_a_renewal_is_no_change(moving_clock: StripeSandbox) -> None:
    account = moving_clock.create_account(restricted_keys=[{"permissions": READ_ONLY}])
    url = moving_clock.url
    assert url is not None
    shop = stripe.StripeClient(
        account.secret_key, base_addresses={"api": url}, max_network_retries=0
    )
    product = shop.v1.products.create(params={"name": "Coffee club"})
    customer = shop.v1.customers.create()
    shop.v1.subscriptions.create(
        params={
            "customer": customer.id,
            "items": [
                {
                    "price_data": {
                        "currency": "usd",
                        "product": product.id,
                        "unit_amount": 900,
                        "recurring": {"interval": "month"},
                    }
                }
            ],
        }
    )
    moving_clock.advance_clock(31 * DAY)  # a month on: Stripe renews it
    renewals = shop.v1.events.list(params={"type": "customer.subscription.updated"}).data
    assert len(renewals) == 1
    reader = StripeHistoryReader(account.restricted_keys[0].key, livemode=False, api_base=url)

    assert read_stream(reader, "subscriptions", since=SINCE).ids == []
