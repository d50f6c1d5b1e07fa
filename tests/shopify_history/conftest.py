"""Fixtures for the Shopify history reader's tests: one sandbox per module, served over
HTTP on a frozen clock, and a fresh shop (with its own offline token) per test.

The reader gets what the app gives it: an offline token from Shopify's own token
exchange (``shopifyapp``) and the product's HTTP client routed to the sandbox. Its cost
bucket is reckoned on the sandbox's clock, which the tests move forward as the scan's
pacing would; nothing sleeps. Every answer the sandbox gives in a module is checked
against Shopify's published schema when the module is done (``conformance.py``).
"""

from __future__ import annotations

import json
import os
import re
import sys
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import httpx
import pytest

# The published-schema checks and the token exchange live with the sandbox's tests.
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "shopify_sandbox"))

from conformance import STRICT_ENV_VAR, assert_conforms, missing_schema_reason
from shopify_history_support import START, HistoryShop
from shopify_sandbox_support import API_KEY, API_PATH, API_SECRET, exchange

from integrations.shopify.history import DOCUMENTS, READ_SCOPES, ShopifyHistoryReader
from integrations.shopify.sandbox import Clock, SandboxHandle, ShopifySandbox
from integrations.shopify.transport import shopify_http_client

Exchange = tuple[Mapping[str, Any], Mapping[str, Any]]


@pytest.fixture(scope="module")
def answers() -> list[Exchange]:
    """Every history query the sandbox answered in this module, with its answer."""
    return []


@pytest.fixture(scope="module")
def sandbox(answers: list[Exchange]) -> Iterator[ShopifySandbox]:
    box = ShopifySandbox(api_key=API_KEY, api_secret=API_SECRET, clock=Clock(start=START))
    serve = box.handle_api

    def recording(method: str, target: str, headers: Mapping[str, str], body: bytes) -> Any:
        response = serve(method, target, headers, body)
        if target.startswith(API_PATH) and response.status == 200 and not response.drop:
            request = json.loads(body)
            if request.get("operationName") in DOCUMENTS:
                answers.append((request, json.loads(response.body)))
        return response

    box.handle_api = recording  # type: ignore[method-assign]
    yield box
    box.stop()
    _check_answers(answers)


def _check_answers(answers: Sequence[Exchange]) -> None:
    reason = missing_schema_reason()
    if reason is not None:
        if answers and os.environ.get(STRICT_ENV_VAR) == "1":
            pytest.fail(f"{STRICT_ENV_VAR}=1: history answers left unchecked: {reason}")
        return
    for request, answer in answers:
        assert_conforms(
            request["query"],
            answer,
            variables=request.get("variables"),
            operation_name=request.get("operationName"),
        )


@pytest.fixture(scope="module")
def handle(sandbox: ShopifySandbox) -> SandboxHandle:
    return sandbox.start()


@pytest.fixture(scope="module")
def http_client(handle: SandboxHandle) -> Iterator[httpx.Client]:
    client = shopify_http_client(handle.url, 10.0)
    yield client
    client.close()


@pytest.fixture
def make_shop(
    sandbox: ShopifySandbox, http_client: httpx.Client, request: pytest.FixtureRequest
) -> Callable[..., HistoryShop]:
    """A new shop holding ``scopes`` (the reader's read scopes and ``read_all_orders``
    unless told), its offline token and a reader on it."""

    def make(scopes: Sequence[str] = (*READ_SCOPES, "read_all_orders")) -> HistoryShop:
        test = re.sub(r"[^a-z0-9]+", "-", request.node.name.lower())[:40].strip("-")
        shop = sandbox.create_shop(
            f"{test}-{len(sandbox.store.shops)}", currency="USD", scopes=scopes
        )
        answer = exchange(http_client, sandbox, shop)
        assert answer.ok, answer.log
        token = str(answer.access_token.token)
        reader = ShopifyHistoryReader(
            shop.domain, token, http_client=http_client, clock=sandbox.now
        )
        return HistoryShop(sandbox, shop.domain, token, http_client, reader)

    return make


@pytest.fixture
def history_shop(make_shop: Callable[..., HistoryShop]) -> HistoryShop:
    return make_shop()
