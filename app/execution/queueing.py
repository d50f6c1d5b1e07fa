"""Putting work on the RQ queue. Always after the database commit, never before.

Job ids are derived from the action, and ``unique=True`` makes a second enqueue
of the same job a no-op, so the web, the sweeper and a retry can all enqueue
freely: the database row, not Redis, says what still needs doing.
"""

from __future__ import annotations

import contextlib
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


def enqueue_privacy_request(queue: Queue, shop_id: uuid.UUID, event_row_id: int) -> None:
    """Answer a stored privacy webhook (on the background queue); once per event. The shop
    is in the job id, as in :func:`enqueue_helpdesk_call`: row ids restart with each
    database, and a job of an earlier database's row of the same number, still kept by
    Redis, would have silently stood in for this one."""
    # Already queued is fine: the stored event is the truth either way.
    with contextlib.suppress(DuplicateJobError):
        queue.enqueue(
            "app.privacy.jobs.answer_privacy_request",
            event_row_id,
            job_id=f"privacy-{shop_id}-{event_row_id}",
            unique=True,
            result_ttl=_RESULT_TTL,
            failure_ttl=30 * 24 * 3600,  # Shopify allows 30 days to act; keep the failure
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


def enqueue_helpdesk_call(queue: Queue, shop_id: uuid.UUID, event_row_id: int) -> None:
    """Work a kept helpdesk call (background queue); once per call. The shop is in the
    job id: row ids restart with each database, job ids live as long as Redis."""
    with contextlib.suppress(DuplicateJobError):
        queue.enqueue(
            "app.helpdesk.jobs.work_gorgias_call",
            event_row_id,
            job_id=f"helpdesk-{shop_id}-{event_row_id}",
            unique=True,
            result_ttl=_RESULT_TTL,
            failure_ttl=24 * 3600,
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
