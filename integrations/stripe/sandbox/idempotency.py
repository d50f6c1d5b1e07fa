"""Idempotency keys with Stripe's v1 semantics.

* The first response for a key (per account and mode) is saved once the endpoint has
  started executing, 4xx and 500 included, and replayed byte for byte with
  ``Idempotent-Replayed: true``.
* Requests that fail validation, or that collide with a request still running under the
  same key, are not saved: retrying them is safe.
* The same key with different parameters, or on a different endpoint, is an
  ``idempotency_error``; while the first request runs, the key answers 409
  ``idempotency_key_in_use``.
* Keys are pruned once they are 24 hours old (on the sandbox clock); after that the key
  starts a new request.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from enum import Enum
from typing import Any

from .errors import StripeApiError, validation

KEY_TTL_SECONDS = 24 * 60 * 60
MAX_KEY_LENGTH = 255

Scope = tuple[str, bool]


class Outcome(Enum):
    """What the idempotency layer decided for an incoming request."""

    PROCEED = "proceed"
    REPLAY = "replay"


@dataclass
class Record:
    """One key's first request and, once finished, its saved response."""

    method: str
    path: str
    fingerprint: str
    created: float
    request_id: str
    done: bool = False
    status: int = 0
    body: bytes = b""
    headers: dict[str, str] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        """Snapshot form (only finished records are kept)."""
        return {
            "method": self.method,
            "path": self.path,
            "fingerprint": self.fingerprint,
            "created": self.created,
            "request_id": self.request_id,
            "status": self.status,
            "body": self.body.decode("utf-8"),
            "headers": self.headers,
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Record:
        """Inverse of :meth:`to_json`."""
        return cls(
            method=data["method"],
            path=data["path"],
            fingerprint=data["fingerprint"],
            created=float(data["created"]),
            request_id=data["request_id"],
            done=True,
            status=int(data["status"]),
            body=str(data["body"]).encode("utf-8"),
            headers=dict(data.get("headers") or {}),
        )


def check_key(key: str) -> None:
    """Refuse keys Stripe would refuse (too long or empty)."""
    if not 1 <= len(key) <= MAX_KEY_LENGTH:
        raise validation(
            f"Idempotent key length is {len(key)}, which is outside accepted lengths. "
            f"Idempotent Keys must be 1-{MAX_KEY_LENGTH} characters long. If you're looking "
            "for a decent generator, try using a UUID defined by IETF RFC 4122.",
            param="idempotency_key",
        )


class IdempotencyStore:
    """Saved first responses per (account, mode, key)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._records: dict[tuple[str, bool, str], Record] = {}

    def begin(
        self,
        scope: Scope,
        key: str,
        *,
        method: str,
        path: str,
        fingerprint: str,
        now: float,
        request_id: str,
    ) -> tuple[Outcome, Record]:
        """Claim ``key`` for a new request, or return the saved response to replay.

        Raises Stripe's errors for a reused key with other parameters or endpoint and for a
        key whose first request is still running."""
        ident = (scope[0], scope[1], key)
        with self._lock:
            record = self._records.get(ident)
            if record is not None and record.done and record.created + KEY_TTL_SECONDS <= now:
                del self._records[ident]
                record = None
            if record is None:
                record = Record(method, path, fingerprint, now, request_id)
                self._records[ident] = record
                return Outcome.PROCEED, record
            if not record.done:
                raise StripeApiError(
                    409,
                    "There is currently another in-progress request using this Idempotent Key "
                    "(that probably means you submitted twice, and the other request is still "
                    f"going through): {key}. Please try again later.",
                    type="idempotency_error",
                    code="idempotency_key_in_use",
                    should_retry=True,
                )
            if record.method != method or record.path != path:
                raise StripeApiError(
                    400,
                    "Keys for idempotent requests can only be used for the same endpoint they "
                    f"were first used for ('{record.method} {record.path}' vs '{method} {path}'). "
                    f"Try using a key other than '{key}' if you meant to execute a different "
                    "request.",
                    type="idempotency_error",
                    should_retry=False,
                )
            if record.fingerprint != fingerprint:
                raise StripeApiError(
                    400,
                    "Keys for idempotent requests can only be used with the same parameters "
                    f"they were first used with. Try using a key other than '{key}' if you "
                    "meant to execute a different request.",
                    type="idempotency_error",
                    should_retry=False,
                )
            return Outcome.REPLAY, record

    def finish(
        self, scope: Scope, key: str, *, status: int, body: bytes, headers: dict[str, str]
    ) -> None:
        """Save the response of the request that claimed ``key``."""
        with self._lock:
            record = self._records.get((scope[0], scope[1], key))
            if record is not None:
                record.done = True
                record.status = status
                record.body = body
                record.headers = dict(headers)

    def abandon(self, scope: Scope, key: str) -> None:
        """Release a claim without saving (validation failure, failure before execution)."""
        with self._lock:
            record = self._records.get((scope[0], scope[1], key))
            if record is not None and not record.done:
                del self._records[(scope[0], scope[1], key)]

    def clear(self) -> None:
        """Forget every key (control ``reset``)."""
        with self._lock:
            self._records.clear()

    def to_json(self) -> list[dict[str, Any]]:
        """Finished records for the snapshot."""
        with self._lock:
            return [
                {"account": a, "livemode": m, "key": k, **r.to_json()}
                for (a, m, k), r in self._records.items()
                if r.done
            ]

    def load_json(self, data: list[dict[str, Any]]) -> None:
        """Restore finished records from a snapshot."""
        with self._lock:
            self._records = {
                (str(d["account"]), bool(d["livemode"]), str(d["key"])): Record.from_json(d)
                for d in data
            }
