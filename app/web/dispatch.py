"""After a request commits: queue the job for what it kept.

The order matters: a worker must never pick up a row the database does not hold yet. Once
the commit is done, the request answers with what it kept, even when Redis cannot take the
job: an action's execution and a message's drafting are queued again by the sweep
(:mod:`app.execution.sweeper`), so a Redis outage at this moment is logged, not answered as a
failure of what in fact happened (a person told an approval failed might refund by hand; a
shopper told their message failed sends it again). Webhooks and helpdesk calls do not come
here: their provider's redelivery is what recovers their jobs, so they answer an error.
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import Iterator
from contextlib import contextmanager

from flask import Flask, current_app
from redis.exceptions import RedisError

from app.approvals.service import ProposalResult
from app.db import request_session
from app.execution.queueing import enqueue_drafting, enqueue_execution
from app.queue import RedisExtension

log = logging.getLogger(__name__)


def commit_and_enqueue(result: ProposalResult) -> None:
    """Commit a proposal's change, then queue the action it created, if any."""
    request_session().commit()
    if result.action is not None:
        queue_execution(current_app, result.action.id)


def queue_execution(app: Flask, action_id: uuid.UUID) -> None:
    """Queue a committed action's execution."""
    with _left_to_the_sweep(f"action {action_id}"):
        enqueue_execution(RedisExtension.queue(app), action_id)


def queue_drafting(app: Flask, message_id: uuid.UUID) -> None:
    """Queue the drafting of a committed message owed a draft."""
    with _left_to_the_sweep(f"the draft of message {message_id}"):
        enqueue_drafting(RedisExtension.background_queue(app), message_id)


@contextmanager
def _left_to_the_sweep(kept: str) -> Iterator[None]:
    try:
        yield
    except RedisError as exc:
        log.warning("%s is kept and the sweep will queue it: Redis is unreachable (%s)", kept, exc)
