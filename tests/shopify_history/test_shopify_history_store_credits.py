"""The store credits stream: every credit made in the window to any customer, read
across pages of customers, of an account's credits and of a customer's accounts."""

from __future__ import annotations

from typing import Any

from shopify_history_support import DAY, WINDOW_START, HistoryShop

from integrations.history import PastMoneyAction
from integrations.provider import ActionKind
from integrations.shopify.history import CREDITS_PER_ACCOUNT, CUSTOMERS_PAGE

# More customers than one page lists; most never had store credit.
CUSTOMERS = CUSTOMERS_PAGE + 5


def _credit(ref: str, customer: str, at: float, amount: int = 500, **more: Any) -> dict[str, Any]:
    return {"ref": ref, "customer": customer, "created_at": at, "amount": amount, **more}


def history() -> dict[str, Any]:
    customers = [{"ref": f"c{n}"} for n in range(CUSTOMERS)]
    credits = [
        # More credits in the window than a page reads of one account, and older ones.
        *(
            _credit(f"many-{n}", "c3", WINDOW_START + (10 + n) * DAY, 100 + n)
            for n in range(CREDITS_PER_ACCOUNT + 3)
        ),
        _credit("many-old", "c3", WINDOW_START - 2 * DAY),
        # The window's edge.
        _credit("edge-in", "c10", WINDOW_START),
        _credit("edge-out", "c10", WINDOW_START - 1),
        # Two accounts, one per currency.
        _credit("dollars", "c20", WINDOW_START + 30 * DAY, 700),
        _credit("euros", "c20", WINDOW_START + 31 * DAY, 800, currency="EUR"),
        _credit("expiring", "c30", WINDOW_START + 40 * DAY, expires_at=WINDOW_START + 200 * DAY),
        # Customers on the second page of customers.
        _credit("late-1", f"c{CUSTOMERS - 2}", WINDOW_START + 80 * DAY),
        _credit("late-2", f"c{CUSTOMERS - 1}", WINDOW_START + 85 * DAY, 2_000),
    ]
    return {"customers": customers, "store_credits": credits}


IN_WINDOW = [f"many-{n}" for n in range(CREDITS_PER_ACCOUNT + 3)] + [
    "edge-in",
    "dollars",
    "euros",
    "expiring",
    "late-1",
    "late-2",
]


def test_every_credit_in_the_window_is_read_once_across_pages(history_shop: HistoryShop) -> None:
    refs = history_shop.seed(history()).refs

    records = history_shop.read_all("store_credits")

    ids = [record.id for record in records]
    assert sorted(ids) == sorted(refs[ref] for ref in IN_WINDOW)
    assert history_shop.operations("HistoryStoreCredits") == 2  # two pages of customers
    assert history_shop.operations("HistoryAccountCredits") == 1  # c3's older credits
    assert history_shop.operations("HistoryCustomerCredit") == 1  # c20's euro account
    by_ref = {ref: r for ref in IN_WINDOW for r in records if r.id == refs[ref]}
    late = by_ref["late-2"]
    assert late == PastMoneyAction(
        provider="shopify",
        kind=ActionKind.CUSTOMER_CREDIT,
        id=refs["late-2"],
        created=late.created,
        customer=refs[f"c{CUSTOMERS - 1}"],
        amount=2_000,
        currency="usd",
        status="succeeded",
        detail={"event": "adjustment"},
    )
    assert late.created.timestamp() == WINDOW_START + 85 * DAY
    assert by_ref["edge-in"].created.timestamp() == WINDOW_START
    assert (by_ref["euros"].amount, by_ref["euros"].currency) == (800, "eur")
    assert by_ref["euros"].customer == by_ref["dollars"].customer == refs["c20"]
    assert by_ref["expiring"].detail["expires_at"] == "2026-04-21T00:00:00Z"
    assert all(record.caseward_action_id is None for record in records)


def test_the_cursor_resumes_inside_an_accounts_credits(history_shop: HistoryShop) -> None:
    refs = history_shop.seed(history()).refs
    everything = {refs[ref] for ref in IN_WINDOW}

    pages = []
    cursor = None
    while True:
        page = history_shop.page("store_credits", cursor)
        history_shop.pace()
        # Each page again from the cursor it was read from, by the next slice's reader.
        assert history_shop.page("store_credits", cursor, history_shop.fresh_reader()) == page
        history_shop.pace()
        pages.append(page)
        if page.next_cursor is None:
            break
        cursor = page.next_cursor

    read = [record.id for page in pages for record in page.records]
    assert sorted(read) == sorted(everything)
    assert len(pages) == 4  # customers, c3's older credits, c20's accounts, customers
