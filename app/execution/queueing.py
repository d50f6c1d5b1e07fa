"""Putting work on the RQ queue. Always after the database commit, never before.

Job ids are derived from the action, and ``unique=True`` makes a second enqueue
of the same job a no-op, so the web, the sweeper and a retry can all enqueue
freely: the database row, not Redis, says what still needs doing.

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
from datetime import timedelta

from redis import Redis
from rq import Queue
from rq.exceptions import DuplicateJobError
from rq.job import JobStatus

from app.clock import utcnow

# A finished job's hash only matters for the sweeper's "is it still there" question.
_RESULT_TTL = 600
_DONE = (JobStatus.FINISHED, JobStatus.FAILED, JobStatus.STOPPED, JobStatus.CANCELED)
_FAILURE_TTL = 24 * 3600


def execution_queue(connection: Redis, name: str) -> Queue:
    return Queue(name, connection=connection)


def execution_job_id(action_id: uuid.UUID) -> str:
    return str(action_id)


def reconcile_job_id(action_id: uuid.UUID, check: int) -> str:
    return f"reconcile-{action_id}-{check}"


def enqueue_execution(queue: Queue, action_id: uuid.UUID) -> bool:
    """Queue the action's execution; False if a live job for it is already there."""
    return _enqueue_unique(
        queue, "app.execution.jobs.execute", (str(action_id),), execution_job_id(action_id)
    )


def enqueue_reconcile(queue: Queue, action_id: uuid.UUID, check: int) -> bool:
    return _enqueue_unique(
        queue, "app.execution.jobs.reconcile", (str(action_id),), reconcile_job_id(action_id, check)
    )


def enqueue_resend(queue: Queue, action_id: uuid.UUID, delay_seconds: float) -> None:
    """Run the action's execution again after ``delay_seconds`` (the provider's
    Retry-After, or a short pause after a refused connection). Needs a worker started
    with its scheduler, as ``python -m app.execution.worker`` is."""
    due = utcnow() + timedelta(seconds=delay_seconds)
    if due.microsecond:
        # RQ keeps a scheduled job's time in whole seconds, cut down: rounded up here,
        # so the resend never runs before its action is due.
        due = due.replace(microsecond=0) + timedelta(seconds=1)
    queue.enqueue_at(
        due,
        "app.execution.jobs.execute",
        str(action_id),
        # Unique per moment: an earlier resend of the same action may still be waiting.
        job_id=f"resend-{action_id}-{uuid.uuid4().hex[:8]}",
        result_ttl=_RESULT_TTL,
        failure_ttl=_FAILURE_TTL,
    )


def enqueue_refresh(queue: Queue, action_id: uuid.UUID, event_id: str) -> bool:
    return _enqueue_unique(
        queue, "app.execution.jobs.refresh", (str(action_id),), f"refresh-{action_id}-{event_id}"
    )


def enqueue_order_refresh(queue: Queue, customer_id: uuid.UUID) -> bool:
    """Refresh our copy of the customer's Shopify orders (background queue); a refresh
    already waiting for the customer will read the same orders, so none is added."""
    return _enqueue_unique(
        queue,
        "app.cases.jobs.refresh_customer_orders",
        (str(customer_id),),
        f"orders-{customer_id}",
    )


def enqueue_drafting(queue: Queue, message_id: uuid.UUID) -> bool:
    """Draft the case of a customer's message (background queue), once per message."""
    return _enqueue_drafting(queue, message_id, replacing=_DONE)


def requeue_drafting(queue: Queue, message_id: uuid.UUID) -> bool:
    """Queue the drafting of a message still owed a draft, unless its job waits or runs.
    A finished job is replaced (the message was owed a draft again after it began: the
    shopper was verified meanwhile); a failed one is left in front of people (RQ's failed
    jobs) rather than call the model again at every sweep."""
    return _enqueue_drafting(queue, message_id, replacing=(JobStatus.FINISHED,))


def _enqueue_drafting(
    queue: Queue, message_id: uuid.UUID, *, replacing: tuple[JobStatus, ...]
) -> bool:
    return _enqueue_unique(
        queue,
        "app.drafting.jobs.draft_after_message",
        (str(message_id),),
        f"draft-{message_id}",
        replacing=replacing,
    )


@dataclass(frozen=True)
class KeptEventJob:
    """The job that works a kept provider event, called with the shop's id and the event's
    own id (what the event is kept once by), and named after them."""

    function: str
    name: str
    # How long RQ keeps a failure, for people to see; the sweep leaves the event alone
    # meanwhile.
    failure_ttl: int

    def job_id(self, shop_id: uuid.UUID, event_id: str) -> str:
        # Providers' event ids are their own strings: a name-based UUID keeps to RQ's
        # characters.
        return f"{self.name}-{uuid.uuid5(shop_id, event_id)}"

    def enqueue(self, queue: Queue, shop_id: uuid.UUID, event_id: str) -> bool:
        """Work an event just kept (background queue). A finished or failed job of the
        same name is replaced: it ran before this database kept the event (a restore), so
        it did not work this one."""
        return self._enqueue(queue, shop_id, event_id, replacing=_DONE)

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
        return _enqueue_unique(
            queue,
            self.function,
            (str(shop_id), event_id),
            self.job_id(shop_id, event_id),
            failure_ttl=self.failure_ttl,
            replacing=replacing,
        )


# Shopify allows 30 days to act on a privacy request: a failure is kept as long.
PRIVACY_REQUEST = KeptEventJob(
    "app.privacy.jobs.answer_privacy_request", "privacy", failure_ttl=30 * 24 * 3600
)
HELPDESK_CALL = KeptEventJob("app.helpdesk.jobs.work_gorgias_call", "gorgias", _FAILURE_TTL)


def enqueue_helpdesk_delivery(queue: Queue, shop_id: uuid.UUID) -> bool:
    """Post the shop's waiting replies to their helpdesk tickets (background queue)."""
    return _enqueue_unique(
        queue, "app.helpdesk.jobs.deliver_helpdesk_replies", (str(shop_id),), f"deliver-{shop_id}"
    )


def _enqueue_unique(
    queue: Queue,
    function: str,
    args: tuple[str, ...],
    job_id: str,
    *,
    failure_ttl: int = _FAILURE_TTL,
    replacing: tuple[JobStatus, ...] = _DONE,
) -> bool:
    """Queue ``function(*args)`` as ``job_id`` unless Redis holds a job of that id: one
    that ended in a status of ``replacing`` (by default any end) is replaced."""

    def enqueue() -> None:
        queue.enqueue(
            function,
            *args,
            job_id=job_id,
            unique=True,
            result_ttl=_RESULT_TTL,
            failure_ttl=failure_ttl,
        )

    try:
        enqueue()
    except DuplicateJobError:
        if not replacing:
            return False
        existing = queue.fetch_job(job_id)
        if existing is not None and existing.get_status(refresh=True) not in replacing:
            return False
        # A job that ended, whose work still needs doing: replace it.
        if existing is not None:
            existing.delete()
        try:
            enqueue()
        except DuplicateJobError:
            return False
    return True
