"""What the storefront chat's tests share: a stand-in for the app behind the app proxy,
and a way to ask the sandbox's storefront for a page as a shopper's browser would.

The stand-in answers the chat's JSON contract from memory (it is not Caseward: these
tests are about the widget and the proxy in front of the app) and records every request
that reached it, so a test can check what the proxy forwarded and how it signed it.
"""

from __future__ import annotations

import http.client
import json
import secrets
import threading
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit

from threaded_server import serving

from integrations.shopify.sandbox import ShopifySandbox

JSON = dict[str, Any]

CLIENT_ID = "caseward-widget-test-client"
CLIENT_SECRET = "caseward-widget-test-secret"
GREETING = "Hi! How can we help?"
SHOP_REPLY = "Thanks, we're looking into it."
GOOD_CODE = "123456"
WRONG_CODE = "That code doesn't match. Check the latest email from us and try again."
EMAIL_HINT = "m•••@example.com"


@dataclass(frozen=True)
class Received:
    """A request as the app received it (header names lower-cased)."""

    method: str
    url: str
    headers: dict[str, str]
    body: bytes

    @property
    def path(self) -> str:
        return urlsplit(self.url).path

    @property
    def query(self) -> dict[str, list[str]]:
        return parse_qs(urlsplit(self.url).query, keep_blank_values=True)


@dataclass
class _Conversation:
    messages: list[JSON] = field(default_factory=list)
    verified: bool = False


@dataclass(frozen=True)
class _Canned:
    method: str
    path: str
    status: int
    body: JSON
    headers: dict[str, str]


class StandInApp:
    """The app's proxy endpoints (``/proxy/chat...``), answering the contract."""

    def __init__(self, poll_after: int = 1) -> None:
        self.poll_after = poll_after
        # The widget's words in the shopper's language, as the app sends them (none: the
        # widget's own English stays).
        self.labels: dict[str, str] | None = None
        # The order number the shopper wrote, offered to the verify step.
        self.offered_order: str | None = None
        self.received: list[Received] = []
        self._conversations: dict[str, _Conversation] = {}
        self._canned: list[_Canned] = []
        self._lock = threading.Lock()
        self.url = ""

    def answer_next(
        self,
        method: str,
        path: str,
        status: int,
        body: JSON,
        headers: Mapping[str, str] | None = None,
    ) -> None:
        """Answer the next ``method path`` request with this, whatever it asks."""
        with self._lock:
            self._canned.append(_Canned(method, path, status, body, dict(headers or {})))

    def say(self, conversation: str, text: str) -> None:
        """The shop writes in a conversation (the widget sees it on its next poll)."""
        with self._lock:
            self._conversations[conversation].messages.append(_message("shop", text))

    def requests_to(self, method: str, path: str) -> list[Received]:
        with self._lock:
            return [r for r in self.received if r.method == method and r.path == path]

    def answer(
        self, method: str, url: str, headers: dict[str, str], body: bytes
    ) -> tuple[int, JSON, dict[str, str]]:
        received = Received(method, url, headers, body)
        with self._lock:
            self.received.append(received)
            for canned in self._canned:
                if (canned.method, canned.path) == (method, received.path):
                    self._canned.remove(canned)
                    return canned.status, canned.body, canned.headers
            return self._chat(method, received)

    def _chat(self, method: str, received: Received) -> tuple[int, JSON, dict[str, str]]:
        asked: JSON = json.loads(received.body) if received.body else {}
        token = asked.get("conversation") or received.query.get("conversation", [""])[0]
        conversation = self._conversations.get(token)
        route = (method, received.path.removeprefix("/proxy"))
        if route == ("GET", "/chat"):
            return 200, self._state(token), {}
        if route == ("POST", "/chat/messages"):
            if conversation is None:
                token, conversation = secrets.token_urlsafe(16), _Conversation()
                self._conversations[token] = conversation
            conversation.messages.append(_message("customer", str(asked["text"])))
            conversation.messages.append(_message("shop", SHOP_REPLY))
            return 200, self._state(token), {}
        if route == ("POST", "/chat/verification"):
            return 200, {"sent": True, "to": EMAIL_HINT}, {}
        if route == ("POST", "/chat/verification/code") and conversation is not None:
            if asked.get("code") != GOOD_CODE:
                return 400, {"error": {"field": "code", "message": WRONG_CODE}}, {}
            conversation.verified = True
            return 200, self._state(token), {}
        return 404, {"error": {"field": None, "message": "Not found."}}, {}

    def _state(self, token: str) -> JSON:
        conversation = self._conversations.get(token)
        verified = conversation is not None and conversation.verified
        return {
            "conversation": token if conversation is not None else None,
            "greeting": GREETING,
            **({"labels": self.labels} if self.labels is not None else {}),
            "verification": {"order": None if verified else self.offered_order},
            "identity": {
                "verified": verified,
                "how": "email_code" if verified else None,
                "email_hint": EMAIL_HINT if verified else None,
            },
            "messages": list(conversation.messages) if conversation is not None else [],
            "case": None,
            "choices": [],
            "can_ask_for_person": conversation is not None,
            "poll_after": self.poll_after,
        }


def _message(sender: str, text: str) -> JSON:
    return {
        "id": secrets.token_hex(6),
        "from": sender,
        "text": text,
        "at": datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
    }


class _Server(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, app: StandInApp) -> None:
        self.app = app
        super().__init__(("127.0.0.1", 0), _Handler)


class _Handler(BaseHTTPRequestHandler):
    server: _Server

    def do_GET(self) -> None:
        self._serve()

    def do_POST(self) -> None:
        self._serve()

    def _serve(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length) if length else b""
        host, port = self.server.server_address[:2]
        status, answer, headers = self.server.app.answer(
            self.command,
            f"http://{host!s}:{port}{self.path}",
            {name.lower(): value for name, value in self.headers.items()},
            body,
        )
        data = json.dumps(answer).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        for name, value in headers.items():
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, format: str, *args: Any) -> None:
        """Quiet: the test reads ``received`` instead."""


@contextmanager
def serving_app(poll_after: int = 1) -> Iterator[StandInApp]:
    """The stand-in app over HTTP; its ``url`` is the app proxy URL (``.../proxy``)."""
    app = StandInApp(poll_after)
    server = _Server(app)
    host, port = server.server_address[:2]
    app.url = f"http://{host!s}:{port}/proxy"
    with serving(server):
        yield app


@dataclass(frozen=True)
class Answer:
    status: int
    headers: dict[str, str]  # lower-cased names
    body: bytes

    def json(self) -> Any:
        return json.loads(self.body)


def storefront(
    sandbox: ShopifySandbox,
    shop: str,
    method: str,
    target: str,
    *,
    body: bytes | None = None,
    headers: Mapping[str, str] | None = None,
) -> Answer:
    """Ask the sandbox for ``target`` on the shop's own host, as a browser on
    ``https://{shop}/`` would."""
    assert sandbox.url is not None
    address = urlsplit(sandbox.url)
    connection = http.client.HTTPConnection(address.hostname or "", address.port, timeout=30)
    try:
        connection.request(method, target, body=body, headers={"Host": shop, **(headers or {})})
        response = connection.getresponse()
        return Answer(
            response.status,
            {name.lower(): value for name, value in response.getheaders()},
            response.read(),
        )
    finally:
        connection.close()
