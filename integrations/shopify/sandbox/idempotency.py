"""``@idempotent(key:)`` on Admin GraphQL mutations, as Shopify applies it from 2026-04.

* ``refundCreate`` must carry the directive; without it (or with a blank key) Shopify
  answers ``BAD_REQUEST`` and runs nothing. ``storeCreditAccountCredit`` and
  ``discountCodeBasicCreate`` do not document the directive; the sandbox honours it on
  them when given, and never asks for it.
* A key is claimed per shop before the mutation runs. The first request's outcome (what
  it created, or its ``userErrors``) is saved under the key; the same key with the same
  arguments answers that outcome again and creates nothing
  (:attr:`Claim.replay`); the same key with other arguments, or on another mutation, is
  ``IDEMPOTENCY_KEY_PARAMETER_MISMATCH``; while the first request still runs, the key
  answers ``IDEMPOTENCY_CONCURRENT_REQUEST``. Nothing is saved for a request that failed
  before it ran, so retrying that is safe.
* Keys are kept 24 hours on the sandbox clock.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from typing import Any

JSON = dict[str, Any]

KEY_TTL_SECONDS = 24 * 60 * 60
REQUIRED = frozenset({"refundCreate"})


class IdempotencyError(Exception):
    """A key that cannot be used now: Shopify's message and ``extensions.code``."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


def missing_key() -> IdempotencyError:
    return IdempotencyError(
        "BAD_REQUEST",
        "The @idempotent directive is required for this mutation but was not provided.",
    )


def blank_key() -> IdempotencyError:
    return IdempotencyError(
        "BAD_REQUEST", "The idempotency key cannot be an empty string or whitespace only."
    )


@dataclass
class Claim:
    """One mutation field's hold on a key during a request.

    ``replay`` is the saved outcome to answer again (nothing runs); otherwise the
    resolver sets ``outcome`` once it has committed, and the request saves it."""

    shop: str
    key: str
    field: str
    fingerprint: str
    replay: JSON | None = None
    outcome: JSON | None = None


@dataclass
class _Record:
    field: str
    fingerprint: str
    created: float
    outcome: JSON | None = None  # None while the first request runs


class IdempotencyKeys:
    """Saved outcomes per (shop, key)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._records: dict[tuple[str, str], _Record] = {}

    def claim(self, shop: str, key: str, field: str, fingerprint: str, now: float) -> Claim:
        """Claim ``key`` for a new run, or get the saved outcome to replay; raises
        :class:`IdempotencyError` for a mismatch or a run still in progress."""
        with self._lock:
            record = self._records.get((shop, key))
            expired = record is not None and record.created + KEY_TTL_SECONDS <= now
            if record is not None and record.outcome is not None and expired:
                record = None
            if record is None:
                self._records[(shop, key)] = _Record(field, fingerprint, now)
                return Claim(shop, key, field, fingerprint)
            if record.outcome is None:
                raise IdempotencyError(
                    "IDEMPOTENCY_CONCURRENT_REQUEST",
                    "This request is currently in progress, please try again.",
                )
            if record.field != field or record.fingerprint != fingerprint:
                raise IdempotencyError(
                    "IDEMPOTENCY_KEY_PARAMETER_MISMATCH",
                    "The same idempotency key cannot be used with different operation parameters.",
                )
            return Claim(shop, key, field, fingerprint, replay=dict(record.outcome))

    def settle(self, claim: Claim) -> None:
        """Save the outcome of a claim that ran; forget a claim that did not run."""
        if claim.replay is not None:
            return
        with self._lock:
            record = self._records.get((claim.shop, claim.key))
            if record is None or record.outcome is not None:
                return
            if claim.outcome is None:
                del self._records[(claim.shop, claim.key)]
            else:
                record.outcome = dict(claim.outcome)
