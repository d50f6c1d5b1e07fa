"""Putting work on the RQ queue. Always after the database commit, never before.

Job ids are derived from the action, and ``unique=True`` makes a second enqueue
of the same job a no-op, so the web, the sweeper and a retry can all enqueue
freely: the database row, not Redis, says what still needs doing.

A privacy request's job is named by the shop and Shopify's event id, what the stored
event is kept once by: the sweep queues one the web never did, and a failed one stays for
people to see instead of running again at every sweep (:func:`requeue_privacy_request`).
A helpdesk call is queued once, by the request that kept it (:func:`enqueue_helpdesk_call`).
"""

from __future__ import annotations

import uuid
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
# Shopify allows 30 days to act on a privacy request: a failure is kept as long.
_PRIVACY_FAILURE_TTL = 30 * 24 * 3600
_ANSWER_PRIVACY_REQUEST = "app.privacy.jobs.answer_privacy_request"


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


def privacy_job_id(shop_id: uuid.UUID, event_id: str) -> str:
    # Shopify's event ids are its own strings: a name-based UUID keeps to RQ's characters.
    return f"privacy-{uuid.uuid5(shop_id, event_id)}"


def enqueue_privacy_request(queue: Queue, shop_id: uuid.UUID, event_id: str) -> bool:
    """Answer a privacy webhook just stored (on the background queue). A finished or
    failed job of the same name is replaced: it ran before this database kept the event
    (a restore), so it did not answer this one."""
    return _enqueue_unique(
        queue,
        _ANSWER_PRIVACY_REQUEST,
        (str(shop_id), event_id),
        privacy_job_id(shop_id, event_id),
        failure_ttl=_PRIVACY_FAILURE_TTL,
    )


def requeue_privacy_request(queue: Queue, shop_id: uuid.UUID, event_id: str) -> bool:
    """Queue the job of a stored privacy request still unanswered, unless Redis holds one of
    its name in any state: waiting or running, it will answer; failed, it stays in front of
    people (RQ's failed jobs, for as long as Shopify allows to answer) rather than running
    again at every sweep, and is queued again once RQ lets it go."""
    try:
        _enqueue(
            queue,
            _ANSWER_PRIVACY_REQUEST,
            (str(shop_id), event_id),
            privacy_job_id(shop_id, event_id),
            failure_ttl=_PRIVACY_FAILURE_TTL,
        )
    except DuplicateJobError:
        return False
    return True


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
    return _enqueue_unique(
        queue, "app.drafting.jobs.draft_after_message", (str(message_id),), f"draft-{message_id}"
    )


def enqueue_helpdesk_call(queue: Queue, event_row_id: int) -> None:
    """Work a kept helpdesk call (background queue). The request that kept it is the only
    one to queue it (a redelivery keeps nothing, so queues nothing), so the job has RQ's
    own id. One made from the row's number would be worse than none: row numbers start
    again with each database and go back with a restore, and a job Redis still kept for
    an earlier row of that number would stand in for this one, which would never run."""
    queue.enqueue(
        "app.helpdesk.jobs.work_gorgias_call",
        event_row_id,
        result_ttl=_RESULT_TTL,
        failure_ttl=_FAILURE_TTL,
    )


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
    failure_ttl: int = _FAILURE_TTL,
) -> bool:
    """Queue ``function(*args)`` as ``job_id`` unless a live job has that id."""
    try:
        _enqueue(queue, function, args, job_id, failure_ttl)
    except DuplicateJobError:
        existing = queue.fetch_job(job_id)
        if existing is not None and existing.get_status(refresh=True) not in _DONE:
            return False
        # A finished or failed job whose work still needs doing: replace it.
        if existing is not None:
            existing.delete()
        try:
            _enqueue(queue, function, args, job_id, failure_ttl)
        except DuplicateJobError:
            return False
    return True


def _enqueue(
    queue: Queue,
    function: str,
    args: tuple[str, ...],
    job_id: str,
    failure_ttl: int = _FAILURE_TTL,
) -> None:
    queue.enqueue(
        function,
        *args,
        job_id=job_id,
        unique=True,
        result_ttl=_RESULT_TTL,
        failure_ttl=failure_ttl,
    )
