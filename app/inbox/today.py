"""What a shop's day looks like: the first page a merchant opens.

Read from the stored statuses alone, within one shop, in a handful of queries:

* whether a brake holds the shop's sending, why and since when, and the actions it holds
  with their money (:func:`app.execution.brakes.brake_state`);
* what needs someone now: proposals awaiting approval (with their money, oldest first),
  cases handed to a named person, actions whose outcome is still unclear, and refunds the
  provider failed or canceled in cases still open (their customer needs a person's word);
* money at risk: what unclear actions may have moved;
* the last :data:`WEEK`: cases resolved, escalations, and per day the cases resolved and the
  refunds the provider confirmed;
* the last :data:`MONTH`: the median time from a proposal to its approval, and from an
  approval to the provider's confirmation (when the action's row last moved, which for a
  confirmed action is when its success was recorded);
* the caps: the shop's money actions in its cap's window against the limit, and the
  :data:`NEAREST` customers who spent most against the per-customer cap, as the guard
  counts them (:mod:`app.execution.ledger`).
"""

from __future__ import annotations

import statistics
import uuid
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date, datetime, timedelta
from typing import Any

from sqlalchemy import ColumnElement, Select, func, select
from sqlalchemy.orm import InstrumentedAttribute, Session

from app.cases.models import Case, CaseStatus, Customer
from app.cases.proposals import Proposal, ProposalStatus
from app.execution.brakes import BrakeState, brake_state
from app.execution.ledger import cap_spending, customers_by_cap_spending
from app.execution.models import Action, ActionStatus
from app.guard import CapRule, PolicyRules
from app.money import Money
from integrations.provider import ActionKind

WEEK = timedelta(days=7)
MONTH = timedelta(days=30)
# Days the charts draw, today included.
CHART_DAYS = 14
# Items listed under each heading; the count says how many there are in all.
LISTED = 10
# Customers drawn against the per-customer cap.
NEAREST = 5


@dataclass(frozen=True)
class Waiting:
    """A case that needs someone, and why: what it waits for, and whose it is."""

    case: Case
    money: Money | None = None
    owner: str | None = None
    since: datetime | None = None


@dataclass(frozen=True)
class Day:
    day: date
    resolved: int
    refunded: dict[str, int]


@dataclass(frozen=True)
class CapUse:
    rule: CapRule
    done: int
    in_flight: int

    @property
    def used(self) -> Money:
        return Money(self.done + self.in_flight, self.rule.limit.currency)


@dataclass(frozen=True)
class CustomerCapUse:
    """The customers nearest the per-customer cap: each by name (or email, or the
    provider's reference when Caseward has neither), with what counts against it."""

    rule: CapRule
    customers: list[tuple[str, Money]]


@dataclass(frozen=True)
class Today:
    brake: BrakeState
    awaiting_approval: list[Waiting]
    awaiting_count: int
    awaiting_money: dict[str, int]
    needs_attention: list[Waiting]
    attention_count: int
    unclear: list[Waiting]
    unclear_count: int
    at_risk: dict[str, int]
    failed_refunds: list[Waiting]
    failed_count: int
    resolved_this_week: int
    escalations_this_week: int
    to_approval: timedelta | None
    to_confirmation: timedelta | None
    days: list[Day]
    shop_cap: CapUse | None
    customer_cap: CustomerCapUse | None

    @property
    def anything_waits(self) -> bool:
        return self.brake.tripped or bool(
            self.awaiting_count or self.attention_count or self.unclear_count or self.failed_count
        )


def today(session: Session, shop_id: uuid.UUID, policy: PolicyRules, now: datetime) -> Today:
    awaiting, awaiting_count, awaiting_money = _awaiting_approval(session, shop_id)
    unclear, unclear_count, at_risk = _actions_of(
        session, shop_id, Action.status.in_(ActionStatus.OUTCOME_UNKNOWN)
    )
    failed, failed_count, _ = _actions_of(
        session,
        shop_id,
        Action.status.in_(ActionStatus.PROVIDER_FAILED),
        Action.kind == ActionKind.REFUND,
        Case.status != CaseStatus.RESOLVED,
    )
    handed = (Case.shop_id == shop_id, Case.status == CaseStatus.NEEDS_ATTENTION)
    attention = session.scalars(select(Case).where(*handed).order_by(Case.updated_at).limit(LISTED))
    days = _days(session, shop_id, now)
    return Today(
        brake=brake_state(session, shop_id),
        awaiting_approval=awaiting,
        awaiting_count=awaiting_count,
        awaiting_money=awaiting_money,
        needs_attention=[
            Waiting(case, owner=case.owner, since=case.updated_at) for case in attention
        ],
        attention_count=session.scalar(select(func.count()).where(*handed)) or 0,
        unclear=unclear,
        unclear_count=unclear_count,
        at_risk=at_risk,
        failed_refunds=failed,
        failed_count=failed_count,
        resolved_this_week=sum(day.resolved for day in days[-WEEK.days :]),
        escalations_this_week=session.scalar(
            select(func.count()).where(Action.shop_id == shop_id, Action.escalated_at >= now - WEEK)
        )
        or 0,
        to_approval=_median_to_approval(session, shop_id, now),
        to_confirmation=_median_to_confirmation(session, shop_id, now),
        days=days,
        shop_cap=_shop_cap(session, shop_id, policy, now),
        customer_cap=_customer_cap(session, shop_id, policy, now),
    )


def _awaiting_approval(
    session: Session, shop_id: uuid.UUID
) -> tuple[list[Waiting], int, dict[str, int]]:
    waiting = (
        Proposal.shop_id == shop_id,
        Proposal.status == ProposalStatus.AWAITING_APPROVAL,
    )
    return _waiting(session, Proposal, Proposal.created_at, waiting, through_case=False)


def _actions_of(
    session: Session, shop_id: uuid.UUID, *conditions: ColumnElement[bool]
) -> tuple[list[Waiting], int, dict[str, int]]:
    which = (Action.shop_id == shop_id, Case.shop_id == shop_id, *conditions)
    return _waiting(session, Action, Action.updated_at, which)


def _waiting(
    session: Session,
    rows: type[Proposal] | type[Action],
    since: InstrumentedAttribute[datetime],
    which: Sequence[ColumnElement[bool]],
    *,
    through_case: bool = True,
) -> tuple[list[Waiting], int, dict[str, int]]:
    """The ``rows`` matching ``which``: the :data:`LISTED` waiting longest (by ``since``)
    with their cases, how many there are, and their money per currency."""
    count, money = _count_and_money(session, rows, which, through_case=through_case)
    listed = [
        Waiting(case, money=_money(amount, currency), since=moment)
        for case, amount, currency, moment in session.execute(
            select(Case, rows.amount, rows.currency, since)
            .join(Case, Case.id == rows.case_id)
            .where(*which)
            .order_by(since)
            .limit(LISTED)
        )
    ]
    return listed, count, money


def _count_and_money(
    session: Session,
    rows: type[Proposal] | type[Action],
    which: Sequence[ColumnElement[bool]],
    *,
    through_case: bool = True,
) -> tuple[int, dict[str, int]]:
    """How many ``rows`` match ``which`` (read with their case when ``which`` asks of it),
    and their money per currency: one grouped count."""
    query = select(rows.currency, func.count(), func.coalesce(func.sum(rows.amount), 0))
    if through_case:
        query = query.join(Case, Case.id == rows.case_id)
    count, money = 0, {}
    for currency, matching, amount in session.execute(
        query.where(*which).group_by(rows.currency).order_by(rows.currency)
    ):
        count += matching
        if currency and amount:
            money[currency] = int(amount)
    return count, money


def _days(session: Session, shop_id: uuid.UUID, now: datetime) -> list[Day]:
    first = now.date() - timedelta(days=CHART_DAYS - 1)
    start = datetime(first.year, first.month, first.day, tzinfo=now.tzinfo)
    resolved_on = _utc_day(session, Case.updated_at)
    resolved = {
        _as_date(day): count
        for day, count in session.execute(
            select(resolved_on, func.count())
            .where(
                Case.shop_id == shop_id,
                Case.status == CaseStatus.RESOLVED,
                Case.updated_at >= start,
            )
            .group_by(resolved_on)
        )
    }
    refunded: dict[date, dict[str, int]] = defaultdict(dict)
    refunded_on = _utc_day(session, Action.updated_at)
    for day, currency, amount in session.execute(
        select(refunded_on, Action.currency, func.sum(Action.amount))
        .where(
            Action.shop_id == shop_id,
            Action.kind == ActionKind.REFUND,
            Action.status == ActionStatus.SUCCEEDED,
            Action.updated_at >= start,
            Action.amount.is_not(None),
            Action.currency.is_not(None),
        )
        .group_by(refunded_on, Action.currency)
    ):
        refunded[_as_date(day)][currency] = int(amount)
    return [
        Day(day, resolved.get(day, 0), refunded.get(day, {}))
        for day in (first + timedelta(days=n) for n in range(CHART_DAYS))
    ]


def _utc_day(session: Session, moment: InstrumentedAttribute[datetime]) -> ColumnElement[Any]:
    """The UTC day of a stored time, worked out by the database: PostgreSQL keeps the
    zone (its session's zone may be another), SQLite keeps UTC as written."""
    if session.get_bind().dialect.name == "postgresql":
        return func.date(func.timezone("UTC", moment))
    return func.date(moment)


def _as_date(day: date | str) -> date:
    # SQLite's date() answers with text.
    return day if isinstance(day, date) else date.fromisoformat(day)


def _median_to_approval(session: Session, shop_id: uuid.UUID, now: datetime) -> timedelta | None:
    return _median(
        session,
        Action.created_at,
        Proposal.created_at,
        select(Action.created_at, Proposal.created_at)
        .join(Proposal, Proposal.id == Action.proposal_id)
        .where(Action.shop_id == shop_id, Action.created_at >= now - MONTH),
    )


def _median_to_confirmation(
    session: Session, shop_id: uuid.UUID, now: datetime
) -> timedelta | None:
    return _median(
        session,
        Action.updated_at,
        Action.created_at,
        select(Action.updated_at, Action.created_at).where(
            Action.shop_id == shop_id,
            Action.status == ActionStatus.SUCCEEDED,
            Action.created_at >= now - MONTH,
        ),
    )


def _median(
    session: Session,
    end: InstrumentedAttribute[datetime],
    start: InstrumentedAttribute[datetime],
    pairs: Select[datetime, datetime],
) -> timedelta | None:
    """The median of ``end - start`` over ``pairs`` (rows of the two). PostgreSQL works it
    out itself (a busy shop's month is thousands of rows); SQLite, the demo's, hands the
    rows over."""
    if session.get_bind().dialect.name == "postgresql":
        seconds = func.extract("epoch", end - start)
        middle = session.scalar(
            pairs.with_only_columns(func.percentile_cont(0.5).within_group(seconds))
        )
        return None if middle is None else timedelta(seconds=float(middle))
    waits = [(later - earlier).total_seconds() for later, earlier in session.execute(pairs)]
    return timedelta(seconds=statistics.median(waits)) if waits else None


def _shop_cap(
    session: Session, shop_id: uuid.UUID, policy: PolicyRules, now: datetime
) -> CapUse | None:
    if policy.per_shop_cap is None:
        return None
    spent = cap_spending(
        session, shop_id, policy=policy, customer=None, own_action_id=None, now=now
    ).shop
    if spent is None:
        return None
    return CapUse(policy.per_shop_cap, spent.done, spent.in_flight)


def _customer_cap(
    session: Session, shop_id: uuid.UUID, policy: PolicyRules, now: datetime
) -> CustomerCapUse | None:
    rule = policy.per_customer_cap
    if rule is None:
        return None
    spent = customers_by_cap_spending(session, shop_id, policy=policy, now=now, first=NEAREST)
    refs = [ref for ref, _ in spent]
    names: dict[str, str] = {}
    for customer in session.scalars(
        select(Customer).where(
            Customer.shop_id == shop_id,
            (Customer.stripe_customer_id.in_(refs) | Customer.shopify_customer_id.in_(refs)),
        )
    ):
        shown = customer.name or customer.email
        for ref in (customer.stripe_customer_id, customer.shopify_customer_id):
            if ref and shown:
                names[ref] = shown
    return CustomerCapUse(
        rule,
        [(names.get(ref, ref), Money(used, rule.limit.currency)) for ref, used in spent],
    )


def _money(amount: int | None, currency: str | None) -> Money | None:
    return Money(amount, currency) if amount is not None and currency else None
