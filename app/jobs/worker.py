"""The RQ worker: ``rq worker --with-scheduler`` on the money queue, then the background
queue, once Redis answers. The scheduler runs the delayed resends (``Retry-After``).
:mod:`app.background` names the worker class, which loads every area first.

A job runs in the worker process itself (:class:`Worker`), and a thread beside it beats
the heartbeat of the job in hand every ``job_monitoring_interval`` (30 s), as RQ's forking
worker does from its parent: the job's place among the started jobs lasts that interval
plus 60 s. A worker killed mid-job stops beating, and its job is found abandoned that soon
after (by the sweep, :mod:`app.jobs.abandoned`), not after its whole timeout. The job is in
hand from RQ's creating its execution to RQ's cleaning it up, and a beat and that clean-up
never overlap: no beat writes an execution RQ has deleted.
"""

from __future__ import annotations

import gc
import logging
import threading
import time
from typing import Any, cast

from redis.client import Pipeline, PubSubWorkerThread
from redis.exceptions import RedisError
from rq import Queue
from rq.cli.cli import main as rq_main
from rq.executions import Execution
from rq.job import Job
from rq.worker import BaseWorker, SimpleWorker

from app.jobs.connection import connect_redis
from app.settings import Settings

log = logging.getLogger(__name__)

# ``rq worker``'s options, every worker's. RQ's maintenance every minute rather than ten:
# it is where a living worker takes over the scheduler of one that died (scheduled resends
# and retries wait for it). An idle worker wakes for it as often: it waits for a job at
# most its TTL less 15 s.
WORKER_OPTIONS = ("--maintenance-interval", "60", "--worker-ttl", "75")


class Worker(SimpleWorker):
    """Runs each job in the worker process itself rather than in a forked horse.

    A fork per job costs more than the job's own work here (~20 ms, plus a new
    database connection and the provider SDK's lazy imports every time). Nothing
    is lost if this process dies mid-job: the rows say where the work stood, and the
    sweeper picks it up.
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        # Started with the first job, so that a Worker read back from Redis starts nothing.
        self._heartbeat: threading.Thread | None = None
        self._in_hand = threading.Lock()
        self._job_in_hand: Job | None = None
        self.warm_up()
        # What is loaded lives as long as the process: kept out of the garbage collector's
        # full collections, which would otherwise walk it in the middle of a job.
        gc.freeze()

    def warm_up(self) -> None:
        """Open pools and load code before the first job arrives."""

    def prepare_execution(self, job: Job) -> Execution:
        execution = super().prepare_execution(job)
        if self._heartbeat is None:
            self._heartbeat = threading.Thread(target=self._beat, name="job heartbeat", daemon=True)
            self._heartbeat.start()
        with self._in_hand:
            self._job_in_hand = job
        return execution

    def heartbeat(self, timeout: int | None = None, pipeline: Pipeline | None = None) -> None:
        """RQ's heartbeat of the worker, its two commands sent in one round trip when RQ
        gives no pipeline: between taking a job and starting it, and after each job."""
        if pipeline is not None:
            super().heartbeat(timeout, pipeline)
            return
        with self.connection.pipeline(transaction=False) as beat:
            super().heartbeat(timeout, beat)
            beat.execute()

    def cleanup_execution(self, job: Job, pipeline: Pipeline) -> None:
        # Let go of the job before RQ deletes its execution, waiting for a beat under way:
        # a beat after the delete would write the execution again, half (its heartbeat
        # only), and RQ could then neither read nor delete the job (a replaced job's
        # delete fails on it) until that half expired.
        with self._in_hand:
            self._job_in_hand = None
        super().cleanup_execution(job, pipeline)

    def execute_job(self, job: Job, queue: Queue) -> None:
        try:
            super().execute_job(job, queue)
        finally:
            with self._in_hand:
                self._job_in_hand = None  # an error ended it before RQ cleaned up after it

    def _beat(self) -> None:
        while True:
            time.sleep(self.job_monitoring_interval)
            self.beat_once()

    def beat_once(self) -> None:
        """The heartbeat of the job in hand (its execution's and the worker's), if any."""
        with self._in_hand:
            if self._job_in_hand is None:
                return
            try:
                self.maintain_heartbeats(self._job_in_hand)
            except RedisError as exc:
                # Redis restarting: the next beat is due well before the place lapses.
                log.warning("heartbeat of job %s missed: %s", self._job_in_hand.id, exc)

    # The job is kept alive by the beats, as under RQ's forking worker: its place lapses
    # one interval plus 60 s after the last beat, not its whole timeout after it started.
    get_heartbeat_ttl = BaseWorker.get_heartbeat_ttl

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
            *WORKER_OPTIONS,
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
