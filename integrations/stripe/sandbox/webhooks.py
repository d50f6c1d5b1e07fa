"""Webhook delivery: signed POSTs to endpoints, in the background, with retries.

Stripe delivers at least once and in no guaranteed order, and the product must cope with
duplicates and reordering. The dispatcher therefore offers, besides normal delivery with
bounded exponential retries on non-2xx answers, a pause switch and on-demand
(re)delivery of any event, so tests can stage duplicates and out-of-order arrival.

Signatures follow Stripe's scheme: ``Stripe-Signature: t=<unix>,v1=<hex HMAC-SHA256 of
"<t>.<body>" keyed by the endpoint's whsec_ secret>``. ``t`` is real wall time, not the
sandbox clock, because receivers check it against their own clock (tolerance 300 s).
"""

from __future__ import annotations

import copy
import hashlib
import heapq
import hmac
import itertools
import json
import threading
import time
import urllib.error
import urllib.request
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

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


@dataclass(order=True)
class _Item:
    due: float
    seq: int
    account: str = field(compare=False)
    livemode: bool = field(compare=False)
    event_id: str = field(compare=False)
    endpoint_id: str = field(compare=False)
    attempt: int = field(compare=False, default=1)


class WebhookDispatcher:
    """Background delivery of events to webhook endpoints."""

    def __init__(
        self,
        store: Store,
        *,
        retry_delays: Sequence[float] = (1.0, 5.0, 30.0, 120.0, 600.0),
        timeout: float = 10.0,
        wall_clock: Callable[[], float] = time.time,
    ) -> None:
        self._store = store
        self._retry_delays = tuple(retry_delays)
        self._timeout = timeout
        self._wall = wall_clock
        self._cond = threading.Condition()
        self._queue: list[_Item] = []
        self._seq = itertools.count()
        self._paused = False
        self._stopping = False
        self._busy = 0
        self._thread: threading.Thread | None = None
        self._log: deque[JSON] = deque(maxlen=10_000)

    # -- lifecycle -------------------------------------------------------------------------

    def start(self) -> None:
        """Start the delivery thread (idempotent)."""
        with self._cond:
            if self._thread is not None:
                return
            self._stopping = False
            self._thread = threading.Thread(
                target=self._run, name="stripe-sandbox-webhooks", daemon=True
            )
            self._thread.start()

    def stop(self) -> None:
        """Stop delivering; queued deliveries stay queued (and in snapshots)."""
        with self._cond:
            self._stopping = True
            self._cond.notify_all()
            thread, self._thread = self._thread, None
        if thread is not None:
            thread.join(timeout=self._timeout + 1)

    # -- queueing --------------------------------------------------------------------------

    def enqueue(self, space: Space, event: JSON) -> None:
        """Queue ``event`` for every enabled endpoint of ``space`` that wants it."""
        endpoints = [
            e for e in space.newest_first("webhook_endpoints") if endpoint_wants(e, event["type"])
        ]
        event["pending_webhooks"] = len(endpoints)
        with self._cond:
            for endpoint in reversed(endpoints):
                heapq.heappush(
                    self._queue,
                    _Item(
                        time.monotonic(),
                        next(self._seq),
                        space.account_id,
                        space.livemode,
                        event["id"],
                        endpoint["id"],
                    ),
                )
            self._cond.notify_all()

    def pause(self) -> None:
        """Hold every delivery (queued events wait until :meth:`resume`)."""
        with self._cond:
            self._paused = True

    def resume(self) -> None:
        """Deliver what was held, in the order it was queued."""
        with self._cond:
            self._paused = False
            self._cond.notify_all()

    @property
    def paused(self) -> bool:
        """Whether delivery is on hold."""
        return self._paused

    def pending(self) -> list[JSON]:
        """Queued deliveries, oldest first."""
        with self._cond:
            return [
                {
                    "account": i.account,
                    "livemode": i.livemode,
                    "event": i.event_id,
                    "endpoint": i.endpoint_id,
                    "attempt": i.attempt,
                }
                for i in sorted(self._queue)
            ]

    def discard(self, event_id: str | None = None) -> int:
        """Drop queued deliveries (of one event, or all); returns how many."""
        with self._cond:
            before = len(self._queue)
            self._queue = [
                i for i in self._queue if event_id is not None and i.event_id != event_id
            ]
            heapq.heapify(self._queue)
            return before - len(self._queue)

    def attempts(self) -> list[JSON]:
        """Every delivery attempt so far (event, endpoint, status or error)."""
        with self._cond:
            return list(self._log)

    def clear(self) -> None:
        """Forget the queue and the log (control ``reset``)."""
        with self._cond:
            self._queue.clear()
            self._log.clear()

    def idle(self) -> bool:
        """No delivery queued that could run now, and none in flight."""
        with self._cond:
            return self._busy == 0 and (self._paused or not self._queue)

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
            self._attempt(
                _Item(0.0, next(self._seq), space.account_id, space.livemode, event_id, target),
                manual=True,
            )
            for target in reversed(targets)
        ]

    def _run(self) -> None:
        while True:
            with self._cond:
                item = None
                while item is None:
                    if self._stopping:
                        return
                    now = time.monotonic()
                    if not self._paused and self._queue and self._queue[0].due <= now:
                        item = heapq.heappop(self._queue)
                        self._busy += 1
                        break
                    wait = None
                    if not self._paused and self._queue:
                        wait = max(self._queue[0].due - now, 0.0)
                    self._cond.wait(timeout=wait if wait is not None else 1.0)
            try:
                result = self._attempt(item, manual=False)
                if (
                    not result["ok"]
                    and item.attempt <= len(self._retry_delays)
                    and result.get("retry", True)
                ):
                    delay = self._retry_delays[item.attempt - 1]
                    with self._cond:
                        heapq.heappush(
                            self._queue,
                            _Item(
                                time.monotonic() + delay,
                                next(self._seq),
                                item.account,
                                item.livemode,
                                item.event_id,
                                item.endpoint_id,
                                item.attempt + 1,
                            ),
                        )
            finally:
                with self._cond:
                    self._busy -= 1
                    self._cond.notify_all()

    def _attempt(self, item: _Item, *, manual: bool) -> JSON:
        with self._store.lock:
            space = self._store.spaces.get((item.account, item.livemode))
            event = space.get("events", item.event_id) if space else None
            endpoint = space.get("webhook_endpoints", item.endpoint_id) if space else None
            secret = space.private.get(item.endpoint_id, {}).get("secret") if space else None
            payload = json.dumps(copy.deepcopy(event), indent=2) if event else ""
        record: JSON = {
            "event": item.event_id,
            "endpoint": item.endpoint_id,
            "attempt": item.attempt,
            "manual": manual,
            "at": self._wall(),
        }
        if event is None or endpoint is None or not secret:
            record.update(ok=False, retry=False, error="endpoint or event no longer exists")
            return self._logged(record)
        timestamp = int(self._wall())
        request = urllib.request.Request(  # noqa: S310 - endpoints are http(s) by validation
            endpoint["url"],
            data=payload.encode("utf-8"),
            method="POST",
            headers={
                "Content-Type": "application/json; charset=utf-8",
                "User-Agent": USER_AGENT,
                "Stripe-Signature": signature_header(payload, secret, timestamp),
            },
        )
        record["url"] = endpoint["url"]
        try:
            with urllib.request.urlopen(request, timeout=self._timeout) as response:  # noqa: S310
                record["status"] = response.status
        except urllib.error.HTTPError as exc:
            record["status"] = exc.code
        except (OSError, ValueError) as exc:
            record["error"] = f"{type(exc).__name__}: {exc}"
        status = record.get("status")
        record["ok"] = isinstance(status, int) and 200 <= status < 300
        if record["ok"] and not manual:
            with self._store.lock:
                if event.get("pending_webhooks", 0) > 0:
                    event["pending_webhooks"] -= 1
                    self._store.dirty = True
        return self._logged(record)

    def _logged(self, record: JSON) -> JSON:
        with self._cond:
            self._log.append(record)
        return record

    # -- snapshot --------------------------------------------------------------------------

    def to_json(self) -> list[JSON]:
        """Queued deliveries, for the snapshot."""
        return self.pending()

    def load_json(self, items: list[JSON]) -> None:
        """Re-queue deliveries saved in a snapshot."""
        with self._cond:
            for raw in items:
                heapq.heappush(
                    self._queue,
                    _Item(
                        time.monotonic(),
                        next(self._seq),
                        str(raw["account"]),
                        bool(raw["livemode"]),
                        str(raw["event"]),
                        str(raw["endpoint"]),
                        int(raw.get("attempt", 1)),
                    ),
                )
            self._cond.notify_all()
