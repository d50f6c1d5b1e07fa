"""Webhook delivery: signed POSTs to endpoints, in the background, with retries.

Stripe delivers at least once and in no guaranteed order, and the product must cope with
duplicates and reordering. The dispatcher therefore offers, besides normal delivery with
bounded exponential retries on non-2xx answers, a pause switch and on-demand
(re)delivery of any event, so tests can stage duplicates and out-of-order arrival. The
queue, thread, retries and pause switch are the shared kit's
:class:`~integrations.sandbox_kit.Outbox`; this module says which endpoints get an event
and how one attempt is signed and sent.

Signatures follow Stripe's scheme: ``Stripe-Signature: t=<unix>,v1=<hex HMAC-SHA256 of
"<t>.<body>" keyed by the endpoint's whsec_ secret>``. ``t`` is real wall time, not the
sandbox clock, because receivers check it against their own clock (tolerance 300 s).
"""

from __future__ import annotations

import copy
import hashlib
import hmac
import json
import time
from collections.abc import Callable, Sequence
from typing import Any

from integrations.sandbox_kit import Outbox, post

from .store import Space, Store

JSON = dict[str, Any]

USER_AGENT = "Stripe/1.0 (+https://stripe.com/docs/webhooks)"


def signature_header(payload: str, secret: str, timestamp: int) -> str:
    """The ``Stripe-Signature`` value for ``payload`` signed at ``timestamp``."""
    signed = f"{timestamp}.{payload}".encode()
    digest = hmac.new(secret.encode(), signed, hashlib.sha256).hexdigest()
    return f"t={timestamp},v1={digest}"


def endpoint_wants(endpoint: JSON, event_type: str) -> bool:
    """Whether an enabled endpoint subscribes to ``event_type``."""
    if endpoint.get("status") != "enabled":
        return False
    enabled = endpoint.get("enabled_events") or []
    return "*" in enabled or event_type in enabled


class WebhookDispatcher:
    """Background delivery of events to webhook endpoints.

    A delivery's target is ``{"account", "livemode", "event", "endpoint"}``."""

    def __init__(
        self,
        store: Store,
        *,
        retry_delays: Sequence[float] = (1.0, 5.0, 30.0, 120.0, 600.0),
        timeout: float = 10.0,
        wall_clock: Callable[[], float] = time.time,
    ) -> None:
        self._store = store
        self._timeout = timeout
        self._wall = wall_clock
        self._outbox = Outbox(
            self._attempt, retry_delays=retry_delays, thread_name="stripe-sandbox-webhooks"
        )

    # -- lifecycle -------------------------------------------------------------------------

    def start(self) -> None:
        """Start the delivery thread (idempotent)."""
        self._outbox.start()

    def stop(self) -> None:
        """Stop delivering; queued deliveries stay queued (and in snapshots)."""
        self._outbox.stop(timeout=self._timeout + 1)

    # -- queueing --------------------------------------------------------------------------

    def enqueue(self, space: Space, event: JSON) -> None:
        """Queue ``event`` for every enabled endpoint of ``space`` that wants it."""
        endpoints = [
            e for e in space.newest_first("webhook_endpoints") if endpoint_wants(e, event["type"])
        ]
        event["pending_webhooks"] = len(endpoints)
        for endpoint in reversed(endpoints):
            self._outbox.put(_target(space, event["id"], endpoint["id"]))

    def pause(self) -> None:
        """Hold every delivery (queued events wait until :meth:`resume`)."""
        self._outbox.pause()

    def resume(self) -> None:
        """Deliver what was held, in the order it was queued."""
        self._outbox.resume()

    @property
    def paused(self) -> bool:
        """Whether delivery is on hold."""
        return self._outbox.paused

    def pending(self) -> list[JSON]:
        """Queued deliveries, oldest first."""
        return self._outbox.pending()

    def discard(self, event_id: str | None = None) -> int:
        """Drop queued deliveries (of one event, or all); returns how many."""
        if event_id is None:
            return self._outbox.discard()
        return self._outbox.discard(lambda target: target["event"] == event_id)

    def attempts(self) -> list[JSON]:
        """Every delivery attempt so far (event, endpoint, status or error)."""
        return self._outbox.attempts()

    def clear(self) -> None:
        """Forget the queue and the log (control ``reset``)."""
        self._outbox.clear()

    def idle(self) -> bool:
        """No delivery queued that could run now, and none in flight."""
        return self._outbox.idle()

    def wait_idle(self, timeout: float) -> bool:
        """Poll until :meth:`idle` (or ``timeout`` seconds)."""
        return self._outbox.wait_idle(timeout)

    # -- delivery --------------------------------------------------------------------------

    def deliver(self, event_id: str, endpoint_id: str | None = None) -> list[JSON]:
        """Send ``event_id`` now to its endpoints (or one endpoint), whatever the queue
        holds; for redelivery and out-of-order tests. Returns the attempts made."""
        with self._store.lock:
            found = [
                (space, space.get("events", event_id))
                for space in self._store.all_spaces()
                if space.get("events", event_id) is not None
            ]
            if not found:
                raise KeyError(f"no event {event_id}")
            space, event = found[0]
            assert event is not None
            targets = [
                e["id"]
                for e in space.newest_first("webhook_endpoints")
                if (endpoint_id is None and endpoint_wants(e, event["type"]))
                or e["id"] == endpoint_id
            ]
        return [
            self._outbox.send_now(_target(space, event_id, target)) for target in reversed(targets)
        ]

    def _attempt(self, target: JSON, attempt: int, manual: bool) -> JSON:
        account, livemode = str(target["account"]), bool(target["livemode"])
        event_id, endpoint_id = str(target["event"]), str(target["endpoint"])
        with self._store.lock:
            space = self._store.spaces.get((account, livemode))
            event = space.get("events", event_id) if space else None
            endpoint = space.get("webhook_endpoints", endpoint_id) if space else None
            secret = space.private.get(endpoint_id, {}).get("secret") if space else None
            payload = json.dumps(copy.deepcopy(event), indent=2) if event else ""
        record: JSON = {
            "event": event_id,
            "endpoint": endpoint_id,
            "attempt": attempt,
            "manual": manual,
            "at": self._wall(),
        }
        if event is None or endpoint is None or not secret:
            record.update(ok=False, retry=False, error="endpoint or event no longer exists")
            return record
        timestamp = int(self._wall())
        headers = {
            "Content-Type": "application/json; charset=utf-8",
            "User-Agent": USER_AGENT,
            "Stripe-Signature": signature_header(payload, secret, timestamp),
        }
        record["url"] = endpoint["url"]
        record |= post(endpoint["url"], payload.encode("utf-8"), headers, self._timeout)
        if record["ok"] and not manual:
            with self._store.lock:
                if event.get("pending_webhooks", 0) > 0:
                    event["pending_webhooks"] -= 1
                    self._store.dirty = True
        return record

    # -- snapshot --------------------------------------------------------------------------

    def to_json(self) -> list[JSON]:
        """Queued deliveries, for the snapshot."""
        return self.pending()

    def load_json(self, items: list[JSON]) -> None:
        """Re-queue deliveries saved in a snapshot."""
        for raw in items:
            self._outbox.put(
                {
                    "account": str(raw["account"]),
                    "livemode": bool(raw["livemode"]),
                    "event": str(raw["event"]),
                    "endpoint": str(raw["endpoint"]),
                },
                attempt=int(raw.get("attempt", 1)),
            )


def _target(space: Space, event_id: str, endpoint_id: str) -> JSON:
    return {
        "account": space.account_id,
        "livemode": space.livemode,
        "event": event_id,
        "endpoint": endpoint_id,
    }
