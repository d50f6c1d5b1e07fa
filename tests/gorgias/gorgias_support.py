"""Helpers for the Gorgias tests: time a test controls, a client of the demo account, and a
local receiver for HTTP integration calls."""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from threaded_server import serving

from integrations.gorgias import AccountBudgets, GorgiasClient
from integrations.gorgias.sandbox import DemoAccount, GorgiasSandbox

START = 1_700_000_000.0
MAYA = "maya@example.com"


class FakeTime:
    """The client's clock and sleep: sleeping moves this clock and the sandbox's alike,
    so waits cost no wall time and the sandbox sees them pass."""

    def __init__(self, sandbox: GorgiasSandbox) -> None:
        self.now = 5_000.0
        self.slept: list[float] = []
        self._sandbox = sandbox

    def clock(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.slept.append(seconds)
        self.now += seconds
        self._sandbox.advance_clock(seconds)


def client_for(
    sandbox: GorgiasSandbox,
    demo: DemoAccount,
    fake: FakeTime,
    *,
    api_key: str | None = None,
    budgets: AccountBudgets | None = None,
    **options: Any,
) -> GorgiasClient:
    """A client of the demo account on ``fake`` time, with a budget of its own unless
    ``budgets`` is given."""
    assert sandbox.url is not None
    return GorgiasClient(
        f"https://{demo.domain}",
        demo.api_user,
        api_key or demo.api_key,
        timeout_s=options.pop("timeout_s", 5.0),
        clock=fake.clock,
        sleep=fake.sleep,
        api_base=sandbox.url,
        budgets=budgets or AccountBudgets(),
        **options,
    )


def with_external_id(sandbox: GorgiasSandbox, ticket_id: int, our_id: str) -> list[dict[str, Any]]:
    """The ticket's messages that carry ``our_id``, as the sandbox holds them."""
    return [m for m in sandbox.ticket(ticket_id)["messages"] if m["external_id"] == our_id]


def wait_until(predicate: Callable[[], Any], timeout: float = 20.0) -> Any:
    """Poll ``predicate`` until it is truthy, or fail after ``timeout`` (a deadline, not
    a measure of speed)."""
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"condition not met within {timeout}s")
        time.sleep(0.01)


@dataclass
class Call:
    path: str
    headers: dict[str, str]
    body: bytes


@dataclass
class Receiver:
    """Where an integration calls: records each call, answers ``statuses`` in turn
    (then 200)."""

    url: str
    statuses: list[int] = field(default_factory=list)
    calls: list[Call] = field(default_factory=list)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def record(self, call: Call) -> int:
        with self._lock:
            self.calls.append(call)
            return self.statuses.pop(0) if self.statuses else 200


@contextlib.contextmanager
def receiver() -> Iterator[Receiver]:
    """Serve a :class:`Receiver` on a free local port for the duration of the block."""
    holder: dict[str, Receiver] = {}

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
            status = holder["r"].record(Call(self.path, dict(self.headers.items()), body))
            self.send_response(status)
            self.send_header("Content-Length", "0")
            self.end_headers()

        def log_message(self, format: str, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    holder["r"] = Receiver(url=f"http://127.0.0.1:{server.server_address[1]}/gorgias")
    with serving(server):
        yield holder["r"]
