"""Helpers for the Stripe sandbox tests: raw HTTP, payments, a webhook receiver, polling.

The module name is unique on purpose: test folders have no ``__init__.py``, so helper
modules are imported by bare name and must not collide with other folders' helpers.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import requests
import stripe
from threaded_server import serving

START = 1_750_000_000.0  # a fixed sandbox "now" so tests are reproducible


def client_for(url: str, key: str, **options: Any) -> stripe.StripeClient:
    """The real SDK pointed at the sandbox; no automatic retries, so faults show."""
    return stripe.StripeClient(key, base_addresses={"api": url}, max_network_retries=0, **options)


def raw(
    url: str,
    method: str,
    path: str,
    key: str | None,
    data: Any = None,
    headers: dict[str, str] | None = None,
    timeout: float = 10,
) -> requests.Response:
    """A request without the SDK, to see headers the SDK hides."""
    sent = dict(headers or {})
    if key is not None:
        sent["Authorization"] = f"Bearer {key}"
    return requests.request(
        method,
        url + path,
        data=data if method != "GET" else None,
        params=data if method == "GET" else None,
        headers=sent,
        timeout=timeout,
    )


def pay(
    client: stripe.StripeClient,
    amount: int = 1000,
    currency: str = "usd",
    payment_method: str = "pm_card_visa",
    **params: Any,
) -> stripe.PaymentIntent:
    """A confirmed PaymentIntent (captured unless ``capture_method=manual``)."""
    return client.v1.payment_intents.create(
        params={
            "amount": amount,
            "currency": currency,
            "payment_method": payment_method,
            "confirm": True,
            **params,
        }
    )


def wait_until(predicate: Callable[[], Any], timeout: float = 30.0, interval: float = 0.01) -> Any:
    """Poll ``predicate`` until it returns something truthy, or fail after ``timeout``
    (long enough for a loaded machine: a deadline, not a measure of speed)."""
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"condition not met within {timeout}s")
        time.sleep(interval)


def event_types(client: stripe.StripeClient, **params: Any) -> list[str]:
    """Types of the account's events, oldest first."""
    events = client.v1.events.list(params={"limit": 100, **params})
    return [e.type for e in reversed(events.data)]


@dataclass
class Received:
    """One webhook delivery as the receiver saw it."""

    body: bytes
    signature: str | None
    headers: dict[str, str]

    @property
    def event(self) -> dict[str, Any]:
        """The JSON payload."""
        result: dict[str, Any] = json.loads(self.body)
        return result


@dataclass
class Receiver:
    """A webhook endpoint for tests: records deliveries, answers with scripted statuses."""

    url: str
    received: list[Received] = field(default_factory=list)
    statuses: list[int] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def next_status(self) -> int:
        """The scripted status for the next delivery (200 once the script is used up)."""
        with self.lock:
            return self.statuses.pop(0) if self.statuses else 200

    def record(self, item: Received) -> None:
        """Remember a delivery."""
        with self.lock:
            self.received.append(item)

    def events(self) -> list[dict[str, Any]]:
        """Payloads received so far."""
        with self.lock:
            return [r.event for r in self.received]

    def wait_for(
        self, predicate: Callable[[list[dict[str, Any]]], bool], timeout: float = 30.0
    ) -> list[dict[str, Any]]:
        """Poll until the received events satisfy ``predicate``."""
        return wait_until(lambda: self.events() if predicate(self.events()) else None, timeout)


@contextmanager
def webhook_receiver() -> Iterator[Receiver]:
    """Serve a :class:`Receiver` on a free local port for the duration of the block."""
    holder: dict[str, Receiver] = {}

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
            receiver = holder["r"]
            receiver.record(
                Received(body, self.headers.get("Stripe-Signature"), dict(self.headers.items()))
            )
            status = receiver.next_status()
            self.send_response(status)
            self.send_header("Content-Length", "0")
            self.end_headers()

        def log_message(self, format: str, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    holder["r"] = Receiver(url=f"http://127.0.0.1:{server.server_address[1]}/webhooks")
    with serving(server):
        yield holder["r"]
