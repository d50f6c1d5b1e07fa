"""The audit is read-only at Shopify: a whole scan sends queries only, each valid against
Shopify's published schema, priced as the reader says, under read scopes alone; and what
those scopes do not reach is refused or left out as Shopify does."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import httpx
import pytest
from conformance import document_problems
from graphql import parse, validate
from shopify_history_support import DAY, START, WINDOW_START, HistoryShop
from shopify_sandbox_support import graphql

from integrations.provider import PermissionDenied
from integrations.shopify.history import (
    DOCUMENTS,
    PACE_MEMORY,
    READ_SCOPES,
    STANDARD_RESTORE_RATE,
    page_costs,
)
from integrations.shopify.sandbox.graphql_api import executable_schema


def small_history() -> dict[str, Any]:
    """A little of everything, with an order refunded twice (read whole), a customer with
    more credits than a page reads and one with two accounts: every query is sent."""
    return {
        "customers": [{"ref": "maya"}, {"ref": "lin"}],
        "orders": [
            {
                "customer": "maya",
                "created_at": WINDOW_START + DAY,
                "total": 9_600,
                "refunds": [
                    {"created_at": WINDOW_START + 2 * DAY, "amount": 4_800},
                    {"created_at": WINDOW_START + 2 * DAY + 60, "amount": 4_800},
                ],
            },
            {
                "customer": "lin",
                "created_at": START - 5 * DAY,
                "total": 3_000,
                "refunds": [{"created_at": START - 4 * DAY, "amount": 1_000}],
            },
        ],
        "store_credits": [
            *(
                {"customer": "lin", "amount": 500 + n, "created_at": START - (10 + n) * DAY}
                for n in range(4)
            ),
            {"customer": "maya", "amount": 300, "created_at": START - DAY},
            {"customer": "maya", "amount": 400, "created_at": START - DAY, "currency": "EUR"},
        ],
        "discounts": [
            {"code": "SORRY", "created_at": START - DAY, "percentage": 0.2, "customers": ["lin"]}
        ],
    }


@pytest.mark.parametrize("name", sorted(DOCUMENTS))
def test_each_query_is_valid_against_shopifys_published_schema(name: str) -> None:
    document = DOCUMENTS[name]
    assert document_problems(document) == []
    assert validate(executable_schema(), parse(document)) == []


def test_a_whole_scan_sends_queries_only_with_read_scopes_only(
    make_shop: Callable[..., HistoryShop], answers: Sequence[tuple[Mapping[str, Any], Any]]
) -> None:
    shop = make_shop(scopes=(*READ_SCOPES, "read_all_orders"))
    shop.seed(small_history())
    earlier = len(answers)

    read = {stream: shop.read_all(stream) for stream in shop.reader.streams}

    assert {stream: len(records) for stream, records in read.items()} == {
        "refunds": 3,
        "store_credits": 6,
        "discounts": 1,
    }
    operations = shop.sandbox.received_operations(shop.domain)
    assert operations
    assert {operation.kind for operation in operations} == {"query"}
    assert {operation.name for operation in operations} <= set(DOCUMENTS)
    assert {r.status for r in shop.sandbox.received_requests(shop.domain)} == {200}
    # Each query asked for the cost the reader reckons its worst case with, and no more.
    costs = page_costs()
    assert {request["operationName"] for request, _ in answers} == set(DOCUMENTS)
    for request, answer in answers:
        name = request["operationName"]
        assert answer["extensions"]["cost"]["requestedQueryCost"] == costs[name], name
    # It is paced by what the last answers really cost, as the bucket drains.
    spent = [answer["extensions"]["cost"]["actualQueryCost"] for _, answer in answers[earlier:]]
    recent = spent[-PACE_MEMORY:]
    assert shop.reader.requests_per_second == pytest.approx(
        STANDARD_RESTORE_RATE / (sum(recent) / len(recent))
    )


def test_the_log_of_operations_would_show_a_mutation_or_an_unreadable_request(
    history_shop: HistoryShop, http_client: httpx.Client
) -> None:
    mutation = (
        "mutation Credit($id: ID!) { storeCreditAccountCredit(id: $id, creditInput: "
        '{creditAmount: {amount: "5.00", currencyCode: USD}}) { userErrors { message } } }'
    )
    graphql(http_client, history_shop.domain, history_shop.token, mutation, {"id": "x"})
    http_client.post(
        f"https://{history_shop.domain}/admin/api/2026-04/graphql.json",
        content=b"not json",
        headers={"X-Shopify-Access-Token": history_shop.token},
    )

    *_, credit, unreadable = history_shop.sandbox.received_operations(history_shop.domain)
    assert (credit.kind, credit.name, credit.root_fields) == (
        "mutation",
        "Credit",
        ("storeCreditAccountCredit",),
    )
    assert unreadable.kind is None


def test_store_credit_needs_its_transactions_read_scope(
    make_shop: Callable[..., HistoryShop],
) -> None:
    shop = make_shop(scopes=("read_orders", "read_customers", "read_discounts"))
    shop.seed(small_history())

    with pytest.raises(PermissionDenied):
        shop.page("store_credits")


def test_without_read_all_orders_refunds_on_orders_older_than_60_days_are_not_seen(
    make_shop: Callable[..., HistoryShop],
) -> None:
    shop = make_shop(scopes=READ_SCOPES)
    refs = shop.seed(
        {
            "orders": [
                {
                    "created_at": START - 70 * DAY,
                    "total": 5_000,
                    "refunds": [{"ref": "old", "created_at": START - 10 * DAY, "amount": 500}],
                },
                {
                    "created_at": START - 30 * DAY,
                    "total": 5_000,
                    "refunds": [{"ref": "recent", "created_at": START - 10 * DAY, "amount": 500}],
                },
            ]
        }
    ).refs

    assert [record.id for record in shop.read_all("refunds")] == [refs["recent"]]
