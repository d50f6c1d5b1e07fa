"""Webhooks as Shopify sends them: signed so ``shopifyapp`` verifies them, at least once,
retried with the same event id, redeliverable on purpose, and the compliance topics."""

from __future__ import annotations

import httpx
from shopify_app.verify.webhook import verify_webhook_req
from shopify_sandbox_documents import REFUND_CREATE
from shopify_sandbox_support import (
    API_SECRET,
    START,
    Seeded,
    graphql,
    refund_input,
    wait_until,
    webhook_receiver,
)

from integrations.shopify.sandbox import TOPICS, SandboxShop, ShopifySandbox, hmac_header

HEADERS = (
    "x-shopify-topic",
    "x-shopify-hmac-sha256",
    "x-shopify-shop-domain",
    "x-shopify-webhook-id",
    "x-shopify-event-id",
    "x-shopify-triggered-at",
    "x-shopify-api-version",
)


def _verified(headers: dict[str, str], body: bytes, secret: str = API_SECRET) -> bool:
    request = {"method": "POST", "headers": headers, "body": body.decode("utf-8")}
    return bool(verify_webhook_req(request, {"client_secret": secret, "client_id": "x"}).ok)


def test_a_refund_sends_refunds_create_and_orders_updated_signed_with_the_app_secret(
    client: httpx.Client, sandbox: ShopifySandbox, shop: SandboxShop, token: str, seeded: Seeded
) -> None:
    with webhook_receiver() as receiver:
        sandbox.subscribe(
            shop.domain, url=receiver.url, topics=["refunds/create", "orders/updated"]
        )
        answer = graphql(
            client, shop.domain, token, REFUND_CREATE, {"input": refund_input(seeded), "key": "k1"}
        ).json()
        assert sandbox.wait_for_webhooks()
        assert wait_until(lambda: len(receiver.deliveries) == 2)

    created = receiver.of_topic("refunds/create")[0]
    refund_id = answer["data"]["refundCreate"]["refund"]["id"]
    assert all(name in created.headers for name in HEADERS)
    assert created.headers["x-shopify-shop-domain"] == shop.domain
    assert created.headers["x-shopify-api-version"] == "2026-04"
    assert created.headers["x-shopify-hmac-sha256"] == hmac_header(created.body, API_SECRET)
    assert _verified(created.headers, created.body)
    assert not _verified(created.headers, created.body, secret="another-secret")
    assert created.payload["admin_graphql_api_id"] == refund_id
    assert created.payload["note"] == "One apron arrived torn"
    assert created.payload["transactions"][0]["amount"] == "48.00"
    assert created.payload["transactions"][0]["kind"] == "refund"
    updated = receiver.of_topic("orders/updated")[0].payload
    assert updated["admin_graphql_api_id"] == seeded.order
    assert updated["financial_status"] == "partially_refunded"


def test_a_failed_delivery_is_retried_with_the_same_event_and_webhook_ids(
    sandbox: ShopifySandbox, shop: SandboxShop
) -> None:
    with webhook_receiver() as receiver:
        receiver.statuses = [500, 503]
        sandbox.subscribe(url=receiver.url, topics=["app/uninstalled"])
        sandbox.start()
        sandbox.uninstall(shop.domain)
        assert wait_until(lambda: len(receiver.deliveries) == 3)

    event_ids = {d.headers["x-shopify-event-id"] for d in receiver.deliveries}
    webhook_ids = {d.headers["x-shopify-webhook-id"] for d in receiver.deliveries}
    assert len(event_ids) == 1 and len(webhook_ids) == 1
    assert {d.body for d in receiver.deliveries} == {receiver.deliveries[0].body}
    attempts = sandbox.webhook_attempts()
    assert [(a["attempt"], a["ok"]) for a in attempts] == [(1, False), (2, False), (3, True)]
    assert receiver.deliveries[0].payload["myshopify_domain"] == shop.domain


def test_a_receiver_slower_than_the_timeout_gets_the_event_again() -> None:
    sandbox = ShopifySandbox(
        api_secret=API_SECRET, webhook_retry_delays=(0.05,), webhook_timeout=0.2
    )
    with webhook_receiver() as receiver:
        receiver.delays = [1.0]
        sandbox.create_shop("slow-shop")
        sandbox.subscribe(url=receiver.url, topics=["shop/redact"])
        sandbox.start()
        try:
            sandbox.redact_shop("slow-shop.myshopify.com")
            assert wait_until(lambda: len(receiver.deliveries) == 2)
            assert wait_until(lambda: any(a["ok"] for a in sandbox.webhook_attempts()))
        finally:
            sandbox.stop()
    first, retry = receiver.deliveries
    assert first.headers["x-shopify-event-id"] == retry.headers["x-shopify-event-id"]
    assert "timed out" in sandbox.webhook_attempts()[0]["error"]


def test_app_wide_subscriptions_hear_every_shop_and_an_event_can_come_twice(
    sandbox: ShopifySandbox, shop: SandboxShop
) -> None:
    other = sandbox.create_shop("other-shop")
    with webhook_receiver() as receiver:
        sandbox.subscribe(url=receiver.url, topics=list(TOPICS))
        sandbox.start()
        event = sandbox.update_scopes(shop.domain, ["read_orders"])
        sandbox.redact_shop(other.domain)
        assert wait_until(lambda: len(receiver.deliveries) == 2)

        sandbox.deliver_event(event.id)
        assert wait_until(lambda: len(receiver.deliveries) == 3)

    scopes = receiver.of_topic("app/scopes_update")
    assert len(scopes) == 2
    assert scopes[0].body == scopes[1].body
    assert scopes[0].headers["x-shopify-event-id"] == scopes[1].headers["x-shopify-event-id"]
    assert scopes[0].payload["current"] == ["read_orders"]
    assert "write_orders" in scopes[0].payload["previous"]
    assert receiver.of_topic("shop/redact")[0].payload == {
        "shop_id": int(other.id.rsplit("/", 1)[1]),
        "shop_domain": other.domain,
    }


def test_compliance_topics_carry_shopifys_payloads(
    sandbox: ShopifySandbox, shop: SandboxShop
) -> None:
    customer = sandbox.seed_customer(shop.domain, email="maya@example.com", first_name="Maya")
    order = sandbox.seed_order(
        shop.domain,
        customer_id=customer,
        currency="USD",
        lines=[{"title": "Apron", "quantity": 1, "price": 4800}],
    )
    with webhook_receiver() as receiver:
        sandbox.subscribe(url=receiver.url, topics=["customers/data_request", "customers/redact"])
        sandbox.start()
        sandbox.request_customer_data(shop.domain, customer)
        sandbox.redact_customer(shop.domain, customer)
        assert wait_until(lambda: len(receiver.deliveries) == 2)

    number = int(customer.rsplit("/", 1)[1])
    order_number = int(order.rsplit("/", 1)[1])
    request = receiver.of_topic("customers/data_request")[0].payload
    assert request["shop_domain"] == shop.domain
    assert request["customer"] == {"id": number, "email": "maya@example.com", "phone": None}
    assert request["orders_requested"] == [order_number]
    assert isinstance(request["data_request"]["id"], int)
    redact = receiver.of_topic("customers/redact")[0].payload
    assert redact["orders_to_redact"] == [order_number]


def test_paused_webhooks_wait_and_shop_redact_follows_an_uninstall_two_days_later(
    sandbox: ShopifySandbox, shop: SandboxShop
) -> None:
    with webhook_receiver() as receiver:
        sandbox.subscribe(url=receiver.url, topics=["app/uninstalled", "shop/redact"])
        sandbox.start()
        sandbox.pause_webhooks()
        sandbox.uninstall(shop.domain)
        assert sandbox.wait_for_webhooks()
        assert receiver.deliveries == []
        assert [p["attempt"] for p in sandbox.pending_webhooks()] == [1]

        sandbox.resume_webhooks()
        assert wait_until(lambda: len(receiver.deliveries) == 1)
        sandbox.advance_clock(48 * 3600 - 1)
        assert sandbox.webhook_events(shop.domain, "shop/redact") == []
        sandbox.advance_clock(1)
        assert wait_until(lambda: len(receiver.of_topic("shop/redact")) == 1)
    assert sandbox.now() == START + 48 * 3600
