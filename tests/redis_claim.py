"""A Redis database number of one's own on a shared server (tests and the benchmark).

The server may hold other data and other runs: a run claims the first number whose
claim key it can set, empties it, and gives it back emptied. A run that was killed cannot
give its number back; its claim names the machine and process that made it, so a later
run on the same machine takes over a claim whose process is gone instead of waiting for
the claim to expire.
"""

from __future__ import annotations

import os
import socket
import uuid
from urllib.parse import urlsplit, urlunsplit

from redis import Redis

REDIS_CLAIM_KEY = "caseward:test-run-claim"


def claim_redis_database(base: str) -> tuple[str, Redis]:
    """Take the first Redis database number no other test run holds, and empty it."""
    token = f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex}"
    parts = urlsplit(base)
    for number in range(1, 16):
        url = urlunsplit(parts._replace(path=f"/{number}"))
        connection = Redis.from_url(url)
        _release_if_abandoned(connection)
        if connection.set(REDIS_CLAIM_KEY, token, nx=True, ex=3 * 3600):
            for key in connection.scan_iter():
                if key != REDIS_CLAIM_KEY.encode():
                    connection.delete(key)
            return url, connection
        connection.close()
    raise RuntimeError("every Redis database 1-15 is claimed by another test run")


def _release_if_abandoned(connection: Redis) -> None:
    """Drop the claim of a run on this machine whose process no longer exists."""
    held = connection.get(REDIS_CLAIM_KEY)
    if held is None:
        return
    host, _, rest = held.decode(errors="replace").partition(":")
    pid = rest.partition(":")[0]
    if host != socket.gethostname() or not pid.isdigit() or _alive(int(pid)):
        return
    # Only that exact claim: another run may have replaced it in the meantime.
    if connection.get(REDIS_CLAIM_KEY) == held:
        connection.delete(REDIS_CLAIM_KEY)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # someone else's process: alive
    return True
