"""Health checks of the background processes, for a container's or a supervisor's probe.

``python -m app.jobs.health worker`` passes while an RQ worker of this machine (its host
name) is registered on the money queue with a heartbeat RQ still counts as alive;
``python -m app.jobs.health sweeper`` while this machine's sweeper loop turns and some
sweeper of the deployment ended a sweep lately (:class:`app.jobs.sweeper.SweepTurns`).
Both fail when Redis does not answer. They read the environment as the processes do, and
import only what they read, so a probe every half minute costs little. Exit status 0 is
healthy, 1 is not; one line says why.
"""

from __future__ import annotations

import argparse
import socket
import sys
import time
from datetime import UTC, datetime, timedelta

from redis import Redis
from redis.exceptions import RedisError
from rq import Queue, Worker
from rq.defaults import DEFAULT_WORKER_TTL

from app.jobs.connection import connect_redis
from app.jobs.sweeper import SWEEP_TIME_LIMIT, SweepTurns
from app.settings import Settings


def worker_health(connection: Redis, settings: Settings, host: str) -> str | None:
    """Why no worker of ``host`` is alive on the money queue, or None if one is. RQ
    renews a waiting worker's heartbeat every ``worker_ttl - 15`` seconds and counts it
    dead past ``worker_ttl + 60``; this reads it the same way."""
    queue = Queue(settings.queue_name, connection=connection)
    oldest = datetime.now(UTC) - timedelta(seconds=DEFAULT_WORKER_TTL + 60)
    ours = [worker for worker in Worker.all(queue=queue) if worker.hostname == host]
    if not ours:
        return f"no worker of {host} listens on {settings.queue_name}"
    beats = [worker.last_heartbeat for worker in ours if worker.last_heartbeat is not None]
    if not any(beat.replace(tzinfo=UTC) >= oldest for beat in beats):
        return f"the workers of {host} have not sent a heartbeat since {max(beats, default=None)}"
    return None


def sweeper_health(connection: Redis, settings: Settings) -> str | None:
    """Why the sweep is not healthy here, or None: this machine's sweeper loop must have
    turned within three intervals (a minute at least), and a sweep must have ended, by
    whichever sweeper held the turn, within the time one may hold it and three intervals
    more (a sweep that keeps failing, a database it cannot reach, shows here)."""
    turns = SweepTurns(connection, settings)
    if not connection.exists(turns.turning_key):
        return f"the sweeper of {socket.gethostname()} has not turned lately"
    swept = connection.get(turns.swept_key)
    limit = SWEEP_TIME_LIMIT + 3 * settings.sweep_interval_seconds
    if swept is None:
        return "no sweep has ended yet"
    age = time.time() - float(swept)
    if age > limit:
        return f"the last sweep ended {age:.0f} s ago (more than {limit:.0f} s)"
    return None


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m app.jobs.health")
    parser.add_argument("process", choices=["worker", "sweeper"])
    process = parser.parse_args(argv).process
    settings = Settings.from_env()
    connection = connect_redis(settings)
    try:
        connection.ping()
        if process == "worker":
            problem = worker_health(connection, settings, socket.gethostname())
        else:
            problem = sweeper_health(connection, settings)
    except (RedisError, OSError) as exc:
        problem = f"Redis does not answer: {exc}"
    if problem is not None:
        print(f"{process}: unhealthy: {problem}")
        sys.exit(1)
    print(f"{process}: healthy")


if __name__ == "__main__":
    main()
