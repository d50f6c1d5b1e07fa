"""Actions (approved writes), their attempts at the provider, and provider events."""

from __future__ import annotations

import uuid
from datetime import datetime
from enum import StrEnum, nonmember
from typing import Any

from sqlalchemy import (
    JSON,
    ForeignKey,
    Index,
    Integer,
    String,
    Text,
    UniqueConstraint,
    Uuid,
    select,
    text,
)
from sqlalchemy.orm import Mapped, Session, mapped_column

from app.clock import utcnow
from app.db import Base, UTCDateTime, insert_one_unless_present


class ActionStatus(StrEnum):
    """Where an approved action stands. Changes follow :data:`app.execution.lifecycle.ACTION_MOVES`.

    Ours, before the provider has spoken:
      ``queued``     approved, a job is (or should be) on the queue.
      ``submitting`` the idempotency key is stored and the call is under way.
      ``unknown``    the call's outcome is unclear; reconciliation will look it up.
      ``halted``     not sent: the kill switch, protection mode or a failed re-check.
      ``rejected``   sent, and the provider refused it: nothing happened there.
      ``expired``    not sent: the approval expired before execution.
      ``cannot_run`` not sent: its connection is gone, the shop is uninstalled, or the
                     adapter refused to build; a person looks at the case.
      ``needs_decision`` the key's lifetime passed without a provider answer: a person decides.
    The provider's, recorded only from what it reports:
      ``pending``, ``requires_action``, ``succeeded``, ``failed``, ``canceled``.
    """

    QUEUED = "queued"
    SUBMITTING = "submitting"
    UNKNOWN = "unknown"
    HALTED = "halted"
    REJECTED = "rejected"
    EXPIRED = "expired"
    CANNOT_RUN = "cannot_run"
    NEEDS_DECISION = "needs_decision"
    PENDING = "pending"
    REQUIRES_ACTION = "requires_action"
    SUCCEEDED = "succeeded"
    FAILED = "failed"
    CANCELED = "canceled"

    # Money may be on its way: these count against what is left to refund.
    IN_FLIGHT = nonmember((QUEUED, SUBMITTING, UNKNOWN, NEEDS_DECISION))
    PROVIDER_REPORTED = nonmember((PENDING, REQUIRES_ACTION, SUCCEEDED, FAILED, CANCELED))
    # The provider has it and has not finished: it may still succeed or fail.
    PROVIDER_PENDING = nonmember((PENDING, REQUIRES_ACTION))
    # The provider reported it will not happen: no money moved.
    PROVIDER_FAILED = nonmember((FAILED, CANCELED))
    # Not settled yet: ours in flight, or the provider's pending.
    NOT_SETTLED = nonmember((QUEUED, SUBMITTING, UNKNOWN, NEEDS_DECISION, PENDING, REQUIRES_ACTION))
    # Whether it happened at the provider is not known: reconciliation or a person settles it.
    OUTCOME_UNKNOWN = nonmember((UNKNOWN, NEEDS_DECISION))
    # The provider may still move these on (a refund can fail days later).
    PROVIDER_OPEN = nonmember((PENDING, REQUIRES_ACTION, SUCCEEDED))
    # Nothing reached the provider, and nothing will.
    NOT_SENT = nonmember((HALTED, EXPIRED, REJECTED, CANNOT_RUN))
    FINAL = nonmember((HALTED, EXPIRED, REJECTED, CANNOT_RUN, FAILED, CANCELED))


class Action(Base):
    __tablename__ = "actions"
    # One proposal revision yields at most one action, whoever clicks approve.
    __table_args__ = (
        UniqueConstraint("proposal_id", "proposal_revision"),
        Index("ix_actions_shop_money_ref", "shop_id", "money_ref"),
        # A shop's actions newest first (the actions API) or within a period (the caps'
        # sums). No more: every index is written again at each move of an action's status.
        Index("ix_actions_shop_id_created_at", "shop_id", "created_at"),
    )

    id: Mapped[uuid.UUID] = mapped_column(Uuid, primary_key=True, default=uuid.uuid4)
    shop_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("shops.id"))
    case_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("cases.id"), index=True)
    proposal_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("proposals.id"))
    proposal_revision: Mapped[int] = mapped_column(Integer)
    digest: Mapped[str] = mapped_column(String(64))
    kind: Mapped[str] = mapped_column(String(32))
    provider: Mapped[str] = mapped_column(String(32))
    target: Mapped[str] = mapped_column(String(255), index=True)
    customer_ref: Mapped[str | None] = mapped_column(String(255))
    amount: Mapped[int | None] = mapped_column(Integer)
    currency: Mapped[str | None] = mapped_column(String(3))
    line_items: Mapped[list[dict[str, Any]]] = mapped_column(JSON, default=list)
    # The money a refund gives back, whichever provider is asked
    # (see app.execution.evaluation.money_of).
    money_ref: Mapped[str | None] = mapped_column(String(255))
    params: Mapped[dict[str, Any]] = mapped_column(JSON, default=dict)
    # Derived from the action id and stored before the first call; never replaced.
    idempotency_key: Mapped[str] = mapped_column(String(255), unique=True)
    status: Mapped[str] = mapped_column(String(32), default=ActionStatus.QUEUED, index=True)
    status_reason: Mapped[str | None] = mapped_column(Text)
    # The same reason as Caseward said it (app.words.Sentence.to_dict), for the admin to
    # show in its reader's language; None when the reason is a provider's own text.
    status_sentence: Mapped[dict[str, Any] | None] = mapped_column(JSON)
    provider_ref: Mapped[str | None] = mapped_column(String(255), index=True)
    failure_reason: Mapped[str | None] = mapped_column(String(255))
    first_sent_at: Mapped[datetime | None] = mapped_column(UTCDateTime())
    submitted_at: Mapped[datetime | None] = mapped_column(UTCDateTime())
    next_check_at: Mapped[datetime | None] = mapped_column(UTCDateTime())
    checks_made: Mapped[int] = mapped_column(Integer, default=0)
    # Its attempt rows so far (the newest is numbered this): counted under the action's
    # row lock, so numbering the next one reads nothing.
    attempts_made: Mapped[int] = mapped_column(Integer, default=0, server_default="0")
    # When an unclear outcome was put in front of a person (once per action).
    escalated_at: Mapped[datetime | None] = mapped_column(UTCDateTime())
    approved_by: Mapped[list[str]] = mapped_column(JSON, default=list)
    approval_expires_at: Mapped[datetime] = mapped_column(UTCDateTime())
    created_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow)
    updated_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow, onupdate=utcnow)


class ActionAttempt(Base):
    """One call to the provider for an action: what was sent and what came back."""

    __tablename__ = "action_attempts"
    __table_args__ = (
        UniqueConstraint("action_id", "number"),
        # The sweep looks for calls left unfinished every few seconds: only those are
        # indexed, so it never reads the finished history of every shop.
        Index(
            "ix_action_attempts_unfinished_started_at",
            "started_at",
            postgresql_where=text("finished_at IS NULL"),
            sqlite_where=text("finished_at IS NULL"),
        ),
    )

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    action_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("actions.id"))
    number: Mapped[int] = mapped_column(Integer)
    purpose: Mapped[str] = mapped_column(String(16))  # submit | find
    idempotency_key: Mapped[str] = mapped_column(String(255))
    started_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow)
    finished_at: Mapped[datetime | None] = mapped_column(UTCDateTime())
    # answered | rejected | unknown (submit); found | absent (find)
    outcome: Mapped[str | None] = mapped_column(String(32))
    provider_ref: Mapped[str | None] = mapped_column(String(255))
    provider_status: Mapped[str | None] = mapped_column(String(32))
    detail: Mapped[str | None] = mapped_column(Text)


# What makes a provider's event one: each shop gets its own delivery of an event (two shops
# may share one account).
PROVIDER_EVENT_KEY = ("shop_id", "provider", "event_id")


class ProviderEvent(Base):
    """What a provider sent (a webhook, a helpdesk call, an agent's command), kept once per
    shop, provider and event id (:func:`keep_provider_event`)."""

    __tablename__ = "provider_events"
    __table_args__ = (UniqueConstraint(*PROVIDER_EVENT_KEY),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    shop_id: Mapped[uuid.UUID | None] = mapped_column(ForeignKey("shops.id"))
    provider: Mapped[str] = mapped_column(String(32))
    event_id: Mapped[str] = mapped_column(String(255))
    type: Mapped[str] = mapped_column(String(128))
    object_id: Mapped[str | None] = mapped_column(String(255), index=True)
    created: Mapped[datetime] = mapped_column(UTCDateTime())
    payload: Mapped[dict[str, Any]] = mapped_column(JSON)
    received_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow)


def keep_provider_event(
    session: Session,
    *,
    shop_id: uuid.UUID,
    provider: str,
    event_id: str,
    event_type: str,
    object_id: str | None,
    payload: dict[str, Any],
    created: datetime,
    received_at: datetime,
) -> bool:
    """Keep the event; False when this shop kept the same event before (a redelivery, a
    retry, a replay), which then changes nothing. Its job, if it has one, names it by the
    shop and ``event_id`` (:func:`kept_event`). One ``INSERT ... ON CONFLICT DO NOTHING``:
    no savepoint to roll back to, and no other integrity error is taken for a repeat."""
    values = {
        "shop_id": shop_id,
        "provider": provider,
        "event_id": event_id,
        "type": event_type,
        "object_id": object_id,
        "payload": payload,
        "created": created,
        "received_at": received_at,
    }
    return insert_one_unless_present(session, ProviderEvent, PROVIDER_EVENT_KEY, values)


def kept_event(
    session: Session, shop_id: uuid.UUID, provider: str, event_id: str, *, locked: bool = False
) -> ProviderEvent | None:
    """The event ``shop_id`` kept from ``provider`` under ``event_id`` (locked for update
    when asked), as its job names it."""
    read = select(ProviderEvent).where(
        ProviderEvent.shop_id == shop_id,
        ProviderEvent.provider == provider,
        ProviderEvent.event_id == event_id,
    )
    return session.scalars(read.with_for_update() if locked else read).one_or_none()


class TargetLock(Base):
    """One row per provider object our actions touch; locked while an action is checked.

    On PostgreSQL ``SELECT ... FOR UPDATE`` on this row serialises every check of
    the same payment (or customer, or subscription) across workers and web. Refunds
    lock their money instead (``provider`` "money", ``target`` the action's
    ``money_ref``), so refunds of one payment through Stripe and through Shopify queue
    behind each other.
    """

    __tablename__ = "target_locks"

    shop_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("shops.id"), primary_key=True)
    provider: Mapped[str] = mapped_column(String(32), primary_key=True)
    target: Mapped[str] = mapped_column(String(255), primary_key=True)


class ShopBrakes(Base):
    """A shop's automatic brakes (:mod:`app.execution.brakes`): ceilings on what is sent per
    hour and per day, the breaker on what comes back, and whether they hold now. One row
    per shop, made with the defaults the first time a send of the shop reads it."""

    __tablename__ = "shop_brakes"

    shop_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("shops.id"), primary_key=True)
    # Currency -> most minor units sent in the last hour (day); a currency absent has none.
    money_per_hour: Mapped[dict[str, int]] = mapped_column(JSON, default=dict)
    money_per_day: Mapped[dict[str, int]] = mapped_column(JSON, default=dict)
    # Most actions sent in the last hour (day), in any currency; None: no ceiling.
    actions_per_hour: Mapped[int | None] = mapped_column(Integer)
    actions_per_day: Mapped[int | None] = mapped_column(Integer)
    # The breaker: this many failed or unclear sends in a row, or at least
    # ``error_percent`` of the last ``error_window`` sends; None turns a rule off.
    failures_in_a_row: Mapped[int | None] = mapped_column(Integer)
    error_percent: Mapped[int | None] = mapped_column(Integer)
    error_window: Mapped[int] = mapped_column(Integer)
    # What the breaker has counted since the brake was last resumed: the current run of
    # failed or unclear sends, and the last sends' outcomes, oldest first ("." answered,
    # "x" failed or unclear), at most ``error_window`` of them.
    bad_in_a_row: Mapped[int] = mapped_column(Integer, default=0, server_default="0")
    recent_sends: Mapped[str] = mapped_column(String(100), default="", server_default="")
    # Set while the brake holds: when, by which rule, why (app.words.Sentence.to_dict),
    # and the action whose send or answer tripped it.
    tripped_at: Mapped[datetime | None] = mapped_column(UTCDateTime())
    tripped_rule: Mapped[str | None] = mapped_column(String(32))
    tripped_reason: Mapped[dict[str, Any] | None] = mapped_column(JSON)
    tripped_action_id: Mapped[uuid.UUID | None] = mapped_column(Uuid)
    resumed_at: Mapped[datetime | None] = mapped_column(UTCDateTime())
    resumed_by: Mapped[str | None] = mapped_column(String(255))
    changed_at: Mapped[datetime | None] = mapped_column(UTCDateTime())
    changed_by: Mapped[str | None] = mapped_column(String(255))
