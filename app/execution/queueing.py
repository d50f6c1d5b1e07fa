"""Putting work on the RQ queue. Always after the database commit, never before.

Job ids are derived from the action, and ``unique=True`` makes a second enqueue
of the same job a no-op, so the web, the sweeper and a retry can all enqueue
freely: the database row, not Redis, says what still needs doing.

A kept provider event (a privacy webhook, a helpdesk call) is queued once, by the request
that kept it, and nothing queues it again: its job has RQ's own id
(:func:`_enqueue_kept_event`).
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


def execution_queue(connection: Redis, name: str) -> Queue:
    return Queue(name, connection=connection)


def execution_job_id(action_id: uuid.UUID) -> str:
    return str(action_id)


def reconcile_job_id(action_id: uuid.UUID, check: int) -> str:
    return f"reconcile-{action_id}-{check}"


def enqueue_execution(queue: Queue, action_id: uuid.UUID) -> bool:
    """Queue the action's execution; False if a live job for it is already there."""
    return _enqueue_unique(
        queue, "app.execution.jobs.execute", action_id, execution_job_id(action_id)
    )


def enqueue_reconcile(queue: Queue, action_id: uuid.UUID, check: int) -> bool:
    return _enqueue_unique(
        queue, "app.execution.jobs.reconcile", action_id, reconcile_job_id(action_id, check)
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
        failure_ttl=24 * 3600,
    )


def enqueue_refresh(queue: Queue, action_id: uuid.UUID, event_id: str) -> bool:
    return _enqueue_unique(
        queue, "app.execution.jobs.refresh", action_id, f"refresh-{action_id}-{event_id}"
    )


def enqueue_privacy_request(queue: Queue, event_row_id: int) -> None:
    """Answer a stored privacy webhook (on the background queue)."""
    # Shopify allows 30 days to act: a failure is kept as long.
    _enqueue_kept_event(
        queue, "app.privacy.jobs.answer_privacy_request", event_row_id, timedelta(days=30)
    )


def enqueue_order_refresh(queue: Queue, customer_id: uuid.UUID) -> bool:
    """Refresh our copy of the customer's Shopify orders (background queue); a refresh
    already waiting for the customer will read the same orders, so none is added."""
    return _enqueue_unique(
        queue, "app.cases.jobs.refresh_customer_orders", customer_id, f"orders-{customer_id}"
    )


def enqueue_drafting(queue: Queue, message_id: uuid.UUID) -> bool:
    """Draft the case of a customer's message (background queue), once per message."""
    return _enqueue_unique(
        queue, "app.drafting.jobs.draft_after_message", message_id, f"draft-{message_id}"
    )


def enqueue_helpdesk_call(queue: Queue, event_row_id: int) -> None:
    """Work a kept helpdesk call (background queue)."""
    _enqueue_kept_event(
        queue, "app.helpdesk.jobs.work_gorgias_call", event_row_id, timedelta(days=1)
    )


def _enqueue_kept_event(
    queue: Queue, function: str, event_row_id: int, keep_failure: timedelta
) -> None:
    """Queue ``function(event_row_id)`` for an event just kept. The request that kept it is
    the only one to queue it (a redelivery keeps nothing, so queues nothing), so the job
    needs no id of ours to be queued once. An id made from the row's number would be
    worse than none: row numbers start again with each database and go back with a
    restore, and a job Redis still kept for an earlier row of that number (a failure for
    up to 30 days) would stand in for this one, which would never run."""
    queue.enqueue(
        function,
        event_row_id,
        result_ttl=_RESULT_TTL,
        failure_ttl=int(keep_failure.total_seconds()),
    )


def enqueue_helpdesk_delivery(queue: Queue, shop_id: uuid.UUID) -> bool:
    """Post the shop's waiting replies to their helpdesk tickets (background queue)."""
    return _enqueue_unique(
        queue, "app.helpdesk.jobs.deliver_helpdesk_replies", shop_id, f"deliver-{shop_id}"
    )


def _enqueue_unique(queue: Queue, function: str, subject_id: uuid.UUID, job_id: str) -> bool:
    """Queue ``function(subject_id)`` as ``job_id`` unless a live job has that id."""
    try:
        _enqueue(queue, function, subject_id, job_id)
    except DuplicateJobError:
        existing = queue.fetch_job(job_id)
        if existing is not None and existing.get_status(refresh=True) not in _DONE:
            return False
        # A finished or failed job whose work still needs doing: replace it.
        if existing is not None:
            existing.delete()
        try:
            _enqueue(queue, function, subject_id, job_id)
        except DuplicateJobError:
            return False
    return True


def _enqueue(queue: Queue, function: str, subject_id: uuid.UUID, job_id: str) -> None:
    queue.enqueue(
        function,
        str(subject_id),
        job_id=job_id,
        unique=True,
        result_ttl=_RESULT_TTL,
        failure_ttl=24 * 3600,
    )
