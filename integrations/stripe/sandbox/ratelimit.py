"""Stripe's basic rate limiter: so many reads and so many writes per second, per account.

Stripe documents 100 read and 100 write operations per second in live mode and 25 of
each in test mode; past them it answers 429 and nothing runs. The sandbox applies such
limits only when told to (sandbox-wide, or per account), so tests that do not ask for
them never see a 429. Windows are measured on the monotonic wall clock, not the sandbox
clock: a rate is about how fast requests arrive, and tests freeze the sandbox clock.
"""

from __future__ import annotations

import math
import threading
import time
from collections import deque
from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass, fields
from typing import Any

ACCESSES = ("read", "write")


@dataclass(frozen=True)
class RateLimits:
    """Requests admitted per ``per_seconds`` window for each mode and access (``None``:
    no limit). The defaults are Stripe's documented numbers."""

    test_read: int | None = 25
    test_write: int | None = 25
    live_read: int | None = 100
    live_write: int | None = 100
    per_seconds: float = 1.0

    def __post_init__(self) -> None:
        for item in fields(self):
            value = getattr(self, item.name)
            if value is not None and (isinstance(value, bool) or value <= 0):
                raise ValueError(f"{item.name} must be a positive number or None, not {value!r}")

    @classmethod
    def off(cls) -> RateLimits:
        """No limit at all (to exempt one account from a sandbox-wide limit)."""
        return cls(test_read=None, test_write=None, live_read=None, live_write=None)

    def limit(self, livemode: bool, access: str) -> int | None:
        """The limit for one mode and access (``read``/``write``)."""
        value: int | None = getattr(self, f"{'live' if livemode else 'test'}_{access}")
        return value

    def to_json(self) -> dict[str, Any]:
        """Control-endpoint form."""
        return asdict(self)

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> RateLimits:
        """From a control request; fields left out keep Stripe's numbers."""
        known = {item.name for item in fields(cls)}
        unknown = set(data) - known
        if unknown:
            raise ValueError(f"unknown rate limit fields: {sorted(unknown)}")
        values: dict[str, Any] = {}
        for name, value in data.items():
            if name == "per_seconds":
                values[name] = float(value)
            else:
                values[name] = None if value is None else int(value)
        return cls(**values)

    @classmethod
    def parse(cls, spec: str) -> RateLimits:
        """The command line's form: ``stripe`` (Stripe's numbers) or
        ``test=READ/WRITE,live=READ/WRITE[,per=SECONDS]`` (a mode left out keeps Stripe's
        numbers; the window is one second unless ``per`` says otherwise)."""
        if spec.strip() == "stripe":
            return cls()
        values: dict[str, Any] = {}
        for part in spec.split(","):
            name, _, value = part.strip().partition("=")
            read, _, write = value.partition("/")
            if name == "per":
                values["per_seconds"] = float(value)
            elif name in ("test", "live") and read.isdigit() and write.isdigit():
                values[f"{name}_read"], values[f"{name}_write"] = int(read), int(write)
            else:
                raise ValueError(
                    f"expected 'stripe' or 'test=READ/WRITE,live=READ/WRITE[,per=SECONDS]': {spec}"
                )
        return cls(**values)


class RateLimiter:
    """Counts admitted requests per (account, mode, access) in a sliding window."""

    def __init__(
        self, default: RateLimits | None = None, monotonic: Callable[[], float] = time.monotonic
    ) -> None:
        self._default = default
        self._accounts: dict[str, RateLimits] = {}
        self._seen: dict[tuple[str, bool, str], deque[float]] = {}
        self._monotonic = monotonic
        self._lock = threading.Lock()

    def configure(self, limits: RateLimits | None, account: str | None = None) -> None:
        """Set the sandbox-wide limits (``None``: off), or one account's (``None``: follow
        the sandbox-wide ones; :meth:`RateLimits.off` exempts it)."""
        with self._lock:
            if account is None:
                self._default = limits
            elif limits is None:
                self._accounts.pop(account, None)
            else:
                self._accounts[account] = limits

    def admit(self, account: str, livemode: bool, access: str) -> float | None:
        """Count one request, or refuse it: ``None`` when admitted, else the seconds until
        the window has room again. A refused request is not counted."""
        with self._lock:
            limits = self._accounts.get(account, self._default)
            limit = limits.limit(livemode, access) if limits is not None else None
            if limits is None or limit is None:
                return None
            now = self._monotonic()
            seen = self._seen.setdefault((account, livemode, access), deque())
            while seen and seen[0] <= now - limits.per_seconds:
                seen.popleft()
            if len(seen) >= limit:
                return max(seen[0] + limits.per_seconds - now, 0.0)
            seen.append(now)
            return None

    def clear(self) -> None:
        """Forget counted requests and per-account limits (the sandbox-wide ones stay)."""
        with self._lock:
            self._seen.clear()
            self._accounts.clear()


def retry_after_header(wait: float) -> str:
    """``Retry-After`` in whole seconds, never 0 (a client would retry at once)."""
    return str(max(1, math.ceil(wait)))
