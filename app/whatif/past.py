"""The shop's past as the what-if replays it: read in a few queries, then held in memory.

Five reads, each one round trip (plus the history check's current scans): the shop's
proposals of the window with their case's identity level; our actions from the longest
look-back before it (and those still on their way, however old); the records of the
history check's current scans over the same span; which of the actions those records name
are the shop's; the orders their payments paid. Everything after is done in memory, one
past action at a time.

Each past action becomes the inputs of one check (:class:`~app.guard.GuardInputs`):

* a proposal that kept the inputs its verdict was reached on: those, as they were;
* a proposal checked before inputs were kept, and every record the history check read that
  no action of ours stands behind: inputs *reconstructed* from what Caseward holds, at the
  moment it was made. The proposal or record itself; the payment as the history check read
  it (what it captured, whether disputed, whose it is, its refunds before this one), else
  as our order says, else as much as was refunded; a customer's credits and discounts the
  history check read before it; our order behind a refund, its lines less what our earlier
  refunds gave back; our actions before it on the same target or money. A record has no
  case, so no identity level: it is replayed as a customer identified at the highest level
  (only the policy's other rules decide), and what the record does not say of a discount's
  or a subscription's terms is taken as the plainest (once; at the end of the period; a
  change of its items). A percent discount the provider recorded states no amount, which
  the checks refuse under any policy. No record of the customer is rebuilt for the abuse
  signals: they run on the proposals that kept their inputs only.
"""

from __future__ import annotations

import uuid
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum
from typing import Any

from sqlalchemy import Row, or_, select
from sqlalchemy.orm import Session

from app.cases.models import Case, Order, case_reference
from app.cases.proposals import Proposal
from app.execution.evaluation import stored_order_facts
from app.execution.ledger import ACTION_FACTS, line_item_refs
from app.execution.models import Action, ActionStatus
from app.guard import (
    CUSTOMER_TARGET_KINDS,
    MONEY_KINDS,
    GuardInputs,
    IdentityLevel,
    InFlightAction,
    InFlightStatus,
    LineItemRef,
    PastAction,
    ProposedAction,
    moved_money,
)
from app.history_audit.models import HistoryRecord
from app.history_audit.report import current_scans
from app.money import Money
from app.whatif.caps import MoneyMoves, Move
from integrations.provider import (
    ACTION_ID_METADATA_KEY,
    ActionKind,
    CustomerFacts,
    OrderFacts,
    PaymentFacts,
    ProviderCredit,
    ProviderDiscount,
    ProviderRefund,
    ProviderStatus,
    SubscriptionFacts,
    TargetFacts,
)

# A record made outside Caseward has no case to tell how well its customer was known.
OUTSIDE_IDENTITY = IdentityLevel.STRONG
# Our own not-yet-reported statuses as the checks read them (as the ledger reads them).
_IN_FLIGHT_STATUS = {
    ActionStatus.QUEUED: InFlightStatus.QUEUED,
    ActionStatus.SUBMITTING: InFlightStatus.SUBMITTED,
    ActionStatus.UNKNOWN: InFlightStatus.UNKNOWN,
    ActionStatus.NEEDS_DECISION: InFlightStatus.UNKNOWN,
}
_DISCOUNT_DURATIONS = ("once", "forever")


class Source(StrEnum):
    PROPOSAL = "proposal"  # a proposal made in Caseward
    HISTORY = "history"  # a record the history check read, made outside Caseward


@dataclass(frozen=True)
class PastItem:
    """One past action and what its check was (or would have been) asked."""

    inputs: GuardInputs
    source: Source
    reconstructed: bool
    # The case's number (C-...), or the provider's own id of a record without a case.
    reference: str
    case_id: uuid.UUID | None


@dataclass(frozen=True)
class Past:
    items: tuple[PastItem, ...]
    moves: MoneyMoves


def read_past(
    session: Session, shop_id: uuid.UUID, *, since: datetime, now: datetime, reach: datetime
) -> Past:
    """Every past action of the shop from ``since`` to ``now``, with our actions and the
    history check's records back to ``reach`` (the furthest any check looks back)."""
    ours = _OurActions(session.execute(_our_actions(shop_id, reach, now)))
    proposals = session.execute(_proposals(shop_id, since, now)).all()
    records = _records(session, shop_id, reach, now)
    outside = _made_outside(session, shop_id, records)
    reads = _ProviderReads(records)
    payments = {
        row.target for row in proposals if row.kind == ActionKind.REFUND and not row.guard_inputs
    }
    payments |= {row.payment for row in outside if row.payment}
    rebuild = _Rebuild(ours, reads, _orders(session, shop_id, payments))
    items = [_proposal_item(row, rebuild) for row in proposals]
    items += [
        PastItem(rebuild.record(row), Source.HISTORY, True, row.record_id, None)
        for row in outside
        if row.created >= since
    ]
    return Past(tuple(items), MoneyMoves([*ours.moves(), *_record_moves(outside)]))


# ---------------------------------------------------------------- the reads


def _our_actions(shop_id: uuid.UUID, reach: datetime, now: datetime) -> Any:
    """Our actions that count for the checks: on their way (however old), or reported by
    the provider and made since ``reach``."""
    return select(*ACTION_FACTS).where(
        Action.shop_id == shop_id,
        Action.created_at < now,
        or_(
            Action.status.in_(ActionStatus.IN_FLIGHT),
            Action.status.in_(ActionStatus.PROVIDER_OPEN) & (Action.created_at >= reach),
        ),
    )


def _proposals(shop_id: uuid.UUID, since: datetime, now: datetime) -> Any:
    return (
        select(
            Proposal.case_id,
            Proposal.kind,
            Proposal.provider,
            Proposal.target,
            Proposal.customer_ref,
            Proposal.amount,
            Proposal.currency,
            Proposal.line_items,
            Proposal.params,
            Proposal.money_ref,
            Proposal.proposed_by,
            Proposal.created_at,
            Proposal.guard_inputs,
            Case.identity_level,
        )
        .join(Case, Case.id == Proposal.case_id)
        .where(Proposal.shop_id == shop_id, Proposal.created_at >= since, Proposal.created_at < now)
    )


def _records(
    session: Session, shop_id: uuid.UUID, reach: datetime, now: datetime
) -> Sequence[Row[Any]]:
    """The records of the history check's current report (each provider's newest done
    scan), oldest first."""
    scans = [scan.id for scan in current_scans(session, shop_id)]
    if not scans:
        return []
    r = HistoryRecord
    statement: Any = (
        select(
            r.provider,
            r.kind,
            r.record_id,
            r.created,
            r.customer,
            r.amount,
            r.currency,
            r.percent_off,
            r.payment,
            r.payment_amount,
            r.payment_disputed,
            r.status,
            r.caseward_action_id,
            r.detail,
        )
        .where(r.scan_id.in_(scans), r.shop_id == shop_id, r.created >= reach, r.created < now)
        .order_by(r.created, r.record_id)
    )
    rows: Sequence[Row[Any]] = session.execute(statement).all()
    return rows


def _made_outside(
    session: Session, shop_id: uuid.UUID, records: Sequence[Row[Any]]
) -> list[Row[Any]]:
    """The records no action of the shop stands behind (the history check's "no case or
    approval in Caseward"): ours are replayed as their proposals."""
    named = {row.record_id: _action_id(row.caseward_action_id) for row in records}
    wanted = {action_id for action_id in named.values() if action_id is not None}
    ours = (
        set(
            session.scalars(
                select(Action.id).where(Action.shop_id == shop_id, Action.id.in_(wanted))
            )
        )
        if wanted
        else set()
    )
    return [row for row in records if named[row.record_id] not in ours]


def _action_id(value: str | None) -> uuid.UUID | None:
    try:
        return uuid.UUID(value) if value else None
    except ValueError:
        return None  # not an id Caseward wrote, so no action of ours


def _orders(session: Session, shop_id: uuid.UUID, payments: set[str]) -> dict[str, Row[Any]]:
    """Our copy of the order each payment paid (a Stripe payment, or the Shopify order
    itself), the oldest where the records name two."""
    if not payments:
        return {}
    rows = session.execute(
        select(
            Order.id,
            Order.name,
            Order.currency,
            Order.total,
            Order.payment_id,
            Order.shopify_order_id,
            Order.lines,
            Order.fulfilled_at,
            Order.delivered_at,
        )
        .where(
            Order.shop_id == shop_id,
            or_(Order.payment_id.in_(payments), Order.shopify_order_id.in_(payments)),
        )
        .order_by(Order.created_at, Order.id)
    )
    found: dict[str, Row[Any]] = {}
    for row in rows:
        for paid_by in (row.payment_id, row.shopify_order_id):
            if paid_by in payments:
                found.setdefault(paid_by, row)
    return found


# ---------------------------------------------------------------- held in memory


@dataclass(frozen=True)
class _Ours:
    """One of our actions as the checks see it, and when it was made."""

    action: InFlightAction | PastAction
    created_at: datetime
    customer: str | None
    line_items: tuple[LineItemRef, ...]


class _OurActions:
    """Our actions by target and by money, oldest first."""

    def __init__(self, rows: Iterable[Row[Any]]) -> None:
        self.all: list[_Ours] = []
        self.by_target: dict[str, list[_Ours]] = defaultdict(list)
        self.by_money: dict[str, list[_Ours]] = defaultdict(list)
        for row in sorted(rows, key=lambda row: row.created_at):
            ours = _ours(row)
            self.all.append(ours)
            self.by_target[row.target].append(ours)
            if row.money_ref:
                self.by_money[row.money_ref].append(ours)

    def around(
        self, target: str, money_ref: str | None, before: datetime
    ) -> tuple[tuple[InFlightAction, ...], tuple[PastAction, ...]]:
        """Ours on ``target`` or ``money_ref`` made before ``before``, as in flight and as
        reported by the provider."""
        seen: dict[str, _Ours] = {}
        for ours in [*self.by_target.get(target, ()), *self.by_money.get(money_ref or "", ())]:
            if ours.created_at < before:
                seen[ours.action.action_id] = ours
        in_flight = tuple(o.action for o in seen.values() if isinstance(o.action, InFlightAction))
        history = tuple(o.action for o in seen.values() if isinstance(o.action, PastAction))
        return in_flight, history

    def moves(self) -> list[Move]:
        return [
            Move(
                ours.created_at,
                ours.action.amount.amount,
                ours.action.amount.currency,
                ours.customer,
                on_its_way=isinstance(ours.action, InFlightAction),
            )
            for ours in self.all
            if ours.action.kind in MONEY_KINDS and ours.action.amount is not None
        ]


def _ours(row: Row[Any]) -> _Ours:
    kind = ActionKind(row.kind)
    amount = Money(row.amount, row.currency) if row.amount is not None and row.currency else None
    line_items = line_item_refs(row.line_items)
    shared: dict[str, Any] = {
        "action_id": str(row.id),
        "kind": kind,
        "target": row.target,
        "customer_ref": row.customer_ref,
        "line_items": line_items,
        "provider": row.provider,
        "money_ref": row.money_ref,
    }
    action: InFlightAction | PastAction
    if row.status in ActionStatus.IN_FLIGHT:
        status = _IN_FLIGHT_STATUS[ActionStatus(row.status)]
        action = InFlightAction(**shared, amount=amount, status=status)
    else:
        assert amount is not None, "the provider reported an action of ours without money"
        action = PastAction(
            **shared, amount=amount, status=ProviderStatus(row.status), created_at=row.created_at
        )
    customer = row.customer_ref or (row.target if kind in CUSTOMER_TARGET_KINDS else None)
    return _Ours(action, row.created_at, customer, line_items)


@dataclass(frozen=True)
class _Payment:
    """A payment as the history check read it."""

    captured: int | None
    currency: str | None
    disputed: bool
    customer: str | None


class _ProviderReads:
    """What the history check read at the provider, by payment and by customer, oldest
    first: every record, ours too (the provider's facts hold our writes as well)."""

    def __init__(self, records: Iterable[Row[Any]]) -> None:
        self.payments: dict[str, _Payment] = {}
        self.refunds: dict[str, list[ProviderRefund]] = defaultdict(list)
        self.credits: dict[str, list[ProviderCredit]] = defaultdict(list)
        self.discounts: dict[str, list[ProviderDiscount]] = defaultdict(list)
        for row in records:
            metadata = (
                {ACTION_ID_METADATA_KEY: row.caseward_action_id} if row.caseward_action_id else {}
            )
            if row.kind == ActionKind.REFUND and row.payment:
                self.payments.setdefault(
                    row.payment,
                    _Payment(row.payment_amount, row.currency, row.payment_disputed, row.customer),
                )
                if row.amount is not None and row.currency:
                    self.refunds[row.payment].append(
                        ProviderRefund(
                            row.record_id,
                            row.amount,
                            row.currency,
                            _status(row.status),
                            row.created,
                            metadata,
                        )
                    )
            elif row.kind == ActionKind.CUSTOMER_CREDIT and row.customer and row.amount is not None:
                self.credits[row.customer].append(
                    ProviderCredit(
                        row.record_id, -row.amount, row.currency or "", row.created, metadata
                    )
                )
            elif row.kind == ActionKind.DISCOUNT and row.customer:
                detail = row.detail or {}
                self.discounts[row.customer].append(
                    ProviderDiscount(
                        id=row.record_id,
                        coupon_id=detail.get("coupon", row.record_id),
                        code=detail.get("code", ""),
                        percent_off=row.percent_off,
                        amount_off=row.amount,
                        currency=row.currency,
                        created=row.created,
                        metadata=metadata,
                    )
                )


def _status(value: str | None) -> ProviderStatus:
    """A record's status as the checks count it: one they do not know may have moved money."""
    known = {status.value for status in ProviderStatus}
    return ProviderStatus(value) if value in known else ProviderStatus.SUCCEEDED


def _record_moves(records: Iterable[Row[Any]]) -> list[Move]:
    """The money the records made outside Caseward moved."""
    return [
        Move(row.created, row.amount, row.currency.lower(), row.customer)
        for row in records
        if row.kind in MONEY_KINDS
        and row.amount is not None
        and row.currency
        and moved_money(_status(row.status))
    ]


class _Rebuild:
    """Inputs rebuilt for a past action, at the moment it was made."""

    def __init__(
        self, ours: _OurActions, reads: _ProviderReads, orders: dict[str, Row[Any]]
    ) -> None:
        self.ours = ours
        self.reads = reads
        self.orders = orders

    def proposal(self, row: Row[Any]) -> GuardInputs:
        kind = ActionKind(row.kind)
        proposal = ProposedAction(
            kind=kind,
            target=row.target,
            amount=_money(row.amount, row.currency),
            identity_level=IdentityLevel(row.identity_level),
            proposed_by=row.proposed_by,
            provider=row.provider,
            customer_ref=row.customer_ref,
            case_customer=row.customer_ref,
            line_items=line_item_refs(row.line_items),
            params=row.params,
            money_ref=row.money_ref or (row.target if kind is ActionKind.REFUND else None),
        )
        return self._inputs(proposal, row.created_at)

    def record(self, row: Row[Any]) -> GuardInputs:
        kind = ActionKind(row.kind)
        target = {
            ActionKind.REFUND: row.payment or row.record_id,
            ActionKind.CUSTOMER_CREDIT: row.customer or "",
            ActionKind.DISCOUNT: row.customer or "",
        }.get(kind, row.record_id)
        proposal = ProposedAction(
            kind=kind,
            target=target,
            amount=_money(row.amount, row.currency) if kind in MONEY_KINDS else None,
            identity_level=OUTSIDE_IDENTITY,
            proposed_by=row.provider,
            provider=row.provider,
            customer_ref=row.customer,
            case_customer=row.customer,
            params=_record_params(kind, row),
            money_ref=target if kind is ActionKind.REFUND else None,
        )
        return self._inputs(proposal, row.created)

    def _inputs(self, proposal: ProposedAction, at: datetime) -> GuardInputs:
        in_flight, history = self.ours.around(proposal.target, proposal.money_ref, at)
        order = self._order(proposal, at) if proposal.kind is ActionKind.REFUND else None
        return GuardInputs(
            proposal=proposal,
            facts=self._facts(proposal, order, at),
            in_flight=in_flight,
            history=history,
            order=order,
            spending=None,  # added up again for each policy replayed (app.whatif.caps)
            now=at,
        )

    def _facts(
        self, proposal: ProposedAction, order: OrderFacts | None, at: datetime
    ) -> TargetFacts:
        target = proposal.target
        match proposal.kind:
            case ActionKind.REFUND:
                return self._payment(proposal, order, at)
            case ActionKind.CUSTOMER_CREDIT | ActionKind.DISCOUNT:
                return CustomerFacts(
                    id=target,
                    exists=bool(target),
                    credits=tuple(c for c in self.reads.credits.get(target, ()) if c.created < at),
                    discounts=tuple(
                        d for d in self.reads.discounts.get(target, ()) if d.created < at
                    ),
                )
            case _:
                return SubscriptionFacts(
                    id=target, exists=True, status="active", customer_id=proposal.case_customer
                )

    def _payment(
        self, proposal: ProposedAction, order: OrderFacts | None, at: datetime
    ) -> PaymentFacts:
        """The payment as the history check read it, with its refunds before ``at``; else
        as our order says; else one that captured as much as was refunded."""
        target = proposal.target
        read = self.reads.payments.get(target)
        refunds = tuple(r for r in self.reads.refunds.get(target, ()) if r.created < at)
        amount = proposal.amount
        captured = (
            read.captured
            if read is not None and read.captured is not None
            else order.total
            if order is not None and order.total is not None
            else sum(r.amount for r in refunds if r.counts_against_capture)
            + (amount.amount if amount else 0)
        )
        currency = (
            (read.currency if read else None)
            or (order.currency if order else None)
            or (amount.currency if amount else "")
        )
        return PaymentFacts(
            id=target,
            exists=True,
            currency=currency.lower(),
            amount=captured,
            captured=captured,
            paid=True,
            disputed=read.disputed if read else False,
            customer_id=read.customer if read and read.customer else proposal.case_customer,
            refunds=refunds,
        )

    def _order(self, proposal: ProposedAction, at: datetime) -> OrderFacts | None:
        """Our copy of the order the payment paid, its lines less what our refunds before
        ``at`` gave back of them (only a line-item refund is bounded by lines)."""
        row = self.orders.get(proposal.target)
        if row is None:
            return None
        refunded: dict[str, int] = defaultdict(int)
        if proposal.line_items:
            for ours in self.ours.by_target.get(proposal.target, ()):
                if ours.created_at < at and isinstance(ours.action, PastAction):
                    for item in ours.line_items:
                        refunded[item.line_id] += item.amount_minor
        return stored_order_facts(row, refunded)


def _proposal_item(row: Row[Any], rebuild: _Rebuild) -> PastItem:
    reference = case_reference(row.case_id)
    if row.guard_inputs:
        inputs = GuardInputs.from_dict(row.guard_inputs)
        return PastItem(inputs, Source.PROPOSAL, False, reference, row.case_id)
    return PastItem(rebuild.proposal(row), Source.PROPOSAL, True, reference, row.case_id)


def _money(amount: int | None, currency: str | None) -> Money | None:
    return Money(amount, currency) if amount is not None and currency else None


def _record_params(kind: ActionKind, row: Row[Any]) -> dict[str, object]:
    """What the checks ask of a kind's settings, as far as the record tells them."""
    match kind:
        case ActionKind.DISCOUNT:
            duration = (row.detail or {}).get("duration")
            off = (
                {"percent_off": row.percent_off}
                if row.percent_off is not None
                else {"amount_off": row.amount}
            )
            return off | {"duration": duration if duration in _DISCOUNT_DURATIONS else "once"}
        case ActionKind.SUBSCRIPTION_CANCEL:
            return {"at_period_end": True}
        case ActionKind.SUBSCRIPTION_CHANGE:
            return {"items": [[(row.detail or {}).get("plan") or row.record_id, 1]]}
    return {}
