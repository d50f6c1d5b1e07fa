"""Reads: the shop, a customer and their orders, an order with everything the money path
needs, a suggested refund; and the errors Shopify answers instead."""

from __future__ import annotations

import json

import httpx
from shopify_sandbox_documents import CUSTOMER, ORDER, SHOP, SUGGESTED_REFUND
from shopify_sandbox_support import START, Seeded, exchange, graphql

from integrations.shopify.sandbox import SandboxShop, ShopifySandbox


def _money(amount: str) -> dict[str, dict[str, str]]:
    money = {"amount": amount, "currencyCode": "USD"}
    return {"shopMoney": money, "presentmentMoney": money}


def test_the_shop_is_the_one_the_host_header_names(
    client: httpx.Client, shop: SandboxShop, token: str
) -> None:
    answer = graphql(client, shop.domain, token, SHOP)

    assert answer.status_code == 200
    assert answer.headers["X-Shopify-API-Version"] == "2026-04"
    found = answer.json()["data"]["shop"]
    assert found["id"] == shop.id
    assert found["currencyCode"] == "USD"
    assert found["myshopifyDomain"] == "linen-and-loom.myshopify.com"


def test_an_order_says_what_was_paid_shipped_and_how(
    client: httpx.Client, shop: SandboxShop, token: str, seeded: Seeded
) -> None:
    order = graphql(client, shop.domain, token, ORDER, {"id": seeded.order}).json()
    order = order["data"]["order"]

    assert order["name"] == "#1001"
    assert order["customer"]["id"] == seeded.customer
    assert order["displayFinancialStatus"] == "PAID"
    assert order["totalPriceSet"] == _money("101.0")
    assert order["totalReceivedSet"] == _money("101.0")
    assert order["totalRefundedSet"] == _money("0.0")
    line = order["lineItems"]["nodes"][0]
    assert (line["title"], line["quantity"], line["refundableQuantity"]) == (
        "Linen apron, natural",
        2,
        2,
    )
    assert line["originalUnitPriceSet"] == _money("48.0")
    (payment,) = order["transactions"]
    assert (payment["kind"], payment["status"], payment["gateway"]) == (
        "SALE",
        "SUCCESS",
        "stripe",
    )
    assert payment["paymentId"] == "pi_3CasewardDemo0001"
    assert json.loads(payment["receiptJson"]) == {"payment_id": "pi_3CasewardDemo0001"}
    (shipment,) = order["fulfillments"]
    assert shipment["displayStatus"] == "DELIVERED"
    assert shipment["deliveredAt"] == "2025-06-12T15:06:40Z"  # START - 3 days
    assert order["refunds"] == []


def test_a_customer_lists_their_orders_newest_first_a_page_at_a_time(
    client: httpx.Client, sandbox: ShopifySandbox, shop: SandboxShop, token: str, seeded: Seeded
) -> None:
    later = sandbox.seed_order(
        shop.domain,
        customer_id=seeded.customer,
        currency="USD",
        lines=[{"title": "Tea towel", "quantity": 1, "price": 1200}],
        created_at=START - 86400,
    )
    first = graphql(client, shop.domain, token, CUSTOMER, {"id": seeded.customer, "first": 1})
    customer = first.json()["data"]["customer"]

    assert customer["displayName"] == "Maya Lin"
    assert customer["defaultEmailAddress"] == {"emailAddress": "maya@example.com"}
    assert customer["numberOfOrders"] == "2"
    assert [o["id"] for o in customer["orders"]["nodes"]] == [later]
    page = customer["orders"]["pageInfo"]
    assert page["hasNextPage"] is True

    variables = {"id": seeded.customer, "first": 1, "after": page["endCursor"]}
    second = graphql(client, shop.domain, token, CUSTOMER, variables).json()
    orders = second["data"]["customer"]["orders"]
    assert [o["id"] for o in orders["nodes"]] == [seeded.order]
    assert orders["pageInfo"]["hasNextPage"] is False


def test_a_suggested_refund_is_bounded_by_what_the_payment_still_holds(
    client: httpx.Client, shop: SandboxShop, token: str, seeded: Seeded
) -> None:
    one_apron = {
        "id": seeded.order,
        "refundLineItems": [{"lineItemId": seeded.line, "quantity": 1}],
    }
    suggestion = graphql(client, shop.domain, token, SUGGESTED_REFUND, one_apron).json()
    suggested = suggestion["data"]["order"]["suggestedRefund"]

    assert suggested["amountSet"] == _money("48.0")
    assert suggested["maximumRefundableSet"] == _money("101.0")
    assert suggested["shipping"]["maximumRefundableSet"] == _money("5.0")
    (transaction,) = suggested["suggestedTransactions"]
    assert transaction["kind"] == "SUGGESTED_REFUND"
    assert transaction["parentTransaction"]["id"] == seeded.payment
    assert transaction["amountSet"] == _money("48.0")

    everything = {"id": seeded.order, "suggestFullRefund": True}
    full = graphql(client, shop.domain, token, SUGGESTED_REFUND, everything).json()
    assert full["data"]["order"]["suggestedRefund"]["amountSet"] == _money("101.0")


def test_syntax_and_validation_errors_answer_200_with_shopifys_error_shape(
    client: httpx.Client, shop: SandboxShop, token: str
) -> None:
    broken = graphql(client, shop.domain, token, "query { shop { name ")
    assert broken.status_code == 200
    (error,) = broken.json()["errors"]
    assert error["locations"] and error["extensions"]["code"] == "parseError"
    assert "data" not in broken.json()

    unknown = graphql(client, shop.domain, token, "query { shop { name nickname } }")
    assert unknown.status_code == 200
    (error,) = unknown.json()["errors"]
    assert error["message"] == "Field 'nickname' doesn't exist on type 'Shop'"
    assert error["locations"] == [{"line": 1, "column": 21}]
    assert error["extensions"]["code"] == "undefinedField"

    missing_argument = graphql(client, shop.domain, token, "query { order { id } }")
    codes = [e["extensions"]["code"] for e in missing_argument.json()["errors"]]
    assert codes == ["missingRequiredArguments"]


def test_a_connection_needs_first_or_last_and_ids_of_other_shops_find_nothing(
    client: httpx.Client, sandbox: ShopifySandbox, shop: SandboxShop, token: str, seeded: Seeded
) -> None:
    query = "query($id: ID!) { order(id: $id) { lineItems { nodes { id } } } }"
    answer = graphql(client, shop.domain, token, query, {"id": seeded.order}).json()
    assert answer["errors"][0]["message"] == "you must provide one of first or last"
    assert answer["errors"][0]["path"] == ["order", "lineItems"]

    other = sandbox.create_shop("other-shop")
    other_token = exchange(client, sandbox, other).access_token.token
    cross = graphql(client, other.domain, other_token, ORDER, {"id": seeded.order}).json()
    assert cross["data"] == {"order": None}


def test_a_token_without_the_scope_is_denied_the_field(
    client: httpx.Client, sandbox: ShopifySandbox, token: str
) -> None:
    narrow = sandbox.create_shop("narrow-shop", scopes=["read_customers"])
    narrow_token = exchange(client, sandbox, narrow).access_token.token
    query = 'query { order(id: "gid://shopify/Order/1") { id } }'
    answer = graphql(client, narrow.domain, narrow_token, query).json()

    (error,) = answer["errors"]
    assert error["extensions"]["code"] == "ACCESS_DENIED"
    assert error["path"] == ["order"]
    assert answer["data"] == {"order": None}


def test_an_authorized_then_captured_order_is_refunded_against_its_capture(
    client: httpx.Client, sandbox: ShopifySandbox, shop: SandboxShop, token: str
) -> None:
    order_id = sandbox.seed_order(
        shop.domain,
        customer_id=None,
        currency="USD",
        lines=[{"title": "Table runner", "quantity": 1, "price": 3500}],
        authorize_then_capture=True,
    )
    order = graphql(client, shop.domain, token, ORDER, {"id": order_id}).json()["data"]["order"]
    authorization, capture = order["transactions"]
    assert (authorization["kind"], capture["kind"]) == ("AUTHORIZATION", "CAPTURE")
    assert capture["parentTransaction"]["id"] == authorization["id"]
    assert order["displayFinancialStatus"] == "PAID"

    everything = {"id": order_id, "suggestFullRefund": True}
    suggestion = graphql(client, shop.domain, token, SUGGESTED_REFUND, everything).json()
    (refund,) = suggestion["data"]["order"]["suggestedRefund"]["suggestedTransactions"]
    assert refund["parentTransaction"]["id"] == capture["id"]
    assert refund["amountSet"] == _money("35.0")
