"""``/_sandbox/...``: JSON control endpoints for the Stripe sandbox running as a process.

They mirror :class:`~.sandbox.StripeSandbox`'s methods: the shared kit's
:func:`~integrations.sandbox_kit.control_router` gives the token check, JSON, errors and
the routes every sandbox has (clock, faults, holds, latency, requests, webhook switches);
this module adds the Stripe ones. The prefix
cannot collide with Stripe's ``/v1`` paths, and every call needs the control token, so a
Stripe API key alone can never steer the sandbox.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from integrations.sandbox_kit import ControlError, Response, control_router, fault_from_json

from .ids import new_id
from .ratelimit import RateLimits

if TYPE_CHECKING:
    from .sandbox import StripeSandbox

JSON = dict[str, Any]

# A Stripe request has no GraphQL operation, so a fault cannot filter on one here.
_FAULT_FIELDS = frozenset(
    {"kind", "method", "path", "idempotency_key", "account", "count", "ms", "when"}
)


class Control:
    """Routes control requests to a :class:`StripeSandbox`."""

    def __init__(self, sandbox: StripeSandbox) -> None:
        self.sandbox = sandbox
        s = sandbox
        self._router = control_router(
            sandbox, response_headers=lambda: {"Request-Id": new_id("req")}
        )
        add = self._router.add
        add("POST", "/_sandbox/accounts", self._create_account)
        add(
            "POST",
            "/_sandbox/accounts/{account}/restricted_keys",
            lambda b, p: _key_json(
                s.add_restricted_key(
                    p["account"],
                    b.get("permissions") or {},
                    livemode=bool(b.get("livemode")),
                    key=b.get("key"),
                )
            ),
        )
        add("POST", "/_sandbox/keys/revoke", self._revoke_key)
        add(
            "POST",
            "/_sandbox/accounts/{account}/balance",
            lambda b, p: s.set_balance(
                p["account"], sufficient=bool(b["sufficient"]), livemode=bool(b.get("livemode"))
            ),
        )
        add(
            "POST",
            "/_sandbox/accounts/{account}/refund_mode",
            lambda b, p: s.set_refund_mode(
                p["account"],
                b.get("mode"),
                settle_after=float(b.get("settle_after") or 0),
                livemode=bool(b.get("livemode")),
            ),
        )
        add(
            "POST",
            "/_sandbox/accounts/{account}/rate_limits",
            lambda b, p: s.set_rate_limits(_rate_limits(b), account=p["account"]),
        )
        add("POST", "/_sandbox/rate_limits", lambda b, p: s.set_rate_limits(_rate_limits(b)))
        add(
            "POST",
            "/_sandbox/accounts/{account}/history",
            lambda b, p: s.seed_history(
                p["account"], b.get("records") or [], livemode=bool(b.get("livemode"))
            ),
        )
        add("POST", "/_sandbox/reset", lambda b, p: s.reset())
        add(
            "POST",
            "/_sandbox/faults",
            lambda b, p: s.faults.arm(fault_from_json(b, allowed=_FAULT_FIELDS)).to_json(),
        )
        add(
            "GET",
            "/_sandbox/accounts/{account}/requests",
            lambda b, p: [r.to_json() for r in s.received_requests(p["account"])],
        )
        add(
            "POST",
            "/_sandbox/webhooks/deliver",
            lambda b, p: s.deliver_event(str(b["event"]), b.get("endpoint")),
        )
        add(
            "POST",
            "/_sandbox/disputes/{dispute}/close",
            lambda b, p: s.close_dispute(p["dispute"], str(b.get("status") or "won")),
        )
        add(
            "POST", "/_sandbox/snapshot", lambda b, p: {"path": str(s.save_snapshot(b.get("path")))}
        )

    def _create_account(self, body: JSON, _path: dict[str, str]) -> JSON:
        return self.sandbox.create_account(
            live=bool(body.get("live")),
            restricted_keys=list(body.get("restricted_keys") or []),
            api_version=body.get("api_version"),
            account_id=body.get("id"),
        ).to_json()

    def _revoke_key(self, body: JSON, _path: dict[str, str]) -> JSON:
        # The key comes in the body: in the path it would be in access logs.
        self.sandbox.revoke_key(str(body["key"]))
        return {"revoked": True}

    def handle(self, method: str, target: str, headers: Mapping[str, str], body: bytes) -> Response:
        """Serve one control request."""
        return self._router.handle(method, target, headers, body)


def _rate_limits(body: JSON) -> RateLimits | None:
    """``{"limits": {...}}`` (fields left out keep Stripe's numbers), ``"stripe"``, ``"off"``
    or ``null`` (sandbox-wide: no limit; for an account: follow the sandbox-wide limits)."""
    if "limits" not in body:
        raise ControlError(400, 'say {"limits": {...} | "stripe" | "off" | null}')
    limits = body["limits"]
    if limits is None:
        return None
    if limits == "off":
        return RateLimits.off()
    if limits == "stripe":
        return RateLimits()
    if not isinstance(limits, dict):
        raise ControlError(400, "limits must be an object, 'stripe', 'off' or null")
    return RateLimits.from_json(limits)


def _key_json(key: Any) -> JSON:
    return {"key": key.key, "permissions": key.permissions, "livemode": key.livemode}
