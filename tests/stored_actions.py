"""A case with a proposal stored directly, for tests of what reads Caseward's own actions
(the checks' sums, the read-only audit's rules) without going through the approvals."""

from __future__ import annotations

from sqlalchemy.orm import Session

from app.cases.models import Case
from app.cases.proposals import Proposal
from app.shops.models import Shop


def a_case_with_proposal(
    session: Session, shop: Shop, *, subject: str, target: str = "pi_ours", amount: int = 1000
) -> tuple[Case, Proposal]:
    """An approved $``amount`` refund proposal of ``target`` on a new case of ``shop``."""
    case = Case(shop_id=shop.id, subject=subject)
    session.add(case)
    session.flush()
    proposal = Proposal(
        shop_id=shop.id,
        case_id=case.id,
        kind="refund",
        provider="stripe",
        target=target,
        amount=amount,
        currency="usd",
        proposed_by="1001",
        status="approved",
        verdict={},
        policy_version=1,
        digest="0" * 64,
    )
    session.add(proposal)
    session.flush()
    return case, proposal
