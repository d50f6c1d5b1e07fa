"""Signing what Caseward sends to a merchant's endpoint, on the Standard Webhooks scheme.

Every request carries three headers, as `Standard Webhooks <https://www.standardwebhooks.com>`_
defines them, so a receiver in any language can verify it with that standard's own
libraries:

* ``webhook-id``: unique per request (``msg_`` and 32 hex digits); a receiver may remember
  the ids it saw within the tolerance window and refuse a replayed request;
* ``webhook-timestamp``: when it was signed, in whole seconds since the epoch; receivers
  refuse one more than five minutes away from their own clock;
* ``webhook-signature``: ``v1,<base64 HMAC-SHA256 of "{id}.{timestamp}.{body}">``, once
  per secret in use, separated by spaces; one that verifies is enough.

A secret is ``whsec_`` and 32 random bytes in base64, as the standard writes it.

Rotation: :meth:`SigningSecrets.rotated` makes a new current secret and keeps the old one
as ``previous`` until ``previous_until``; until then every request is signed with both,
so the merchant switches its receiver at its own pace. A second rotation within that
grace period drops the older secret at once: only the last two ever sign.

The signing and verifying themselves are the ``standardwebhooks`` package's; this module
chooses the secrets, the ids and the time, and keeps them as the connection stores them.
"""

from __future__ import annotations

import base64
import json
import secrets
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace
from datetime import UTC, datetime, timedelta
from typing import Any

from standardwebhooks import Webhook, WebhookVerificationError

__all__ = [
    "DEFAULT_GRACE",
    "ID_HEADER",
    "SECRET_PREFIX",
    "SIGNATURE_HEADER",
    "TIMESTAMP_HEADER",
    "SignatureRefused",
    "SigningSecrets",
    "is_secret",
    "new_secret",
    "sign",
    "verify",
]

ID_HEADER = "webhook-id"
TIMESTAMP_HEADER = "webhook-timestamp"
SIGNATURE_HEADER = "webhook-signature"
SECRET_PREFIX = "whsec_"  # noqa: S105  (the standard's prefix, not a secret)
# How long the previous secret still signs after a rotation, unless the owner says less.
DEFAULT_GRACE = timedelta(hours=24)
_SECRET_BYTES = 32


class SignatureRefused(Exception):
    """A request whose signature does not verify: missing headers, a timestamp out of the
    tolerance window, or no signature made with any secret the receiver holds."""


def new_secret() -> str:
    """A fresh signing secret, ``whsec_`` and 32 random bytes in base64."""
    return SECRET_PREFIX + base64.b64encode(secrets.token_bytes(_SECRET_BYTES)).decode()


def is_secret(value: str) -> bool:
    """Whether ``value`` is a secret as :func:`new_secret` writes them."""
    if not value.startswith(SECRET_PREFIX):
        return False
    try:
        raw = base64.b64decode(value.removeprefix(SECRET_PREFIX), validate=True)
    except ValueError:
        return False
    return len(raw) == _SECRET_BYTES


@dataclass(frozen=True)
class SigningSecrets:
    """The secrets a connection signs with: the current one, and during a rotation's grace
    period the previous one with the moment it stops signing."""

    current: str
    previous: str | None = None
    previous_until: datetime | None = None

    def in_use(self, now: datetime) -> tuple[str, ...]:
        """The secrets that sign a request made at ``now``, the current one first."""
        if self.previous and self.previous_until is not None and now < self.previous_until:
            return (self.current, self.previous)
        return (self.current,)

    def rotated(self, new: str, now: datetime, grace: timedelta = DEFAULT_GRACE) -> SigningSecrets:
        """``new`` as the current secret; the current one signs beside it for ``grace``
        (none at all for a zero grace: the old secret stops at once)."""
        if grace <= timedelta(0):
            return SigningSecrets(current=new)
        return SigningSecrets(current=new, previous=self.current, previous_until=now + grace)

    def without_expired(self, now: datetime) -> SigningSecrets:
        """The same secrets, the previous one forgotten once its grace period is over."""
        if self.previous is not None and len(self.in_use(now)) == 1:
            return replace(self, previous=None, previous_until=None)
        return self

    def to_json(self) -> str:
        """The stored form (the connection keeps it encrypted)."""
        return json.dumps(
            {
                "current": self.current,
                "previous": self.previous,
                "previous_until": (
                    self.previous_until.isoformat() if self.previous_until is not None else None
                ),
            }
        )

    @classmethod
    def from_json(cls, stored: str) -> SigningSecrets:
        data: dict[str, Any] = json.loads(stored)
        until = data.get("previous_until")
        return cls(
            current=str(data["current"]),
            previous=data.get("previous"),
            previous_until=datetime.fromisoformat(until) if until else None,
        )


def sign(
    secrets_in_use: Iterable[str],
    body: str,
    *,
    now: datetime,
    message_id: str | None = None,
) -> dict[str, str]:
    """The three signature headers for ``body`` sent at ``now``, one signature per secret."""
    message_id = message_id or f"msg_{secrets.token_hex(16)}"
    moment = now.astimezone(UTC)
    signatures = [Webhook(secret).sign(message_id, moment, body) for secret in secrets_in_use]
    if not signatures:
        raise ValueError("a request needs at least one secret to sign it")
    return {
        ID_HEADER: message_id,
        TIMESTAMP_HEADER: str(int(moment.timestamp())),
        SIGNATURE_HEADER: " ".join(signatures),
    }


def verify(body: bytes, headers: Mapping[str, str], secrets_held: Iterable[str]) -> Any:
    """The JSON body of a request signed with one of ``secrets_held``, checked as any
    Standard Webhooks receiver checks it (headers present, timestamp within five minutes
    of now, a ``v1`` signature that matches, compared in constant time).

    Raises :class:`SignatureRefused` otherwise; a body that is not UTF-8 JSON is refused
    the same way only once a signature matched (``ValueError`` then)."""
    try:
        text = body.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise SignatureRefused("the body is not UTF-8") from exc
    reasons = []
    for secret in secrets_held:
        try:
            return Webhook(secret).verify(text, dict(headers))
        except WebhookVerificationError as exc:
            reasons.append(str(exc))
        except json.JSONDecodeError:
            raise  # the signature matched: the body itself is bad
        except ValueError as exc:
            # A malformed signature header: "v1" without its comma, or not base64.
            reasons.append(f"malformed signature header ({type(exc).__name__})")
    raise SignatureRefused(reasons[0] if reasons else "the receiver holds no secret")
