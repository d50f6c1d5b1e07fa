"""After a request commits: queue the job for what it kept.

The order matters: a worker must never pick up a row the database does not hold yet. Once
the commit is done, the request answers with what it kept, even when Redis cannot take the
job: an action's execution, a message's drafting and a history scan are queued again by the
sweep (:mod:`app.jobs.sweeper`), a customer's order refresh by their next case or order
change, so a Redis outage at this moment is logged, not answered as a failure of what in
fact happened (a person told an approval failed might refund by hand; a shopper told their
message failed, or staff told a case was not opened, send it again). Webhooks and helpdesk
calls do not come here: their provider's redelivery is what recovers their jobs, so they
answer an error.
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import Iterator
from contextlib import contextmanager

from flask import Flask, current_app
from redis.exceptions import RedisError

from app.approvals.service import ProposalResult
from app.cases.jobs import enqueue_order_refresh
from app.db import request_session
from app.drafting.jobs import enqueue_drafting
from app.execution.queueing import enqueue_execution
from app.history_audit.jobs import enqueue_scan
from app.history_audit.models import HistoryScan
from app.jobs.connection import RedisExtension

log = logging.getLogger(__name__)


def commit_and_enqueue(result: ProposalResult) -> None:
    """Commit a proposal's change, then queue the action it created, if any."""
    request_session().commit()
    if result.action is not None:
        queue_execution(current_app, result.action.id)


_BY_THE_SWEEP = "the sweep queues it"


def queue_execution(app: Flask, action_id: uuid.UUID) -> None:
    """Queue a committed action's execution."""
    with _not_queued(f"action {action_id}", _BY_THE_SWEEP):
        enqueue_execution(RedisExtension.queue(app), action_id)


def queue_drafting(app: Flask, message_id: uuid.UUID) -> None:
    """Queue the drafting of a committed message owed a draft."""
    with _not_queued(f"the draft of message {message_id}", _BY_THE_SWEEP):
        enqueue_drafting(RedisExtension.background_queue(app), message_id)


def queue_scan(app: Flask, scan: HistoryScan) -> None:
    """Queue a committed history scan's first slice."""
    with _not_queued(f"history scan {scan.id}", _BY_THE_SWEEP):
        enqueue_scan(RedisExtension.background_queue(app), scan)


def queue_order_refresh(app: Flask, customer_id: uuid.UUID) -> None:
    """Refresh our copy of a customer's orders, for the case just opened for them."""
    with _not_queued(f"customer {customer_id}'s order refresh", "their next case or order change"):
        enqueue_order_refresh(RedisExtension.background_queue(app), customer_id)


@contextmanager
def _not_queued(job: str, recovered_by: str) -> Iterator[None]:
    """Redis refusing the job of what the request kept: logged, with what recovers it."""
    try:
        yield
    except RedisError as exc:
        log.warning("%s not queued, Redis is unreachable (%s): %s", job, exc, recovered_by)
