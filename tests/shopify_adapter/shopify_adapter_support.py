"""Helpers for the Shopify adapter tests: the app's credentials, action requests as the
executor builds them, and what the sandbox itself holds (the evidence a test asserts on)."""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable

from integrations.provider import ACTION_ID_METADATA_KEY, ActionKind, ActionRequest
from integrations.shopify.sandbox import ShopifySandbox
from integrations.shopify.sandbox.state import parse_gid

CLIENT_ID = "caseward-adapter-test-client-id"
SECRET = "shpss_adapter_test_app_secret_0123456789"
OWNER = 1001


def request(
    kind: ActionKind,
    target: str,
    amount: int | None = None,
    currency: str | None = "usd",
    *,
    action_id: str | None = None,
    **params: object,
) -> ActionRequest:
    """One action's request, keyed and marked as ``executor.action_request`` does."""
    action_id = action_id or str(uuid.uuid4())
    return ActionRequest(
        action_id=action_id,
        kind=kind,
        target=target,
        idempotency_key=f"caseward-action-{action_id}",
        amount=amount,
        currency=currency,
        params=params,
        metadata={ACTION_ID_METADATA_KEY: action_id},
    )


def refunds_at_shopify(sandbox: ShopifySandbox, shop: str, order_id: str) -> int:
    """How many refunds the sandbox holds on the order."""
    number = parse_gid(order_id, "Order")
    assert number is not None
    with sandbox.store.lock:
        return len(sandbox.store.shop(shop).orders[number].refunds)


def discounts_at_shopify(sandbox: ShopifySandbox, shop: str) -> list[str]:
    """The codes of every discount the sandbox holds for the shop."""
    with sandbox.store.lock:
        return [discount.code for discount in sandbox.store.shop(shop).discounts.values()]


def mutations_received(sandbox: ShopifySandbox, shop: str, operation: str) -> list[str | None]:
    """The idempotency keys of the ``operation`` requests the sandbox received."""
    return [r.idempotency_key for r in sandbox.received_requests(shop) if r.operation == operation]


def wait_until(condition: Callable[[], bool], timeout: float = 10.0) -> bool:
    """Poll ``condition`` until true or the deadline passes; returns the last result."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.01)
    return condition()
