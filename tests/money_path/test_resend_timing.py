"""A resend put off for the provider's Retry-After never starts before it is due, though
RQ keeps a scheduled job's time in whole seconds (cut down)."""

from __future__ import annotations

import uuid
from datetime import timedelta

import pytest
from rq.registry import ScheduledJobRegistry

from app.clock import utcnow
from app.execution.queueing import enqueue_resend
from app.jobs.connection import connect_redis
from app.jobs.queueing import queue_named
from app.settings import Settings


@pytest.mark.parametrize("delay", [0.3, 1.0, 2.7])
def test_a_resend_is_due_no_earlier_than_its_delay(settings: Settings, delay: float) -> None:
    queue = queue_named(connect_redis(settings), f"{settings.queue_name}-{uuid.uuid4().hex}")
    asked_at = utcnow()

    enqueue_resend(queue, uuid.uuid4(), delay)

    registry = ScheduledJobRegistry(queue=queue)
    [job_id] = registry.get_job_ids()
    due = registry.get_scheduled_time(job_id)
    assert due >= asked_at + timedelta(seconds=delay)
    assert due < asked_at + timedelta(seconds=delay + 1)  # and not much later
