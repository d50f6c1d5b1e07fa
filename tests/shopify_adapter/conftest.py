"""Fixtures for the Shopify adapter tests: a Shopify sandbox per test, served over HTTP.

The adapter gets what the app gives it: an offline token from a real token exchange
(``shopifyapp`` through :class:`ShopifyAuth`) and an HTTP client routed to the sandbox
(:func:`shopify_http_client`). The sandbox follows the wall clock, because ``shopifyapp``
checks session tokens against it; the adapter's waits for the cost bucket advance the
sandbox's clock instead of sleeping.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from datetime import UTC, datetime

import httpx
import pytest
from shopify_adapter_support import CLIENT_ID, OWNER, SECRET

from integrations.shopify.adapter import ShopifyAdapter
from integrations.shopify.auth import AdminVerified, OfflineToken, ShopifyAuth
from integrations.shopify.graphql import AdminClient
from integrations.shopify.sandbox import Clock, SandboxHandle, SandboxShop, ShopifySandbox
from integrations.shopify.transport import shopify_http_client


@pytest.fixture
def sandbox() -> Iterator[ShopifySandbox]:
    box = ShopifySandbox(api_key=CLIENT_ID, api_secret=SECRET, clock=Clock())
    yield box
    box.stop()


@pytest.fixture
def handle(sandbox: ShopifySandbox) -> SandboxHandle:
    return sandbox.start()


@pytest.fixture
def auth(handle: SandboxHandle) -> Iterator[ShopifyAuth]:
    shopify = ShopifyAuth(CLIENT_ID, SECRET, api_base=handle.url, timeout=5.0)
    yield shopify
    shopify.close()


@pytest.fixture
def http_client(handle: SandboxHandle) -> Iterator[httpx.Client]:
    client = shopify_http_client(handle.url, 5.0)
    yield client
    client.close()


@pytest.fixture
def exchange(sandbox: ShopifySandbox, auth: ShopifyAuth) -> Callable[[SandboxShop], OfflineToken]:
    """The shop's offline token, exchanged from its owner's session token as the app does."""

    def offline(shop: SandboxShop) -> OfflineToken:
        session_token = sandbox.session_token(shop.domain, user_id=OWNER)
        verified = auth.verify_admin_request(
            "GET",
            "https://caseward.example.com/app/api/cases",
            {"Authorization": f"Bearer {session_token}"},
            b"",
            patch_id_token_path="/auth/patch-id-token",
        )
        assert isinstance(verified, AdminVerified), verified
        return auth.exchange_offline_token(verified)

    return offline


@pytest.fixture
def make_adapter(
    sandbox: ShopifySandbox,
    exchange: Callable[[SandboxShop], OfflineToken],
    http_client: httpx.Client,
) -> Callable[..., ShopifyAdapter]:
    """An adapter for a sandbox shop, as the app builds one; ``now`` may be replaced."""

    def build(shop: SandboxShop, now: Callable[[], datetime] | None = None) -> ShopifyAdapter:
        offline = exchange(shop)
        return ShopifyAdapter(
            offline.shop,
            offline.token,
            http_client=http_client,
            clock=sandbox.now,
            sleep=sandbox.advance_clock,
            now=now or (lambda: datetime.fromtimestamp(sandbox.now(), UTC)),
        )

    return build


@pytest.fixture
def merchant(
    sandbox: ShopifySandbox,
    shop: SandboxShop,
    exchange: Callable[[SandboxShop], OfflineToken],
    http_client: httpx.Client,
) -> AdminClient:
    """The shop's Admin API as another app or the merchant uses it, not through Caseward."""
    offline = exchange(shop)
    return AdminClient(offline.shop, offline.token, http_client, clock=sandbox.now)


@pytest.fixture
def shop(sandbox: ShopifySandbox) -> SandboxShop:
    return sandbox.create_shop("linen-and-loom", currency="USD", owner_user_id=OWNER)


@pytest.fixture
def adapter(
    make_adapter: Callable[[SandboxShop], ShopifyAdapter], shop: SandboxShop
) -> ShopifyAdapter:
    return make_adapter(shop)


@pytest.fixture
def customer(sandbox: ShopifySandbox, shop: SandboxShop) -> str:
    return sandbox.seed_customer(
        shop.domain, email="maya@example.com", first_name="Maya", last_name="Okafor"
    )


@pytest.fixture
def order(sandbox: ShopifySandbox, shop: SandboxShop, customer: str) -> str:
    """Two aprons at $48.00 and $5.00 shipping, paid through Shopify Payments: $101.00."""
    return sandbox.seed_order(
        shop.domain,
        customer_id=customer,
        currency="USD",
        lines=[{"title": "Apron", "quantity": 2, "price": 4800}],
        shipping=500,
    )
