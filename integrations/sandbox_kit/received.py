"""Every API request a sandbox received, in arrival order, and how it was answered.

Tests need the provider's side of the story: which idempotency key each write really
carried, including writes a fault dropped or that are still being served. A request is
recorded the moment it arrives, before authentication, faults or idempotency, and its
answer is filled in afterwards; credentials and bodies are never kept. The log is
bounded (the oldest requests are forgotten first) so a long-running sandbox does not
grow.
"""

from __future__ import annotations

import itertools
import threading
import time
from collections import deque
from dataclasses import asdict, dataclass, replace
from typing import Any

from .server import Response

# Plenty for one test run's worth of requests of any one account.
DEFAULT_CAPACITY = 50_000


@dataclass
class ReceivedRequest:
    """One API request as it arrived, and its answer once there is one.

    ``account`` is the tenant the request addressed (a Stripe account whose key it
    presented, a Shopify shop by its Host header; ``None`` when unknown); ``operation``
    is a GraphQL request's operation name (or its root fields when unnamed); ``status``
    stays ``None`` while the request is being served, and ``dropped`` means the
    connection was closed without an answer (a fault). ``arrived_at`` and
    ``answered_at`` are the machine's wall clock (Unix seconds), not the sandbox's own
    clock that tests may move: benchmarks split a caller's time around the provider's
    with them."""

    number: int
    method: str
    path: str
    account: str | None
    idempotency_key: str | None
    status: int | None = None
    dropped: bool = False
    replayed: bool = False
    operation: str | None = None
    arrived_at: float = 0.0
    answered_at: float | None = None

    def to_json(self) -> dict[str, Any]:
        """Control-endpoint form."""
        return asdict(self)


class RequestLog:
    """The received requests, thread-safe, at most ``capacity`` of them."""

    def __init__(self, capacity: int = DEFAULT_CAPACITY) -> None:
        self._lock = threading.Lock()
        self._numbers = itertools.count(1)
        self._entries: deque[ReceivedRequest] = deque(maxlen=capacity)

    def arrived(
        self,
        method: str,
        target: str,
        account: str | None,
        idempotency_key: str | None,
        operation: str | None = None,
    ) -> ReceivedRequest:
        """Record a request as it arrives; the returned entry takes its answer later."""
        with self._lock:
            entry = ReceivedRequest(
                number=next(self._numbers),
                method=method.upper(),
                path=target.partition("?")[0],
                account=account,
                idempotency_key=idempotency_key,
                operation=operation,
                arrived_at=time.time(),
            )
            self._entries.append(entry)
        return entry

    def answered(self, entry: ReceivedRequest, response: Response) -> None:
        """Record how ``entry`` was answered (or that its connection was dropped)."""
        with self._lock:
            entry.dropped = response.drop
            entry.status = None if response.drop else response.status
            entry.replayed = response.replayed and not response.drop
            entry.answered_at = time.time()

    def entries(self, account: str | None = None) -> list[ReceivedRequest]:
        """Copies of the requests received (of one account, when given), oldest first."""
        with self._lock:
            return [
                replace(entry)
                for entry in self._entries
                if account is None or entry.account == account
            ]

    def clear(self) -> None:
        """Forget every request received so far."""
        with self._lock:
            self._entries.clear()
