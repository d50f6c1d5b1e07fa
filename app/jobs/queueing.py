"""Putting work on an RQ queue, once. Always after the database commit, never before.

Job ids are derived from what the job works on, and ``unique=True`` makes a second
enqueue of the same job a no-op (:func:`enqueue_unique`), so the web, the sweeper and a
retry can all enqueue freely: the database row, not Redis, says what still needs doing.

The job of a kept provider event (a privacy webhook, a helpdesk call) is named by the
shop and the event's own id, what the event is kept once by, never by the row's number
(numbers start again with each database and go back with a restore). So a job lost
between the commit and the enqueue can be queued again without a second one: by the sweep
(a privacy request not answered), by the provider's redelivery (a helpdesk call)
(:meth:`KeptEventJob.requeue`).
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass

from redis import Redis
from redis.exceptions import WatchError
from rq import Queue, Retry
from rq.exceptions import DuplicateJobError, InvalidJobOperation
from rq.job import Job, JobStatus
from rq.utils import as_text

# A finished job's hash only matters for the sweeper's "is it still there" question.
RESULT_TTL = 600
FAILURE_TTL = 24 * 3600
ENDED = (JobStatus.FINISHED, JobStatus.FAILED, JobStatus.STOPPED, JobStatus.CANCELED)


def queue_named(connection: Redis, name: str) -> Queue:
    return Queue(name, connection=connection)


@dataclass(frozen=True)
class KeptEventJob:
    """The job that works a kept provider event, called with the shop's id and the event's
    own id (what the event is kept once by), and named after them."""

    function: str
    name: str
    # How long RQ keeps a failure, for people to see; the sweep leaves the event alone
    # meanwhile.
    failure_ttl: int
    # RQ runs a failed job again this often before it is kept as failed (None: never).
    retry: Retry | None = None

    def job_id(self, shop_id: uuid.UUID, event_id: str) -> str:
        # Providers' event ids are their own strings: a name-based UUID keeps to RQ's
        # characters.
        return f"{self.name}-{uuid.uuid5(shop_id, event_id)}"

    def enqueue(self, queue: Queue, shop_id: uuid.UUID, event_id: str) -> bool:
        """Work an event just kept (background queue). A finished or failed job of the
        same name is replaced: it ran before this database kept the event (a restore), so
        it did not work this one."""
        return self._enqueue(queue, shop_id, event_id, replacing=ENDED)

    def requeue(self, queue: Queue, shop_id: uuid.UUID, event_id: str) -> bool:
        """Queue the job of an event kept before whose work may have been lost (the web
        process died between keeping it and queueing it, or Redis lost the job), unless
        Redis holds one of its name in any state: waiting or running, it will do the work;
        finished, it did; failed, it stays in front of people (RQ's failed jobs) rather
        than running again at every sweep or redelivery, and is queued again once RQ lets
        it go."""
        return self._enqueue(queue, shop_id, event_id, replacing=())

    def _enqueue(
        self, queue: Queue, shop_id: uuid.UUID, event_id: str, *, replacing: tuple[JobStatus, ...]
    ) -> bool:
        return enqueue_unique(
            queue,
            self.function,
            (str(shop_id), event_id),
            self.job_id(shop_id, event_id),
            failure_ttl=self.failure_ttl,
            replacing=replacing,
            retry=self.retry,
        )


def enqueue_unique(
    queue: Queue,
    function: str,
    args: tuple[str, ...],
    job_id: str,
    *,
    failure_ttl: int = FAILURE_TTL,
    replacing: tuple[JobStatus, ...] = ENDED,
    retry: Retry | None = None,
) -> bool:
    """Queue ``function(*args)`` as ``job_id`` unless Redis holds a job of that id: one
    that ended in a status of ``replacing`` (by default any end) is replaced. ``retry``:
    RQ runs the job again when it fails, or when its worker died under it (abandoned)."""

    def enqueue() -> None:
        queue.enqueue(
            function,
            *args,
            job_id=job_id,
            unique=True,
            result_ttl=RESULT_TTL,
            failure_ttl=failure_ttl,
            retry=retry,
        )

    try:
        enqueue()
    except DuplicateJobError:
        if not replacing:
            return False
        existing = queue.fetch_job(job_id)
        status = _status(existing) if existing is not None else None
        if status is not None and status not in replacing:
            return False
        # A job that ended, whose work still needs doing: replace it.
        if existing is not None and status is not None:
            _delete(queue, existing, replacing)
        try:
            enqueue()
        except DuplicateJobError:
            return False
    return True


def _delete(queue: Queue, job: Job, replacing: tuple[JobStatus, ...]) -> None:
    """Delete ``job``, read as ended, unless another process replaced it since: the job's
    status is checked and the job deleted in one transaction that watches it. Else a
    replacement queued and started meanwhile (several webhooks about one customer's
    orders) would be deleted as it ran, and its worker's next heartbeat would write half
    a run record that no later delete of the job could read."""
    ended = {status.value for status in replacing}
    with queue.connection.pipeline() as pipeline:
        try:
            pipeline.watch(job.key)  # type: ignore[no-untyped-call]
            status = pipeline.hget(job.key, "status")
            if status is None or as_text(status) not in ended:
                return  # gone, or replaced by another: theirs stands
            pipeline.multi()
            try:
                job.delete(pipeline=pipeline)
            except (ValueError, KeyError):
                # RQ listed a run of the job whose record is gone or half written (a
                # heartbeat that came after the run was deleted) and stopped: forget the
                # list, then delete the job.
                queue.connection.delete(job.execution_registry.key)
                job.delete(pipeline=pipeline)
            pipeline.execute()
        except (WatchError, InvalidJobOperation):
            pass  # changed meanwhile: replaced, or deleted, by another


def _status(job: Job) -> JobStatus | None:
    """The job's status; None once it is gone (another process replacing it deleted it
    after it was read)."""
    try:
        return job.get_status(refresh=True)
    except InvalidJobOperation:
        return None
