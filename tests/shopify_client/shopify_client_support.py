"""Helpers for the Shopify client tests: tokens signed as Shopify signs them, and a tiny
scripted HTTP server that answers in Shopify's JSON shapes.

The server only checks plumbing: each test queues the answers it needs (or a dropped
connection) and reads back what arrived, Host header included.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import threading
import time
import uuid
from collections import deque
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import jwt
from shopify_support import signed_proxy_query
from threaded_server import serve_in_thread

CLIENT_ID = "caseward-test-client-id"
SECRET = "shpss_test_app_secret_0123456789abcdef"
OLD_SECRET = "shpss_old_app_secret_9876543210fedcba"
SHOP = "demo.myshopify.com"


def session_token(
    shop: str = SHOP,
    *,
    secret: str = SECRET,
    aud: str = CLIENT_ID,
    sub: str = "42",
    iss_shop: str | None = None,
    issued_ago: float = 0.0,
    lifetime: float = 60.0,
    omit: tuple[str, ...] = (),
) -> str:
    """A session token exactly as Shopify signs one: HS256 with the app secret, one
    minute of life, ``nbf`` = ``iat`` = issue time (``issued_ago`` seconds ago; negative
    means in the future)."""
    issued = int(time.time() - issued_ago)
    claims: dict[str, Any] = {
        "iss": f"https://{iss_shop or shop}/admin",
        "dest": f"https://{shop}",
        "aud": aud,
        "sub": sub,
        "exp": issued + int(lifetime),
        "nbf": issued,
        "iat": issued,
        "jti": str(uuid.uuid4()),
        "sid": "session-" + uuid.uuid4().hex[:12],
    }
    for name in omit:
        claims.pop(name)
    return jwt.encode(claims, secret, algorithm="HS256")


def webhook_headers(body: bytes, *, secret: str = SECRET, shop: str = SHOP) -> dict[str, str]:
    """The headers of a webhook delivery, signed over the raw body."""
    digest = hmac.new(secret.encode(), body, hashlib.sha256).digest()
    return {
        "Content-Type": "application/json",
        "X-Shopify-Hmac-Sha256": base64.b64encode(digest).decode(),
        "X-Shopify-Shop-Domain": shop,
        "X-Shopify-Topic": "orders/updated",
        "X-Shopify-Webhook-Id": "b54557e4-bdd9-4b37-8a5f-bf7d70bcd043",
        "X-Shopify-Event-Id": "98880550-7158-44d4-b7cd-2c97c8a091b5",
        "X-Shopify-Triggered-At": "2026-04-20T10:11:12.123456789Z",
        "X-Shopify-API-Version": "2026-04",
    }


def app_proxy_url(params: Mapping[str, str], *, secret: str = SECRET) -> str:
    """An app proxy URL signed as Shopify's documentation describes: hex HMAC-SHA256 of
    the other parameters sorted by key, each ``key=value``, joined with nothing."""
    return "https://caseward.example.com/proxy/chat?" + signed_proxy_query(params, secret)


# ---------------------------------------------------------------- a scripted server


@dataclass(frozen=True)
class Answer:
    status: int = 200
    body: Any = None  # JSON-encoded unless bytes
    headers: dict[str, str] = field(default_factory=dict)
    drop: bool = False  # close the connection without a byte of answer
    hang: bool = False  # never answer (until the server stops)


@dataclass(frozen=True)
class Received:
    method: str
    path: str
    headers: dict[str, str]
    body: bytes

    def json(self) -> Any:
        return json.loads(self.body)


class ScriptedServer:
    """Answers each request with the next queued :class:`Answer`, or echoes the request."""

    def __init__(self) -> None:
        self.answers: deque[Answer] = deque()
        self.received: list[Received] = []
        self._stopping = threading.Event()
        server = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                self._handle()

            def do_POST(self) -> None:
                self._handle()

            def _handle(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length)
                request = Received(self.command, self.path, dict(self.headers.items()), body)
                server.received.append(request)
                answer = server.answers.popleft() if server.answers else None
                if answer is None:
                    answer = Answer(body={"host": request.headers.get("Host"), "path": self.path})
                if answer.hang:
                    server._stopping.wait()
                    return
                if answer.drop:
                    self.close_connection = True
                    return
                payload = answer.body if isinstance(answer.body, bytes) else json.dumps(answer.body)
                data = payload.encode() if isinstance(payload, str) else payload
                self.send_response(answer.status)
                self.send_header("Content-Type", "application/json")
                for name, value in answer.headers.items():
                    self.send_header(name, value)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, format: str, *args: Any) -> None:
                pass

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self._server.server_port}"
        self._thread: threading.Thread | None = None

    def queue(self, *answers: Answer) -> None:
        self.answers.extend(answers)

    def start(self) -> ScriptedServer:
        self._thread = serve_in_thread(self._server, "scripted-shopify")
        return self

    def stop(self) -> None:
        self._stopping.set()
        if self._thread is not None and self._thread.is_alive():
            self._server.shutdown()
        self._server.server_close()


@contextmanager
def scripted_server() -> Iterator[ScriptedServer]:
    server = ScriptedServer().start()
    try:
        yield server
    finally:
        server.stop()


class FakeTime:
    """An injected clock and sleep: sleeping moves the clock, nothing waits."""

    def __init__(self) -> None:
        self.now = 1000.0
        self.sleeps: list[float] = []

    def clock(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.sleeps.append(seconds)
        self.now += seconds


def graphql_answer(
    data: Any,
    *,
    requested: float = 10,
    actual: float | None = 10,
    available: float = 1990,
    maximum: float = 2000,
    restore: float = 100,
) -> dict[str, Any]:
    """A 200 answer with Shopify's ``extensions.cost``."""
    return {
        "data": data,
        "extensions": {
            "cost": {
                "requestedQueryCost": requested,
                "actualQueryCost": actual,
                "throttleStatus": {
                    "maximumAvailable": maximum,
                    "currentlyAvailable": available,
                    "restoreRate": restore,
                },
            }
        },
    }


def throttled_answer(
    *, requested: float, available: float, restore: float = 50, maximum: float = 1000
) -> dict[str, Any]:
    """Shopify's answer to a request the bucket cannot pay for: HTTP 200, THROTTLED."""
    return {
        "errors": [
            {
                "message": "Throttled",
                "extensions": {
                    "code": "THROTTLED",
                    "documentation": "https://shopify.dev/api/usage/limits#rate-limits",
                },
            }
        ],
        "extensions": {
            "cost": {
                "requestedQueryCost": requested,
                "actualQueryCost": None,
                "throttleStatus": {
                    "maximumAvailable": maximum,
                    "currentlyAvailable": available,
                    "restoreRate": restore,
                },
            }
        },
    }
