"""A Redis database number of one's own on a shared server (tests and the benchmark).

The server may hold other data and other runs: a run claims the first number whose
claim key it can set, empties it, and gives it back emptied.
"""

from __future__ import annotations

import uuid
from urllib.parse import urlsplit, urlunsplit

from redis import Redis

REDIS_CLAIM_KEY = "caseward:test-run-claim"


def claim_redis_database(base: str) -> tuple[str, Redis]:
    """Take the first Redis database number no other test run holds, and empty it."""
    token = uuid.uuid4().hex
    parts = urlsplit(base)
    for number in range(1, 16):
        url = urlunsplit(parts._replace(path=f"/{number}"))
        connection = Redis.from_url(url)
        if connection.set(REDIS_CLAIM_KEY, token, nx=True, ex=3 * 3600):
            for key in connection.scan_iter():
                if key != REDIS_CLAIM_KEY.encode():
                    connection.delete(key)
            return url, connection
        connection.close()
    raise RuntimeError("every Redis database 1-15 is claimed by another test run")
