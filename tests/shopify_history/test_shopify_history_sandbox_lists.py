"""The sandbox's lists as the reader leans on them: ``query:`` filters read as Shopify
reads them, and a filter the sandbox cannot apply refused rather than ignored."""

from __future__ import annotations

import httpx
from shopify_history_support import DAY, START, HistoryShop
from shopify_sandbox_support import graphql

ORDERS = """
query Orders($query: String, $last: Int, $before: String) {
  orders(last: $last, before: $before, query: $query, sortKey: CREATED_AT) {
    nodes { id createdAt }
    pageInfo { hasPreviousPage startCursor }
  }
}
"""


def test_time_filters_take_whole_years_and_days_and_pages_go_backwards(
    history_shop: HistoryShop, http_client: httpx.Client
) -> None:
    refs = history_shop.seed(
        {
            "orders": [
                {"ref": f"o{n}", "created_at": START - (3 - n) * DAY, "total": 1_000}
                for n in range(3)
            ]
        }
    ).refs

    def ids(query: str, **page: object) -> list[str]:
        variables = {"query": query, "last": 5, **page}
        answer = graphql(http_client, history_shop.domain, history_shop.token, ORDERS, variables)
        return [node["id"] for node in answer.json()["data"]["orders"]["nodes"]]

    assert ids("created_at:<='2025'") == [refs["o0"], refs["o1"], refs["o2"]]
    assert ids("created_at:<2025-12-30") == [refs["o0"]]
    assert ids("created_at:2025-12-30") == [refs["o1"]]
    assert ids("created_at:>'2025-12-29T00:00:00Z' AND created_at:<=2025-12-30") == [refs["o1"]]
    answer = graphql(
        http_client, history_shop.domain, history_shop.token, ORDERS, {"last": 1}
    ).json()["data"]["orders"]
    assert answer["nodes"][0]["id"] == refs["o2"] and answer["pageInfo"]["hasPreviousPage"]
    assert ids("", before=answer["pageInfo"]["startCursor"]) == [refs["o0"], refs["o1"]]


def test_a_filter_the_sandbox_cannot_apply_is_refused_naming_it(
    history_shop: HistoryShop, http_client: httpx.Client
) -> None:
    variables = {"query": "financial_status:refunded", "last": 5}
    answer = graphql(http_client, history_shop.domain, history_shop.token, ORDERS, variables)

    (error,) = answer.json()["errors"]
    assert "not 'financial_status'" in error["message"]
    assert error["path"] == ["orders"]
