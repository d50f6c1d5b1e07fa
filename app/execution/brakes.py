"""Automatic brakes: a shop's ceilings on what is sent, and a breaker on what comes back.

The sequence, for the first send of an approved action (:mod:`app.execution.executor`).
A look-up of an unclear action, and its resend, are never held: they settle what may
already have moved.

1. Read with the action, before anything is asked of the provider, without a lock: the
   brake's state. Tripped, the action is held (:func:`holding`).
2. After the checks on fresh facts, right before the action is marked ``submitting``, in
   the same transaction: the shop's brakes row is locked (made with the defaults when the
   shop has none yet), so the first sends of one shop are decided one at a time, each
   counting the marks of those before it. Tripped meanwhile: held. Then the actions sent
   in the last hour and the last day (:data:`SENT`) are counted, with their money in the
   action's currency; if this one would pass a ceiling, the brake trips and the action
   is held (:func:`hold_before_send`).
3. Once the answer to a send is recorded, in its transaction, under the same lock
   (:func:`count_send`): the breaker counts it, a failure or an unclear outcome against,
   an answer for (:func:`send_failed`); past either of its rules the brake trips. A send
   that never reached the provider (a refused connection, a 429) counts neither way. An
   answer to a shop whose count holds nothing against it changes nothing: it takes no
   lock and writes nothing, so a healthy shop's answers are recorded side by side.

Tripping records when, by which rule and why (a sentence with the facts), audits it and
announces :data:`~app.execution.events.brake_tripped` (the owner is told), all in the
transaction that saw it. A held action stays ``queued``: nothing is sent, no attempt row is
made, its job ends without queueing itself again, and the sweep leaves a braked shop's
queued actions alone. A proposal approved meanwhile queues its action, which is held with
the others.

Only a person resumes (:func:`resume`), an owner or an approver: whoever may approve the
held actions may judge that the provider answers again, and a brake is Caseward's pause,
not a person's decision to stop everything (the kill switch, which only an owner
releases). Resuming clears what the breaker counted; every held action is queued again
after the commit (the sweep queues any whose enqueue was lost), and each is checked and
sent by the executor as always, with its own key.

A shop's brakes start with the breaker on: :data:`DEFAULT_FAILURES_IN_A_ROW` failed or
unclear sends in a row, or :data:`DEFAULT_ERROR_PERCENT` % of the last
:data:`DEFAULT_ERROR_WINDOW` sends. Ceilings start blank (none): what is too much depends
on the shop's size and currency, so its owner sets them.
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from datetime import datetime, timedelta
from enum import StrEnum
from typing import Any

from sqlalchemy import Uuid, and_, bindparam, case, false, func, select
from sqlalchemy.orm import Session

from app import audit
from app.actors import WORKER, Actor
from app.db import locked_row
from app.errors import Conflict, InvalidInput
from app.execution.events import announce, brake_tripped
from app.execution.models import Action, ActionStatus, ShopBrakes
from app.execution.status import reason_data
from app.money import Money
from app.shops.models import Shop, StaffRole
from app.shops.service import require_role
from app.validation import currency_code, integer
from app.words import Sentence, said, said_n

log = logging.getLogger(__name__)

HOUR = timedelta(hours=1)
DAY = timedelta(days=1)
DEFAULT_FAILURES_IN_A_ROW = 3
DEFAULT_ERROR_PERCENT = 50
DEFAULT_ERROR_WINDOW = 20
# The most sends the error rate looks back on (the stored outcomes' length).
MAX_ERROR_WINDOW = 100
# The largest ceiling a shop may set: an amount, or a number of actions.
MAX_CEILING = 2_000_000_000

# Sent: the provider took it, or may have. Queued again after a 429, refused, or stopped
# before the provider saw it are not.
SENT = (
    ActionStatus.SUBMITTING,
    ActionStatus.UNKNOWN,
    ActionStatus.NEEDS_DECISION,
    *ActionStatus.PROVIDER_REPORTED,
)


class BrakeRule(StrEnum):
    """What tripped a brake."""

    MONEY_PER_HOUR = "money_per_hour"
    MONEY_PER_DAY = "money_per_day"
    ACTIONS_PER_HOUR = "actions_per_hour"
    ACTIONS_PER_DAY = "actions_per_day"
    FAILURES_IN_A_ROW = "failures_in_a_row"
    ERROR_RATE = "error_rate"


@dataclass(frozen=True)
class BrakeSettings:
    """What a shop's owner sets: the ceilings (blank: none) and the breaker's rules."""

    money_per_hour: Mapping[str, int] = field(default_factory=dict)
    money_per_day: Mapping[str, int] = field(default_factory=dict)
    actions_per_hour: int | None = None
    actions_per_day: int | None = None
    failures_in_a_row: int | None = DEFAULT_FAILURES_IN_A_ROW
    error_percent: int | None = DEFAULT_ERROR_PERCENT
    error_window: int = DEFAULT_ERROR_WINDOW

    @classmethod
    def of(cls, brakes: ShopBrakes | None) -> BrakeSettings:
        """A shop's settings; the defaults for a shop that has no brakes row yet."""
        if brakes is None:
            return cls()
        return cls(
            money_per_hour=dict(brakes.money_per_hour),
            money_per_day=dict(brakes.money_per_day),
            actions_per_hour=brakes.actions_per_hour,
            actions_per_day=brakes.actions_per_day,
            failures_in_a_row=brakes.failures_in_a_row,
            error_percent=brakes.error_percent,
            error_window=brakes.error_window,
        )

    @classmethod
    def from_dict(cls, body: Mapping[str, Any]) -> BrakeSettings:
        """Settings as the API takes them; the first value that cannot be one is refused
        by its field's name."""
        return cls(
            money_per_hour=_money_ceilings(body.get("money_per_hour"), "money_per_hour"),
            money_per_day=_money_ceilings(body.get("money_per_day"), "money_per_day"),
            actions_per_hour=_blank_or(body.get("actions_per_hour"), "actions_per_hour"),
            actions_per_day=_blank_or(body.get("actions_per_day"), "actions_per_day"),
            failures_in_a_row=_blank_or(
                body.get("failures_in_a_row"), "failures_in_a_row", maximum=MAX_ERROR_WINDOW
            ),
            error_percent=_blank_or(body.get("error_percent"), "error_percent", maximum=100),
            error_window=integer(
                body.get("error_window"), "error_window", minimum=2, maximum=MAX_ERROR_WINDOW
            ),
        )

    def to_dict(self) -> dict[str, Any]:
        return {
            "money_per_hour": dict(self.money_per_hour),
            "money_per_day": dict(self.money_per_day),
            "actions_per_hour": self.actions_per_hour,
            "actions_per_day": self.actions_per_day,
            "failures_in_a_row": self.failures_in_a_row,
            "error_percent": self.error_percent,
            "error_window": self.error_window,
        }


# What the API takes, each field required (a blank ceiling is null, or an empty object).
SETTING_NAMES = tuple(setting.name for setting in fields(BrakeSettings))


@dataclass(frozen=True)
class Held:
    """The actions a tripped brake holds: how many, and their money per currency."""

    count: int = 0
    money: Mapping[str, int] = field(default_factory=dict)


@dataclass(frozen=True)
class BrakeState:
    """A shop's brakes as people see them: the settings, and whether and why they hold."""

    settings: BrakeSettings
    tripped_at: datetime | None
    rule: str | None
    reason: Sentence | None
    action_id: uuid.UUID | None
    held: Held

    @property
    def tripped(self) -> bool:
        return self.tripped_at is not None


def brake_state(session: Session, shop_id: uuid.UUID) -> BrakeState:
    """The shop's brakes as they stand (read without a lock)."""
    brakes = session.get(ShopBrakes, shop_id)
    settings = BrakeSettings.of(brakes)
    if brakes is None or brakes.tripped_at is None:
        return BrakeState(settings, None, None, None, None, Held())
    reason = Sentence.from_dict(brakes.tripped_reason) if brakes.tripped_reason else None
    return BrakeState(
        settings,
        tripped_at=brakes.tripped_at,
        rule=brakes.tripped_rule,
        reason=reason,
        action_id=brakes.tripped_action_id,
        held=held(session, shop_id),
    )


def held(session: Session, shop_id: uuid.UUID) -> Held:
    """The shop's queued actions, which a tripped brake holds: one grouped count."""
    count, money = 0, {}
    for currency, queued, amount in session.execute(
        select(Action.currency, func.count(), func.coalesce(func.sum(Action.amount), 0))
        .where(Action.shop_id == shop_id, Action.status == ActionStatus.QUEUED)
        .group_by(Action.currency)
        .order_by(Action.currency)
    ):
        count += queued
        if currency and amount:
            money[currency] = int(amount)
    return Held(count, money)


# ------------------------------------------------------------------ the executor's side


def holding(brakes: ShopBrakes | None) -> bool:
    """Step 1: whether the brake, as read with the action, holds its first send."""
    return brakes is not None and brakes.tripped_at is not None


def hold_before_send(
    session: Session, action: Action, *, approval_ttl: timedelta, now: datetime
) -> bool:
    """Step 2: True when the action must wait (the brake tripped meanwhile, or this send
    trips it); False when it may be marked and sent. Holds the brakes row's lock until
    the transaction ends."""
    brakes = locked_brakes(session, action.shop_id)
    if brakes.tripped_at is not None:
        return True
    passed = _ceiling_passed(session, brakes, action, approval_ttl, now)
    if passed is None:
        return False
    _trip(session, brakes, action, *passed, now)
    return True


def send_failed(outcome: str, provider_status: str | None) -> bool | None:
    """How the breaker counts a send's recorded outcome: True for a failure or an unclear
    outcome, False for an answer, None for a send that never reached the provider."""
    if outcome == "answered":
        return provider_status in ActionStatus.PROVIDER_FAILED
    if outcome in ("rejected", "unknown"):
        return True
    return None


def count_send(
    session: Session, action: Action, *, failed: bool, seen: ShopBrakes | None, now: datetime
) -> None:
    """Step 3: the breaker counts the send just recorded for ``action``, and trips the brake
    when a rule says so. ``seen``: the brakes as read, unlocked, with the action."""
    if not failed and seen is not None and _counts_nothing_against(seen):
        return
    brakes = locked_brakes(session, action.shop_id)
    brakes.bad_in_a_row = brakes.bad_in_a_row + 1 if failed else 0
    outcome = "x" if failed else "."
    brakes.recent_sends = (brakes.recent_sends + outcome)[-brakes.error_window :]
    if not failed or brakes.tripped_at is not None:
        return
    tripped = _breaker_says(brakes)
    if tripped is not None:
        _trip(session, brakes, action, *tripped, now)


# ------------------------------------------------------------------ a person's side


def resume(session: Session, *, shop: Shop, actor: Actor, now: datetime) -> list[uuid.UUID]:
    """A person lets a tripped brake go; returns the held actions, for the caller to queue
    after the commit."""
    # An owner or an approver (see the module's docstring); never a viewer or a proposer.
    require_role(
        session, shop.id, actor, StaffRole.CAN_APPROVE, said("resume sending after a brake")
    )
    brakes = locked_brakes(session, shop.id)
    if brakes.tripped_at is None:
        raise Conflict(
            said("no brake holds this shop's actions: there is nothing to resume"),
            code="brake_not_tripped",
        )
    queued = list(
        session.scalars(
            select(Action.id)
            .where(Action.shop_id == shop.id, Action.status == ActionStatus.QUEUED)
            .order_by(Action.created_at)
        )
    )
    audit.record(
        session,
        shop_id=shop.id,
        kind="shop.brake_resumed",
        actor=actor,
        data={
            "rule": brakes.tripped_rule,
            "tripped_at": brakes.tripped_at.isoformat(),
            "held": len(queued),
        },
        now=now,
    )
    brakes.tripped_at = brakes.tripped_rule = None
    brakes.tripped_reason = brakes.tripped_action_id = None
    brakes.bad_in_a_row, brakes.recent_sends = 0, ""
    brakes.resumed_at, brakes.resumed_by = now, actor.ref
    return queued


def save_brakes(
    session: Session, *, shop: Shop, actor: Actor, settings: BrakeSettings, now: datetime
) -> BrakeSettings:
    """The owner sets the shop's ceilings and the breaker's rules."""
    require_role(session, shop.id, actor, StaffRole.OWNER_ONLY, said("change the shop's brakes"))
    brakes = locked_brakes(session, shop.id)
    brakes.money_per_hour = dict(settings.money_per_hour)
    brakes.money_per_day = dict(settings.money_per_day)
    brakes.actions_per_hour, brakes.actions_per_day = (
        settings.actions_per_hour,
        settings.actions_per_day,
    )
    brakes.failures_in_a_row = settings.failures_in_a_row
    brakes.error_percent, brakes.error_window = settings.error_percent, settings.error_window
    brakes.recent_sends = brakes.recent_sends[-settings.error_window :]
    brakes.changed_at, brakes.changed_by = now, actor.ref
    audit.record(
        session,
        shop_id=shop.id,
        kind="shop.brakes_changed",
        actor=actor,
        data=settings.to_dict(),
        now=now,
    )
    return settings


# ------------------------------------------------------------------ internals


def locked_brakes(session: Session, shop_id: uuid.UUID) -> ShopBrakes:
    """The shop's brakes row, locked until the transaction ends; made with the defaults
    when the shop has none yet."""
    brakes = session.scalars(_LOCKED_BRAKES, {"shop_id": shop_id}).one_or_none()
    if brakes is not None:
        return brakes
    defaults = BrakeSettings()
    locked_row(
        session,
        ShopBrakes,
        shop_id=shop_id,
        money_per_hour={},
        money_per_day={},
        failures_in_a_row=defaults.failures_in_a_row,
        error_percent=defaults.error_percent,
        error_window=defaults.error_window,
    )
    return session.scalars(_LOCKED_BRAKES, {"shop_id": shop_id}).one()


# Built once, at import, and read afresh into the session's object (one the action's own
# read brought may be older than the lock). The parameter is typed by hand (see
# ``executor._LOCKED_ACTION``).
_LOCKED_BRAKES = (
    select(ShopBrakes)
    .where(ShopBrakes.shop_id == bindparam("shop_id", type_=Uuid))
    .with_for_update()
    .execution_options(populate_existing=True)
)


def _ceiling_passed(
    session: Session,
    brakes: ShopBrakes,
    action: Action,
    approval_ttl: timedelta,
    now: datetime,
) -> tuple[BrakeRule, Sentence] | None:
    """The first ceiling this action's send would pass, with why; None when it passes none."""
    amount = action.amount
    currency = action.currency if amount is not None else None
    money_hour = brakes.money_per_hour.get(currency) if currency else None
    money_day = brakes.money_per_day.get(currency) if currency else None
    ceilings = (brakes.actions_per_hour, brakes.actions_per_day, money_hour, money_day)
    if all(ceiling is None for ceiling in ceilings):
        return None
    sent = _sent_since(session, action.shop_id, currency, approval_ttl, now)
    for rule, ceiling, count, period in (
        (BrakeRule.ACTIONS_PER_HOUR, brakes.actions_per_hour, sent.hour, said("an hour")),
        (BrakeRule.ACTIONS_PER_DAY, brakes.actions_per_day, sent.day, said("a day")),
    ):
        if ceiling is not None and count + 1 > ceiling:
            return rule, said(
                "sending this action would make %(count)s actions sent in %(period)s, above "
                "the shop's ceiling of %(ceiling)s",
                count=count + 1,
                period=period,
                ceiling=ceiling,
            )
    if amount is None or currency is None:
        return None
    for rule, limit, moved, period in (
        (BrakeRule.MONEY_PER_HOUR, money_hour, sent.money_hour, said("an hour")),
        (BrakeRule.MONEY_PER_DAY, money_day, sent.money_day, said("a day")),
    ):
        if limit is not None and moved + amount > limit:
            return rule, said(
                "sending %(amount)s would make %(total)s sent in %(period)s, above the "
                "shop's ceiling of %(ceiling)s",
                amount=Money(amount, currency),
                total=Money(moved + amount, currency),
                period=period,
                ceiling=Money(limit, currency),
            )
    return None


@dataclass(frozen=True)
class _Sent:
    """The shop's actions sent in the last hour and day, and their money in one currency."""

    hour: int
    day: int
    money_hour: int
    money_day: int


def _sent_since(
    session: Session,
    shop_id: uuid.UUID,
    currency: str | None,
    approval_ttl: timedelta,
    now: datetime,
) -> _Sent:
    """One round trip. An action is first sent before its approval expires, so one sent in
    the last day was made at most ``approval_ttl`` before that: the bound on when it was
    made lets the shop's index by creation time find them, not the shop's whole history."""
    day_ago, hour_ago = now - DAY, now - HOUR
    in_hour = Action.first_sent_at >= hour_ago
    mine = Action.currency == currency if currency else false()
    row = session.execute(
        select(
            func.count(),
            func.coalesce(func.sum(case((in_hour, 1), else_=0)), 0),
            func.coalesce(func.sum(case((mine, Action.amount), else_=0)), 0),
            func.coalesce(func.sum(case((and_(mine, in_hour), Action.amount), else_=0)), 0),
        ).where(
            Action.shop_id == shop_id,
            Action.created_at >= day_ago - approval_ttl,
            Action.first_sent_at >= day_ago,
            Action.status.in_(SENT),
        )
    ).one()
    day, hour, money_day, money_hour = (int(value) for value in row)
    return _Sent(hour=hour, day=day, money_hour=money_hour, money_day=money_day)


def _counts_nothing_against(brakes: ShopBrakes) -> bool:
    """Whether the breaker's count is all answers, a full window of them: one more answer
    leaves it as it is, so it is neither locked nor written. Read unlocked, it may miss a
    failure another send is recording: that one then counts after this answer, as if this
    answer had come first, which is what counting it would have done."""
    return brakes.bad_in_a_row == 0 and brakes.recent_sends == "." * brakes.error_window


def _breaker_says(brakes: ShopBrakes) -> tuple[BrakeRule, Sentence] | None:
    """The breaker's rule the counted sends now break, with why; None when neither."""
    if brakes.failures_in_a_row is not None and brakes.bad_in_a_row >= brakes.failures_in_a_row:
        return BrakeRule.FAILURES_IN_A_ROW, said_n(
            "%(count)s send in a row failed or came back unclear",
            "%(count)s sends in a row failed or came back unclear",
            brakes.bad_in_a_row,
        )
    window = brakes.recent_sends[-brakes.error_window :]
    failed = window.count("x")
    if (
        brakes.error_percent is not None
        and len(window) >= brakes.error_window
        and failed * 100 >= brakes.error_percent * len(window)
    ):
        return BrakeRule.ERROR_RATE, said(
            "%(failed)s of the last %(sends)s sends failed or came back unclear, at or above "
            "the shop's limit of %(percent)s%%",
            failed=failed,
            sends=len(window),
            percent=brakes.error_percent,
        )
    return None


def _trip(
    session: Session,
    brakes: ShopBrakes,
    action: Action,
    rule: BrakeRule,
    reason: Sentence,
    now: datetime,
) -> None:
    """Sending stops for the shop until a person resumes it: recorded, audited and
    announced in the caller's transaction."""
    brakes.tripped_at, brakes.tripped_rule = now, rule.value
    brakes.tripped_reason, brakes.tripped_action_id = reason.to_dict(), action.id
    audit.record(
        session,
        shop_id=action.shop_id,
        kind="shop.brake_tripped",
        actor=WORKER,
        case_id=action.case_id,
        action_id=action.id,
        data={"rule": rule.value, **reason_data(reason)},
        now=now,
    )
    log.warning("shop %s: the brake tripped (%s): %s", action.shop_id, rule.value, reason)
    announce(brake_tripped, action, session=session, reason=reason, now=now)


def _blank_or(value: object, name: str, *, maximum: int = MAX_CEILING) -> int | None:
    """A whole number from 1, or None (blank: the rule is off)."""
    return None if value is None else integer(value, name, minimum=1, maximum=maximum)


def _money_ceilings(value: object, name: str) -> dict[str, int]:
    """Currency -> minor units, each from 1; an empty object sets none."""
    if not isinstance(value, Mapping):
        raise InvalidInput(said("%(field)s maps a currency to minor units", field=name), field=name)
    ceilings: dict[str, int] = {}
    for code, amount in value.items():
        currency = currency_code(str(code), f"{name}.{code}")
        ceilings[currency] = integer(amount, f"{name}.{code}", minimum=1, maximum=MAX_CEILING)
    return ceilings
