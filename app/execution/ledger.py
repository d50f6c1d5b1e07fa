"""What our own actions have taken and will take: the actions table's reads for the checks.

Every check of a money action counts our own actions beside the provider's facts
(:func:`app.execution.evaluation.evaluate_draft`). Two reads answer it, each one round trip:

* :func:`actions_around`: our actions on the same target or the same money, in flight
  or reported by the provider, as the guard's light records (only the columns the
  checks read, never whole rows with their JSON): what the duplicate, refund ledger and
  line-item checks compare one by one. A payment or a customer has few of them;
* :func:`cap_spending`: for each cap the policy sets, what our actions in its currency
  add up to (money moved over its period, and money on its way), summed by the
  database: a customer with hundreds of refunds, or a shop-wide cap, costs one row.

The abuse signals read a third: :func:`customer_record`, the case's customer as our records
know them (their orders, our refunds and credits to them, the customers sharing their
email) and how much of the shop's past the provider has reported.

The proposal's own action (``own_action_id``) is left out of both: an action is never
counted against itself.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import ColumnElement, Row, Uuid, and_, bindparam, case, func, or_, select, true
from sqlalchemy.orm import Session

from app.cases.models import Case, Customer, Order
from app.execution.models import Action, ActionStatus
from app.guard import (
    CUSTOMER_TARGET_KINDS,
    MONEY_KINDS,
    SIGNAL_KINDS,
    SIGNAL_WINDOW,
    CapRule,
    CapSpend,
    CapSpending,
    CustomerRecord,
    InFlightAction,
    InFlightStatus,
    LineItemRef,
    PastAction,
    PolicyRules,
)
from app.money import Money
from integrations.provider import ActionKind, ProviderStatus

# How our own not-yet-reported statuses read to the guard.
_IN_FLIGHT_STATUS = {
    ActionStatus.QUEUED: InFlightStatus.QUEUED,
    ActionStatus.SUBMITTING: InFlightStatus.SUBMITTED,
    ActionStatus.UNKNOWN: InFlightStatus.UNKNOWN,
    ActionStatus.NEEDS_DECISION: InFlightStatus.UNKNOWN,
}

# Caps and duplicate windows look back this far at most.
HISTORY_HORIZON = timedelta(days=366)


def lookback(policy: PolicyRules) -> timedelta:
    """How far back a check may look: the longest of the duplicate window and the caps'
    periods, at most :data:`HISTORY_HORIZON`."""
    windows = [policy.duplicate_window]
    windows += [cap.period for cap in (policy.per_customer_cap, policy.per_shop_cap) if cap]
    return min(max(windows), HISTORY_HORIZON)


def actions_around(
    session: Session,
    shop_id: uuid.UUID,
    *,
    target: str,
    money_ref: str | None,
    since: datetime,
    own_action_id: uuid.UUID | None,
) -> tuple[tuple[InFlightAction, ...], tuple[PastAction, ...]]:
    """Our actions on ``target`` or on ``money_ref``: those in flight (however old) and
    those the provider reported since ``since``."""
    params = {
        "shop_id": shop_id,
        "target": target,
        "money_ref": money_ref or None,  # an empty reference names no money
        "since": since,
        "own_action_id": own_action_id,
    }
    in_flight: list[InFlightAction] = []
    history: list[PastAction] = []
    for row in session.execute(_ACTIONS_AROUND, params):
        known = row.amount is not None and row.currency
        amount = Money(row.amount, row.currency) if known else None
        if row.status in ActionStatus.IN_FLIGHT:
            status = _IN_FLIGHT_STATUS[ActionStatus(row.status)]
            in_flight.append(InFlightAction(**_shared(row), amount=amount, status=status))
        elif amount is not None:
            history.append(
                PastAction(
                    **_shared(row),
                    amount=amount,
                    status=ProviderStatus(row.status),
                    created_at=row.created_at,
                )
            )
    return tuple(in_flight), tuple(history)


# Built once, at import: every check of a proposal and every execution runs it, and
# building it took as long as the database takes to answer it. Without a money reference
# its comparison is with NULL, which matches nothing; without an own action, IS DISTINCT
# FROM NULL leaves nothing out. The shop's parameter is typed by hand (see
# ``executor._LOCKED_ACTION``).
# What the checks read of our actions (:func:`_shared`), here and in the what-if's replay.
ACTION_FACTS = (
    Action.id,
    Action.kind,
    Action.target,
    Action.customer_ref,
    Action.amount,
    Action.currency,
    Action.line_items,
    Action.status,
    Action.created_at,
    Action.provider,
    Action.money_ref,
)
_ACTIONS_AROUND = select(*ACTION_FACTS).where(
    Action.shop_id == bindparam("shop_id", type_=Uuid),
    or_(Action.target == bindparam("target"), Action.money_ref == bindparam("money_ref")),
    or_(
        Action.status.in_(ActionStatus.IN_FLIGHT),
        and_(
            Action.status.in_(ActionStatus.PROVIDER_OPEN),
            Action.created_at >= bindparam("since"),
        ),
    ),
    Action.id.is_distinct_from(bindparam("own_action_id", type_=Uuid)),
)


def _shared(row: Row[Any]) -> dict[str, Any]:
    """What an action in flight and one the provider reported both tell the guard."""
    return {
        "action_id": str(row.id),
        "kind": ActionKind(row.kind),
        "target": row.target,
        "customer_ref": row.customer_ref,
        "line_items": line_item_refs(row.line_items),
        "provider": row.provider,
        "money_ref": row.money_ref,
    }


def cap_spending(
    session: Session,
    shop_id: uuid.UUID,
    *,
    policy: PolicyRules,
    customer: str | None,
    own_action_id: uuid.UUID | None,
    now: datetime,
) -> CapSpending:
    """What counts against each cap the policy sets, in one query: the case's
    ``customer``'s money (their refunds, credits and discounts to them) for the
    per-customer cap, when there is a customer; the shop's for the per-shop cap."""
    caps: list[tuple[str, CapRule, ColumnElement[bool]]] = []
    if policy.per_customer_cap is not None and customer:
        caps.append(("customer", policy.per_customer_cap, _customer_of == customer))
    if policy.per_shop_cap is not None:
        caps.append(("shop", policy.per_shop_cap, true()))
    if not caps:
        return CapSpending()
    sums = []
    for _name, cap, whose in caps:
        moved, on_its_way = _counted_against(cap, whose, now)
        sums += [_sum_where(moved), _sum_where(on_its_way)]
    query = select(*sums).where(*_money_actions_around(shop_id, policy, now))
    if own_action_id is not None:
        query = query.where(Action.id != own_action_id)
    totals = session.execute(query).one()
    spent = {
        name: CapSpend(done=int(totals[2 * i]), in_flight=int(totals[2 * i + 1]))
        for i, (name, _cap, _whose) in enumerate(caps)
    }
    return CapSpending(customer=spent.get("customer"), shop=spent.get("shop"))


def customers_by_cap_spending(
    session: Session, shop_id: uuid.UUID, *, policy: PolicyRules, now: datetime, first: int
) -> list[tuple[str, int]]:
    """The ``first`` customers who spent most against the per-customer cap, each with what
    counts against it as the guard counts it (moved in the cap's window, and on its way),
    most first; nothing when the policy sets no per-customer cap."""
    cap = policy.per_customer_cap
    if cap is None:
        return []
    moved, on_its_way = _counted_against(cap, _customer_of.is_not(None), now)
    spent = _sum_where(moved) + _sum_where(on_its_way)
    query = (
        select(_customer_of, spent)
        .where(*_money_actions_around(shop_id, policy, now))
        .group_by(_customer_of)
        .having(spent > 0)
        .order_by(spent.desc(), _customer_of)
        .limit(first)
    )
    return [(str(customer), int(total)) for customer, total in session.execute(query)]


# The guard's customer_of: the customer an action names, else a credit's or a discount's
# target, which is the customer itself.
_customer_of = func.coalesce(
    Action.customer_ref,
    case((Action.kind.in_(sorted(CUSTOMER_TARGET_KINDS)), Action.target)),
)


def _money_actions_around(
    shop_id: uuid.UUID, policy: PolicyRules, now: datetime
) -> tuple[ColumnElement[bool], ...]:
    """The shop's money actions any cap may count: on their way, or reported within the
    longest window the policy looks back."""
    return (
        Action.shop_id == shop_id,
        Action.kind.in_(sorted(MONEY_KINDS)),
        Action.amount.is_not(None),
        or_(
            Action.status.in_(ActionStatus.IN_FLIGHT),
            and_(
                Action.status.in_(ActionStatus.PROVIDER_OPEN),
                Action.created_at >= now - lookback(policy),
            ),
        ),
    )


def _counted_against(
    cap: CapRule, whose: ColumnElement[bool], now: datetime
) -> tuple[ColumnElement[bool], ColumnElement[bool]]:
    """Which of ``whose`` actions count against ``cap``: those the provider reported
    within its window, and those on their way (a cap is never exceeded by racing)."""
    counted = and_(whose, Action.currency == cap.limit.currency)
    moved = and_(
        counted,
        Action.status.in_(ActionStatus.PROVIDER_OPEN),
        Action.created_at >= now - min(cap.period, HISTORY_HORIZON),
    )
    return moved, and_(counted, Action.status.in_(ActionStatus.IN_FLIGHT))


def _sum_where(condition: ColumnElement[bool]) -> ColumnElement[int]:
    return func.coalesce(func.sum(case((condition, Action.amount), else_=0)), 0)


def customer_record(
    session: Session,
    shop_id: uuid.UUID,
    customer: Customer,
    *,
    own_action_id: uuid.UUID | None,
    now: datetime,
) -> CustomerRecord:
    """``customer`` as our records know them, for the abuse signals, over the signals'
    window: the shop's actions the provider reported, the customer's orders (all of them),
    our refunds and credits to them that moved money or are on their way (the proposal's
    own action left out), and the other customers refunded under their email."""
    since = now - SIGNAL_WINDOW
    reported = select(func.count(Action.id)).where(
        Action.shop_id == shop_id,
        Action.status.in_(ActionStatus.PROVIDER_REPORTED),
        Action.created_at >= since,
    )
    orders = session.execute(
        select(
            Order.currency, func.count(Order.id), func.sum(Order.total), func.min(Order.created_at)
        )
        .where(Order.shop_id == shop_id, Order.customer_id == customer.id)
        .group_by(Order.currency)
    ).all()
    claimed = (
        select(Action.currency, func.count(Action.id), func.sum(Action.amount))
        .join(Case, Case.id == Action.case_id)
        .where(*_claims_since(shop_id, since), Case.customer_id == customer.id)
        .group_by(Action.currency)
    )
    if own_action_id is not None:
        claimed = claimed.where(Action.id != own_action_id)
    claims = session.execute(claimed).all()
    return CustomerRecord(
        shop_actions=session.execute(reported).scalar_one(),
        orders=sum(count for _currency, count, _total, _first in orders),
        first_order_at=min((first for *_, first in orders), default=None),
        spend={currency: int(total) for currency, _count, total, _first in orders},
        claims=sum(count for _currency, count, _total in claims),
        # Only actions that name their currency are counted (``_claims_since``).
        refunded={str(currency): int(total or 0) for currency, _count, total in claims},
        sharing_email=_sharing_email(session, shop_id, customer, since),
    )


def _claims_since(shop_id: uuid.UUID, since: datetime) -> tuple[ColumnElement[bool], ...]:
    """The shop's refunds and credits since ``since`` that moved money or are on their way:
    what a signal counts as a claim paid (one refused or failed gave nothing)."""
    return (
        Action.shop_id == shop_id,
        Action.kind.in_(sorted(SIGNAL_KINDS)),
        Action.amount.is_not(None),
        Action.currency.is_not(None),
        Action.status.in_((*ActionStatus.PROVIDER_OPEN, *ActionStatus.IN_FLIGHT)),
        Action.created_at >= since,
    )


def _sharing_email(
    session: Session, shop_id: uuid.UUID, customer: Customer, since: datetime
) -> tuple[str, ...]:
    """The other customers refunded or credited since ``since`` whose address reaches the
    same mailbox as ``customer``'s, by their ids. The database narrows the candidates (the
    same address, with or without a ``+tag``; for Gmail, the same first letter) and each is
    compared here, as SQL cannot drop Gmail's dots the same way everywhere."""
    mailbox = _mailbox(customer.email)
    if mailbox is None:
        return ()
    local, _, domain = mailbox.partition("@")
    address = func.lower(Customer.email)
    if domain == _GMAIL:
        first = _like_escaped(local[0])
        narrowed = or_(
            *(address.like(f"{first}%@{known}", escape="\\") for known in _GMAIL_DOMAINS)
        )
    else:
        tagged = f"{_like_escaped(local)}+%@{_like_escaped(domain)}"
        narrowed = or_(address == mailbox, address.like(tagged, escape="\\"))
    candidates = (
        select(Customer.id, Customer.email)
        .join(Case, Case.customer_id == Customer.id)
        .join(Action, Action.case_id == Case.id)
        .where(
            *_claims_since(shop_id, since),
            Customer.shop_id == shop_id,
            Customer.id != customer.id,
            narrowed,
        )
        .distinct()
    )
    return tuple(
        sorted(str(id) for id, email in session.execute(candidates) if _mailbox(email) == mailbox)
    )


_GMAIL = "gmail.com"
_GMAIL_DOMAINS = (_GMAIL, "googlemail.com")


def _mailbox(email: str | None) -> str | None:
    """The mailbox an address reaches: lower-case, without a ``+tag``, and for Gmail without
    dots in its name and on one domain (Gmail ignores the dots and answers on both)."""
    if not email or "@" not in email:
        return None
    local, _, domain = email.strip().lower().rpartition("@")
    local = local.split("+", 1)[0]
    if domain in _GMAIL_DOMAINS:
        local, domain = local.replace(".", ""), _GMAIL
    return f"{local}@{domain}" if local and domain else None


def _like_escaped(text: str) -> str:
    return text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")


def line_item_refs(items: Sequence[dict[str, object]]) -> tuple[LineItemRef, ...]:
    return tuple(
        LineItemRef(
            line_id=str(item["line_id"]),
            amount_minor=int(str(item["amount"])),
            quantity=None if item.get("quantity") is None else int(str(item["quantity"])),
        )
        for item in items
    )
