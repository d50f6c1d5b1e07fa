"""The money executor's sweep: actions whose work was lost or is due again.

* An approved action whose job is gone (Redis flushed, job failed, worker killed)
  is enqueued again; the job id makes that safe to do at any time. Not while its shop's
  brake holds (:mod:`app.execution.brakes`): its job would only hold it again; once a
  person resumes, the sweep queues whatever the resume's own enqueue missed.
* A submission nobody recorded within ``stuck_submission_seconds`` (the worker
  died between sending and recording) becomes ``unknown``; every attempt a crash
  cut off is closed as ``interrupted``.
* An action still ``unknown`` after ``unknown_attention_seconds`` is put in front
  of a person (once), and the owner is told
  (:data:`~app.execution.events.unclear_too_long`); the look-ups go on.
* An ``unknown`` action whose next check is due gets a reconciliation job.
* A ``pending`` or ``requires_action`` action is asked about again every
  ``pending_refresh_seconds``, so its status moves on even if no webhook arrives.

Registered in :data:`app.areas.SWEEPS` right after the abandoned jobs' sweep; every job goes
on the money queue.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from sqlalchemy import or_, select
from sqlalchemy.orm import Session

from app.execution.events import announce, unclear_too_long
from app.execution.models import Action, ActionAttempt, ActionStatus, ShopBrakes
from app.execution.queueing import enqueue_execution, enqueue_reconcile, enqueue_refresh
from app.execution.status import escalate, mark_unknown
from app.jobs.context import WorkerContext
from app.jobs.sweeper import Queues, Sweep, SweepReport
from app.words import said, said_n


def sweep_actions(ctx: WorkerContext, queues: Queues) -> SweepReport:
    now = ctx.clock()
    report: SweepReport = {
        heading: []
        for heading in (
            "marked_unknown",
            "interrupted",
            "escalated",
            "requeued",
            "reconciling",
            "refreshing",
        )
    }
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
            report["marked_unknown"].append(str(action.id))
        report["interrupted"] = _close_interrupted_attempts(session, stuck_before, now)
        report["escalated"] = _escalate_long_unknown(ctx, session, now)
    with ctx.session_factory() as session:
        queued = session.scalars(
            select(Action.id)
            .outerjoin(ShopBrakes, ShopBrakes.shop_id == Action.shop_id)
            .where(
                Action.status == ActionStatus.QUEUED,
                # A resend the provider asked us to hold (Retry-After) waits its turn.
                or_(Action.next_check_at.is_(None), Action.next_check_at <= now),
                ShopBrakes.tripped_at.is_(None),
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
    # Enqueue only after the transactions above have committed.
    for action_id in queued:
        if enqueue_execution(queues.money, action_id):
            report["requeued"].append(str(action_id))
    for action_id, checks_made in due:
        if enqueue_reconcile(queues.money, action_id, checks_made):
            report["reconciling"].append(str(action_id))
    # One refresh per action per period: the job id carries the period's number.
    period = int(now.timestamp() // max(ctx.settings.pending_refresh_seconds, 1.0))
    for action_id in waiting:
        if enqueue_refresh(queues.money, action_id, f"sweep-{period}"):
            report["refreshing"].append(str(action_id))
    return report


SWEEP = Sweep("actions", sweep_actions)


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


def _escalate_long_unknown(ctx: WorkerContext, session: Session, now: datetime) -> list[str]:
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
        announce(unclear_too_long, action, session=session, now=now)
    return [str(action.id) for action in overdue]
