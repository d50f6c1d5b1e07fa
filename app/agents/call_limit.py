"""How often one agent credential may call the MCP tools.

Every tool call of an authenticated agent counts against its credential, whatever the
tool and whether it is then refused: a moving window (the ``limits`` library, which
Flask-Limiter is built on) of ``CASEWARD_AGENT_RATE_LIMIT`` calls, ``"60/minute"`` unless
set. The counts live in the process's Redis under their own key prefix, so every web
worker and the stdio server count the same calls. A call over the limit is refused
before the tool reads anything, and the refusal says when the next call can succeed.
"""

from __future__ import annotations

import math
import time
import uuid
from dataclasses import dataclass

from limits import RateLimitItem, parse
from limits.storage import RedisStorage
from limits.strategies import MovingWindowRateLimiter
from redis import Redis

from app.errors import TooManyRequests
from app.words import said

KEY_PREFIX = "caseward-agent-calls"


class AgentRateLimited(TooManyRequests):
    code = "rate_limited"


@dataclass(frozen=True)
class CallLimit:
    limiter: MovingWindowRateLimiter
    item: RateLimitItem

    def count(self, credential_id: uuid.UUID) -> None:
        """Count one call of the credential; over the limit, raise :class:`AgentRateLimited`."""
        key = str(credential_id)
        if self.limiter.hit(self.item, key):
            return
        reset_at = self.limiter.get_window_stats(self.item, key).reset_time
        seconds = max(1, math.ceil(reset_at - time.time()))
        raise AgentRateLimited(
            said(
                "too many tool calls with this agent credential (at most %(limit)s); try "
                "again in %(seconds)s seconds",
                limit=str(self.item),
                seconds=seconds,
            ),
            retry_after=seconds,
        )


def call_limit(redis: Redis, limit: str) -> CallLimit:
    """``limit`` (``"60/minute"``) per credential, counted in ``redis``."""
    storage = RedisStorage("redis://", connection_pool=redis.connection_pool, key_prefix=KEY_PREFIX)
    return CallLimit(MovingWindowRateLimiter(storage), parse(limit))
