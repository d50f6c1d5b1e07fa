"""Seeding a shop's history: planted records at given times and generated clean ones, in
one call through the sandbox's control API, all of it kept or none."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable

import httpx
from shopify_history_support import DAY, START, WINDOW_START, HistoryShop

from integrations.sandbox_kit import SandboxHandle
from integrations.shopify.sandbox.history import generated_history


def _control(handle: SandboxHandle, method: str, path: str, body: object = None) -> httpx.Response:
    with httpx.Client(base_url=handle.url, timeout=60.0) as client:
        return client.request(
            method, path, json=body, headers={"X-Sandbox-Control-Token": handle.control_token}
        )


def test_ten_thousand_records_and_planted_ones_are_seeded_in_one_control_call(
    make_shop: Callable[..., HistoryShop], handle: SandboxHandle
) -> None:
    shop = make_shop()
    planted = {
        "customers": [{"ref": "maya"}],
        "orders": [
            {
                "ref": "disputed",
                "customer": "maya",
                "created_at": WINDOW_START + DAY,
                "total": 9_600,
                "disputes": ["NEEDS_RESPONSE"],
                "refunds": [{"ref": "on-dispute", "created_at": START - DAY, "amount": 9_600}],
            }
        ],
        "generate": {"records": 10_000, "start": WINDOW_START, "end": START, "seed": 7},
    }

    answer = _control(handle, "POST", f"/_sandbox/shops/{shop.domain}/history", planted)

    assert answer.status_code == 200, answer.text
    seeded = answer.json()
    assert set(seeded["refs"]) == {"maya", "disputed", "on-dispute"}
    counts = seeded["counts"]
    assert counts["refunds"] + counts["store_credits"] + counts["discounts"] == 10_001
    assert (counts["refunds"], counts["store_credits"], counts["discounts"]) == (
        5_001,
        2_500,
        2_500,
    )
    for stream in shop.reader.streams:
        assert shop.page(stream).records, stream
        shop.pace()
    operations = _control(handle, "GET", f"/_sandbox/shops/{shop.domain}/operations").json()
    assert [o["kind"] for o in operations] == ["query"] * 3


def test_a_refused_history_keeps_nothing(
    make_shop: Callable[..., HistoryShop], handle: SandboxHandle
) -> None:
    shop = make_shop()
    history = {
        "customers": [{"ref": "maya"}],
        "orders": [
            {"customer": "maya", "created_at": START - DAY, "total": 1_000},
            {
                "customer": "maya",
                "created_at": START - DAY,
                "total": 1_000,
                "refunds": [{"created_at": START, "amount": 1_001}],
            },
        ],
    }

    answer = _control(handle, "POST", f"/_sandbox/shops/{shop.domain}/history", history)

    assert answer.status_code == 400
    assert "more than the 1000 left" in answer.json()["error"]["message"]
    with shop.sandbox.store.lock:
        held = shop.sandbox.store.shop(shop.domain)
        assert (held.customers, held.orders) == ({}, {})


def test_a_generated_history_is_clean_and_reproducible() -> None:
    history = generated_history(400, WINDOW_START, START, seed=3)

    assert generated_history(400, WINDOW_START, START, seed=3) == history
    given = [o["customer"] for o in history["orders"]] + [
        c["customer"] for c in history["store_credits"]
    ]
    assert max(Counter(given).values()) == 1  # no customer gets money twice
    for order in history["orders"]:
        (refund,) = order["refunds"]
        assert refund["amount"] * 2 <= order["total"]
        assert WINDOW_START <= order["created_at"] <= refund["created_at"] < START
        assert refund["created_at"] - order["created_at"] <= 3 * DAY
    for discount in history["discounts"]:
        assert discount.get("percentage", 0) <= 0.15 and discount.get("amount", 0) <= 1_500
        assert "customers" not in discount
    assert len({d["code"] for d in history["discounts"]}) == len(history["discounts"])
