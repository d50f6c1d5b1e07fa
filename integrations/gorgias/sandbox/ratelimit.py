"""Gorgias' rate limit: a leaky bucket of 40 requests per account, draining in 20 seconds.

Gorgias counts an account's API requests in a bucket that holds 40 and drains two a
second (API-key integrations: 40 requests per 20 s). A request that would overflow it
is answered 429 with ``Retry-after`` (whole seconds until it would fit) and runs
nothing; every answer says how full the bucket is in
``X-Gorgias-Account-Api-Call-Limit: used/40``.

The bucket drains on the sandbox clock, so a test that freezes time sees the 41st
request refused until it moves the clock, and :meth:`AccountLimits.throttle` empties an
account's budget for as long as a test wants a 429 to last.
"""

from __future__ import annotations

import math
import threading
from dataclasses import dataclass

CALL_LIMIT_HEADER = "X-Gorgias-Account-Api-Call-Limit"


@dataclass(frozen=True)
class Admission:
    """One request's fate: ``retry_after`` seconds (refused) or ``None`` (admitted), and
    the bucket's level after it, for the call-limit header."""

    retry_after: int | None
    used: int
    capacity: int

    @property
    def header(self) -> str:
        return f"{self.used}/{self.capacity}"


@dataclass
class _Bucket:
    level: float
    seen: float


class AccountLimits:
    """The bucket of every account."""

    def __init__(self, capacity: int = 40, window_s: float = 20.0) -> None:
        if capacity < 1 or window_s <= 0:
            raise ValueError("a rate limit needs a positive capacity and window")
        self.capacity = capacity
        self._drain_rate = capacity / window_s
        self._lock = threading.Lock()
        self._buckets: dict[str, _Bucket] = {}

    def _drained(self, account: str, now: float) -> _Bucket:
        bucket = self._buckets.setdefault(account, _Bucket(0.0, now))
        if now > bucket.seen:
            bucket.level = max(0.0, bucket.level - (now - bucket.seen) * self._drain_rate)
            bucket.seen = now
        return bucket

    def admit(self, account: str, now: float) -> Admission:
        """Count one request of ``account`` at sandbox time ``now``, or refuse it."""
        with self._lock:
            bucket = self._drained(account, now)
            overflow = bucket.level + 1 - self.capacity
            if overflow > 0:
                wait = max(1, math.ceil(overflow / self._drain_rate))
                return Admission(wait, math.ceil(bucket.level), self.capacity)
            bucket.level += 1
            return Admission(None, math.ceil(bucket.level), self.capacity)

    def throttle(self, account: str, now: float, seconds: float) -> None:
        """Fill ``account``'s bucket so that its next request is refused for ``seconds``."""
        if seconds <= 0:
            raise ValueError("seconds must be positive")
        with self._lock:
            bucket = self._drained(account, now)
            bucket.level = max(bucket.level, self.capacity - 1 + seconds * self._drain_rate)

    def clear(self) -> None:
        """Empty every bucket."""
        with self._lock:
            self._buckets.clear()
