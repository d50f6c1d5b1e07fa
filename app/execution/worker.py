"""The RQ worker: ``python -m app.execution.worker`` runs ``rq worker --with-scheduler``
on Caseward's money queue, then its background queue, with :class:`CasewardWorker`,
once Redis answers. The scheduler runs the delayed resends (``Retry-After``).
"""

from __future__ import annotations

import gc
import time
from typing import Any, cast

from redis.client import PubSubWorkerThread
from redis.exceptions import RedisError
from rq.cli.cli import main as rq_main
from rq.worker import SimpleWorker

from app.execution import jobs
from app.queue import connect_redis
from app.settings import Settings


class CasewardWorker(SimpleWorker):
    """Runs each job in the worker process itself rather than in a forked horse.

    A fork per job costs more than the job's own work here (~20 ms, plus a new
    database connection and the provider SDK's lazy imports every time). Nothing
    is lost if this process dies mid-job: the action's row says where it stood,
    and the sweeper picks it up.
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        jobs.context()  # open the pool and load the app before the first job arrives
        # What is loaded lives as long as the process: kept out of the garbage collector's
        # full collections, which would otherwise walk it in the middle of a job.
        gc.freeze()

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


def main() -> None:
    settings = Settings.from_env()
    settings.require_production_secrets()
    _wait_for_redis(settings)
    rq_main(
        [
            "worker",
            "--with-scheduler",
            "--worker-class",
            "app.execution.worker.CasewardWorker",
            "--url",
            settings.redis_url,
            # Listed in priority order: a worker takes money jobs before anything else.
            settings.queue_name,
            settings.background_queue_name,
        ]
    )


def _wait_for_redis(settings: Settings, timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while True:
        try:
            connect_redis(settings).ping()
            return
        except (RedisError, OSError):
            if time.monotonic() > deadline:
                raise
            time.sleep(0.5)


if __name__ == "__main__":
    main()
