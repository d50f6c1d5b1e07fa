"""A shop's last months as rows: proposals that kept the inputs of their checks, older ones
that did not, our actions, and the history check's records of money moved outside
Caseward; each dated so many days before now."""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy.orm import Session

from app.cases.digest import digest_of
from app.cases.models import Case, CaseStatus, Customer, Order
from app.cases.proposals import Proposal, ProposalStatus
from app.execution.models import Action, ActionStatus
from app.guard import GuardInputs, IdentityLevel, ProposedAction
from app.history_audit.models import HistoryRecord, HistoryScan, ScanStatus
from app.money import Money
from app.shops.models import Shop
from integrations.provider import ActionKind, CustomerFacts, PaymentFacts

DAY = timedelta(days=1)


@dataclass
class ShopPast:
    """Writes one shop's past, each row ``days`` before ``now``."""

    session: Session
    shop: Shop
    now: datetime
    scan: HistoryScan | None = None

    def at(self, days: float) -> datetime:
        return self.now - days * DAY

    def proposal(
        self,
        *,
        customer: str,
        amount: int,
        days: float,
        kind: ActionKind = ActionKind.REFUND,
        payment: str | None = None,
        kept: bool = True,
        order_total: int | None = None,
    ) -> Proposal:
        """A proposal of ``customer``'s case: with the inputs its checks were asked with
        (``kept``), or made before they were kept; a refund's payment captured twice the
        amount, or paid an order of ``order_total`` in our copy."""
        at = self.at(days)
        customer_row = Customer(
            shop_id=self.shop.id, name=customer, stripe_customer_id=customer, created_at=at
        )
        self.session.add(customer_row)
        self.session.flush()
        case = Case(
            shop_id=self.shop.id,
            customer_id=customer_row.id,
            subject=f"{customer}'s {kind.value}",
            identity_level=IdentityLevel.STRONG,
            status=CaseStatus.AWAITING_APPROVAL,
            created_at=at,
            updated_at=at,
        )
        self.session.add(case)
        self.session.flush()
        target = payment or (f"pi_{customer}" if kind is ActionKind.REFUND else customer)
        if order_total is not None:
            self.session.add(
                Order(
                    shop_id=self.shop.id,
                    customer_id=customer_row.id,
                    name=f"#{customer}",
                    currency="usd",
                    total=order_total,
                    payment_provider="stripe",
                    payment_id=target,
                    lines=[{"id": "line", "title": "Linen", "quantity": 1, "paid": order_total}],
                    created_at=at - 5 * DAY,
                )
            )
        proposal = Proposal(
            id=uuid.uuid4(),
            shop_id=self.shop.id,
            case_id=case.id,
            kind=kind.value,
            provider="stripe",
            target=target,
            customer_ref=customer,
            amount=amount,
            currency="usd",
            line_items=[],
            money_ref=target if kind is ActionKind.REFUND else None,
            params={},
            proposed_by="1002",
            status=ProposalStatus.AWAITING_APPROVAL,
            verdict={},
            approvals_required=1,
            policy_version=1,
            guard_inputs=_inputs(kind, target, customer, amount, at).to_dict() if kept else None,
            created_at=at,
            updated_at=at,
        )
        proposal.digest = digest_of(proposal, 1)
        self.session.add(proposal)
        self.session.flush()
        return proposal

    def action(
        self, proposal: Proposal, *, days: float, status: str = ActionStatus.SUCCEEDED
    ) -> Action:
        """The action ``proposal``'s approval made, ``days`` ago."""
        proposal.status = ProposalStatus.APPROVED
        action_id = uuid.uuid4()
        action = Action(
            id=action_id,
            shop_id=self.shop.id,
            case_id=proposal.case_id,
            proposal_id=proposal.id,
            proposal_revision=1,
            digest=proposal.digest,
            kind=proposal.kind,
            provider="stripe",
            target=proposal.target,
            customer_ref=proposal.customer_ref,
            amount=proposal.amount,
            currency=proposal.currency,
            money_ref=proposal.money_ref,
            idempotency_key=f"caseward-action-{action_id}",
            status=status,
            approved_by=["1001"],
            approval_expires_at=self.at(days) + DAY,
            created_at=self.at(days),
        )
        self.session.add(action)
        self.session.flush()
        return action

    def record(self, record_id: str, *, days: float, **fields: Any) -> HistoryRecord:
        """A record the history check read at Stripe: a refund unless ``kind`` says."""
        if self.scan is None:
            self.scan = HistoryScan(
                shop_id=self.shop.id,
                provider="stripe",
                status=ScanStatus.DONE,
                window_days=120,
                since=self.at(120),
                requested_by="1001",
                created_at=self.now,
                finished_at=self.now,
            )
            self.session.add(self.scan)
            self.session.flush()
        record = HistoryRecord(
            scan_id=self.scan.id,
            shop_id=self.shop.id,
            provider="stripe",
            kind=fields.pop("kind", ActionKind.REFUND.value),
            record_id=record_id,
            created=self.at(days),
            currency="usd",
            status="succeeded",
            **fields,
        )
        self.session.add(record)
        self.session.flush()
        return record


def _inputs(kind: ActionKind, target: str, customer: str, amount: int, at: datetime) -> GuardInputs:
    """What the checks were asked with when the proposal was made: its payment captured
    twice the amount, or its customer, both the case customer's."""
    money = Money(amount, "usd")
    facts: PaymentFacts | CustomerFacts = (
        PaymentFacts(
            id=target,
            exists=True,
            currency="usd",
            amount=2 * amount,
            captured=2 * amount,
            paid=True,
            customer_id=customer,
        )
        if kind is ActionKind.REFUND
        else CustomerFacts(id=target, exists=True, email=f"{customer}@example.com")
    )
    return GuardInputs(
        proposal=ProposedAction(
            kind=kind,
            target=target,
            amount=money,
            identity_level=IdentityLevel.STRONG,
            proposed_by="1002",
            customer_ref=customer,
            case_customer=customer,
            money_ref=target if kind is ActionKind.REFUND else None,
        ),
        facts=facts,
        in_flight=(),
        history=(),
        order=None,
        spending=None,
        now=at,
    )
