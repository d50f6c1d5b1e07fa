"""``/_sandbox/...``: JSON control routes for the receiving server run as a process.

They mirror :class:`~.sandbox.MerchantReceiver`'s methods: the shared kit's
:func:`~integrations.sandbox_kit.control_router` gives the token check, JSON, errors and
the routes every sandbox has (clock, faults, holds, latency, requests); this module adds
the secrets held, seeding payments and customers, arming faults, refusals queued for
the next requests (a 429, a 403...), the process exit after a commit, what the
receiver's own records say (every effect, every request with its headers) and reset. A
signing secret alone can never steer the receiver: every route needs the control token.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from integrations.sandbox_kit import ControlError, ControlRouter, control_router, fault_from_json

if TYPE_CHECKING:
    from .sandbox import MerchantReceiver

JSON = dict[str, Any]

# The receiver has no accounts and no GraphQL operations to filter faults on.
_FAULT_FIELDS = frozenset({"kind", "method", "path", "idempotency_key", "count", "ms", "when"})


def receiver_control_router(receiver: MerchantReceiver) -> ControlRouter:
    """The control routes of ``receiver``, behind its token."""
    r = receiver
    router = control_router(receiver)
    add = router.add
    add("POST", "/_sandbox/secrets", lambda b, p: r.set_secrets(_secrets(b)))
    add("POST", "/_sandbox/payments", lambda b, p: r.seed_payment(**_payment(b)))
    add("POST", "/_sandbox/customers", lambda b, p: r.seed_customer(**_customer(b)))
    add(
        "POST",
        "/_sandbox/faults",
        lambda b, p: r.faults.arm(fault_from_json(b, allowed=_FAULT_FIELDS)).to_json(),
    )
    add(
        "POST",
        "/_sandbox/exit_after_commit",
        lambda b, p: r.exit_after_commit(int(b.get("count", 1))),
    )
    add("POST", "/_sandbox/refuse_next", lambda b, p: r.refuse_next(**_refusal(b)))
    add("GET", "/_sandbox/effects", lambda b, p: r.store.effects())
    add("GET", "/_sandbox/received", lambda b, p: r.store.requests())
    add("POST", "/_sandbox/reset", lambda b, p: r.reset())
    return router


def _secrets(body: JSON) -> list[str]:
    """``{"secrets": ["whsec_...", ...]}``."""
    listed = body.get("secrets")
    if not isinstance(listed, list) or not all(isinstance(s, str) and s for s in listed):
        raise ControlError(400, 'say {"secrets": ["whsec_...", ...]}')
    return listed


def _payment(body: JSON) -> JSON:
    """``{"id", "amount", "currency", "customer", "captured"?, "disputed"?}``."""
    _only(body, {"id", "amount", "currency", "customer", "captured", "disputed"})
    return {
        "payment_id": str(body["id"]),
        "amount": int(body["amount"]),
        "currency": str(body["currency"]),
        "customer": body.get("customer"),
        "captured": body.get("captured"),
        "disputed": bool(body.get("disputed", False)),
    }


def _customer(body: JSON) -> JSON:
    """``{"id", "email"?, "currency"?, "deleted"?}``."""
    _only(body, {"id", "email", "currency", "deleted"})
    return {
        "customer_id": str(body["id"]),
        "email": body.get("email"),
        "currency": body.get("currency"),
        "deleted": bool(body.get("deleted", False)),
    }


def _refusal(body: JSON) -> JSON:
    """``{"status", "code", "count"?, "retry_after"?, "path"?}``."""
    _only(body, {"status", "code", "count", "retry_after", "path"})
    retry_after = body.get("retry_after")
    path = body.get("path")
    return {
        "status": int(body["status"]),
        "code": str(body["code"]),
        "count": int(body.get("count", 1)),
        "retry_after": None if retry_after is None else float(retry_after),
        "path": None if path is None else str(path),
    }


def _only(body: JSON, allowed: set[str]) -> None:
    unknown = set(body) - allowed
    if unknown:
        raise ControlError(400, f"unknown fields: {sorted(unknown)}")
