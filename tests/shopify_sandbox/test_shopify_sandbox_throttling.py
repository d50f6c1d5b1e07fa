"""The cost-based leaky bucket: every answer reports its cost, a short bucket answers
THROTTLED (HTTP 200) and runs nothing, and the bucket refills on the sandbox clock."""

from __future__ import annotations

import httpx
from shopify_sandbox_documents import ORDER, REFUND_CREATE, SHOP
from shopify_sandbox_support import Seeded, graphql, refund_input

from integrations.shopify.sandbox import SandboxShop, ShopifySandbox


def test_each_answer_reports_its_cost_and_the_bucket_after_it(
    client: httpx.Client, sandbox: ShopifySandbox, shop: SandboxShop, token: str, seeded: Seeded
) -> None:
    cost = graphql(client, shop.domain, token, SHOP).json()["extensions"]["cost"]
    assert cost["requestedQueryCost"] == cost["actualQueryCost"] == 1
    assert cost["throttleStatus"]["maximumAvailable"] == 2000.0
    assert cost["throttleStatus"]["restoreRate"] == 100.0

    before = cost["throttleStatus"]["currentlyAvailable"]
    used = sandbox.cost_usage(shop.domain)["spent"]
    order = graphql(client, shop.domain, token, ORDER, {"id": seeded.order}).json()
    cost = order["extensions"]["cost"]
    # Pages are priced at the size asked for, and charged at the size answered.
    assert cost["requestedQueryCost"] > cost["actualQueryCost"] > 1
    assert cost["throttleStatus"]["currentlyAvailable"] == before - cost["actualQueryCost"]
    assert sandbox.cost_usage(shop.domain)["spent"] - used == cost["actualQueryCost"]

    mutation = graphql(
        client,
        shop.domain,
        token,
        REFUND_CREATE,
        {"input": refund_input(seeded), "key": "key-cost"},
    ).json()
    assert mutation["extensions"]["cost"]["requestedQueryCost"] == 10


def test_a_short_bucket_throttles_and_runs_nothing_until_it_refills(
    client: httpx.Client, sandbox: ShopifySandbox, shop: SandboxShop, token: str, seeded: Seeded
) -> None:
    sandbox.set_available_cost(shop.domain, 5)
    variables = {"input": refund_input(seeded), "key": "key-throttled"}
    throttled = graphql(client, shop.domain, token, REFUND_CREATE, variables)

    assert throttled.status_code == 200
    body = throttled.json()
    assert "data" not in body
    (error,) = body["errors"]
    assert error["message"] == "Throttled"
    assert error["extensions"]["code"] == "THROTTLED"
    cost = body["extensions"]["cost"]
    assert cost["requestedQueryCost"] == 10 and cost["actualQueryCost"] is None
    assert cost["throttleStatus"]["currentlyAvailable"] == 5.0

    sandbox.advance_clock(0.05)  # +5 points: enough for the mutation
    used = sandbox.cost_usage(shop.domain)
    done = graphql(client, shop.domain, token, REFUND_CREATE, variables).json()
    assert done["data"]["refundCreate"]["userErrors"] == []
    # What a benchmark reads: points used as answers report them, refusals counted.
    after = sandbox.cost_usage(shop.domain)
    assert after["spent"] - used["spent"] == done["extensions"]["cost"]["actualQueryCost"]
    assert after["refused"] == used["refused"] >= 1
    assert done["extensions"]["cost"]["throttleStatus"]["currentlyAvailable"] == 0.0
    sandbox.advance_clock(10)
    order = graphql(client, shop.domain, token, ORDER, {"id": seeded.order}).json()
    assert len(order["data"]["order"]["refunds"]) == 1  # the throttled attempt left nothing


def test_a_query_above_the_single_query_maximum_is_refused_outright(
    client: httpx.Client, shop: SandboxShop, token: str, seeded: Seeded
) -> None:
    query = """
    query Big($id: ID!) {
      customer(id: $id) {
        orders(first: 250) {
          nodes { lineItems(first: 250) { nodes { id } } }
        }
      }
    }
    """
    answer = graphql(client, shop.domain, token, query, {"id": seeded.customer}).json()
    (error,) = answer["errors"]
    assert error["extensions"]["code"] == "MAX_COST_EXCEEDED"
    assert error["extensions"]["maxCost"] == 1000
    assert error["extensions"]["cost"] > 1000
