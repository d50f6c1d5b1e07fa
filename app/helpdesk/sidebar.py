"""What a support agent sees beside a ticket: the case as Caseward holds it.

One view (:func:`sidebar_view`) serves both doors: the JSON a Gorgias sidebar widget
renders (fetched with the shop's integration secret), and the compact HTML page other
helpdesks frame, opened only through a short-lived signed link (:func:`sidebar_link`,
:func:`ticket_of_link`) made by a request that carried the secret. It shows the
customer's identity and how it was established, their orders, the case's status (and
since when, if ever, a message of the customer's tried to instruct the assistant), each
proposal with its checks, each action with the provider's reference, and a link to
approve in Caseward; it never approves anything itself.
"""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Any

from itsdangerous import BadSignature, URLSafeSerializer
from sqlalchemy import select
from sqlalchemy.orm import Session

from app.cases.models import Case, Customer, Order
from app.cases.proposals import Proposal
from app.conversations.models import Channel
from app.conversations.service import find_conversation
from app.execution.models import Action
from app.inbox.views import ActionView, ProposalView
from app.money import Money, display
from app.shopify.admin_links import admin_case_url
from app.shops.models import Shop

# How long a signed sidebar link opens the page.
LINK_LIFETIME_SECONDS = 600
_SALT = "caseward-helpdesk-sidebar"


def ticket_ref(ticket_id: int) -> str:
    """A Gorgias ticket's id as a conversation's channel id."""
    return f"gorgias:{ticket_id}"


def sidebar_view(
    session: Session, *, shop: Shop, ticket_id: int, admin_origin: str
) -> dict[str, Any]:
    conversation = find_conversation(
        session, shop_id=shop.id, channel=Channel.HELPDESK, channel_ref=ticket_ref(ticket_id)
    )
    case = (
        session.get(Case, conversation.case_id) if conversation and conversation.case_id else None
    )
    if conversation is None or case is None or case.shop_id != shop.id:
        return {"ticket_id": ticket_id, "known": False}
    customer = session.get(Customer, case.customer_id) if case.customer_id else None
    orders = (
        list(
            session.scalars(
                select(Order)
                .where(Order.shop_id == shop.id, Order.customer_id == customer.id)
                .order_by(Order.created_at.desc())
                .limit(10)
            )
        )
        if customer
        else []
    )
    proposals = session.scalars(
        select(Proposal)
        .where(Proposal.shop_id == shop.id, Proposal.case_id == case.id)
        .order_by(Proposal.created_at)
    )
    actions = session.scalars(
        select(Action)
        .where(Action.shop_id == shop.id, Action.case_id == case.id)
        .order_by(Action.created_at)
    )
    return {
        "ticket_id": ticket_id,
        "known": True,
        "identity": {
            "level": conversation.identity_level,
            "how": conversation.identity_method,
            "customer": customer.email if customer else None,
        },
        "orders": [
            {
                "name": order.name,
                "total": display(order.total, order.currency),
                "delivered": order.delivered_at is not None,
            }
            for order in orders
        ],
        "case": {
            "id": str(case.id),
            "status": case.status,
            "owner": case.owner,
            "instruction_attempt": case.instruction_attempt_at is not None,
            "instruction_attempt_at": (
                case.instruction_attempt_at.isoformat() if case.instruction_attempt_at else None
            ),
            "approve_url": admin_case_url(admin_origin, shop.domain, case.id),
        },
        "proposals": [
            {
                "kind": view.proposal.kind,
                "amount": _shown(view.money),
                "status": view.status,
                "proposed_by": view.proposal.proposed_by,
                "checks": [
                    {
                        "name": check.name,
                        "passed": check.passed,
                        "signal": check.escalates,
                        "reason": check.reason,
                    }
                    for check in view.checks
                ],
            }
            for view in map(ProposalView.of, proposals)
        ],
        "actions": [
            {
                "kind": view.action.kind,
                "amount": _shown(view.money),
                "status": view.status,
                "provider_ref": view.action.provider_ref,
            }
            for view in map(ActionView.of, actions)
        ],
    }


def _shown(money: Money | None) -> str:
    """Money as the sidebar shows it; :func:`~app.money.display`'s mark when there is none."""
    return money.format() if money is not None else display(None, None)


def sidebar_link(secret_key: str, *, shop_id: uuid.UUID, ticket_id: int, now: datetime) -> str:
    """A token that opens the HTML sidebar of one ticket for :data:`LINK_LIFETIME_SECONDS`
    from ``now`` (signed with the app's secret; the moment is inside the signature)."""
    return _serializer(secret_key).dumps(
        {"shop": str(shop_id), "ticket": ticket_id, "at": int(now.timestamp())}
    )


def ticket_of_link(secret_key: str, token: str, *, now: datetime) -> tuple[uuid.UUID, int] | None:
    """The shop and ticket a link opens, or None when it is forged or has expired."""
    try:
        data = _serializer(secret_key).loads(token)
    except BadSignature:
        return None
    age = now.timestamp() - int(data["at"])
    if not 0 <= age <= LINK_LIFETIME_SECONDS:
        return None
    return uuid.UUID(data["shop"]), int(data["ticket"])


def _serializer(secret_key: str) -> URLSafeSerializer:
    return URLSafeSerializer(secret_key, salt=_SALT)
