"""What every job of a worker process works with, built once per process."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from functools import cache

from sqlalchemy.orm import Session, sessionmaker

from app import audit
from app.clock import utcnow
from app.db import make_engine, make_session_factory
from app.settings import Settings


@dataclass(frozen=True)
class WorkerContext:
    """Storage, settings and time: what a job or a sweep needs from the outside."""

    session_factory: sessionmaker[Session]
    settings: Settings
    clock: Callable[[], datetime]


@cache
def worker_context() -> WorkerContext:
    """The process's context, from the environment, the first time a job asks."""
    settings = Settings.from_env()
    settings.require_production_secrets()
    return context_for(settings)


def context_for(settings: Settings) -> WorkerContext:
    """A context with its own pool; the events it writes are sealed with the same keys
    as the web's."""
    factory = make_session_factory(make_engine(settings.database_url))
    audit.bind_key_ring(factory, audit.audit_key_ring(settings))
    return WorkerContext(session_factory=factory, settings=settings, clock=utcnow)
