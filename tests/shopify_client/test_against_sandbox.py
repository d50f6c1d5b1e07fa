"""The Shopify client end to end against the Shopify sandbox, through the sandbox routing.

Token exchange and refresh go through ``shopifyapp``; every GraphQL document runs on the
sandbox and its answer is read by the document's reader. The sandbox follows the wall
clock, because ``shopifyapp`` checks session tokens and token expiry against it; the
client's waits advance the sandbox's clock instead of sleeping.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from shopify_client_support import CLIENT_ID, SECRET
from shopify_support import MAYAS_PAYMENT, seed_mayas_order, verify_admin

from integrations.shopify.auth import AdminVerified, OfflineToken, ShopifyAuth, ShopifyTokenError
from integrations.shopify.documents import (
    CUSTOMER_STORE_CREDIT,
    CUSTOMER_WITH_ORDERS,
    DISCOUNT_BY_CODE,
    DISCOUNT_CODE_BASIC_CREATE,
    ORDER_FOR_REFUND,
    REFUND_CREATE,
    SHOP,
    STORE_CREDIT_ACCOUNT_CREDIT,
    SUGGESTED_REFUND,
    OrderForRefund,
    discount_code_variables,
    read_customer_store_credit,
    read_customer_with_orders,
    read_discount_by_code,
    read_discount_code_basic_create,
    read_order_for_refund,
    read_refund_create,
    read_shop,
    read_store_credit_credit,
    read_suggested_refund,
    refund_create_variables,
    store_credit_variables,
)
from integrations.shopify.errors import ShopifyOutcomeUnknown, ShopifyUserErrors
from integrations.shopify.graphql import AdminClient, data_or_user_errors
from integrations.shopify.money import Amount
from integrations.shopify.sandbox import Clock, Fault, SandboxShop, ShopifySandbox

OWNER = 1001


@pytest.fixture
def sandbox() -> Iterator[ShopifySandbox]:
    box = ShopifySandbox(api_key=CLIENT_ID, api_secret=SECRET, clock=Clock())
    yield box
    box.stop()


@pytest.fixture
def shopify(sandbox: ShopifySandbox) -> Iterator[ShopifyAuth]:
    handle = sandbox.start()
    # Generous: these tests read shapes, not timings, and share a loaded machine.
    auth = ShopifyAuth(CLIENT_ID, SECRET, api_base=handle.url, timeout=30.0)
    yield auth
    auth.close()


@pytest.fixture
def shop(sandbox: ShopifySandbox) -> SandboxShop:
    return sandbox.create_shop("linen-and-loom", currency="USD", owner_user_id=OWNER)


def admin_request(
    sandbox: ShopifySandbox, shopify: ShopifyAuth, shop: SandboxShop
) -> AdminVerified:
    return verify_admin(shopify, sandbox.session_token(shop.domain, user_id=OWNER))


@pytest.fixture
def offline(sandbox: ShopifySandbox, shopify: ShopifyAuth, shop: SandboxShop) -> OfflineToken:
    return shopify.exchange_offline_token(admin_request(sandbox, shopify, shop))


@pytest.fixture
def client(sandbox: ShopifySandbox, shopify: ShopifyAuth, offline: OfflineToken) -> AdminClient:
    return AdminClient(
        offline.shop,
        offline.token,
        shopify.http_client,
        clock=sandbox.now,
        sleep=sandbox.advance_clock,
    )


def test_exchange_then_refresh_then_a_spent_refresh_token(
    shopify: ShopifyAuth, shop: SandboxShop, offline: OfflineToken
) -> None:
    assert offline.shop == shop.domain
    assert offline.refresh_token is not None and offline.expires_at is not None
    assert timedelta(minutes=59) < offline.expires_at - datetime.now(UTC) <= timedelta(hours=1)
    assert shopify.refresh_if_needed(offline) is offline

    expiring = dataclasses.replace(offline, expires_at=datetime.now(UTC) + timedelta(seconds=20))
    fresh = shopify.refresh_if_needed(expiring)

    assert fresh.token != offline.token and fresh.refresh_token != offline.refresh_token
    answer = AdminClient(fresh.shop, fresh.token, shopify.http_client).execute(SHOP)
    assert read_shop(answer.data).domain == shop.domain
    with pytest.raises(ShopifyTokenError) as spent:
        shopify.refresh_if_needed(expiring)  # refresh tokens are single-use
    assert spent.value.code == "invalid_grant"


def test_online_exchange_names_the_account_owner(
    sandbox: ShopifySandbox, shopify: ShopifyAuth, shop: SandboxShop
) -> None:
    user = shopify.exchange_online_user(admin_request(sandbox, shopify, shop))

    assert (user.id, user.account_owner) == (str(OWNER), True)


def seed_stripe_paid_order(sandbox: ShopifySandbox, shop: SandboxShop) -> tuple[str, str]:
    shipped = datetime.now(UTC) - timedelta(days=3)
    return seed_mayas_order(
        sandbox, shop.domain, fulfilled_at=shipped, delivered_at=shipped + timedelta(days=1)
    )


def refund_of_the_sale(
    order: OrderForRefund, *, key: str, amount: Amount, **details: Any
) -> dict[str, Any]:
    """``refundCreate`` variables refunding ``amount`` of the order's one Stripe sale."""
    (sale,) = order.transactions
    return refund_create_variables(
        key=key,
        order_id=order.id,
        parent_transaction_id=sale.id,
        gateway="stripe",
        amount=amount,
        **details,
    )


def read_order(client: AdminClient, order_id: str) -> OrderForRefund:
    order = read_order_for_refund(client.execute(ORDER_FOR_REFUND, {"id": order_id}).data)
    assert order is not None
    return order


def test_the_read_documents(
    sandbox: ShopifySandbox, shop: SandboxShop, client: AdminClient
) -> None:
    customer_id, order_id = seed_stripe_paid_order(sandbox, shop)

    info = read_shop(client.execute(SHOP, operation_name="Shop").data)
    customer = read_customer_with_orders(
        client.execute(CUSTOMER_WITH_ORDERS, {"id": customer_id, "first": 10}).data
    )
    order = read_order(client, order_id)
    suggested = read_suggested_refund(
        client.execute(
            SUGGESTED_REFUND,
            {
                "id": order_id,
                "refundLineItems": [{"lineItemId": order.lines[0].id, "quantity": 1}],
                "refundShipping": False,
            },
        ).data
    )

    assert (info.domain, info.currency) == (shop.domain, "usd")
    assert customer is not None and customer.email == "maya@example.com"
    assert [summary.id for summary in customer.orders] == [order_id]
    assert customer.orders[0].total == Amount(10100, "usd")
    assert order.customer_id == customer_id and order.complete
    (sale,) = order.transactions
    assert (sale.kind, sale.gateway, sale.payment_id) == ("SALE", "stripe", MAYAS_PAYMENT)
    assert order.fulfillments[0].delivered_at is not None
    assert suggested is not None
    assert suggested.amount == Amount(4800, "usd")
    assert [t.parent_id for t in suggested.transactions] == [sale.id]


def test_a_refund_is_made_once_even_when_the_answer_is_lost(
    sandbox: ShopifySandbox, shop: SandboxShop, client: AdminClient
) -> None:
    _, order_id = seed_stripe_paid_order(sandbox, shop)
    order = read_order(client, order_id)
    variables = refund_of_the_sale(
        order,
        key="caseward-action-1",
        amount=Amount(4800, "usd"),
        line_items=[(order.lines[0].id, 1)],
        note="One apron arrived torn",
    )
    sandbox.arm_fault(Fault(kind="drop_after_commit", operation="refundCreate"))

    with pytest.raises(ShopifyOutcomeUnknown):
        client.execute(REFUND_CREATE, variables)
    # The same key again, as after a look-up that found nothing settled: Shopify replays.
    refund = read_refund_create(
        data_or_user_errors(client.execute(REFUND_CREATE, variables), "refundCreate")
    )

    after = read_order(client, order_id)
    assert refund.total_refunded == Amount(4800, "usd")
    assert [r.id for r in after.refunds] == [refund.id]
    assert after.total_refunded == Amount(4800, "usd")


def test_an_over_refund_is_refused_with_user_errors(
    sandbox: ShopifySandbox, shop: SandboxShop, client: AdminClient
) -> None:
    _, order_id = seed_stripe_paid_order(sandbox, shop)
    variables = refund_of_the_sale(
        read_order(client, order_id), key="caseward-action-2", amount=Amount(20000, "usd")
    )

    with pytest.raises(ShopifyUserErrors) as refused:
        data_or_user_errors(client.execute(REFUND_CREATE, variables), "refundCreate")

    assert refused.value.errors
    assert read_order(client, order_id).refunds == ()


def test_store_credit_and_a_discount_code(
    sandbox: ShopifySandbox, shop: SandboxShop, client: AdminClient
) -> None:
    customer_id, _ = seed_stripe_paid_order(sandbox, shop)

    credit = read_store_credit_credit(
        data_or_user_errors(
            client.execute(
                STORE_CREDIT_ACCOUNT_CREDIT,
                store_credit_variables(customer_id=customer_id, amount=Amount(1500, "usd")),
            ),
            "storeCreditAccountCredit",
        )
    )
    accounts = read_customer_store_credit(
        client.execute(CUSTOMER_STORE_CREDIT, {"id": customer_id, "transactions": 10}).data
    )
    created = read_discount_code_basic_create(
        data_or_user_errors(
            client.execute(
                DISCOUNT_CODE_BASIC_CREATE,
                discount_code_variables(
                    code="CW-3-SORRY",
                    title="Caseward case 3",
                    customer_id=customer_id,
                    starts_at=datetime.now(UTC),
                    percentage=0.1,
                ),
            ),
            "discountCodeBasicCreate",
        )
    )
    found = read_discount_by_code(client.execute(DISCOUNT_BY_CODE, {"code": "CW-3-SORRY"}).data)

    assert credit.amount == Amount(1500, "usd")
    assert accounts is not None
    assert [c.id for account in accounts.accounts for c in account.credits] == [credit.id]
    assert (created.code, created.percentage) == ("CW-3-SORRY", 0.1)
    assert found is not None and found.id == created.id


def test_an_empty_bucket_is_waited_for(
    sandbox: ShopifySandbox, shopify: ShopifyAuth, shop: SandboxShop, offline: OfflineToken
) -> None:
    _, order_id = seed_stripe_paid_order(sandbox, shop)
    waits: list[float] = []

    def wait(seconds: float) -> None:
        waits.append(seconds)
        sandbox.advance_clock(seconds)

    client = AdminClient(
        offline.shop, offline.token, shopify.http_client, clock=sandbox.now, sleep=wait
    )
    sandbox.set_available_cost(shop.domain, 0)

    order = read_order(client, order_id)

    assert order.id == order_id
    assert waits and all(0 < seconds < 20 for seconds in waits)
    statuses = [r.status for r in sandbox.received_requests(shop.domain) if r.operation]
    assert len(statuses) == len(waits) + 1
