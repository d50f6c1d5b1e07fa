"""The periodic sweep that makes the database, not Redis, the source of truth.

* An approved action whose job is gone (Redis flushed, job failed, worker killed)
  is enqueued again; the job id makes that safe to do at any time.
* A submission nobody recorded within ``stuck_submission_seconds`` (the worker
  died between sending and recording) becomes ``unknown``.
* An ``unknown`` action whose next check is due gets a reconciliation job.
* A ``pending`` or ``requires_action`` action is asked about again every
  ``pending_refresh_seconds``, so its status moves on even if no webhook arrives.

Run it as ``python -m app.execution.sweeper`` (the Procfile does).
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass, field
from datetime import timedelta

from redis.exceptions import RedisError
from rq import Queue
from sqlalchemy import select
from sqlalchemy.exc import OperationalError

from app.execution.executor import ExecutionContext
from app.execution.jobs import context
from app.execution.models import Action, ActionStatus
from app.execution.queueing import (
    enqueue_execution,
    enqueue_reconcile,
    enqueue_refresh,
    execution_queue,
)
from app.execution.status import mark_unknown
from app.queue import connect_redis

log = logging.getLogger(__name__)


@dataclass
class SweepReport:
    requeued: list[str] = field(default_factory=list)
    marked_unknown: list[str] = field(default_factory=list)
    reconciling: list[str] = field(default_factory=list)
    refreshing: list[str] = field(default_factory=list)


def sweep(ctx: ExecutionContext, queue: Queue) -> SweepReport:
    report = SweepReport()
    now = ctx.clock()
    stuck_before = now - timedelta(seconds=ctx.settings.stuck_submission_seconds)
    with ctx.session_factory() as session, session.begin():
        stuck = session.scalars(
            select(Action)
            .where(Action.status == ActionStatus.SUBMITTING, Action.submitted_at < stuck_before)
            .with_for_update(skip_locked=True)
        )
        for action in stuck:
            reason = "no answer was recorded for the submission (worker lost?)"
            mark_unknown(session, action, reason, next_check_at=now, now=now)
            report.marked_unknown.append(str(action.id))
    with ctx.session_factory() as session:
        queued = session.scalars(
            select(Action.id).where(Action.status == ActionStatus.QUEUED)
        ).all()
        due = session.execute(
            select(Action.id, Action.checks_made).where(
                Action.status == ActionStatus.UNKNOWN, Action.next_check_at <= now
            )
        ).all()
        refresh_every = timedelta(seconds=ctx.settings.pending_refresh_seconds)
        waiting = session.scalars(
            select(Action.id).where(
                Action.status.in_((ActionStatus.PENDING, ActionStatus.REQUIRES_ACTION)),
                Action.updated_at <= now - refresh_every,
            )
        ).all()
    # Enqueue only after the transactions above have committed.
    for action_id in queued:
        if enqueue_execution(queue, action_id):
            report.requeued.append(str(action_id))
    for action_id, checks_made in due:
        if enqueue_reconcile(queue, action_id, checks_made):
            report.reconciling.append(str(action_id))
    # One refresh per action per period: the job id carries the period's number.
    period = int(now.timestamp() // max(ctx.settings.pending_refresh_seconds, 1.0))
    for action_id in waiting:
        if enqueue_refresh(queue, action_id, f"sweep-{period}"):
            report.refreshing.append(str(action_id))
    return report


def run_forever(ctx: ExecutionContext, queue: Queue) -> None:
    while True:
        try:
            report = sweep(ctx, queue)
        except (RedisError, OperationalError, OSError) as exc:
            # A daemon outlives a restarting Redis or database; the next sweep catches up.
            log.warning("sweep skipped: %s", exc)
        else:
            if report.requeued or report.marked_unknown or report.reconciling or report.refreshing:
                log.info("sweep: %s", report)
        time.sleep(ctx.settings.sweep_interval_seconds)


def main() -> None:
    logging.basicConfig(level=logging.INFO)
    ctx = context()
    run_forever(ctx, execution_queue(connect_redis(ctx.settings), ctx.settings.queue_name))


if __name__ == "__main__":
    main()
