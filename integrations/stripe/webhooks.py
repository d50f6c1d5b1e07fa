"""Verifying Stripe webhooks and reading what they are about.

Two refusals, kept apart because Stripe treats them alike but people do not:
:class:`InvalidWebhook` (not signed by Stripe for this endpoint, or not fresh) and
:class:`MalformedEvent` (signed, but not an event we can read). Neither may become a
server error: Stripe retries a 5xx for days.
"""

from __future__ import annotations

import json
import re
import time
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import stripe

from integrations.provider import ACTION_ID_METADATA_KEY

# Stripe's own default: a signature more than five minutes away from now is refused
# (replay protection). Its libraries look only into the past; a signature from the
# future is refused too, so a clock-skewed or forged timestamp cannot extend a replay.
TOLERANCE_SECONDS = 300

# What a stored event may hold, by the columns it lands in.
_EVENT_ID = re.compile(r"evt_[A-Za-z0-9_]{1,251}")
_EVENT_TYPE = re.compile(r"[a-z0-9_.]{1,128}")
_OBJECT_ID = re.compile(r"[A-Za-z0-9_]{1,255}")
_OBJECT_TYPE = re.compile(r"[a-z0-9_.]{1,64}")
# Event times: from Stripe's founding to far ahead; anything else is not a timestamp.
_EARLIEST, _LATEST = 1_262_304_000, 4_102_444_800  # 2010-01-01, 2100-01-01


class InvalidWebhook(Exception):
    """The payload is not a genuine, fresh Stripe event for this endpoint."""


class MalformedEvent(Exception):
    """The payload is signed but is not an event of the shape Stripe sends."""


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
    payload: bytes,
    signature_header: str | None,
    secret: str,
    *,
    tolerance: int = TOLERANCE_SECONDS,
) -> StripeEvent:
    """Check ``Stripe-Signature`` (constant-time, inside the SDK) and parse the event."""
    if not signature_header:
        raise InvalidWebhook("missing Stripe-Signature header")
    try:
        text = payload.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise MalformedEvent("the payload is not UTF-8 text") from exc
    try:
        stripe.WebhookSignature.verify_header(text, signature_header, secret, tolerance)
    except stripe.SignatureVerificationError as exc:
        raise InvalidWebhook("signature does not verify") from exc
    if _signed_at(signature_header) > time.time() + tolerance:
        raise InvalidWebhook("the signature's timestamp is in the future")
    try:
        body = json.loads(text)
    except (ValueError, RecursionError) as exc:
        raise MalformedEvent("the payload is not JSON") from exc
    return read_event(body)


def read_event(body: object) -> StripeEvent:
    """The parts of an event we use, each checked for type and size."""
    if not isinstance(body, dict) or body.get("object") != "event":
        raise MalformedEvent("the payload is not an event object")
    event_id = _matching(body.get("id"), _EVENT_ID, "id")
    event_type = _matching(body.get("type"), _EVENT_TYPE, "type")
    created = body.get("created")
    if isinstance(created, bool) or not isinstance(created, int):
        raise MalformedEvent("created is not a timestamp")
    if not _EARLIEST <= created <= _LATEST:
        raise MalformedEvent("created is out of range")
    data = body.get("data")
    obj = data.get("object") if isinstance(data, dict) else None
    if not isinstance(obj, dict):
        raise MalformedEvent("data.object is not an object")
    object_id = obj.get("id")
    object_type = obj.get("object")
    metadata = obj.get("metadata")
    action_id = metadata.get(ACTION_ID_METADATA_KEY) if isinstance(metadata, dict) else None
    return StripeEvent(
        id=event_id,
        type=event_type,
        created=datetime.fromtimestamp(created, UTC),
        object_id=_matching(object_id, _OBJECT_ID, "data.object.id") if object_id else None,
        object_type=(
            _matching(object_type, _OBJECT_TYPE, "data.object.object") if object_type else None
        ),
        # Ours is a uuid; anything else in that key is not ours and is ignored.
        action_id=action_id if isinstance(action_id, str) and len(action_id) <= 64 else None,
        payload=body,
    )


def _matching(value: object, pattern: re.Pattern[str], name: str) -> str:
    if not isinstance(value, str) or not pattern.fullmatch(value):
        raise MalformedEvent(f"{name} is missing or not of Stripe's form")
    return value


def _signed_at(header: str) -> int:
    """The ``t=`` of a header the SDK has already verified, read the way the SDK reads it
    (so it is there, an integer)."""
    for item in header.split(","):
        parts = item.split("=", 2)
        if parts[0] == "t" and len(parts) > 1:
            return int(parts[1])
    raise InvalidWebhook("the signature has no timestamp")
