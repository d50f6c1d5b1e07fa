"""One case's whole file, as staff read it: the customer, their orders, every proposal
with its approvals and every action with its attempts. One read per kind of row."""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import TypeVar

from sqlalchemy import select
from sqlalchemy.orm import Session

from app.cases.models import Case, Customer, Order
from app.cases.proposals import Approval, Proposal
from app.cases.service import get_case
from app.execution.models import Action, ActionAttempt

RowT = TypeVar("RowT")


@dataclass(frozen=True)
class CaseFile:
    case: Case
    customer: Customer | None
    orders: list[Order]
    proposals: list[tuple[Proposal, list[Approval]]]
    actions: list[tuple[Action, list[ActionAttempt]]]


def case_file(session: Session, shop_id: uuid.UUID, case_id: uuid.UUID) -> CaseFile:
    case = get_case(session, shop_id, case_id)
    customer = session.get(Customer, case.customer_id) if case.customer_id else None
    orders = (
        list(
            session.scalars(
                select(Order)
                .where(Order.shop_id == shop_id, Order.customer_id == customer.id)
                .order_by(Order.created_at)
            )
        )
        if customer
        else []
    )
    proposal_rows = list(
        session.scalars(
            select(Proposal)
            .where(Proposal.shop_id == shop_id, Proposal.case_id == case.id)
            .order_by(Proposal.created_at)
        )
    )
    approvals = _grouped(
        session.scalars(
            select(Approval)
            .where(Approval.proposal_id.in_([p.id for p in proposal_rows]))
            .order_by(Approval.created_at)
        ),
        key=lambda approval: approval.proposal_id,
    )
    action_rows = list(
        session.scalars(
            select(Action)
            .where(Action.shop_id == shop_id, Action.case_id == case.id)
            .order_by(Action.created_at)
        )
    )
    attempts = _grouped(
        session.scalars(
            select(ActionAttempt)
            .where(ActionAttempt.action_id.in_([a.id for a in action_rows]))
            .order_by(ActionAttempt.number)
        ),
        key=lambda attempt: attempt.action_id,
    )
    proposals = [(p, approvals.get(p.id, [])) for p in proposal_rows]
    actions = [(a, attempts.get(a.id, [])) for a in action_rows]
    return CaseFile(case, customer, orders, proposals, actions)


def _grouped(rows: Iterable[RowT], key: Callable[[RowT], uuid.UUID]) -> dict[uuid.UUID, list[RowT]]:
    """Rows of one query, by their parent's id: one read for the whole case file."""
    groups: dict[uuid.UUID, list[RowT]] = {}
    for row in rows:
        groups.setdefault(key(row), []).append(row)
    return groups
