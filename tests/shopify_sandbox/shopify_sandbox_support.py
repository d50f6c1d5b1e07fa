"""Helpers for the Shopify sandbox tests: shop routing, GraphQL calls, a webhook receiver.

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
from typing import TYPE_CHECKING, Any

import httpx
import jwt
from shopify_app.exchange.token_exchange import token_exchange
from threaded_server import serving

if TYPE_CHECKING:
    from integrations.shopify.sandbox import SandboxShop, ShopifySandbox

START = 1_750_000_000.0  # a fixed sandbox "now" so tests are reproducible
API_KEY = "caseward-test-client-id"
API_SECRET = "caseward-test-app-secret-0123456789abcdef"  # 32+ bytes, as HS256 wants
API_PATH = "/admin/api/2026-04/graphql.json"
OWNER, STAFF = 1001, 1002  # the shop's owner and another staff member


@dataclass(frozen=True)
class Seeded:
    """The seeded order's customer, order, line and payment (gids)."""

    customer: str
    order: str
    line: str
    payment: str


def refund_input(seeded: Seeded, amount: str = "48.00", quantity: int = 1) -> dict[str, Any]:
    """``RefundInput`` for ``quantity`` aprons back and ``amount`` refunded against the
    order's payment."""
    return {
        "orderId": seeded.order,
        "note": "One apron arrived torn",
        "refundLineItems": [{"lineItemId": seeded.line, "quantity": quantity}],
        "transactions": [
            {
                "orderId": seeded.order,
                "gateway": "stripe",
                "kind": "REFUND",
                "amount": amount,
                "parentId": seeded.payment,
            }
        ],
    }


class ShopRouting(httpx.BaseTransport):
    """Sends ``https://{shop}.myshopify.com/...`` to the sandbox, keeping the Host header
    (which is how the sandbox, like Shopify, tells shops apart)."""

    def __init__(self, base_url: str) -> None:
        self._base = httpx.URL(base_url)
        self._inner = httpx.HTTPTransport()

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        assert request.url.host.endswith(".myshopify.com"), request.url
        request.url = self._base.copy_with(raw_path=request.url.raw_path)
        return self._inner.handle_request(request)

    def close(self) -> None:
        self._inner.close()


def shop_client(base_url: str, timeout: float = 10.0) -> httpx.Client:
    """An httpx client whose shop requests reach the sandbox at ``base_url``."""
    return httpx.Client(transport=ShopRouting(base_url), timeout=timeout)


def graphql(
    client: httpx.Client,
    shop: str,
    token: str,
    query: str,
    variables: dict[str, Any] | None = None,
    headers: dict[str, str] | None = None,
) -> httpx.Response:
    """POST one GraphQL document to the shop's Admin API."""
    body: dict[str, Any] = {"query": query}
    if variables is not None:
        body["variables"] = variables
    return client.post(
        f"https://{shop}{API_PATH}",
        json=body,
        headers={"X-Shopify-Access-Token": token, **(headers or {})},
    )


def wait_until(condition: Callable[[], bool], timeout: float = 10.0) -> bool:
    """Poll ``condition`` until true or the deadline passes; returns the last result."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.01)
    return condition()


@dataclass
class Delivery:
    """One webhook POST as the receiver saw it."""

    headers: dict[str, str]
    body: bytes

    @property
    def topic(self) -> str:
        return self.headers["x-shopify-topic"]

    @property
    def payload(self) -> Any:
        return json.loads(self.body)


@dataclass
class Receiver:
    """A local webhook endpoint: records deliveries and answers with ``statuses`` in turn
    (then 200), after ``delays`` seconds in turn (then at once)."""

    url: str
    deliveries: list[Delivery] = field(default_factory=list)
    statuses: list[int] = field(default_factory=list)
    delays: list[float] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def of_topic(self, topic: str) -> list[Delivery]:
        with self.lock:
            return [d for d in self.deliveries if d.topic == topic]


@contextmanager
def webhook_receiver() -> Iterator[Receiver]:
    """Serve a :class:`Receiver` on a free port for the duration of the block."""
    receiver = Receiver(url="")

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
            with receiver.lock:
                receiver.deliveries.append(
                    Delivery({k.lower(): v for k, v in self.headers.items()}, body)
                )
                status = receiver.statuses.pop(0) if receiver.statuses else 200
                delay = receiver.delays.pop(0) if receiver.delays else 0.0
            if delay:
                time.sleep(delay)  # a slow receiver, not a wait in the test
            self.send_response(status)
            self.send_header("Content-Length", "0")
            self.end_headers()

        def log_message(self, format: str, *args: Any) -> None:
            return

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    receiver.url = f"http://127.0.0.1:{server.server_address[1]}/webhooks"
    with serving(server):
        yield receiver


def exchange(
    client: httpx.Client,
    sandbox: ShopifySandbox,
    shop: SandboxShop,
    *,
    user_id: int = OWNER,
    mode: str = "offline",
    expiring: bool = True,
) -> Any:
    """Shopify's own token exchange (``shopifyapp``) against the sandbox."""
    session = sandbox.session_token(shop.domain, user_id=user_id)
    return token_exchange(
        mode,
        {"client_id": API_KEY, "client_secret": API_SECRET},
        id_token={
            "exchangeable": True,
            "token": session,
            "claims": jwt.decode(session, options={"verify_signature": False}),
        },
        expiring=expiring,
        http_client=client,
    )
