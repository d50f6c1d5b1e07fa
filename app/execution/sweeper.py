"""The periodic sweep that makes the database, not Redis, the source of truth.

* An approved action whose job is gone (Redis flushed, job failed, worker killed)
  is enqueued again; the job id makes that safe to do at any time.
* A submission nobody recorded within ``stuck_submission_seconds`` (the worker
  died between sending and recording) becomes ``unknown``; every attempt a crash
  cut off is closed as ``interrupted``.
* An action still ``unknown`` after ``unknown_attention_seconds`` is put in front
  of a person (once); the look-ups go on.
* An ``unknown`` action whose next check is due gets a reconciliation job.
* A ``pending`` or ``requires_action`` action is asked about again every
  ``pending_refresh_seconds``, so its status moves on even if no webhook arrives.
* Every shop whose audit chain moved gets a signed checkpoint written outside the
  database every ``audit_checkpoint_interval_seconds``.
* A shop with messages to helpdesk customers not yet posted (status updates, staff
  replies) gets a delivery job on the background queue.
* A stored privacy request (a Shopify webhook) not answered and with no job in Redis (the
  web process died between keeping it and queueing it, or Redis lost it) gets its job on
  the background queue; one whose job failed is left in RQ's failed jobs for people
  (:meth:`app.execution.queueing.KeptEventJob.requeue`).
* A shopper's chat message owed a draft for less than an hour, with no drafting job
  waiting or running (the web process died between keeping it and queueing its job, or
  the shopper was verified while its draft was being made), gets its job on the
  background queue; one whose job failed is left for people
  (:func:`app.drafting.jobs.drafts_owed`).
* A history scan that is queued, or running but silent too long (its worker died), gets
  a job on the background queue and resumes from its cursors
  (:func:`app.history_audit.jobs.scans_to_resume`).

Run it as ``python -m app.execution.sweeper`` (the Procfile does).
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from redis.exceptions import RedisError
from rq import Queue
from sqlalchemy import or_, select
from sqlalchemy.exc import OperationalError
from sqlalchemy.orm import Session

from app.audit_checkpoints import write_due_checkpoints
from app.drafting.jobs import drafts_owed
from app.execution.executor import ExecutionContext
from app.execution.jobs import context
from app.execution.models import Action, ActionAttempt, ActionStatus
from app.execution.queueing import (
    PRIVACY_REQUEST,
    enqueue_execution,
    enqueue_helpdesk_delivery,
    enqueue_reconcile,
    enqueue_refresh,
    execution_queue,
    requeue_drafting,
)
from app.execution.status import escalate, mark_unknown
from app.helpdesk.delivery import shops_with_pending
from app.history_audit.jobs import enqueue_scan, scans_to_resume
from app.privacy.jobs import unanswered_requests
from app.queue import connect_redis
from app.words import said, said_n

log = logging.getLogger(__name__)


@dataclass
class SweepReport:
    requeued: list[str] = field(default_factory=list)
    marked_unknown: list[str] = field(default_factory=list)
    interrupted: list[str] = field(default_factory=list)
    escalated: list[str] = field(default_factory=list)
    checkpoints: list[str] = field(default_factory=list)
    reconciling: list[str] = field(default_factory=list)
    refreshing: list[str] = field(default_factory=list)
    delivering: list[str] = field(default_factory=list)
    answering_privacy: list[str] = field(default_factory=list)
    drafting: list[str] = field(default_factory=list)
    resuming_scans: list[str] = field(default_factory=list)


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
            reason = said("no answer was recorded for the submission (worker lost?)")
            mark_unknown(session, action, reason, next_check_at=now, now=now)
            report.marked_unknown.append(str(action.id))
        report.interrupted = _close_interrupted_attempts(session, stuck_before, now)
        report.escalated = _escalate_long_unknown(ctx, session, now)
    with ctx.session_factory() as session:
        queued = session.scalars(
            select(Action.id).where(
                Action.status == ActionStatus.QUEUED,
                # A resend the provider asked us to hold (Retry-After) waits its turn.
                or_(Action.next_check_at.is_(None), Action.next_check_at <= now),
            )
        ).all()
        due = session.execute(
            select(Action.id, Action.checks_made).where(
                Action.status == ActionStatus.UNKNOWN, Action.next_check_at <= now
            )
        ).all()
        refresh_every = timedelta(seconds=ctx.settings.pending_refresh_seconds)
        waiting = session.scalars(
            select(Action.id).where(
                Action.status.in_(ActionStatus.PROVIDER_PENDING),
                Action.updated_at <= now - refresh_every,
            )
        ).all()
        report.checkpoints = [
            str(path) for path in write_due_checkpoints(session, ctx.settings, now)
        ]
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
    _queue_background_work(
        ctx, execution_queue(queue.connection, ctx.settings.background_queue_name), now, report
    )
    return report


def _queue_background_work(
    ctx: ExecutionContext, background: Queue, now: datetime, report: SweepReport
) -> None:
    """What waits for the background queue: replies to post, privacy requests to answer,
    drafts owed, history scans to resume."""
    with ctx.session_factory() as session:
        replying = shops_with_pending(session)
        unanswered = unanswered_requests(session)
        owed = drafts_owed(session, now)
        resuming = scans_to_resume(session, now)
    for shop_id in replying:
        if enqueue_helpdesk_delivery(background, shop_id):
            report.delivering.append(str(shop_id))
    for shop_id, event_id in unanswered:
        if PRIVACY_REQUEST.requeue(background, shop_id, event_id):
            report.answering_privacy.append(event_id)
    for message_id in owed:
        if requeue_drafting(background, message_id):
            report.drafting.append(str(message_id))
    for scan in resuming:
        if enqueue_scan(background, scan):
            report.resuming_scans.append(str(scan.id))


def _close_interrupted_attempts(
    session: Session, started_before: datetime, now: datetime
) -> list[str]:
    """Attempts a crash cut off (no outcome, and their action no longer mid-call)."""
    cut_off = session.scalars(
        select(ActionAttempt)
        .join(Action, Action.id == ActionAttempt.action_id)
        .where(
            ActionAttempt.finished_at.is_(None),
            ActionAttempt.started_at < started_before,
            Action.status != ActionStatus.SUBMITTING,
        )
        .with_for_update(of=ActionAttempt, skip_locked=True)
    ).all()
    for attempt in cut_off:
        attempt.finished_at, attempt.outcome = now, "interrupted"
        attempt.detail = "no outcome was recorded: the process making the call stopped"
    return [f"{attempt.action_id}#{attempt.number}" for attempt in cut_off]


def _escalate_long_unknown(ctx: ExecutionContext, session: Session, now: datetime) -> list[str]:
    """Unclear for longer than a person should wait: the case goes to a named owner."""
    limit = timedelta(seconds=ctx.settings.unknown_attention_seconds)
    overdue = session.scalars(
        select(Action)
        .where(
            Action.status.in_(ActionStatus.OUTCOME_UNKNOWN),
            Action.escalated_at.is_(None),
            Action.submitted_at < now - limit,
        )
        .with_for_update(skip_locked=True)
    ).all()
    for action in overdue:
        reason = said_n(
            "the provider's answer is still unclear after more than %(count)s minute; "
            "look-ups go on, and the case needs someone to check it with the provider",
            "the provider's answer is still unclear after more than %(count)s minutes; "
            "look-ups go on, and the case needs someone to check it with the provider",
            int(limit.total_seconds() // 60),
        )
        escalate(session, action, reason, now)
    return [str(action.id) for action in overdue]


def run_forever(ctx: ExecutionContext, queue: Queue) -> None:
    while True:
        try:
            report = sweep(ctx, queue)
        except (RedisError, OperationalError, OSError) as exc:
            # A daemon outlives a restarting Redis or database; the next sweep catches up.
            log.warning("sweep skipped: %s", exc)
        else:
            if any(getattr(report, name) for name in report.__dataclass_fields__):
                log.info("sweep: %s", report)
        time.sleep(ctx.settings.sweep_interval_seconds)


def main() -> None:
    logging.basicConfig(level=logging.INFO)
    ctx = context()
    run_forever(ctx, execution_queue(connect_redis(ctx.settings), ctx.settings.queue_name))


if __name__ == "__main__":
    main()
