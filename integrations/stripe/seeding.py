"""Create a shop's past checkout at Stripe (the sandbox, for the demo and tests).

This uses the account's full secret key: it plays the storefront's checkout, not
Caseward, which only ever holds a restricted key.
"""

from __future__ import annotations

from dataclasses import dataclass

import stripe


@dataclass(frozen=True)
class PaidCheckout:
    customer_id: str
    payment_intent_id: str
    charge_id: str


def client(secret_key: str, api_base: str) -> stripe.StripeClient:
    return stripe.StripeClient(secret_key, base_addresses={"api": api_base}, max_network_retries=0)


def paid_checkout(
    stripe_client: stripe.StripeClient,
    *,
    email: str,
    name: str,
    amount: int,
    currency: str,
    payment_method: str = "pm_card_visa",
    customer_id: str | None = None,
) -> PaidCheckout:
    """A customer (or an existing one) who paid ``amount`` with a test card."""
    if customer_id is None:
        customer_id = stripe_client.v1.customers.create(params={"email": email, "name": name}).id
    intent = stripe_client.v1.payment_intents.create(
        params={
            "amount": amount,
            "currency": currency,
            "customer": customer_id,
            "payment_method": payment_method,
            "confirm": True,
        }
    )
    charge = intent.latest_charge
    charge_id = charge if isinstance(charge, str) else charge.id if charge else ""
    return PaidCheckout(customer_id, intent.id, charge_id)


def webhook_endpoint(stripe_client: stripe.StripeClient, url: str) -> str:
    """Register ``url`` for every event; returns the signing secret (``whsec_...``)."""
    endpoint = stripe_client.v1.webhook_endpoints.create(
        params={"url": url, "enabled_events": ["*"]}
    )
    secret = endpoint.secret
    assert secret is not None
    return secret
