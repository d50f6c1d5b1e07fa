"""The discounts stream: every discount code created in the window, with its value, the
customer it is restricted to, and Caseward's own marker."""

from __future__ import annotations

from typing import Any

from shopify_history_support import DAY, START, WINDOW_START, HistoryShop

from integrations.history import PastMoneyAction
from integrations.provider import ActionKind
from integrations.shopify.history import DISCOUNTS_PAGE

PLAIN = DISCOUNTS_PAGE + 3


def history() -> dict[str, Any]:
    plain = [
        {
            "ref": f"plain-{n}",
            "code": f"SPRING{n:03d}",
            "created_at": WINDOW_START + n * DAY,
            "percentage": 0.1,
        }
        for n in range(PLAIN)
    ]
    return {
        "customers": [{"ref": "maya"}, {"ref": "lin"}],
        "discounts": [
            *plain,
            {"ref": "edge-in", "code": "EDGEIN", "created_at": WINDOW_START, "amount": 500},
            {"ref": "edge-out", "code": "EDGEOUT", "created_at": WINDOW_START - 1, "amount": 500},
            {
                "ref": "half",
                "code": "SORRY50",
                "created_at": WINDOW_START + 60 * DAY,
                "percentage": 0.5,
                "customers": ["maya"],
            },
            {
                "ref": "pair",
                "code": "PAIR",
                "created_at": WINDOW_START + 61 * DAY,
                "amount": 2_500,
                "customers": ["maya", "lin"],
                "applies_on_each_item": True,
            },
            {
                "ref": "eighth",
                "code": "EIGHTH",
                "created_at": WINDOW_START + 62 * DAY,
                "percentage": 0.125,
                "ends_at": START - DAY,
            },
            {
                "ref": "shipping",
                "code": "FREESHIP",
                "created_at": WINDOW_START + 63 * DAY,
                "free_shipping": True,
                "starts_at": START + DAY,
            },
            {
                "ref": "ours",
                "code": "CW-ABCDEFGHIJKL",
                "title": "Caseward 10.00 USD off caseward_action_id=act-0099",
                "created_at": WINDOW_START + 64 * DAY,
                "amount": 1_000,
                "customers": ["lin"],
            },
        ],
    }


IN_WINDOW = [f"plain-{n}" for n in range(PLAIN)] + [
    "edge-in",
    "half",
    "pair",
    "eighth",
    "shipping",
    "ours",
]


def test_every_code_created_in_the_window_is_read_once_across_pages(
    history_shop: HistoryShop,
) -> None:
    refs = history_shop.seed(history()).refs

    records = history_shop.read_all("discounts")

    assert sorted(r.id for r in records) == sorted(refs[ref] for ref in IN_WINDOW)
    assert history_shop.operations("HistoryDiscounts") == 2
    by_ref = {ref: r for ref in IN_WINDOW for r in records if r.id == refs[ref]}
    half = by_ref["half"]
    assert half == PastMoneyAction(
        provider="shopify",
        kind=ActionKind.DISCOUNT,
        id=refs["half"],
        created=half.created,
        customer=refs["maya"],
        amount=None,
        currency=None,
        percent_off=50,
        status="active",
        detail={"type": "basic", "code": "SORRY50", "buyers": "customers", "percentage": "50"},
    )
    assert half.created.timestamp() == WINDOW_START + 60 * DAY
    pair = by_ref["pair"]
    assert (pair.amount, pair.currency, pair.percent_off, pair.customer) == (
        2_500,
        "usd",
        None,
        None,
    )
    assert pair.detail["buyers"] == "customers" and pair.detail["per_item"] == "yes"
    assert by_ref["plain-0"].detail["buyers"] == "everyone"
    eighth = by_ref["eighth"]
    assert (eighth.percent_off, eighth.detail["percentage"], eighth.status) == (
        12,
        "12.5",
        "expired",
    )
    shipping = by_ref["shipping"]
    assert (shipping.amount, shipping.percent_off, shipping.status) == (None, None, "scheduled")
    assert shipping.detail == {"type": "free_shipping", "code": "FREESHIP"}
    assert by_ref["ours"].caseward_action_id == "act-0099"
    assert by_ref["ours"].customer == refs["lin"]
    assert by_ref["edge-in"].created.timestamp() == WINDOW_START


def test_the_cursor_resumes_exactly(history_shop: HistoryShop) -> None:
    history_shop.seed(history())
    first = history_shop.page("discounts")
    history_shop.pace()
    second = history_shop.page("discounts", first.next_cursor, history_shop.fresh_reader())
    history_shop.pace()

    assert history_shop.page("discounts", first.next_cursor) == second
    assert second.next_cursor is None
    assert len(first.records) + len(second.records) == len(IN_WINDOW)
    assert not {r.id for r in first.records} & {r.id for r in second.records}
