"""The functions RQ runs. Each builds its context from the environment once per process.

Exceptions are never swallowed here: a job that raises is marked failed by RQ,
and the sweeper re-enqueues the action from the database.
"""

from __future__ import annotations

import uuid
from dataclasses import replace
from functools import cache, partial

from rq import Queue, get_current_job

from app import audit
from app.clock import utcnow
from app.crypto import secret_box
from app.db import make_engine, make_session_factory
from app.execution.executor import (
    ExecutionContext,
    execute_action,
    reconcile_action,
    refresh_action,
)
from app.execution.providers import connection_adapters
from app.execution.queueing import enqueue_resend
from app.settings import Settings


@cache
def context() -> ExecutionContext:
    settings = Settings.from_env()
    settings.require_production_secrets()
    return execution_context(settings)


def execution_context(settings: Settings) -> ExecutionContext:
    """What a worker executes actions with: its own pool, the audit keys, adapters kept
    per connection."""
    factory = make_session_factory(make_engine(settings.database_url))
    # Events the worker writes are sealed with the same keys as the web's.
    audit.bind_key_ring(factory, audit.audit_key_ring(settings))
    return ExecutionContext(
        session_factory=factory,
        adapters=connection_adapters(settings, secret_box(settings), reuse=True),
        settings=settings,
        clock=utcnow,
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
