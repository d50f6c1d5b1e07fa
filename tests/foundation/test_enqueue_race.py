"""Two requests replacing the same ended job at once queue it once, and neither fails.

A job id that ended (a customer's order refresh that ran) is replaced by the next
enqueue: it reads the job's status, deletes it and queues it again. Two web processes
doing so at once (Shopify sends several webhooks about one customer's orders) race: the
job one of them read can be deleted by the other before its status is read. That request
finds the job gone, which is no error: it queues the job, or finds the other's queued. A
replacement queued, or already running, after the first read is left alone: it does the
work the job was to do.
"""

from __future__ import annotations

import pytest
from rq import Queue
from rq.executions import Execution
from rq.job import Job, JobStatus

from app.jobs.connection import connect_redis
from app.jobs.queueing import enqueue_unique
from app.settings import Settings

JOB_ID = "orders-race"


class RacingQueue(Queue):
    """A queue whose first read of a job is followed by another process replacing that
    job (deleting it, then queueing it again or not yet): at once, or once this process
    has read the job's status."""

    other_queues_it = False
    other_starts_it = False
    after_its_status = False
    runs_vanish = False
    raced = False

    def fetch_job(self, job_id: str) -> Job | None:
        job = super().fetch_job(job_id)
        if job is None or self.raced:
            return job
        self.raced = True
        if not self.after_its_status:
            self._replace(job_id)
            return job
        read = job.get_status

        def read_then_replaced(refresh: bool = True) -> JobStatus:
            status = read(refresh)
            job.get_status = read  # type: ignore[method-assign]
            self._replace(job_id)
            return status

        job.get_status = read_then_replaced  # type: ignore[method-assign]
        return job

    def _replace(self, job_id: str) -> None:
        if self.runs_vanish:
            # The other process's delete is half done: the run records it read are gone.
            for run in Job.fetch(
                job_id, connection=self.connection
            ).execution_registry.get_executions():
                self.connection.delete(run.key)
            return
        Job.fetch(job_id, connection=self.connection).delete()
        if self.other_queues_it:
            Queue(self.name, connection=self.connection).enqueue(
                "os.getpid", job_id=job_id, unique=True
            )
        if self.other_starts_it:  # and a worker took it up
            started = Job.fetch(job_id, connection=self.connection)
            with self.connection.pipeline() as pipeline:
                Execution.create(started, ttl=600, pipeline=pipeline)
                pipeline.execute()
            started.set_status(JobStatus.STARTED)


def test_a_job_whose_run_records_vanish_while_it_is_replaced_is_queued_once(
    settings: Settings,
) -> None:
    queue = RacingQueue(f"{settings.queue_name}-race", connection=connect_redis(settings))
    queue.after_its_status = queue.runs_vanish = True
    plain = Queue(queue.name, connection=queue.connection)
    ended = plain.enqueue("os.getpid", job_id=JOB_ID)
    plain.remove(ended)
    with queue.connection.pipeline() as pipeline:
        Execution.create(ended, ttl=600, pipeline=pipeline)  # a worker ran it
        pipeline.execute()
    ended.set_status(JobStatus.FINISHED)

    assert enqueue_unique(queue, "os.getpid", (), JOB_ID)
    assert queue.job_ids == [JOB_ID]


@pytest.mark.parametrize("after_its_status", [False, True], ids=["at once", "after its status"])
@pytest.mark.parametrize("other_queues_it", [False, True], ids=["gone", "queued again"])
def test_a_job_replaced_by_another_request_meanwhile_is_queued_once(
    settings: Settings, other_queues_it: bool, after_its_status: bool
) -> None:
    queue = RacingQueue(f"{settings.queue_name}-race", connection=connect_redis(settings))
    queue.other_queues_it, queue.after_its_status = other_queues_it, after_its_status
    plain = Queue(queue.name, connection=queue.connection)
    ended = plain.enqueue("os.getpid", job_id=JOB_ID)
    plain.remove(ended)  # a worker took it and ran it
    ended.set_status(JobStatus.FINISHED)

    queued = enqueue_unique(queue, "os.getpid", (), JOB_ID)

    assert queued is not other_queues_it
    assert queue.job_ids == [JOB_ID]


def test_a_replacement_started_meanwhile_is_left_to_run(settings: Settings) -> None:
    queue = RacingQueue(f"{settings.queue_name}-race", connection=connect_redis(settings))
    queue.after_its_status = queue.other_queues_it = queue.other_starts_it = True
    plain = Queue(queue.name, connection=queue.connection)
    ended = plain.enqueue("os.getpid", job_id=JOB_ID)
    plain.remove(ended)
    ended.set_status(JobStatus.FINISHED)

    assert not enqueue_unique(queue, "os.getpid", (), JOB_ID)

    running = Job.fetch(JOB_ID, connection=queue.connection)
    assert running.get_status() == JobStatus.STARTED
    assert len(running.execution_registry.get_executions()) == 1  # its run record intact
