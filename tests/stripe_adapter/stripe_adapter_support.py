"""Helpers for the Stripe adapter tests: arranging Stripe objects and building requests.

The module name is unique on purpose: test folders have no ``__init__.py``, so helper
modules are imported by bare name and must not collide with other folders' helpers.
"""

from __future__ import annotations

import uuid
from typing import Any, cast

import stripe

from integrations.provider import ACTION_ID_METADATA_KEY, ActionKind, ActionRequest

START = 1_750_000_000.0  # a fixed sandbox "now" so tests are reproducible

# Exactly what the adapter's refusal message asks a merchant to grant.
ADAPTER_PERMISSIONS = {
    "charges": "read",
    "payment_intents": "read",
    "customers": "write",
    "subscriptions": "write",
    "disputes": "read",
    "refunds": "write",
    "coupons": "write",
    "promotion_codes": "write",
    "webhook_endpoints": "write",
}


def pay(
    setup: stripe.StripeClient,
    amount: int = 1000,
    payment_method: str = "pm_card_visa",
    **params: Any,
) -> stripe.PaymentIntent:
    """A confirmed, captured payment intent."""
    payload = {
        "amount": amount,
        "currency": "usd",
        "payment_method": payment_method,
        "confirm": True,
        **params,
    }
    return setup.v1.payment_intents.create(
        params=cast("stripe.params.PaymentIntentCreateParams", payload)
    )


def customer(setup: stripe.StripeClient, email: str = "ada@example.com") -> stripe.Customer:
    return setup.v1.customers.create(params={"email": email})


def prices(setup: stripe.StripeClient) -> tuple[str, str]:
    """Two monthly prices of one product (basic, pro)."""
    product = setup.v1.products.create(params={"name": "Coffee club"})
    ids = []
    for unit_amount in (1000, 2500):
        price = setup.v1.prices.create(
            params={
                "product": product.id,
                "currency": "usd",
                "unit_amount": unit_amount,
                "recurring": {"interval": "month"},
            }
        )
        ids.append(price.id)
    return ids[0], ids[1]


def subscription(setup: stripe.StripeClient, price: str, quantity: int = 1) -> stripe.Subscription:
    owner = customer(setup)
    return setup.v1.subscriptions.create(
        params={"customer": owner.id, "items": [{"price": price, "quantity": quantity}]}
    )


def request(
    kind: ActionKind,
    target: str,
    amount: int | None = None,
    currency: str | None = "usd",
    *,
    key: str | None = None,
    **params: object,
) -> ActionRequest:
    """An action request with a fresh action id (and key, unless one is given)."""
    action_id = f"act_{uuid.uuid4().hex[:12]}"
    return ActionRequest(
        action_id=action_id,
        kind=kind,
        target=target,
        idempotency_key=key or f"caseward:{action_id}",
        amount=amount,
        currency=currency,
        params=params,
        metadata={ACTION_ID_METADATA_KEY: action_id, "caseward_case": "case_1"},
    )
