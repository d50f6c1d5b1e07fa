"""Test helpers shared by the Shopify test folders (the client's and the sandbox's).

``tests/`` is on ``sys.path``, so both folders import this module by name. It holds what
they do the same way: seeding the one order most tests refund, verifying an admin
request carrying a session token, signing an app proxy query, and delivering a webhook
as Shopify signs it.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import uuid
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from datetime import datetime
from typing import Any
from urllib.parse import urlencode

from flask.testing import FlaskClient

from app.clock import utcnow
from integrations.shopify.auth import AdminVerified, ShopifyAuth
from integrations.shopify.sandbox import Clock, ShopifySandbox

# The Stripe payment intent that paid Maya's order.
MAYAS_PAYMENT = "pi_3CasewardDemo0001"


def seed_mayas_order(
    sandbox: ShopifySandbox,
    shop_domain: str,
    *,
    fulfilled_at: float | datetime,
    delivered_at: float | datetime,
    created_at: float | datetime | None = None,
) -> tuple[str, str]:
    """Maya Lin's order: two aprons at $48 plus $5 shipping, $101 paid by a Stripe
    payment intent (:data:`MAYAS_PAYMENT`), shipped and delivered; returns the gids of
    the customer and the order."""
    customer = sandbox.seed_customer(
        shop_domain, email="maya@example.com", first_name="Maya", last_name="Lin"
    )
    order = sandbox.seed_order(
        shop_domain,
        customer_id=customer,
        currency="USD",
        lines=[{"title": "Linen apron, natural", "quantity": 2, "price": 4800}],
        shipping=500,
        gateway="stripe",
        payment_reference=MAYAS_PAYMENT,
        fulfilled_at=fulfilled_at,
        delivered_at=delivered_at,
        created_at=created_at,
    )
    return customer, order


def verify_admin(auth: ShopifyAuth, session_token: str) -> AdminVerified:
    """The app's check of an admin request that carries ``session_token``, which must
    pass."""
    result = auth.verify_admin_request(
        "GET",
        "https://caseward.example.com/app/api/cases",
        {"Authorization": f"Bearer {session_token}"},
        b"",
        patch_id_token_path="/auth/patch-id-token",
    )
    assert isinstance(result, AdminVerified), result
    return result


def signed_proxy_query(params: Mapping[str, str], secret: str) -> str:
    """An app proxy query signed as Shopify's documentation describes: hex HMAC-SHA256 of
    the other parameters sorted by key, each ``key=value``, joined with nothing."""
    message = "".join(f"{key}={params[key]}" for key in sorted(params))
    signature = hmac.new(secret.encode(), message.encode(), hashlib.sha256).hexdigest()
    return urlencode({**params, "signature": signature})


def webhook_signature(body: bytes, secret: str) -> str:
    """``X-Shopify-Hmac-Sha256`` as Shopify computes it: base64 HMAC-SHA256 of the body."""
    return base64.b64encode(hmac.new(secret.encode(), body, hashlib.sha256).digest()).decode()


def deliver_webhook(
    client: FlaskClient,
    shop: str,
    topic: str,
    payload: dict[str, Any],
    *,
    secret: str,
    event_id: str | None = None,
    triggered_at: datetime | None = None,
    body: bytes | None = None,
    signature: str | None = None,
) -> Any:
    """POST a webhook to the app with Shopify's headers, signed over ``payload`` (or
    ``signature`` as given); ``body`` replaces what is sent, to test tampering."""
    raw = json.dumps(payload).encode() if body is None else body
    headers = {
        "Content-Type": "application/json",
        "X-Shopify-Topic": topic,
        "X-Shopify-Shop-Domain": shop,
        "X-Shopify-Webhook-Id": str(uuid.uuid4()),
        "X-Shopify-Event-Id": event_id or str(uuid.uuid4()),
        "X-Shopify-Triggered-At": (triggered_at or utcnow()).isoformat(),
        "X-Shopify-API-Version": "2026-04",
        "X-Shopify-Hmac-Sha256": signature
        if signature is not None
        else webhook_signature(json.dumps(payload).encode(), secret),
    }
    return client.post("/webhooks/shopify", data=raw, headers=headers)


@contextmanager
def serving_sandbox(api_key: str, api_secret: str) -> Iterator[ShopifySandbox]:
    """A Shopify sandbox for the app ``api_key``, served over HTTP on the wall clock
    (``shopifyapp`` checks session tokens against it), stopped afterwards."""
    box = ShopifySandbox(api_key=api_key, api_secret=api_secret, clock=Clock())
    box.start()
    try:
        yield box
    finally:
        box.stop()
