"""Fixtures for the Shopify client tests: the app's credentials and a scripted local server."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from graphql import GraphQLSchema
from shopify_client_support import CLIENT_ID, SECRET, ScriptedServer, scripted_server

from integrations.shopify.auth import ShopifyAuth

# Shopify's published schema is parsed once a run, where the sandbox's tests keep it.
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "shopify_sandbox"))

from conformance import require_published_schema


@pytest.fixture
def schema() -> GraphQLSchema:
    """Shopify's published Admin schema; without it the test skips, naming the path
    (with ``CASEWARD_STRICT_TESTS=1`` it fails)."""
    return require_published_schema()


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
