"""The money executor's RQ jobs. Each builds its context from the environment once per
process.

Exceptions are never swallowed here: a job that raises is marked failed by RQ,
and the sweeper re-enqueues the action from the database
(:mod:`app.execution.sweep`).
"""

from __future__ import annotations

import uuid
from dataclasses import replace
from functools import cache, partial

from rq import Queue, get_current_job

from app.connections.adapters import worker_adapters
from app.execution.executor import (
    ExecutionContext,
    execute_action,
    reconcile_action,
    refresh_action,
)
from app.execution.queueing import enqueue_resend
from app.jobs.context import worker_context


@cache
def context() -> ExecutionContext:
    """What a worker executes actions with: the process's pool, settings and clock, and
    adapters kept per connection."""
    worker = worker_context()
    return ExecutionContext(
        session_factory=worker.session_factory,
        settings=worker.settings,
        clock=worker.clock,
        adapters=worker_adapters(),
    )


def execute(action_id: str) -> str:
    ctx = context()
    job = get_current_job()
    if job is not None:
        # A resend goes back on the queue this job came from.
        origin = Queue(job.origin, connection=job.connection)
        ctx = replace(ctx, resend_later=partial(enqueue_resend, origin))
    return execute_action(ctx, uuid.UUID(action_id))


def reconcile(action_id: str) -> str:
    return reconcile_action(context(), uuid.UUID(action_id))


def refresh(action_id: str) -> str:
    return refresh_action(context(), uuid.UUID(action_id))
