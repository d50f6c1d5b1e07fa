"""Gorgias' request budget, kept on our side: 40 requests per 20 seconds per account.

Gorgias limits an API key to 40 requests in a 20-second window per account (a leaky
bucket refilling two a second) and answers 429 past it. Every client of one account
draws from one bucket, so a burst from several jobs waits here instead of collecting
429s. A 429 that still arrives (Gorgias' own count, a client outside Caseward) empties
the bucket until its ``Retry-after`` has passed, so every client of the account waits it
out, not only the one that was refused.

Two kinds of bucket, one arithmetic: :class:`SharedBudgets` keeps each account's bucket
in Redis, so every process of a deployment, on every machine, draws from the one the
account has at Gorgias; :class:`AccountBudgets` keeps them in the process (a client on
its own, the tests). A bucket only says how long to wait and never sleeps itself, and
waits are reserved atomically: two callers that find the bucket empty wait one after
the other, not both for the same token. A process bucket's time is the caller's
(``now``), so tests move a fake clock; a shared bucket's is Redis' own clock, the one
clock every machine reads.

Written here rather than taken from a library: the rate limiters at hand (``limits``,
which Flask-Limiter is built on) answer "allowed or not" at once, while a Gorgias call
waits its turn, so the bucket must say how long and hold that place in line.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from typing import Protocol

from redis import Redis
from redis.commands.core import Script

# Gorgias' numbers for API-key integrations.
REQUESTS_PER_WINDOW = 40
WINDOW_S = 20.0


class Budget(Protocol):
    def reserve(self, now: float) -> float:
        """Take one request's token; the seconds to wait before sending it (0: at once)."""
        ...

    def hold(self, now: float, seconds: float) -> None:
        """Gorgias said to wait ``seconds``: no token is free before ``now + seconds``."""
        ...


class Budgets(Protocol):
    def for_account(self, domain: str) -> Budget:
        """The bucket of ``domain`` (``name.gorgias.com``)."""
        ...


@dataclass(frozen=True)
class Limit:
    """Gorgias' limit as our bucket keeps it: refilled at ``capacity / window_s`` a second,
    holding ``capacity - headroom``. Gorgias counts a request as it arrives, the bucket as
    it leaves: requests take unequal times to get there (the first of a client opens its
    connection), and at the edge of a burst one that left on time could arrive early and
    be refused. A request's worth of headroom absorbs that."""

    capacity: int = REQUESTS_PER_WINDOW
    window_s: float = WINDOW_S
    headroom: int = 1

    def __post_init__(self) -> None:
        if self.capacity - self.headroom < 1 or self.headroom < 0 or self.window_s <= 0:
            raise ValueError("a budget needs a positive capacity above its headroom, and a window")

    @property
    def usable(self) -> float:
        return float(self.capacity - self.headroom)

    @property
    def rate(self) -> float:
        return self.capacity / self.window_s


# Gorgias' own limit, kept with one request of headroom.
GORGIAS_LIMIT = Limit()


class TokenBucket:
    """One account's budget in this process."""

    def __init__(self, limit: Limit = GORGIAS_LIMIT) -> None:
        self._capacity = limit.usable
        self._rate = limit.rate
        self._lock = threading.Lock()
        self._tokens = limit.usable
        self._seen: float | None = None

    def _refill(self, now: float) -> None:
        if self._seen is not None and now > self._seen:
            self._tokens = min(self._capacity, self._tokens + (now - self._seen) * self._rate)
        if self._seen is None or now > self._seen:
            self._seen = now

    def reserve(self, now: float) -> float:
        with self._lock:
            self._refill(now)
            wait = max(0.0, (1.0 - self._tokens) / self._rate)
            self._tokens -= 1.0
            return wait

    def hold(self, now: float, seconds: float) -> None:
        with self._lock:
            self._refill(now)
            self._tokens = min(self._tokens, 1.0 - max(0.0, seconds) * self._rate)


class AccountBudgets:
    """The buckets of every account this process talks to, by account domain."""

    def __init__(self, limit: Limit = GORGIAS_LIMIT) -> None:
        self._limit = limit
        self._lock = threading.Lock()
        self._buckets: dict[str, TokenBucket] = {}

    def for_account(self, domain: str) -> TokenBucket:
        """The bucket of ``domain`` (``name.gorgias.com``), made on first use."""
        with self._lock:
            bucket = self._buckets.get(domain)
            if bucket is None:
                bucket = self._buckets[domain] = TokenBucket(self._limit)
            return bucket


# Shared by every client of the process that is given no other budgets.
PROCESS_BUDGETS = AccountBudgets()

# TokenBucket's arithmetic, run by Redis on the account's hash as one step. ARGV: the
# usable capacity, the refill a second, then "reserve", or "hold" and the seconds to hold. The
# hash lives until the bucket would be full again: gone, it reads as full.
_SHARED_BUCKET = """
local clock = redis.call('TIME')
local now = tonumber(clock[1]) + tonumber(clock[2]) / 1000000
local capacity, rate = tonumber(ARGV[1]), tonumber(ARGV[2])
local state = redis.call('HMGET', KEYS[1], 'tokens', 'seen')
local tokens, seen = tonumber(state[1]) or capacity, tonumber(state[2]) or now
if now > seen then
  tokens = math.min(capacity, tokens + (now - seen) * rate)
  seen = now
end
local wait = 0
if ARGV[3] == 'reserve' then
  wait = math.max(0, (1 - tokens) / rate)
  tokens = tokens - 1
else
  tokens = math.min(tokens, 1 - math.max(0, tonumber(ARGV[4])) * rate)
end
redis.call('HSET', KEYS[1], 'tokens', string.format('%.6f', tokens),
           'seen', string.format('%.6f', seen))
redis.call('PEXPIRE', KEYS[1], math.ceil((capacity - tokens) / rate * 1000) + 1000)
return string.format('%.6f', wait)
"""


class SharedBudgets:
    """The buckets of every account, kept in Redis under ``prefix`` and the account's
    domain: one per account for every process and machine that uses this Redis."""

    def __init__(
        self, redis: Redis, limit: Limit = GORGIAS_LIMIT, *, prefix: str = "caseward-gorgias-budget"
    ) -> None:
        self._script = redis.register_script(_SHARED_BUCKET)
        self._limits = (repr(limit.usable), repr(limit.rate))
        self._prefix = prefix

    def for_account(self, domain: str) -> SharedBucket:
        return SharedBucket(self._script, f"{self._prefix}:{domain}", self._limits)


class SharedBucket:
    """One account's bucket in Redis. ``now`` is not read: Redis' clock is the time."""

    def __init__(self, script: Script, key: str, limits: tuple[str, str]) -> None:
        self._script = script
        self._key = key
        self._limits = limits

    def reserve(self, now: float) -> float:
        return self._run("reserve")

    def hold(self, now: float, seconds: float) -> None:
        self._run("hold", repr(max(0.0, seconds)))

    def _run(self, *step: str) -> float:
        return float(self._script(keys=[self._key], args=[*self._limits, *step]))
