"""Webhooks (HMAC of the raw body) and app proxy requests (signed query), good and bad."""

from __future__ import annotations

import json
import time
from datetime import UTC, datetime

import pytest
from shopify_client_support import (
    CLIENT_ID,
    OLD_SECRET,
    SECRET,
    SHOP,
    app_proxy_url,
    webhook_headers,
)

from integrations.shopify.auth import Refusal, ShopifyAuth, VerifiedProxyRequest, VerifiedWebhook

WEBHOOK_URL = "https://caseward.example.com/webhooks/shopify"
BODY = json.dumps({"id": 820982911946154508, "name": "#1001", "total_price": "48.00"}).encode()


def assert_bare_401(result: VerifiedWebhook | Refusal) -> None:
    assert isinstance(result, Refusal), result
    assert (result.answer.status, result.answer.body, result.answer.headers) == (
        401,
        "Unauthorized",
        {},
    )


def test_a_signed_webhook_is_read_with_its_headers(auth: ShopifyAuth) -> None:
    result = auth.verify_webhook("POST", WEBHOOK_URL, webhook_headers(BODY), BODY)

    assert isinstance(result, VerifiedWebhook)
    assert result.shop == SHOP
    assert result.topic == "orders/updated"
    assert result.webhook_id == "b54557e4-bdd9-4b37-8a5f-bf7d70bcd043"
    assert result.event_id == "98880550-7158-44d4-b7cd-2c97c8a091b5"
    assert result.api_version == "2026-04"
    assert result.triggered_at == datetime(2026, 4, 20, 10, 11, 12, 123456, tzinfo=UTC)
    assert result.payload["name"] == "#1001"


def test_header_names_are_case_insensitive(auth: ShopifyAuth) -> None:
    headers = {name.lower(): value for name, value in webhook_headers(BODY).items()}

    assert isinstance(auth.verify_webhook("POST", WEBHOOK_URL, headers, BODY), VerifiedWebhook)


def test_a_tampered_body_is_refused(auth: ShopifyAuth) -> None:
    tampered = BODY.replace(b"48.00", b"4800.00")

    assert_bare_401(auth.verify_webhook("POST", WEBHOOK_URL, webhook_headers(BODY), tampered))


def test_a_body_signed_with_another_secret_is_refused(auth: ShopifyAuth) -> None:
    headers = webhook_headers(BODY, secret="shpss_somebody_else_entirely_0000000")

    assert_bare_401(auth.verify_webhook("POST", WEBHOOK_URL, headers, BODY))


def test_a_missing_signature_is_refused_with_401(auth: ShopifyAuth) -> None:
    """shopifyapp answers 400 here; Shopify's compliance checks expect 401."""
    headers = webhook_headers(BODY)
    del headers["X-Shopify-Hmac-Sha256"]

    assert_bare_401(auth.verify_webhook("POST", WEBHOOK_URL, headers, BODY))


def test_a_signed_body_without_a_shop_domain_is_refused(auth: ShopifyAuth) -> None:
    headers = webhook_headers(BODY)
    del headers["X-Shopify-Shop-Domain"]

    assert_bare_401(auth.verify_webhook("POST", WEBHOOK_URL, headers, BODY))


def test_a_body_that_is_not_utf8_is_refused(auth: ShopifyAuth) -> None:
    body = b"\xff\xfe{}"

    assert_bare_401(auth.verify_webhook("POST", WEBHOOK_URL, webhook_headers(body), body))


def test_the_old_secret_is_accepted_during_rotation() -> None:
    rotating = ShopifyAuth(CLIENT_ID, SECRET, old_client_secret=OLD_SECRET)
    headers = webhook_headers(BODY, secret=OLD_SECRET)

    assert isinstance(rotating.verify_webhook("POST", WEBHOOK_URL, headers, BODY), VerifiedWebhook)
    assert_bare_401(
        ShopifyAuth(CLIENT_ID, SECRET).verify_webhook("POST", WEBHOOK_URL, headers, BODY)
    )


# ---------------------------------------------------------------- app proxy


def proxy_params(**overrides: str) -> dict[str, str]:
    params = {
        "shop": SHOP,
        "logged_in_customer_id": "7391",
        "path_prefix": "/apps/caseward",
        "timestamp": str(int(time.time())),
    }
    params.update(overrides)
    return params


def test_a_signed_proxy_request_names_the_shop_and_the_customer(auth: ShopifyAuth) -> None:
    result = auth.verify_app_proxy("GET", app_proxy_url(proxy_params()), {}, b"")

    assert result == VerifiedProxyRequest(
        shop=SHOP, logged_in_customer_id="7391", path_prefix="/apps/caseward"
    )


def test_a_logged_out_shopper_has_no_customer_id(auth: ShopifyAuth) -> None:
    result = auth.verify_app_proxy(
        "GET", app_proxy_url(proxy_params(logged_in_customer_id="")), {}, b""
    )

    assert isinstance(result, VerifiedProxyRequest)
    assert result.logged_in_customer_id is None


@pytest.mark.parametrize(
    "url",
    [
        # Someone else's customer id, the signature kept.
        app_proxy_url(proxy_params()).replace(
            "logged_in_customer_id=7391", "logged_in_customer_id=1"
        ),
        app_proxy_url(proxy_params(), secret="shpss_somebody_else_entirely_0000000"),
        app_proxy_url(proxy_params(timestamp=str(int(time.time()) - 600))),
    ],
    ids=["edited", "wrong-secret", "stale"],
)
def test_an_unsigned_or_stale_proxy_request_is_refused(auth: ShopifyAuth, url: str) -> None:
    result = auth.verify_app_proxy("GET", url, {}, b"")

    assert isinstance(result, Refusal)
    assert result.answer.status == 401
