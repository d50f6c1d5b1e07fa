"""Fixtures for the Shopify client tests: the app's credentials and a scripted local server."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from shopify_client_support import CLIENT_ID, SECRET, ScriptedServer, scripted_server

from integrations.shopify.auth import ShopifyAuth


@pytest.fixture
def server() -> Iterator[ScriptedServer]:
    with scripted_server() as running:
        yield running


@pytest.fixture
def auth(server: ScriptedServer) -> Iterator[ShopifyAuth]:
    """The app's credentials, its shop requests routed to the scripted server."""
    shopify = ShopifyAuth(CLIENT_ID, SECRET, api_base=server.url, timeout=5.0)
    yield shopify
    shopify.close()
