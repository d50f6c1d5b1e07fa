"""Putting the money executor's jobs on the money queue (see :mod:`app.jobs.queueing`).

An action's execution job is named by the action, a look-up by the action and the check's
number, a refresh by the action and what asked for it: each is queued once.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterable
from datetime import timedelta

from rq import Queue, get_current_job

from app.clock import utcnow
from app.jobs.connection import connect_redis
from app.jobs.queueing import ENDED, FAILURE_TTL, RESULT_TTL, enqueue_unique, queue_named
from app.settings import Settings


def execution_job_id(action_id: uuid.UUID) -> str:
    return str(action_id)


def reconcile_job_id(action_id: uuid.UUID, check: int) -> str:
    return f"reconcile-{action_id}-{check}"


def enqueue_execution(queue: Queue, action_id: uuid.UUID) -> bool:
    """Queue the action's execution; False if a live job for it is already there."""
    return enqueue_unique(
        queue, "app.execution.jobs.execute", (str(action_id),), execution_job_id(action_id)
    )


def enqueue_reconcile(queue: Queue, action_id: uuid.UUID, check: int) -> bool:
    return enqueue_unique(
        queue, "app.execution.jobs.reconcile", (str(action_id),), reconcile_job_id(action_id, check)
    )


def enqueue_resend(queue: Queue, action_id: uuid.UUID, delay_seconds: float) -> None:
    """Run the action's execution again after ``delay_seconds`` (the provider's
    Retry-After, or a short pause after a refused connection). Needs a worker started
    with its scheduler, as ``python -m app.background worker`` is."""
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
        result_ttl=RESULT_TTL,
        failure_ttl=FAILURE_TTL,
    )


def enqueue_refresh(
    queue: Queue, action_id: uuid.UUID, event_id: str, *, again: bool = False
) -> bool:
    """Queue the action's refresh that ``event_id`` asked for; ``again`` (the event sent
    again) queues it only if Redis holds no job of its name in any state."""
    return enqueue_unique(
        queue,
        "app.execution.jobs.refresh",
        (str(action_id),),
        f"refresh-{action_id}-{event_id}",
        replacing=() if again else ENDED,
    )


def enqueue_executions_from_job(settings: Settings, action_ids: Iterable[uuid.UUID]) -> None:
    """Queue the executions a background job's commit approved (a shop's policy approved
    a drafted proposal), on the money queue of the job's own Redis."""
    job = get_current_job()
    connection = job.connection if job is not None else connect_redis(settings)
    queue = queue_named(connection, settings.queue_name)
    for action_id in action_ids:
        enqueue_execution(queue, action_id)
