"""What the storefront chat says of a shopper's actions, by what the provider reported.

Each action the provider has is one update: ``pending`` while the provider has it and
has not finished (pending, or waiting on the customer's bank), ``succeeded`` once it
confirmed, ``failed`` when it failed or canceled it, and ``in_review`` while it is still
ours to send. The case's own status follows the newest action the same way.
"""

from __future__ import annotations

import uuid
from datetime import timedelta

import pytest
from flask.testing import FlaskClient
from sqlalchemy import select
from sqlalchemy.orm import Session
from storefront_support import APP_SECRET, Shopper

from app.cases.models import Case
from app.cases.proposals import Proposal
from app.clock import utcnow
from app.conversations.models import Conversation
from app.execution.models import Action, ActionStatus
from app.shops.models import Shop

DOMAIN = "linen-updates.myshopify.com"


@pytest.fixture
def shop(session: Session) -> Shop:
    shop = Shop(domain=DOMAIN, name="Linen & Loom")
    session.add(shop)
    session.commit()
    return shop


def _refund_at(session: Session, status: ActionStatus) -> None:
    """A $48.00 refund of the shopper's case, standing at ``status``."""
    case = session.get_one(Case, session.scalars(select(Conversation.case_id)).one())
    proposal = Proposal(
        shop_id=case.shop_id,
        case_id=case.id,
        kind="refund",
        provider="stripe",
        target="pi_apron",
        amount=4800,
        currency="usd",
        proposed_by="system:drafter",
        status="approved",
        verdict={},
        policy_version=1,
        digest="0" * 64,
    )
    session.add(proposal)
    session.flush()
    session.add(
        Action(
            shop_id=case.shop_id,
            case_id=case.id,
            proposal_id=proposal.id,
            proposal_revision=1,
            digest=proposal.digest,
            kind="refund",
            provider="stripe",
            target="pi_apron",
            amount=4800,
            currency="usd",
            idempotency_key=f"caseward-action-{uuid.uuid4()}",
            approval_expires_at=utcnow() + timedelta(hours=1),
            status=status,
        )
    )
    session.commit()


@pytest.mark.parametrize(
    ("status", "shown", "text", "case_status"),
    [
        (
            ActionStatus.PENDING,
            "pending",
            "Your refund of $48.00 was submitted to the payment provider.",
            "submitted",
        ),
        (
            ActionStatus.REQUIRES_ACTION,
            "pending",
            "Your refund of $48.00 was submitted to the payment provider.",
            "submitted",
        ),
        (
            ActionStatus.SUCCEEDED,
            "succeeded",
            "Your refund of $48.00 is done: the payment provider confirmed it.",
            "completed",
        ),
        (
            ActionStatus.FAILED,
            "failed",
            "Your refund of $48.00 could not be completed.",
            "failed",
        ),
        (
            ActionStatus.CANCELED,
            "failed",
            "Your refund of $48.00 could not be completed.",
            "failed",
        ),
        (
            ActionStatus.UNKNOWN,
            "in_review",
            "Your refund of $48.00 was approved and is being sent.",
            "approved",
        ),
    ],
)
def test_each_update_says_what_the_provider_reported(
    shop: Shop,
    client: FlaskClient,
    session: Session,
    status: ActionStatus,
    shown: str,
    text: str,
    case_status: str,
) -> None:
    shopper = Shopper(client, DOMAIN, secret=APP_SECRET, locale="en")
    shopper.say("My apron arrived torn.")

    _refund_at(session, status)
    case = shopper.state()["case"]

    assert case["updates"] == [
        {"kind": "refund", "status": shown, "text": text, "at": case["updates"][0]["at"]}
    ]
    assert case["status"] == case_status
