"""The heartbeat a worker beats beside its job: it keeps the job's place while the job
runs, and leaves nothing behind once RQ has cleaned up after it, so that the job can be
replaced (a refresh queued again for the same customer) the moment it ended."""

from __future__ import annotations

import threading
import time
import uuid

import pytest
from redis import Redis
from redis.connection import AbstractConnection
from rq import Queue
from rq.job import Job, JobStatus
from rq.registry import StartedJobRegistry
from rq.utils import now

from app.jobs.queueing import enqueue_unique
from app.jobs.worker import Worker


@pytest.fixture
def queue(redis_url: str) -> Queue:
    """A queue of the test's own on the session's Redis; its jobs are named after it."""
    return Queue(f"heartbeat-{uuid.uuid4().hex[:8]}", connection=Redis.from_url(redis_url))


def runs_left(queue: Queue, job_id: str) -> list[bytes]:
    """The run records Redis still holds for the job."""
    return queue.connection.keys(f"rq:execution:{job_id}:*")


def started(worker: Worker, queue: Queue, job_id: str) -> Job:
    """A job taken from the queue and begun as the worker begins one."""
    enqueue_unique(queue, "builtins.len", ("hello",), job_id)
    job, _ = queue.dequeue_any([queue], None, connection=queue.connection)  # type: ignore[misc]
    worker.prepare_execution(job)
    worker.prepare_job_execution(job)
    return job


def succeeded(worker: Worker, queue: Queue, job: Job) -> None:
    """RQ's end of a job that succeeded, its execution cleaned up."""
    job.ended_at = now()
    worker.handle_job_success(job, queue, StartedJobRegistry(queue=queue))


def test_a_beat_keeps_the_running_job_s_place(queue: Queue) -> None:
    redis = queue.connection
    worker = Worker([queue], connection=redis)
    job = started(worker, queue, f"{queue.name}-running")
    started_jobs = StartedJobRegistry(queue=queue)
    places = [key for key, _ in redis.zrange(started_jobs.key, 0, -1, withscores=True)]
    redis.zadd(started_jobs.key, dict.fromkeys(places, 0))  # as if about to lapse

    worker.beat_once()

    after = dict(redis.zrange(started_jobs.key, 0, -1, withscores=True))
    assert list(after) == places
    assert all(score > 0 for score in after.values()), after
    assert started_jobs.get_expired_job_ids() == []
    succeeded(worker, queue, job)


def test_jobs_ended_under_constant_beats_leave_nothing_half_written(queue: Queue) -> None:
    """Beats as often as they can come while a worker runs job after job: every job
    ends with no execution left, and each can be queued again at once (a second webhook
    for a customer's order replaces the refresh the first one queued)."""
    redis = queue.connection
    worker = Worker([queue], connection=redis)
    job_ids = [f"{queue.name}-{number}" for number in range(150)]
    for job_id in job_ids:
        enqueue_unique(queue, "builtins.len", ("hello",), job_id)
    stop, failures = threading.Event(), []

    def beat_constantly() -> None:
        while not stop.is_set():
            try:
                worker.beat_once()
            except Exception as exc:  # the beat thread must not die; the test says how
                failures.append(repr(exc))
            time.sleep(0.0005)  # a lock is not fair: let the worker take it between beats

    beating = threading.Thread(target=beat_constantly)
    beating.start()
    try:
        worker.work(burst=True, with_scheduler=False)
    finally:
        stop.set()
        beating.join()

    assert failures == []
    for job_id in job_ids:
        assert runs_left(queue, job_id) == []
        assert Job.fetch(job_id, connection=redis).get_status() == JobStatus.FINISHED
        assert enqueue_unique(queue, "builtins.len", ("again",), job_id), job_id


def test_the_job_s_end_waits_for_a_beat_under_way(queue: Queue) -> None:
    worker = Worker([queue], connection=queue.connection)
    job = started(worker, queue, f"{queue.name}-beating")
    ending = threading.Thread(target=succeeded, args=(worker, queue, job))

    with worker._in_hand:  # as a beat under way holds it
        ending.start()
        ending.join(timeout=0.5)
        assert ending.is_alive(), "the job's clean-up did not wait for the beat"
    ending.join(timeout=5)

    assert not ending.is_alive()
    worker.beat_once()
    assert runs_left(queue, job.id) == []


def test_the_worker_s_own_heartbeat_is_one_round_trip(
    queue: Queue, monkeypatch: pytest.MonkeyPatch
) -> None:
    """RQ beats the worker's heartbeat between taking a job and starting it: its two
    commands go out together, not one waiting on the other."""
    redis = queue.connection
    worker = Worker([queue], connection=redis)
    redis.ping()  # the connection is open before counting
    sends = []
    send = AbstractConnection.send_packed_command

    def counted(connection: AbstractConnection, command: object, check_health: bool = True) -> None:
        sends.append(command)
        send(connection, command, check_health)

    monkeypatch.setattr(AbstractConnection, "send_packed_command", counted)

    worker.heartbeat(120)

    assert len(sends) == 1
    assert redis.hget(worker.key, "last_heartbeat") is not None
    assert 110 < redis.ttl(worker.key) <= 120
