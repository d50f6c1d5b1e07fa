"""Fixtures for the Shopify sandbox tests: a fresh sandbox per test on a frozen clock.

Tests talk to the sandbox only over HTTP, through ``httpx`` and the real ``shopifyapp``
token exchange, like the product will. Every GraphQL answer the sandbox gives during a
test is checked afterwards against Shopify's published schema (``conformance.py``), so no
answer shape escapes the check.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator, Mapping
from typing import Any

import httpx
import pytest
from conformance import STRICT_ENV_VAR, assert_conforms, missing_schema_reason
from graphql import GraphQLSyntaxError, parse, validate
from shopify_sandbox_documents import ORDER
from shopify_sandbox_support import (
    API_KEY,
    API_PATH,
    API_SECRET,
    OWNER,
    STAFF,
    START,
    Seeded,
    exchange,
    graphql,
    shop_client,
)
from shopify_support import seed_mayas_order

from integrations.shopify.sandbox import Clock, SandboxHandle, SandboxShop, ShopifySandbox
from integrations.shopify.sandbox.schema import build


@pytest.fixture
def sandbox() -> Iterator[ShopifySandbox]:
    """A sandbox on a frozen clock with fast webhook retries; its GraphQL answers are
    checked against Shopify's published schema when the test is done."""
    box = ShopifySandbox(
        api_key=API_KEY,
        api_secret=API_SECRET,
        clock=Clock(start=START),
        webhook_retry_delays=(0.05, 0.1, 0.2),
    )
    exchanges: list[tuple[Mapping[str, Any], Mapping[str, Any]]] = []
    serve = box.handle_api

    def recording(method: str, target: str, headers: Mapping[str, str], body: bytes) -> Any:
        response = serve(method, target, headers, body)
        if target.startswith(API_PATH) and response.status == 200 and not response.drop:
            exchanges.append((json.loads(body), json.loads(response.body)))
        return response

    box.handle_api = recording  # type: ignore[method-assign]
    yield box
    box.stop()
    _check_answers(exchanges)


def _check_answers(exchanges: list[tuple[Mapping[str, Any], Mapping[str, Any]]]) -> None:
    reason = missing_schema_reason()
    if reason is not None:
        if exchanges and os.environ.get(STRICT_ENV_VAR) == "1":
            pytest.fail(f"{STRICT_ENV_VAR}=1: sandbox answers left unchecked: {reason}")
        return
    ours = build()
    for request, answer in exchanges:
        document = request["query"]
        try:
            refused = bool(validate(ours, parse(document)))
        except GraphQLSyntaxError:
            refused = True
        if refused:
            continue  # refused by the sandbox on purpose (a test of its error answers)
        assert_conforms(
            document,
            answer,
            variables=request.get("variables"),
            operation_name=request.get("operationName"),
        )


@pytest.fixture
def handle(sandbox: ShopifySandbox) -> SandboxHandle:
    """The sandbox serving HTTP on a free port."""
    return sandbox.start()


@pytest.fixture
def client(handle: SandboxHandle) -> Iterator[httpx.Client]:
    """httpx sending ``https://{shop}.myshopify.com`` requests to the sandbox."""
    with shop_client(handle.url) as http:
        yield http


@pytest.fixture
def shop(sandbox: ShopifySandbox) -> SandboxShop:
    """The linen shop, its owner and one more staff member."""
    created = sandbox.create_shop("linen-and-loom", currency="USD", owner_user_id=OWNER)
    sandbox.add_staff(created.domain, user_id=STAFF, account_owner=False)
    return created


@pytest.fixture
def seeded(sandbox: ShopifySandbox, shop: SandboxShop, client: httpx.Client, token: str) -> Seeded:
    """Maya Lin's order #1001: two aprons at $48 plus $5 shipping, $101 paid by a Stripe
    payment intent, delivered; its line and payment read back over GraphQL."""
    customer, order = seed_mayas_order(
        sandbox,
        shop.domain,
        fulfilled_at=START - 6 * 86400,
        delivered_at=START - 3 * 86400,
        created_at=START - 8 * 86400,
    )
    answer = graphql(client, shop.domain, token, ORDER, {"id": order}).json()["data"]["order"]
    line = answer["lineItems"]["nodes"][0]["id"]
    return Seeded(customer, order, line, answer["transactions"][0]["id"])


@pytest.fixture
def token(client: httpx.Client, sandbox: ShopifySandbox, shop: SandboxShop) -> str:
    """An expiring offline access token for the shop."""
    result = exchange(client, sandbox, shop)
    assert result.ok, result.log
    return str(result.access_token.token)
