"""A shop that uninstalled Caseward approves nothing.

The worker would stop whatever was approved there (the shop is uninstalled: nothing more
is sent for it), so the approval is refused at once, 409 ``shop_uninstalled``, and the
proposal keeps awaiting approval; once the shop is installed again the same person,
with the same digest, approves it.
"""

from __future__ import annotations

import uuid

import pytest
from sqlalchemy.orm import Session

from app.actors import Surface, staff
from app.approvals.service import approve_proposal
from app.cases.digest import digest_of
from app.cases.proposals import Proposal, ProposalStatus
from app.cases.service import open_case
from app.clock import utcnow
from app.errors import Conflict
from app.settings import Settings
from app.shops.models import Shop, StaffMember, StaffRole
from app.shops.service import current_policy
from app.web.errors import status_of

OWNER = "1001"


def _awaiting(session: Session) -> tuple[Shop, Proposal]:
    shop = Shop(domain="linen.myshopify.com", name="Linen", writes_enabled=True)
    session.add(shop)
    session.flush()
    session.add(
        StaffMember(
            shop_id=shop.id, user_id=OWNER, role=StaffRole.OWNER, approval_limits={"usd": 10000}
        )
    )
    case = open_case(
        session,
        shop=shop,
        actor=staff(OWNER, Surface.STAFF_API),
        customer_id=None,
        subject="Torn apron",
        request_text="The apron arrived torn.",
        identity_level="strong",
        now=utcnow(),
    )
    proposal = Proposal(
        id=uuid.uuid4(),
        shop_id=shop.id,
        case_id=case.id,
        kind="refund",
        provider="stripe",
        target="pi_3Apron",
        customer_ref="cus_Maya",
        amount=4800,
        currency="usd",
        line_items=[],
        params={},
        proposed_by="2001",
        status=ProposalStatus.AWAITING_APPROVAL,
        verdict={"outcome": "needs_approval", "checks": []},
        approvals_required=1,
        policy_version=current_policy(session, shop.id).version,
    )
    proposal.digest = digest_of(proposal, proposal.policy_version)
    session.add(proposal)
    session.commit()
    return shop, proposal


def test_an_uninstalled_shop_approves_nothing_until_installed_again(
    session: Session, settings: Settings
) -> None:
    shop, proposal = _awaiting(session)
    shop.uninstalled_at = utcnow()
    session.commit()

    def approve() -> object:
        return approve_proposal(
            session,
            shop=shop,
            proposal_id=proposal.id,
            actor=staff(OWNER, Surface.STAFF_API),
            digest=proposal.digest,
            settings=settings,
            now=utcnow(),
        )

    with pytest.raises(Conflict) as refused:
        approve()
    session.rollback()

    assert (status_of(refused.value), refused.value.code) == (409, "shop_uninstalled")
    assert refused.value.message == "the shop has uninstalled Caseward"
    assert _status(session, proposal) == ProposalStatus.AWAITING_APPROVAL

    shop.uninstalled_at = None
    session.commit()
    approve()
    session.commit()

    assert _status(session, proposal) == ProposalStatus.APPROVED


def _status(session: Session, proposal: Proposal) -> str:
    session.refresh(proposal)
    return proposal.status
