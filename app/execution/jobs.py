"""The functions RQ runs. Each builds its context from the environment once per process.

Exceptions are never swallowed here: a job that raises is marked failed by RQ,
and the sweeper re-enqueues the action from the database.
"""

from __future__ import annotations

import uuid
from functools import cache

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
from app.settings import Settings


@cache
def context() -> ExecutionContext:
    settings = Settings.from_env()
    engine = make_engine(settings.database_url)
    return ExecutionContext(
        session_factory=make_session_factory(engine),
        adapters=connection_adapters(settings, secret_box(settings), reuse=True),
        settings=settings,
        clock=utcnow,
    )


def execute(action_id: str) -> str:
    return execute_action(context(), uuid.UUID(action_id))


def reconcile(action_id: str) -> str:
    return reconcile_action(context(), uuid.UUID(action_id))


def refresh(action_id: str) -> str:
    return refresh_action(context(), uuid.UUID(action_id))
