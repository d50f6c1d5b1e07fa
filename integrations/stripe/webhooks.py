"""Verifying Stripe webhooks and reading what they are about."""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import stripe

from integrations.provider import ACTION_ID_METADATA_KEY

# Stripe's own default: a signature older than five minutes is refused (replay protection).
TOLERANCE_SECONDS = 300


class InvalidWebhook(Exception):
    """The payload is not a genuine, fresh Stripe event for this endpoint."""


@dataclass(frozen=True)
class StripeEvent:
    id: str
    type: str
    created: datetime
    object_id: str | None
    object_type: str | None
    action_id: str | None
    payload: dict[str, Any]


def verify_event(
    payload: bytes, signature_header: str | None, secret: str, *, tolerance: int = TOLERANCE_SECONDS
) -> StripeEvent:
    """Check ``Stripe-Signature`` (constant-time, inside the SDK) and parse the event."""
    if not signature_header:
        raise InvalidWebhook("missing Stripe-Signature header")
    try:
        stripe.WebhookSignature.verify_header(
            payload.decode("utf-8"), signature_header, secret, tolerance
        )
        body = json.loads(payload)
    except (stripe.SignatureVerificationError, UnicodeDecodeError, ValueError) as exc:
        raise InvalidWebhook("signature does not verify") from exc
    if not isinstance(body, dict) or body.get("object") != "event":
        raise InvalidWebhook("payload is not an event")
    obj = body.get("data", {}).get("object", {})
    metadata = obj.get("metadata") or {}
    return StripeEvent(
        id=str(body["id"]),
        type=str(body["type"]),
        created=datetime.fromtimestamp(int(body.get("created", 0)), UTC),
        object_id=obj.get("id"),
        object_type=obj.get("object"),
        action_id=metadata.get(ACTION_ID_METADATA_KEY) if isinstance(metadata, dict) else None,
        payload=body,
    )
