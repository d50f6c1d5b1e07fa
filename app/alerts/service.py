"""What the owner is told, written with its cause, and where it goes.

The money executor announces what a person must hear about (:mod:`app.execution.events`):
a brake tripped, an outcome unclear past its attention time, a refund that failed after
the customer was told. Each receiver here keeps one :class:`~app.alerts.models.Alert` in
the announcing transaction (one per cause: announced again, nothing is added), with the
channels it is owed on: email when the shop has an owner with an email, Slack when the
shop has a webhook for its kind. The alert's delivery is queued once that transaction has
committed (:mod:`app.alerts.jobs`); nothing leaves before the cause is on record.

An alert says only what Caseward knows of its own: the kind, the case's link in the
Shopify admin and the amount, and for a brake the reason it tripped. Never a customer's
name, email, card or words: a Slack channel is read by more people than the case is.

The shop's Slack webhook is an owner's setting (:func:`save_slack`): its address is kept
encrypted (a hint shown), and each new address gets a new signing secret, shown once.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import select
from sqlalchemy.orm import Session

from app import audit
from app.actors import WORKER, Actor
from app.alerts.models import Alert, AlertKind, AlertSettings
from app.crypto import SecretBox
from app.db import insert_one_unless_present, locked_row
from app.errors import InvalidInput
from app.execution.events import brake_tripped, refund_failed_after_told, unclear_too_long
from app.execution.models import Action
from app.execution.status import reason_data
from app.money import Money
from app.shopify.admin_links import APP_HANDLE, admin_case_url
from app.shops.models import Shop, StaffMember, StaffRole
from app.shops.service import require_role
from app.validation import choice, text
from app.words import Sentence, said
from integrations.slack import is_webhook_url, new_secret, url_hint

# Where a new alert's id waits for its transaction to commit (see app.alerts.jobs).
OWED = "caseward.alerts_owed"
# The longest webhook address kept (Slack's are about 80 characters).
MAX_WEBHOOK_URL = 500
ALERT_KINDS = tuple(AlertKind)


# ------------------------------------------------------------------ raising


def raise_alert(
    session: Session,
    action: Action,
    *,
    kind: AlertKind,
    cause: str,
    facts: Sentence | None = None,
    now: datetime,
) -> bool:
    """Keep the alert of ``kind`` about ``action`` for ``cause``, once; False when it was
    kept before. Its delivery is queued after the commit."""
    alert_id = uuid.uuid4()
    values = {
        "id": alert_id,
        "shop_id": action.shop_id,
        "kind": kind.value,
        "cause": cause,
        "case_id": action.case_id,
        "action_id": action.id,
        "amount": action.amount,
        "currency": action.currency,
        "facts": facts.to_dict() if facts is not None else None,
        "created_at": now,
        "email_owed": bool(owner_emails(session, action.shop_id)),
        "slack_owed": _slack_takes(session, action.shop_id, kind),
        "attempts": 0,
        "next_attempt_at": now,
    }
    if not insert_one_unless_present(session, Alert, ("shop_id", "kind", "cause"), values):
        return False
    audit.record(
        session,
        shop_id=action.shop_id,
        kind="alert.raised",
        actor=WORKER,
        case_id=action.case_id,
        action_id=action.id,
        data={
            "alert": str(alert_id),
            "alert_kind": kind.value,
            "email": values["email_owed"],
            "slack": values["slack_owed"],
            **(reason_data(facts) if facts is not None else {}),
        },
        now=now,
    )
    session.info.setdefault(OWED, []).append(alert_id)
    return True


@brake_tripped.connect
def _brake_tripped(action: Action, *, session: Session, reason: Sentence, now: datetime) -> None:
    # One alert per trip: a brake trips again only after a person resumed it.
    raise_alert(
        session,
        action,
        kind=AlertKind.BRAKE_TRIPPED,
        cause=f"brake-{now.isoformat()}",
        facts=reason,
        now=now,
    )


@unclear_too_long.connect
def _unclear_too_long(action: Action, *, session: Session, now: datetime) -> None:
    raise_alert(session, action, kind=AlertKind.UNCLEAR_TOO_LONG, cause=str(action.id), now=now)


@refund_failed_after_told.connect
def _refund_failed_after_told(action: Action, *, session: Session, now: datetime) -> None:
    raise_alert(
        session, action, kind=AlertKind.REFUND_FAILED_AFTER_TOLD, cause=str(action.id), now=now
    )


def owner_emails(session: Session, shop_id: uuid.UUID) -> list[str]:
    """Where the shop's owners read their email."""
    return [
        email
        for email in session.scalars(
            select(StaffMember.email)
            .where(StaffMember.shop_id == shop_id, StaffMember.role.in_(StaffRole.OWNER_ONLY))
            .order_by(StaffMember.user_id)
        )
        if email
    ]


def _slack_takes(session: Session, shop_id: uuid.UUID, kind: AlertKind) -> bool:
    settings = session.get(AlertSettings, shop_id)
    return (
        settings is not None
        and settings.encrypted_slack_url is not None
        and kind.value in settings.slack_kinds
    )


# ------------------------------------------------------------------ what is said


@dataclass(frozen=True)
class Message:
    """An alert in words: the email's subject and body, and the Slack post's text."""

    subject: Sentence
    body: Sentence
    slack: Sentence


def message_of(alert: Alert, shop: Shop, admin_origin: str) -> Message:
    """What the owner reads: the kind, the case's link, the amount, and a brake's reason."""
    link = admin_case_url(admin_origin, shop.domain, alert.case_id) if alert.case_id else ""
    amount: Sentence | Money = (
        Money(alert.amount, alert.currency)
        if alert.amount is not None and alert.currency
        else said("no amount")
    )
    if alert.kind == AlertKind.BRAKE_TRIPPED:
        reason = Sentence.from_dict(alert.facts) if alert.facts else said("a brake's rule")
        store = shop.domain.removesuffix(".myshopify.com")
        day = f"{admin_origin}/store/{store}/apps/{APP_HANDLE}"
        return Message(
            subject=said("Caseward paused sending for %(shop)s", shop=shop.name),
            body=said(
                "Caseward paused sending %(shop)s's approved actions: %(reason)s.\n\n"
                "Nothing is sent and nothing is lost: the actions waiting are held, and so "
                "is any approved meanwhile, until a person resumes on the day's page: "
                "%(day)s\n\nThe case of the action that tripped it: %(link)s (%(amount)s)",
                shop=shop.name,
                reason=reason,
                day=day,
                link=link,
                amount=amount,
            ),
            slack=said(
                "Caseward paused sending until someone resumes it. Case: %(link)s (%(amount)s)",
                link=link,
                amount=amount,
            ),
        )
    if alert.kind == AlertKind.UNCLEAR_TOO_LONG:
        return Message(
            subject=said("Caseward: a payment provider's answer is still unclear"),
            body=said(
                "The outcome of an approved action of %(amount)s at %(shop)s is still "
                "unclear. Caseward keeps looking it up and never sends it twice; someone "
                "should check it with the provider: %(link)s",
                amount=amount,
                shop=shop.name,
                link=link,
            ),
            slack=said(
                "A provider's answer is still unclear. Case: %(link)s (%(amount)s)",
                link=link,
                amount=amount,
            ),
        )
    return Message(
        subject=said("Caseward: a refund failed after the customer was told"),
        body=said(
            "A refund of %(amount)s at %(shop)s that the payment provider had taken has "
            "failed or was canceled, after the customer was told it was submitted. They "
            "need a word from you: %(link)s",
            amount=amount,
            shop=shop.name,
            link=link,
        ),
        slack=said(
            "A refund failed after the customer was told it was submitted. "
            "Case: %(link)s (%(amount)s)",
            link=link,
            amount=amount,
        ),
    )


# ------------------------------------------------------------------ settings


@dataclass(frozen=True)
class SlackSetup:
    """The shop's Slack webhook as pages show it: a hint of its address, and the kinds
    posted; ``signing_secret`` only in the answer of the change that made it."""

    hint: str | None
    kinds: list[str]
    signing_secret: str | None = None


def slack_setup(session: Session, shop_id: uuid.UUID) -> SlackSetup:
    settings = session.get(AlertSettings, shop_id)
    if settings is None or settings.encrypted_slack_url is None:
        return SlackSetup(None, list(ALERT_KINDS) if settings is None else settings.slack_kinds)
    return SlackSetup(settings.slack_url_hint, list(settings.slack_kinds))


def save_slack(
    session: Session,
    *,
    shop: Shop,
    actor: Actor,
    url: str | None,
    keep_url: bool,
    kinds: list[str] | None,
    box: SecretBox,
    now: datetime,
) -> SlackSetup:
    """The owner sets the shop's Slack webhook (``url``; None removes it, ``keep_url``
    leaves it as it is) and the kinds posted to it (None: as they are). A new address gets
    a new signing secret, returned once."""
    require_role(session, shop.id, actor, StaffRole.OWNER_ONLY, said("change the shop's alerts"))
    locked_row(
        session,
        AlertSettings,
        shop_id=shop.id,
        slack_kinds=list(ALERT_KINDS),
        changed_by=actor.ref,
        changed_at=now,
    )
    settings = session.get(AlertSettings, shop.id, populate_existing=True)
    assert settings is not None  # made above when missing
    secret = None
    if not keep_url:
        if url is None:
            settings.encrypted_slack_url = settings.slack_url_hint = None
            settings.encrypted_signing_secret = None
        else:
            secret = new_secret()
            settings.encrypted_slack_url = box.encrypt(url)
            settings.slack_url_hint = url_hint(url)
            settings.encrypted_signing_secret = box.encrypt(secret)
    if kinds is not None:
        settings.slack_kinds = [kind for kind in ALERT_KINDS if kind in kinds]
    settings.changed_by, settings.changed_at = actor.ref, now
    audit.record(
        session,
        shop_id=shop.id,
        kind="shop.alerts_changed",
        actor=actor,
        data={
            "slack": settings.slack_url_hint,
            "new_signing_secret": secret is not None,
            "slack_kinds": list(settings.slack_kinds),
        },
        now=now,
    )
    return SlackSetup(settings.slack_url_hint, list(settings.slack_kinds), secret)


def webhook_url(value: object) -> str:
    """A Slack incoming webhook's address, as a person pastes it."""
    raw = str(text(value, "slack_webhook_url", max_length=MAX_WEBHOOK_URL, required=True)).strip()
    if not is_webhook_url(raw):
        raise InvalidInput(
            said(
                "slack_webhook_url is the https address Slack gives an incoming webhook, "
                "such as https://hooks.slack.com/services/..."
            ),
            field="slack_webhook_url",
        )
    return raw


def alert_kinds(value: object) -> list[str]:
    """The kinds of alert posted to Slack, each one Caseward raises."""
    if not isinstance(value, list):
        raise InvalidInput(said("slack_kinds is a list of alert kinds"), field="slack_kinds")
    return [choice(kind, "slack_kinds", ALERT_KINDS) for kind in value]
