"""Delivering alerts: a job per alert once its cause has committed, and the sweep for the rest.

The sequence of one delivery (:func:`deliver_alert`), each step in its own transaction:

1. Lock the alert (a delivery of it already at work: leave it to that one); count the
   attempt and set when the next may begin (:func:`_backoff`: a minute, doubling up to an
   hour), so that a delivery that fails is tried again by the sweep then, never sooner.
2. Email each of the shop's owners through the mailer (SMTP in production, the outbox in
   the demo and the tests); then record the alert delivered by email.
3. Post to the shop's Slack webhook, signed (Slack's 429s and 5xx are retried within the
   call: :mod:`integrations.slack`); then record it delivered to Slack.

A channel delivered is never delivered again. An error is noted on the alert and fails
the job (it is never swallowed): the sweep queues the alert again once its next attempt
is due. An alert is delivered at least once: a worker that dies between sending and
recording sends again.

A new alert's id waits in its session until the transaction that kept it commits
(:data:`app.alerts.service.OWED`); in a worker its job is then queued on the background
queue of the worker's Redis. Outside a job (the sweeper's own escalations, a test that
runs the executor itself) nothing is queued: the alerts sweep, which runs right after the
money executor's, finds it, due from the moment it was kept.
"""

from __future__ import annotations

import logging
import uuid
from dataclasses import dataclass
from datetime import timedelta
from functools import cache

from redis.exceptions import RedisError
from rq import Queue, get_current_job
from sqlalchemy import event, select
from sqlalchemy.orm import Session, SessionTransaction

from app import audit
from app.actors import WORKER
from app.alerts.models import Alert, AlertSettings
from app.alerts.service import OWED, message_of, owner_emails
from app.crypto import SecretBox, secret_box
from app.jobs.context import WorkerContext, worker_context
from app.jobs.queueing import enqueue_unique, queue_named
from app.jobs.sweeper import Queues, Sweep, SweepReport
from app.shops.models import Shop
from integrations.mail import Mailer, mailer_for
from integrations.slack import SlackWebhook

log = logging.getLogger(__name__)

FIRST_RETRY = timedelta(minutes=1)
LAST_RETRY = timedelta(hours=1)
# Owners read alerts in the admin's language, which is English today.
LANGUAGE = "en"


@dataclass(frozen=True)
class AlertContext(WorkerContext):
    """What a delivery needs besides storage and time: keys to read the webhook with,
    the mailer, and Slack."""

    box: SecretBox
    mailer: Mailer
    slack: SlackWebhook


def alert_context(worker: WorkerContext) -> AlertContext:
    """The worker's context, with the mailer and Slack its settings name."""
    settings = worker.settings
    return AlertContext(
        session_factory=worker.session_factory,
        settings=settings,
        clock=worker.clock,
        box=secret_box(settings),
        mailer=mailer_for(
            settings.mail_url, sender=settings.mail_from, outbox_folder=settings.mail_outbox_path
        ),
        slack=SlackWebhook(
            api_base=settings.slack_api_base, timeout_seconds=settings.provider_timeout_seconds
        ),
    )


@cache
def context() -> AlertContext:
    return alert_context(worker_context())


def deliver(alert_id: str) -> str:
    """The RQ job."""
    return deliver_alert(context(), uuid.UUID(alert_id))


def delivery_job_id(alert_id: uuid.UUID, attempt: int) -> str:
    return f"alert-{alert_id}-{attempt}"


def enqueue_delivery(queue: Queue, alert_id: uuid.UUID, attempt: int) -> bool:
    """Queue the alert's delivery for its next attempt; False when it is queued already."""
    return enqueue_unique(
        queue, "app.alerts.jobs.deliver", (str(alert_id),), delivery_job_id(alert_id, attempt)
    )


@dataclass(frozen=True)
class _Owed:
    """What step 1 found still owed: the owners' addresses, the webhook, and the words."""

    emails: list[str] | None
    slack: tuple[str, str] | None
    subject: str
    body: str
    post: str


def deliver_alert(ctx: AlertContext, alert_id: uuid.UUID) -> str:
    """Deliver the alert on every channel still owed; returns what came of it."""
    owed = _begin(ctx, alert_id)
    if owed is None:
        return "nothing owed"
    try:
        if owed.emails is not None:
            for address in owed.emails:
                ctx.mailer.send(to=address, subject=owed.subject, body=owed.body, language=LANGUAGE)
            _delivered(ctx, alert_id, "email", len(owed.emails))
        if owed.slack is not None:
            url, secret = owed.slack
            ctx.slack.post(url, owed.post, secret=secret)
            _delivered(ctx, alert_id, "slack", 1)
    except Exception as exc:
        _note(ctx, alert_id, exc)
        raise
    return "delivered"


def _begin(ctx: AlertContext, alert_id: uuid.UUID) -> _Owed | None:
    """Step 1; None when nothing is owed now (delivered, gone, or at work elsewhere)."""
    now = ctx.clock()
    with ctx.session_factory() as session, session.begin():
        alert = session.scalars(
            select(Alert).where(Alert.id == alert_id).with_for_update(skip_locked=True)
        ).one_or_none()
        if alert is None or alert.delivered_at is not None:
            return None
        alert.attempts += 1
        alert.next_attempt_at = now + _backoff(alert.attempts)
        emails = None
        if alert.email_owed and alert.emailed_at is None:
            emails = owner_emails(session, alert.shop_id)
            # No owner has an email any more: nothing is owed there.
            alert.email_owed = bool(emails)
        slack = None
        if alert.slack_owed and alert.posted_at is None:
            slack = _webhook(session, alert.shop_id, ctx.box)
            # The webhook was removed since: nothing is owed there.
            alert.slack_owed = slack is not None
        if _done(alert):
            alert.delivered_at = now
            return None
        shop = session.get(Shop, alert.shop_id)
        assert shop is not None
        words = message_of(alert, shop, ctx.settings.shopify_admin_origin)
        return _Owed(
            emails=emails or None,
            slack=slack,
            subject=str(words.subject),
            body=str(words.body),
            post=str(words.slack),
        )


def _webhook(session: Session, shop_id: uuid.UUID, box: SecretBox) -> tuple[str, str] | None:
    settings = session.get(AlertSettings, shop_id)
    if settings is None or settings.encrypted_slack_url is None:
        return None
    assert settings.encrypted_signing_secret is not None  # kept with every address
    return box.decrypt(settings.encrypted_slack_url), box.decrypt(settings.encrypted_signing_secret)


def _delivered(ctx: AlertContext, alert_id: uuid.UUID, channel: str, recipients: int) -> None:
    """Record a channel delivered, in its own transaction; the alert too, once every
    channel owed is."""
    now = ctx.clock()
    with ctx.session_factory() as session, session.begin():
        alert = session.get(Alert, alert_id, with_for_update=True)
        assert alert is not None  # alerts are never deleted
        if channel == "email":
            alert.emailed_at = now
        else:
            alert.posted_at = now
        alert.last_error = None
        if _done(alert):
            alert.delivered_at = now
        audit.record(
            session,
            shop_id=alert.shop_id,
            kind="alert.delivered",
            actor=WORKER,
            case_id=alert.case_id,
            action_id=alert.action_id,
            data={"alert": str(alert.id), "channel": channel, "recipients": recipients},
            now=now,
        )


def _note(ctx: AlertContext, alert_id: uuid.UUID, error: Exception) -> None:
    """Keep why the delivery failed on the alert, for whoever looks at it."""
    with ctx.session_factory() as session, session.begin():
        alert = session.get(Alert, alert_id, with_for_update=True)
        if alert is not None:
            alert.last_error = f"{type(error).__name__}: {error}"[:500]


def _done(alert: Alert) -> bool:
    return (not alert.email_owed or alert.emailed_at is not None) and (
        not alert.slack_owed or alert.posted_at is not None
    )


def _backoff(attempts: int) -> timedelta:
    later: timedelta = FIRST_RETRY * 2 ** min(attempts - 1, 16)
    return min(later, LAST_RETRY)


# ------------------------------------------------------------------ the sweep


def sweep_alerts(ctx: WorkerContext, queues: Queues) -> SweepReport:
    """Queue every alert still owed whose next attempt is due (after the read commits)."""
    now = ctx.clock()
    with ctx.session_factory() as session:
        due = session.execute(
            select(Alert.id, Alert.attempts).where(
                Alert.delivered_at.is_(None), Alert.next_attempt_at <= now
            )
        ).all()
    report: SweepReport = {"alerting": []}
    for alert_id, attempts in due:
        if enqueue_delivery(queues.background, alert_id, attempts):
            report["alerting"].append(str(alert_id))
    return report


SWEEP = Sweep("alerts", sweep_alerts)


# ------------------------------------------------------------------ after the commit


@event.listens_for(Session, "after_commit")
def _queue_owed(session: Session) -> None:
    owed: list[uuid.UUID] = session.info.pop(OWED, [])
    if not owed:
        return
    job = get_current_job()
    if job is None:
        return  # the alerts sweep delivers them (see the module's docstring)
    queue = queue_named(job.connection, worker_context().settings.background_queue_name)
    for alert_id in owed:
        try:
            enqueue_delivery(queue, alert_id, 0)
        except RedisError as exc:
            log.warning("alert %s not queued (%s): the sweep queues it", alert_id, exc)


@event.listens_for(Session, "after_soft_rollback")
def _forget_owed(session: Session, previous_transaction: SessionTransaction) -> None:
    if not previous_transaction.nested:
        session.info.pop(OWED, None)
