"""``/_sandbox/...``: JSON control endpoints for the Stripe sandbox running as a process.

They mirror :class:`~.sandbox.StripeSandbox`'s methods, on the shared
:class:`~integrations.sandbox_kit.ControlRouter` (token check, JSON, errors). The prefix
cannot collide with Stripe's ``/v1`` paths, and every call needs the control token, so a
Stripe API key alone can never steer the sandbox.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from integrations.sandbox_kit import ControlError, ControlRouter, Response, fault_from_json

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
        self._router = ControlRouter(
            lambda: sandbox.control_token,
            response_headers=lambda: {"Request-Id": new_id("req")},
        )
        add = self._router.add
        add("GET", "/_sandbox/health", lambda b, p: {"ok": True, "now": s.now()})
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
        add("POST", "/_sandbox/reset", lambda b, p: s.reset())
        add("GET", "/_sandbox/faults", lambda b, p: [f.to_json() for f in s.armed_faults()])
        add(
            "POST",
            "/_sandbox/faults",
            lambda b, p: s.faults.arm(fault_from_json(b, allowed=_FAULT_FIELDS)).to_json(),
        )
        add("DELETE", "/_sandbox/faults", lambda b, p: s.clear_faults())
        add("GET", "/_sandbox/holds", lambda b, p: [h.to_json() for h in s.holds()])
        add(
            "POST",
            "/_sandbox/holds/release",
            lambda b, p: {"released": s.release_hold(b.get("id"))},
        )
        add(
            "GET",
            "/_sandbox/requests",
            lambda b, p: [r.to_json() for r in s.received_requests()],
        )
        add(
            "GET",
            "/_sandbox/accounts/{account}/requests",
            lambda b, p: [r.to_json() for r in s.received_requests(p["account"])],
        )
        add("DELETE", "/_sandbox/requests", lambda b, p: s.clear_received_requests())
        add("POST", "/_sandbox/latency", lambda b, p: s.set_latency(int(b.get("ms") or 0)))
        add("GET", "/_sandbox/clock", lambda b, p: {"now": s.now()})
        add(
            "POST",
            "/_sandbox/clock/advance",
            lambda b, p: {"now": s.advance_clock(float(b["seconds"]))},
        )
        add("POST", "/_sandbox/process_due", lambda b, p: {"ran": s.process_due()})
        add("POST", "/_sandbox/webhooks/pause", lambda b, p: s.pause_webhooks())
        add("POST", "/_sandbox/webhooks/resume", lambda b, p: s.resume_webhooks())
        add(
            "POST",
            "/_sandbox/webhooks/deliver",
            lambda b, p: s.deliver_event(str(b["event"]), b.get("endpoint")),
        )
        add(
            "POST",
            "/_sandbox/webhooks/discard",
            lambda b, p: {"discarded": s.discard_webhooks(b.get("event"))},
        )
        add("GET", "/_sandbox/webhooks/pending", lambda b, p: s.pending_webhooks())
        add("GET", "/_sandbox/webhooks/attempts", lambda b, p: s.webhook_attempts())
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
