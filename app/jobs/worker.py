"""The RQ worker: ``rq worker --with-scheduler`` on the money queue, then the background
queue, once Redis answers. The scheduler runs the delayed resends (``Retry-After``).
:mod:`app.background` names the worker class, which loads every area first.
"""

from __future__ import annotations

import gc
import time
from typing import Any, cast

from redis.client import PubSubWorkerThread
from redis.exceptions import RedisError
from rq.cli.cli import main as rq_main
from rq.worker import SimpleWorker

from app.jobs.connection import connect_redis
from app.settings import Settings


class Worker(SimpleWorker):
    """Runs each job in the worker process itself rather than in a forked horse.

    A fork per job costs more than the job's own work here (~20 ms, plus a new
    database connection and the provider SDK's lazy imports every time). Nothing
    is lost if this process dies mid-job: the rows say where the work stood, and the
    sweeper picks it up.
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.warm_up()
        # What is loaded lives as long as the process: kept out of the garbage collector's
        # full collections, which would otherwise walk it in the middle of a job.
        gc.freeze()

    def warm_up(self) -> None:
        """Open pools and load code before the first job arrives."""

    def unsubscribe(self) -> None:
        """RQ's unsubscribe, with the pub/sub thread told to stop first.

        RQ unsubscribes and then stops the thread that listens for its commands; since
        redis-py 8, ``stop()`` waits for that thread. Woken by the unsubscribe reply
        before it is told to stop, the thread went back to waiting (RQ gives it 60 s)
        for a subscription that never comes, and a stopped worker lingered a minute.
        Told first, it ends on that reply."""
        # RQ declares the attribute as None and sets it on subscribing.
        listener = cast("PubSubWorkerThread | None", self.pubsub_thread)
        if listener is not None:
            listener.stop(timeout=0)
        super().unsubscribe()  # type: ignore[no-untyped-call]


def run_worker(settings: Settings, worker_class: type[Worker]) -> None:
    wait_for_redis(settings)
    rq_main(
        [
            "worker",
            "--with-scheduler",
            "--worker-class",
            f"{worker_class.__module__}.{worker_class.__qualname__}",
            "--url",
            settings.redis_url,
            # Listed in priority order: a worker takes money jobs before anything else.
            settings.queue_name,
            settings.background_queue_name,
        ]
    )


def wait_for_redis(settings: Settings, timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while True:
        try:
            connect_redis(settings).ping()
            return
        except (RedisError, OSError):
            if time.monotonic() > deadline:
                raise
            time.sleep(0.5)
