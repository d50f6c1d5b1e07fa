"""The refunds stream: every refund made in the window on the shop's orders, read across
page boundaries, with what the audit weighs it by (the order's money, its disputes,
Caseward's own marker), and a cursor that resumes exactly."""

from __future__ import annotations

from typing import Any

import pytest
from shopify_history_support import DAY, WINDOW_START, HistoryShop

from integrations.history import PastMoneyAction
from integrations.provider import ActionKind, Throttled
from integrations.shopify.history import ORDERS_PAGE

# More orders than one page lists, each refunded once in the window.
PLAIN_ORDERS = ORDERS_PAGE + 4


def _order(ref: str, created: float, *refunds: dict[str, Any], **more: Any) -> dict[str, Any]:
    return {
        "ref": ref,
        "customer": f"{ref}-buyer",
        "created_at": created,
        "total": 10_000,
        "refunds": list(refunds),
        **more,
    }


def _refund(ref: str, at: float, amount: int = 2_500, **more: Any) -> dict[str, Any]:
    return {"ref": ref, "created_at": at, "amount": amount, **more}


def history() -> dict[str, Any]:
    """Plain refunds spread over the window, and the cases the stream must get right."""
    orders = [
        _order(
            f"plain-{n}",
            WINDOW_START + n * DAY,
            _refund(f"plain-{n}-r", WINDOW_START + (n + 1) * DAY),
        )
        for n in range(PLAIN_ORDERS)
    ]
    orders += [
        # The window's edge: a refund at its first second is in, one a second before is not.
        _order("edge-in", WINDOW_START - 10 * DAY, _refund("edge-in-r", WINDOW_START)),
        _order("edge-out", WINDOW_START - 20 * DAY, _refund("edge-out-r", WINDOW_START - 1)),
        # An order refunded before the window and again in it: only the second is in.
        _order(
            "twice",
            WINDOW_START - 30 * DAY,
            _refund("twice-before", WINDOW_START - 5 * DAY),
            _refund("twice-in", WINDOW_START + 3 * DAY),
        ),
        # More refunds than a page reads of one order: the order is read whole.
        _order(
            "thrice",
            WINDOW_START + 40 * DAY,
            _refund("thrice-1", WINDOW_START + 41 * DAY, 1_500),
            _refund("thrice-2", WINDOW_START + 41 * DAY + 600, 1_500),
            _refund("thrice-3", WINDOW_START + 45 * DAY, 1_000),
        ),
        _order(
            "disputed",
            WINDOW_START + 50 * DAY,
            _refund("disputed-r", WINDOW_START + 51 * DAY),
            disputes=["NEEDS_RESPONSE"],
        ),
        _order(
            "won",
            WINDOW_START + 50 * DAY,
            _refund("won-r", WINDOW_START + 52 * DAY),
            disputes=["WON"],
        ),
        _order(
            "ours",
            WINDOW_START + 60 * DAY,
            _refund(
                "ours-r",
                WINDOW_START + 61 * DAY,
                note="Torn apron\ncaseward_action_id=act-0042",
            ),
        ),
        _order(
            "pending",
            WINDOW_START + 70 * DAY,
            _refund("pending-r", WINDOW_START + 71 * DAY, status="PENDING"),
        ),
        _order(
            "failed",
            WINDOW_START + 70 * DAY,
            _refund("failed-r", WINDOW_START + 72 * DAY, status="FAILURE"),
        ),
        _order("unrefunded", WINDOW_START + 80 * DAY),
    ]
    customers = [{"ref": f"{order['ref']}-buyer"} for order in orders]
    return {"customers": customers, "orders": orders}


IN_WINDOW = [f"plain-{n}-r" for n in range(PLAIN_ORDERS)] + [
    "edge-in-r",
    "twice-in",
    "thrice-1",
    "thrice-2",
    "thrice-3",
    "disputed-r",
    "won-r",
    "ours-r",
    "pending-r",
    "failed-r",
]


def test_every_refund_in_the_window_is_read_once_across_pages(history_shop: HistoryShop) -> None:
    refs = history_shop.seed(history()).refs

    records = history_shop.read_all("refunds")

    ids = [record.id for record in records]
    assert sorted(ids) == sorted(refs[ref] for ref in IN_WINDOW)
    assert history_shop.operations("HistoryRefunds") == 2  # two pages of orders
    assert history_shop.operations("HistoryOrderRefunds") == 2  # "twice" and "thrice", whole
    by_ref = {ref: r for ref in IN_WINDOW for r in records if r.id == refs[ref]}
    plain = by_ref["plain-0-r"]
    assert plain == PastMoneyAction(
        provider="shopify",
        kind=ActionKind.REFUND,
        id=refs["plain-0-r"],
        created=plain.created,
        customer=refs["plain-0-buyer"],
        amount=2_500,
        currency="usd",
        payment=refs["plain-0"],
        payment_amount=10_000,
        payment_disputed=False,
        status="succeeded",
        caseward_action_id=None,
        detail={"order": plain.detail["order"]},
    )
    assert plain.created.timestamp() == WINDOW_START + DAY
    assert plain.detail["order"].startswith("#")
    assert by_ref["edge-in-r"].created.timestamp() == WINDOW_START
    assert [by_ref[f"thrice-{n}"].amount for n in (1, 2, 3)] == [1_500, 1_500, 1_000]
    assert {by_ref[f"thrice-{n}"].payment for n in (1, 2, 3)} == {refs["thrice"]}
    assert by_ref["disputed-r"].payment_disputed is True
    assert by_ref["won-r"].payment_disputed is False  # won: the money stayed
    assert by_ref["ours-r"].caseward_action_id == "act-0042"
    assert (by_ref["pending-r"].status, by_ref["pending-r"].amount) == ("pending", 2_500)
    assert (by_ref["failed-r"].status, by_ref["failed-r"].amount) == ("failed", 2_500)


def test_the_cursor_resumes_exactly_and_nothing_updated_meanwhile_is_skipped(
    history_shop: HistoryShop,
) -> None:
    refs = history_shop.seed(history()).refs
    first = history_shop.page("refunds")
    assert first.next_cursor is not None
    history_shop.pace()

    # A reader made later (the scan's next slice) reads the same page from the cursor,
    # as often as it asks.
    later = history_shop.fresh_reader()
    second = history_shop.page("refunds", first.next_cursor, reader=later)
    history_shop.pace()
    assert history_shop.page("refunds", first.next_cursor, reader=later) == second
    assert not {r.id for r in first.records} & {r.id for r in second.records}

    # An order of the first page is refunded again while the scan pauses: it moves to
    # the end of the list, and everything else is still read once.
    moved = first.records[0].payment
    late = _refund("late", WINDOW_START + 89 * DAY, 100)
    added = history_shop.seed({"orders": [{"id": moved, "refunds": [late]}]}).refs["late"]
    history_shop.pace()
    rest = history_shop.read_all("refunds", first.next_cursor)

    read = [r.id for r in first.records] + [r.id for r in rest]
    assert set(read) == {refs[ref] for ref in IN_WINDOW} | {added}
    assert len(read) == len(set(read)) + 1  # the moved order's first refund, twice


def test_a_throttled_page_raises_with_the_buckets_wait_and_the_same_cursor_works_after(
    history_shop: HistoryShop,
) -> None:
    history_shop.seed(history())
    history_shop.sandbox.set_available_cost(history_shop.domain, 0)

    with pytest.raises(Throttled) as throttled:
        history_shop.page("refunds")

    # The page costs 974 points (see page_costs), refilled at 100 a second.
    wait = throttled.value.retry_after
    assert wait is not None and wait == pytest.approx(9.74) and throttled.value.asked
    asked = history_shop.operations("HistoryRefunds")
    with pytest.raises(Throttled) as held:  # the bucket is known to be short: not even sent
        history_shop.page("refunds")
    assert not held.value.asked
    assert history_shop.operations("HistoryRefunds") == asked

    history_shop.sandbox.advance_clock(wait)
    page = history_shop.page("refunds")
    assert len(page.records) > 1 and page.next_cursor is not None
    history_shop.pace()
    assert history_shop.page("refunds", reader=history_shop.fresh_reader()) == page
