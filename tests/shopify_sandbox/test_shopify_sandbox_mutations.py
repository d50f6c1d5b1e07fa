"""Writes: refundCreate with its mandatory @idempotent key, store credit and discount
codes, each with Shopify's userErrors (HTTP 200, nothing changed)."""

from __future__ import annotations

from typing import Any

import httpx
from shopify_sandbox_documents import (
    CUSTOMER_STORE_CREDIT,
    DISCOUNT_BY_CODE,
    DISCOUNT_CREATE,
    ORDER,
    REFUND_CREATE,
    REFUND_CREATE_WITHOUT_KEY,
    STORE_CREDIT,
)
from shopify_sandbox_support import Seeded, graphql, refund_input

from integrations.shopify.sandbox import SandboxShop, ShopifySandbox


def refund(
    client: httpx.Client, shop: SandboxShop, token: str, given: dict[str, Any], key: str
) -> httpx.Response:
    return graphql(client, shop.domain, token, REFUND_CREATE, {"input": given, "key": key})


def order_of(client: httpx.Client, shop: SandboxShop, token: str, seeded: Seeded) -> Any:
    return graphql(client, shop.domain, token, ORDER, {"id": seeded.order}).json()["data"]["order"]


def test_a_refund_creates_a_refund_transaction_against_the_payment_and_keeps_the_note(
    client: httpx.Client, shop: SandboxShop, token: str, seeded: Seeded
) -> None:
    answer = refund(client, shop, token, refund_input(seeded), "caseward-action-1")
    payload = answer.json()["data"]["refundCreate"]

    assert answer.status_code == 200 and payload["userErrors"] == []
    created = payload["refund"]
    assert created["note"] == "One apron arrived torn"
    assert created["totalRefundedSet"]["shopMoney"] == {"amount": "48.0", "currencyCode": "USD"}
    (line,) = created["refundLineItems"]["nodes"]
    assert (line["lineItem"]["id"], line["quantity"]) == (seeded.line, 1)
    (transaction,) = created["transactions"]["nodes"]
    assert (transaction["kind"], transaction["status"]) == ("REFUND", "SUCCESS")
    assert transaction["parentTransaction"]["id"] == seeded.payment
    assert payload["order"]["displayFinancialStatus"] == "PARTIALLY_REFUNDED"

    order = order_of(client, shop, token, seeded)
    assert [r["id"] for r in order["refunds"]] == [created["id"]]
    assert order["lineItems"]["nodes"][0]["refundableQuantity"] == 1
    assert order["totalRefundedSet"]["shopMoney"]["amount"] == "48.0"
    payment = next(t for t in order["transactions"] if t["id"] == seeded.payment)
    assert payment["maximumRefundableV2"] == {"amount": "53.0", "currencyCode": "USD"}


def test_refunding_more_than_the_payment_holds_is_a_user_error_and_changes_nothing(
    client: httpx.Client, shop: SandboxShop, token: str, seeded: Seeded
) -> None:
    too_much = refund(client, shop, token, refund_input(seeded, amount="101.01"), "key-a")

    assert too_much.status_code == 200
    payload = too_much.json()["data"]["refundCreate"]
    assert payload["refund"] is None
    (error,) = payload["userErrors"]
    assert error["field"] == ["transactions", "0", "amount"]
    assert "exceeds the refundable amount 101.0" in error["message"]

    first = refund(client, shop, token, refund_input(seeded, amount="60.00"), "key-b")
    assert first.json()["data"]["refundCreate"]["userErrors"] == []
    second = refund(client, shop, token, refund_input(seeded, amount="41.01"), "key-c")
    (error,) = second.json()["data"]["refundCreate"]["userErrors"]
    assert "refundable amount 41.0" in error["message"]
    order = order_of(client, shop, token, seeded)
    assert len(order["refunds"]) == 1
    assert order["totalRefundedSet"]["shopMoney"]["amount"] == "60.0"


def test_a_line_cannot_be_refunded_more_times_than_it_was_bought(
    client: httpx.Client, shop: SandboxShop, token: str, seeded: Seeded
) -> None:
    answer = refund(client, shop, token, refund_input(seeded, quantity=3), "key-q")
    (error,) = answer.json()["data"]["refundCreate"]["userErrors"]
    assert error["field"] == ["refundLineItems", "0", "quantity"]

    unknown_order = {**refund_input(seeded), "orderId": "gid://shopify/Order/1"}
    answer = refund(client, shop, token, unknown_order, "key-o")
    assert answer.json()["data"]["refundCreate"]["userErrors"] == [
        {"field": ["orderId"], "message": "Order does not exist"}
    ]


def test_refund_create_without_an_idempotency_key_is_refused_and_runs_nothing(
    client: httpx.Client, shop: SandboxShop, token: str, seeded: Seeded
) -> None:
    answer = graphql(
        client, shop.domain, token, REFUND_CREATE_WITHOUT_KEY, {"input": refund_input(seeded)}
    )

    assert answer.status_code == 200
    body = answer.json()
    assert body["data"] == {"refundCreate": None}
    (error,) = body["errors"]
    assert error["extensions"]["code"] == "BAD_REQUEST"
    assert "@idempotent directive is required" in error["message"]
    assert order_of(client, shop, token, seeded)["refunds"] == []

    blank = refund(client, shop, token, refund_input(seeded), "   ")
    assert blank.json()["errors"][0]["extensions"]["code"] == "BAD_REQUEST"
    assert order_of(client, shop, token, seeded)["refunds"] == []


def test_the_same_key_and_input_replays_the_first_answer_and_creates_nothing_new(
    client: httpx.Client, sandbox: ShopifySandbox, shop: SandboxShop, token: str, seeded: Seeded
) -> None:
    given = refund_input(seeded)
    first = refund(client, shop, token, given, "caseward-action-7").json()
    again = refund(client, shop, token, given, "caseward-action-7").json()

    created = first["data"]["refundCreate"]["refund"]
    assert again["data"]["refundCreate"]["refund"]["id"] == created["id"]
    assert len(order_of(client, shop, token, seeded)["refunds"]) == 1
    keyed = [r for r in sandbox.received_requests(shop.domain) if r.idempotency_key]
    assert [(r.idempotency_key, r.operation, r.replayed) for r in keyed] == [
        ("caseward-action-7", "RefundCreate", False),
        ("caseward-action-7", "RefundCreate", True),
    ]


def test_a_user_error_is_replayed_too_not_retried(
    client: httpx.Client, shop: SandboxShop, token: str, seeded: Seeded
) -> None:
    given = refund_input(seeded, quantity=5)
    first = refund(client, shop, token, given, "key-u").json()
    again = refund(client, shop, token, given, "key-u").json()
    assert first["data"] == again["data"]
    assert first["data"]["refundCreate"]["userErrors"]


def test_the_same_key_with_other_input_is_an_error_and_creates_nothing(
    client: httpx.Client, shop: SandboxShop, token: str, seeded: Seeded
) -> None:
    refund(client, shop, token, refund_input(seeded), "caseward-action-9")
    other = refund(client, shop, token, refund_input(seeded, amount="10.00"), "caseward-action-9")

    body = other.json()
    assert other.status_code == 200
    assert body["data"] == {"refundCreate": None}
    assert body["errors"][0]["extensions"]["code"] == "IDEMPOTENCY_KEY_PARAMETER_MISMATCH"
    assert len(order_of(client, shop, token, seeded)["refunds"]) == 1


def test_a_pending_refund_settles_later_on_the_sandbox_clock(
    client: httpx.Client, sandbox: ShopifySandbox, shop: SandboxShop, token: str, seeded: Seeded
) -> None:
    sandbox.set_refund_status(shop.domain, "PENDING", settle_after=600)
    answer = refund(client, shop, token, refund_input(seeded), "key-p").json()
    (transaction,) = answer["data"]["refundCreate"]["refund"]["transactions"]["nodes"]
    assert transaction["status"] == "PENDING"
    assert order_of(client, shop, token, seeded)["totalRefundedSet"]["shopMoney"]["amount"] == (
        "0.0"
    )

    sandbox.advance_clock(599)
    still = order_of(client, shop, token, seeded)
    assert still["refunds"][0]["transactions"]["nodes"][0]["status"] == "PENDING"
    sandbox.advance_clock(1)

    order = order_of(client, shop, token, seeded)
    assert order["refunds"][0]["transactions"]["nodes"][0]["status"] == "SUCCESS"
    assert order["totalRefundedSet"]["shopMoney"]["amount"] == "48.0"


def test_store_credit_to_a_customer_opens_their_account(
    client: httpx.Client, shop: SandboxShop, token: str, seeded: Seeded
) -> None:
    credit = {
        "id": seeded.customer,
        "creditInput": {"creditAmount": {"amount": "12.50", "currencyCode": "USD"}},
    }
    first = graphql(client, shop.domain, token, STORE_CREDIT, credit).json()
    second = graphql(client, shop.domain, token, STORE_CREDIT, credit).json()

    made = first["data"]["storeCreditAccountCredit"]["storeCreditAccountTransaction"]
    assert made["amount"] == {"amount": "12.5", "currencyCode": "USD"}
    assert made["event"] == "ADJUSTMENT"
    after = second["data"]["storeCreditAccountCredit"]["storeCreditAccountTransaction"]
    assert after["account"]["id"] == made["account"]["id"]
    assert after["balanceAfterTransaction"]["amount"] == "25.0"
    accounts = graphql(
        client, shop.domain, token, CUSTOMER_STORE_CREDIT, {"id": seeded.customer}
    ).json()["data"]["customer"]["storeCreditAccounts"]["nodes"]
    assert [a["balance"]["amount"] for a in accounts] == ["25.0"]
    assert [t["id"] for t in accounts[0]["transactions"]["nodes"]] == [after["id"], made["id"]]


def test_store_credit_user_errors_carry_shopifys_codes(
    client: httpx.Client, shop: SandboxShop, token: str, seeded: Seeded
) -> None:
    def errors(target: str, amount: str, currency: str = "USD", **extra: Any) -> Any:
        credit = {
            "id": target,
            "creditInput": {"creditAmount": {"amount": amount, "currencyCode": currency}, **extra},
        }
        answer = graphql(client, shop.domain, token, STORE_CREDIT, credit).json()
        payload = answer["data"]["storeCreditAccountCredit"]
        assert payload["storeCreditAccountTransaction"] is None
        return [(e["code"], e["field"]) for e in payload["userErrors"]]

    amount_field = ["creditInput", "creditAmount", "amount"]
    assert errors(seeded.customer, "0") == [("NEGATIVE_OR_ZERO_AMOUNT", amount_field)]
    assert errors("gid://shopify/Customer/1", "5") == [("OWNER_NOT_FOUND", ["id"])]
    assert errors(seeded.customer, "5", "EUR") == [
        ("UNSUPPORTED_CURRENCY", ["creditInput", "creditAmount", "currencyCode"])
    ]
    past = {"expiresAt": "2020-01-01T00:00:00Z"}
    assert errors(seeded.customer, "5", **past) == [
        ("EXPIRES_AT_IN_PAST", ["creditInput", "expiresAt"])
    ]


def test_a_discount_code_is_created_once_and_found_by_its_code(
    client: httpx.Client, shop: SandboxShop, token: str, seeded: Seeded
) -> None:
    discount = {
        "title": "Sorry about the apron",
        "code": "APRON-SORRY",
        "startsAt": "2025-06-15T00:00:00Z",
        "usageLimit": 1,
        "appliesOncePerCustomer": True,
        "context": {"customers": {"add": [seeded.customer]}},
        "customerGets": {
            "value": {"discountAmount": {"amount": "10.00", "appliesOnEachItem": False}},
            "items": {"all": True},
        },
    }
    created = graphql(
        client, shop.domain, token, DISCOUNT_CREATE, {"basicCodeDiscount": discount}
    ).json()["data"]["discountCodeBasicCreate"]

    assert created["userErrors"] == []
    basic = created["codeDiscountNode"]["codeDiscount"]
    assert basic["__typename"] == "DiscountCodeBasic"
    assert basic["codes"]["nodes"][0]["code"] == "APRON-SORRY"
    assert basic["customerGets"]["value"]["amount"] == {"amount": "10.0", "currencyCode": "USD"}
    assert basic["context"] == {
        "__typename": "DiscountCustomers",
        "customers": [{"id": seeded.customer}],
    }
    assert basic["status"] == "ACTIVE"  # START is after startsAt

    found = graphql(client, shop.domain, token, DISCOUNT_BY_CODE, {"code": "apron-sorry"}).json()
    assert found["data"]["codeDiscountNodeByCode"]["id"] == created["codeDiscountNode"]["id"]

    again = graphql(
        client, shop.domain, token, DISCOUNT_CREATE, {"basicCodeDiscount": discount}
    ).json()["data"]["discountCodeBasicCreate"]
    assert again["codeDiscountNode"] is None
    assert [(e["code"], e["field"]) for e in again["userErrors"]] == [
        ("TAKEN", ["basicCodeDiscount", "code"])
    ]


def test_discount_user_errors_name_every_bad_field(
    client: httpx.Client, shop: SandboxShop, token: str
) -> None:
    discount = {
        "title": "",
        "code": "HALF",
        "startsAt": "2025-06-15T00:00:00Z",
        "endsAt": "2025-06-14T00:00:00Z",
        "customerGets": {"value": {"percentage": 1.5}, "items": {"all": True}},
    }
    answer = graphql(client, shop.domain, token, DISCOUNT_CREATE, {"basicCodeDiscount": discount})
    errors = answer.json()["data"]["discountCodeBasicCreate"]["userErrors"]

    assert [(e["code"], e["field"][1:]) for e in errors] == [
        ("BLANK", ["title"]),
        ("END_DATE_BEFORE_START_DATE", ["endsAt"]),
        ("VALUE_OUTSIDE_RANGE", ["customerGets", "value", "percentage"]),
    ]
