"""Create a shop's past at Stripe (the sandbox, for the demo, tests and benchmarks).

A past checkout uses the account's full secret key: it plays the storefront's checkout,
not Caseward, which only ever holds a restricted key. A past history of money actions
(months of refunds, credits, discounts and subscription changes, at the times they
happened) is written through the sandbox's control API in one call, with its control
token: the API could only make objects of the sandbox's present, and slowly.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

import requests
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


# ---------------------------------------------------------------- a past history


@dataclass(frozen=True)
class SeededHistory:
    """What ``seed_history`` wrote: the customers and payments by the caller's labels, and
    per record, in the order given, its ``kind``, the ``id`` Stripe's history reports it
    under, and the objects around it (``charge``, ``payment_intent``, ``customer``,
    ``coupon``, ``subscription``)."""

    customers: Mapping[str, str]
    payments: Mapping[str, Mapping[str, str]]
    records: tuple[Mapping[str, Any], ...]

    @property
    def ids(self) -> list[str]:
        return [str(record["id"]) for record in self.records]


def seed_history(
    api_base: str,
    control_token: str,
    account: str,
    records: Sequence[Mapping[str, Any]],
    *,
    timeout: float = 120.0,
) -> SeededHistory:
    """Write past money actions (``records``, each at its ``created`` time: see
    ``integrations/stripe/sandbox/history.py`` for their fields) into a sandbox account in
    one call of its control API; 10,000 take a few seconds. Raises ``ValueError`` with the
    sandbox's reason when a record is wrong (then nothing was written)."""
    response = requests.post(
        f"{api_base}/_sandbox/accounts/{account}/history",
        json={"records": [dict(record) for record in records]},
        headers={"X-Sandbox-Control-Token": control_token},
        timeout=timeout,
    )
    body = response.json()
    if response.status_code != 200:
        raise ValueError(body.get("error", {}).get("message") or response.text)
    return SeededHistory(body["customers"], body["payments"], tuple(body["records"]))


# Stripe lists 30 days of events, which is all it shows of subscription changes.
_CHANGES_REACH = timedelta(days=29)


def spread_history(
    counts: Mapping[str, int], *, start: datetime, end: datetime, currency: str = "usd"
) -> list[dict[str, Any]]:
    """Clean past money actions to seed: ``counts[kind]`` of each kind (``refund``,
    ``customer_credit``, ``discount``, ``subscription_cancel``, ``subscription_change``),
    spread evenly from ``start`` to ``end`` (changes over the last 29 days before ``end``
    only, the reach of Stripe's events). Nothing in them is a problem: each refund and
    credit has a payment and a customer of its own and is small (5 to 50 units of the
    currency), each discount is 5 to 15 percent off with a code for nobody in particular,
    each subscription its own customer's. A caller adds the problems it plants."""
    records: list[dict[str, Any]] = []
    for kind, count in counts.items():
        first = max(start, end - _CHANGES_REACH) if kind == "subscription_change" else start
        step = (end - first) / max(count, 1)
        for number in range(count):
            created = int((first + step * number).timestamp())
            records.append({"kind": kind, "created": created, **_clean(kind, number, currency)})
    return records


def _clean(kind: str, number: int, currency: str) -> dict[str, Any]:
    """The fields of the ``number``-th clean record of ``kind``."""
    amount = 500 + (number * 37) % 4500
    if kind in ("refund", "customer_credit"):
        return {"amount": amount, "currency": currency}
    if kind == "discount":
        return {"percent_off": 5 + number % 11}
    if kind == "subscription_cancel":
        return {"amount": 1000 + (number % 5) * 500, "currency": currency}
    if kind == "subscription_change":
        return {"amount": 1000, "quantity": 1, "new_quantity": 2, "currency": currency}
    raise ValueError(f"no past money action of kind {kind!r}")
