"""Gorgias' request budget, kept on our side: 40 requests per 20 seconds per account.

Gorgias limits an API key to 40 requests in a 20-second window per account (a leaky
bucket refilling two a second) and answers 429 past it. Every client of one account in
this process draws from one :class:`TokenBucket`, so a burst from several jobs waits
here instead of collecting 429s. A 429 that still arrives (another process, Gorgias'
own count) empties the bucket until its ``Retry-after`` has passed, so every client of
the account waits it out, not only the one that was refused.

Time comes from the caller (``now``), so tests move a fake clock; the bucket only says
how long to wait and never sleeps itself. Waits are reserved under the lock: two
callers that find the bucket empty wait one after the other, not both for the same
token.
"""

from __future__ import annotations

import threading

# Gorgias' numbers for API-key integrations.
REQUESTS_PER_WINDOW = 40
WINDOW_S = 20.0


class TokenBucket:
    """One account's budget: ``capacity`` requests, refilled at ``capacity / window_s``
    a second."""

    def __init__(self, capacity: int = REQUESTS_PER_WINDOW, window_s: float = WINDOW_S) -> None:
        if capacity < 1 or window_s <= 0:
            raise ValueError("a budget needs a positive capacity and window")
        self._capacity = float(capacity)
        self._rate = capacity / window_s
        self._lock = threading.Lock()
        self._tokens = float(capacity)
        self._seen: float | None = None

    def _refill(self, now: float) -> None:
        if self._seen is not None and now > self._seen:
            self._tokens = min(self._capacity, self._tokens + (now - self._seen) * self._rate)
        if self._seen is None or now > self._seen:
            self._seen = now

    def reserve(self, now: float) -> float:
        """Take one request's token; the seconds to wait before sending it (0: at once)."""
        with self._lock:
            self._refill(now)
            wait = max(0.0, (1.0 - self._tokens) / self._rate)
            self._tokens -= 1.0
            return wait

    def hold(self, now: float, seconds: float) -> None:
        """Gorgias said to wait ``seconds``: no token is free before ``now + seconds``."""
        with self._lock:
            self._refill(now)
            self._tokens = min(self._tokens, 1.0 - max(0.0, seconds) * self._rate)


class AccountBudgets:
    """The buckets of every account this process talks to, by account domain."""

    def __init__(self, capacity: int = REQUESTS_PER_WINDOW, window_s: float = WINDOW_S) -> None:
        self._capacity = capacity
        self._window_s = window_s
        self._lock = threading.Lock()
        self._buckets: dict[str, TokenBucket] = {}

    def for_account(self, domain: str) -> TokenBucket:
        """The bucket of ``domain`` (``name.gorgias.com``), made on first use."""
        with self._lock:
            bucket = self._buckets.get(domain)
            if bucket is None:
                bucket = self._buckets[domain] = TokenBucket(self._capacity, self._window_s)
            return bucket


# Shared by every client of the process, unless a client is given its own (tests).
PROCESS_BUDGETS = AccountBudgets()
