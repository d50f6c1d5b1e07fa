"""The embedded admin's pages in tests: a shop with its three kinds of staff, its cases,
customers, proposals and actions as rows, pages opened as Shopify frames them, and API calls
as the pages' scripts make them."""

from __future__ import annotations

import base64
import html
import uuid
from datetime import timedelta
from typing import Any
from urllib.parse import parse_qsl, urlencode

from flask.testing import FlaskClient
from shopify_app_support import bearer, install_shop, session_token
from sqlalchemy.orm import Session

from app.actors import Surface, staff
from app.cases.digest import digest_of
from app.cases.models import Case, CaseStatus, Customer, Order
from app.cases.proposals import Proposal, ProposalStatus
from app.cases.service import open_case
from app.clock import utcnow
from app.execution.models import Action
from app.settings import Settings
from app.shops.models import Shop, StaffMember, StaffRole

OWNER, APPROVER, VIEWER = "1001", "1002", "1003"


def a_shop(session: Session, settings: Settings, name: str) -> Shop:
    """An installed shop with writes on, an owner who may approve up to $100.00, an
    approver with no limit yet and a viewer."""
    shop = install_shop(session, settings, name).shop
    shop.writes_enabled = True
    session.add_all(
        [
            StaffMember(
                shop_id=shop.id,
                user_id=OWNER,
                role=StaffRole.OWNER,
                approval_limits={"usd": 10000},
            ),
            StaffMember(
                shop_id=shop.id, user_id=APPROVER, role=StaffRole.APPROVER, approval_limits={}
            ),
            StaffMember(shop_id=shop.id, user_id=VIEWER, role=StaffRole.VIEWER),
        ]
    )
    session.commit()
    return shop


def page_url(shop: str, path: str, token: str, **query: str) -> str:
    """An admin page as Shopify frames it: its own query (``path`` may carry some too),
    then the session token."""
    path, _, own = path.partition("?")
    host = base64.urlsafe_b64encode(
        f"admin.shopify.com/store/{shop.removesuffix('.myshopify.com')}".encode()
    )
    params = {
        "embedded": "1",
        "shop": shop,
        "host": host.decode().rstrip("="),
        **dict(parse_qsl(own)),
        **query,
    }
    return f"{path}?{urlencode({**params, 'id_token': token})}"


def open_page(client: FlaskClient, shop: Shop, user: str, path: str, **query: str) -> Any:
    return client.get(page_url(shop.domain, path, session_token(shop.domain, user), **query))


def api(client: FlaskClient, shop: Shop, user: str, method: str, url: str, body: object) -> Any:
    """A call as the pages' scripts make it: JSON, with App Bridge's bearer session token."""
    return client.open(
        url, method=method, json=body, headers=bearer(session_token(shop.domain, user))
    )


def text_of(response: Any) -> str:
    """A page's HTML as a person reads its text (entities decoded); the page must be there."""
    assert response.status_code == 200, response.get_data(as_text=True)[:800]
    return html.unescape(response.get_data(as_text=True))


def a_case(
    session: Session,
    shop: Shop,
    subject: str,
    *,
    identity: str = "strong",
    status: str = CaseStatus.OPEN,
    customer: Customer | None = None,
    request_text: str = "The apron arrived torn. I'd like my money back.",
) -> Case:
    case = open_case(
        session,
        shop=shop,
        actor=staff(OWNER, Surface.SHOPIFY_ADMIN),
        customer_id=customer.id if customer else None,
        subject=subject,
        request_text=request_text,
        identity_level=identity,
        now=utcnow(),
    )
    case.status = status  # as later steps of the case would have left it
    session.flush()
    return case


def a_customer(
    session: Session,
    shop: Shop,
    *,
    currency: str = "usd",
    total: int = 4800,
    order: str = "#1001",
    payment: str = "pi_3Apron",
) -> Customer:
    customer = Customer(
        shop_id=shop.id, email="maya@example.com", name="Maya", stripe_customer_id="cus_Maya"
    )
    session.add(customer)
    session.flush()
    session.add(
        Order(
            shop_id=shop.id,
            customer_id=customer.id,
            name=order,
            currency=currency,
            total=total,
            payment_provider="stripe",
            payment_id=payment,
            lines=[{"id": "apron", "title": "Linen apron", "quantity": 1, "paid": total}],
        )
    )
    session.flush()
    return customer


def a_proposal(
    session: Session,
    shop: Shop,
    case: Case,
    *,
    status: str = ProposalStatus.AWAITING_APPROVAL,
    target: str = "pi_3Apron",
    amount: int = 4800,
    currency: str = "usd",
) -> Proposal:
    proposal = Proposal(
        id=uuid.uuid4(),
        shop_id=shop.id,
        case_id=case.id,
        kind="refund",
        provider="stripe",
        target=target,
        customer_ref="cus_Maya",
        amount=amount,
        currency=currency,
        line_items=[],
        params={},
        proposed_by=APPROVER,
        status=status,
        verdict={
            "outcome": "needs_approval",
            "approvals_required": 1,
            "approval_reason": "The policy approves nothing itself.",
            "policy_version": 1,
            "checks": [
                {
                    "name": "captured",
                    "passed": True,
                    "reason": "The payment was captured in full.",
                    "facts": {},
                },
                {
                    "name": "not_disputed",
                    "passed": True,
                    "reason": "The payment has no dispute.",
                    "facts": {},
                },
            ],
        },
        approvals_required=1,
        policy_version=1,
    )
    proposal.digest = digest_of(proposal, 1)
    session.add(proposal)
    session.flush()
    return proposal


def an_action(session: Session, shop: Shop, case: Case, proposal: Proposal, status: str) -> Action:
    """The one action of ``proposal``, which its approval turned into one."""
    proposal.status = ProposalStatus.APPROVED
    action_id = uuid.uuid4()
    action = Action(
        id=action_id,
        shop_id=shop.id,
        case_id=case.id,
        proposal_id=proposal.id,
        proposal_revision=proposal.revision or 1,
        digest=proposal.digest,
        kind=proposal.kind,
        provider=proposal.provider,
        target=proposal.target,
        customer_ref=proposal.customer_ref,
        amount=proposal.amount,
        currency=proposal.currency,
        idempotency_key=f"caseward-action-{action_id}",
        status=status,
        approved_by=[OWNER],
        approval_expires_at=utcnow() + timedelta(hours=1),
    )
    session.add(action)
    session.flush()
    return action
