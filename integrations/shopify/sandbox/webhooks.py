"""Webhooks as Shopify sends them: signed JSON POSTs, at least once, on a background thread.

Subscriptions are per shop, or app-wide (as ``shopify.app.toml`` declares them: one
address and its topics, for every shop the app is installed in; the mandatory compliance
topics arrive this way). Each event is serialised once when it happens, so every
delivery and redelivery of it carries the same bytes, the same ``X-Shopify-Event-Id``
and, per subscription, the same ``X-Shopify-Webhook-Id``. A delivery is signed with
``X-Shopify-Hmac-Sha256`` (base64 HMAC-SHA256 of the raw body keyed by the app secret)
and counts as received only on a 2xx within the timeout (5 s, as Shopify waits); anything
else is retried after the next delay. The queue, thread, retries, pause switch and
on-demand redelivery (to stage duplicates) are the shared kit's
:class:`~integrations.sandbox_kit.Outbox`.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import threading
import uuid
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from typing import Any

from integrations.sandbox_kit import Clock, Outbox, post

from .schema import API_VERSION

JSON = dict[str, Any]

TOPICS = (
    "refunds/create",
    "orders/updated",
    "app/uninstalled",
    "app/scopes_update",
    "customers/data_request",
    "customers/redact",
    "shop/redact",
)
USER_AGENT = "Shopify-Captain-Hook"
DELIVERY_TIMEOUT = 5.0
# Shopify retries 8 times over 4 hours; tests pass shorter delays.
RETRY_DELAYS = (10.0, 30.0, 60.0, 300.0, 900.0, 1800.0, 3600.0, 7200.0)


def hmac_header(body: bytes, secret: str) -> str:
    """``X-Shopify-Hmac-Sha256`` for ``body``: base64 of HMAC-SHA256 keyed by the secret."""
    return base64.b64encode(hmac.new(secret.encode(), body, hashlib.sha256).digest()).decode()


@dataclass(frozen=True)
class Subscription:
    """Where a topic's events go: for one shop, or for every shop (``shop`` None)."""

    id: str
    url: str
    topics: tuple[str, ...]
    shop: str | None = None

    def wants(self, shop: str, topic: str) -> bool:
        """Whether an event of ``topic`` in ``shop`` goes here."""
        return topic in self.topics and (self.shop is None or self.shop == shop)

    def to_json(self) -> JSON:
        """Control-endpoint form."""
        return asdict(self)


@dataclass
class Event:
    """Something that happened in a shop, as it will be delivered."""

    id: str
    topic: str
    shop: str
    body: bytes
    triggered_at: str
    webhook_ids: dict[str, str] = field(default_factory=dict)

    def to_json(self) -> JSON:
        """Control-endpoint form, the payload decoded."""
        return {
            "id": self.id,
            "topic": self.topic,
            "shop": self.shop,
            "triggered_at": self.triggered_at,
            "payload": json.loads(self.body),
        }


class WebhookDispatcher:
    """Subscriptions, events, and their delivery."""

    def __init__(
        self,
        *,
        api_secret: str,
        clock: Clock,
        retry_delays: Sequence[float] = RETRY_DELAYS,
        timeout: float = DELIVERY_TIMEOUT,
    ) -> None:
        self._secret = api_secret
        self._clock = clock
        self._timeout = timeout
        self._lock = threading.Lock()
        self._subscriptions: dict[str, Subscription] = {}
        self._events: dict[str, Event] = {}
        self._outbox = Outbox(
            self._attempt, retry_delays=retry_delays, thread_name="shopify-sandbox-webhooks"
        )

    # -- subscriptions ---------------------------------------------------------------------

    def subscribe(self, url: str, topics: Sequence[str], shop: str | None = None) -> Subscription:
        """Send ``topics`` to ``url`` (for ``shop``, or for every shop)."""
        unknown = set(topics) - set(TOPICS)
        if unknown or not topics:
            raise ValueError(f"topics must be among {TOPICS}; unknown: {sorted(unknown)}")
        if not url.startswith(("http://", "https://")):
            raise ValueError("a webhook address must be an http(s) URL")
        subscription = Subscription(f"sub_{uuid.uuid4().hex[:12]}", url, tuple(topics), shop)
        with self._lock:
            self._subscriptions[subscription.id] = subscription
        return subscription

    def unsubscribe(self, subscription_id: str) -> None:
        """Forget a subscription (KeyError when unknown)."""
        with self._lock:
            if self._subscriptions.pop(subscription_id, None) is None:
                raise KeyError(f"no subscription {subscription_id}")

    def subscriptions(self) -> list[Subscription]:
        """Every subscription, in the order made."""
        with self._lock:
            return list(self._subscriptions.values())

    # -- events ----------------------------------------------------------------------------

    def emit(self, shop: str, topic: str, payload: JSON) -> Event:
        """Record an event and queue it for every subscription that wants it."""
        moment = datetime.fromtimestamp(self._clock.now(), UTC)
        event = Event(
            id=str(uuid.uuid4()),
            topic=topic,
            shop=shop,
            body=json.dumps(payload).encode("utf-8"),
            triggered_at=moment.strftime("%Y-%m-%dT%H:%M:%S.%fZ"),
        )
        with self._lock:
            self._events[event.id] = event
            targets = [s for s in self._subscriptions.values() if s.wants(shop, topic)]
            for subscription in targets:
                event.webhook_ids[subscription.id] = str(uuid.uuid4())
        for subscription in targets:
            self._outbox.put({"event": event.id, "subscription": subscription.id})
        return event

    def events(self, shop: str | None = None, topic: str | None = None) -> list[Event]:
        """Events so far, oldest first (of one shop and/or topic)."""
        with self._lock:
            return [
                e
                for e in self._events.values()
                if (shop is None or e.shop == shop) and (topic is None or e.topic == topic)
            ]

    def deliver(self, event_id: str, subscription_id: str | None = None) -> list[JSON]:
        """Deliver an event again, right now, with the same ids and bytes (a duplicate on
        purpose); returns the attempts."""
        with self._lock:
            event = self._events.get(event_id)
            if event is None:
                raise KeyError(f"no event {event_id}")
            targets = [
                s
                for s in self._subscriptions.values()
                if (subscription_id is None and s.id in event.webhook_ids)
                or s.id == subscription_id
            ]
            for subscription in targets:
                event.webhook_ids.setdefault(subscription.id, str(uuid.uuid4()))
        return [self._outbox.send_now({"event": event_id, "subscription": s.id}) for s in targets]

    # -- delivery switches -----------------------------------------------------------------

    def start(self) -> None:
        """Start the delivery thread."""
        self._outbox.start()

    def stop(self) -> None:
        """Stop delivering; queued deliveries stay queued."""
        self._outbox.stop(timeout=self._timeout + 1)

    def pause(self) -> None:
        """Hold every delivery."""
        self._outbox.pause()

    def resume(self) -> None:
        """Deliver what was held."""
        self._outbox.resume()

    def pending(self) -> list[JSON]:
        """Queued deliveries, oldest first."""
        return self._outbox.pending()

    def attempts(self) -> list[JSON]:
        """Every delivery attempt so far."""
        return self._outbox.attempts()

    def discard(self, event_id: str | None = None) -> int:
        """Drop queued deliveries (of one event, or all)."""
        if event_id is None:
            return self._outbox.discard()
        return self._outbox.discard(lambda target: target["event"] == event_id)

    def wait_idle(self, timeout: float) -> bool:
        """Poll until nothing is runnable or in flight (or ``timeout``)."""
        return self._outbox.wait_idle(timeout)

    # -- one attempt -----------------------------------------------------------------------

    def _attempt(self, target: JSON, attempt: int, manual: bool) -> JSON:
        with self._lock:
            event = self._events.get(str(target["event"]))
            subscription = self._subscriptions.get(str(target["subscription"]))
        record: JSON = {
            "event": target["event"],
            "subscription": target["subscription"],
            "attempt": attempt,
            "manual": manual,
        }
        if event is None or subscription is None:
            return record | {"ok": False, "retry": False, "error": "subscription or event gone"}
        record |= {"topic": event.topic, "shop": event.shop, "url": subscription.url}
        headers = {
            "Content-Type": "application/json",
            "User-Agent": USER_AGENT,
            "X-Shopify-Topic": event.topic,
            "X-Shopify-Hmac-Sha256": hmac_header(event.body, self._secret),
            "X-Shopify-Shop-Domain": event.shop,
            "X-Shopify-Webhook-Id": event.webhook_ids[subscription.id],
            "X-Shopify-Event-Id": event.id,
            "X-Shopify-Triggered-At": event.triggered_at,
            "X-Shopify-API-Version": API_VERSION,
        }
        return record | post(subscription.url, event.body, headers, self._timeout)
