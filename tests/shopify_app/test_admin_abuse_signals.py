"""An abuse signal as the merchant meets it: the owner turns the signals on in the policy
form, beside an auto-approve ceiling of $100.00. A $40.00 refund for Maya, who already had
three refunds in 90 days, is checked on fresh facts from the Stripe sandbox and is not
approved by the policy: it waits for a person, the case page shows the signal and its facts
in words, and a person approves it. With two earlier refunds the policy approves it itself."""

from __future__ import annotations

import re
import uuid
from datetime import timedelta
from typing import Any

import pytest
from admin_pages_support import api, open_page, text_of
from flask.testing import FlaskClient
from sandbox_settings import with_sandbox
from sqlalchemy import select
from sqlalchemy.orm import Session

from app.cases.models import Case, Customer
from app.cases.proposals import Proposal
from app.clock import utcnow
from app.crypto import secret_box
from app.demo import APPROVER, OWNER, LinenShop, seed_linen_shop
from app.execution.models import Action
from app.settings import Settings
from app.shopify.models import ShopifyInstall
from app.shops.models import Shop
from integrations.stripe.sandbox import DEMO_PERMISSIONS, StripeSandbox

FORM = {
    "currency": "usd",
    "enabled_kinds": ["refund", "customer_credit", "discount"],
    "auto_approve_ceiling": "100.00",
    "duplicate_window_days": "3",
    "max_percent_off": "50",
    # The linen shop is new to Caseward: its owner starts the signals at once.
    "history_needed": "0",
    "repeat_claims": "3",
    "repeat_claims_percent": "",
    "old_delivery_days": "60",
    "delivered_but_not_received": True,
    "new_customer_amount": "",
    "new_customer_days": "30",
    "shared_email_customers": "1",
}
SIGNAL_SAID = (
    "This customer already had 3 refunds or credits in the last 90 days; from 3, a person decides."
)


@pytest.fixture
def settings(settings: Settings, sandbox: StripeSandbox) -> Settings:
    return with_sandbox(settings, sandbox)


@pytest.fixture
def linen(settings: Settings, sandbox: StripeSandbox, session: Session) -> LinenShop:
    """The demo's linen shop, its $96.00 order paid in the Stripe sandbox, installed in
    Shopify with every member already admitted (so no token is ever exchanged)."""
    keys = sandbox.create_account(restricted_keys=[{"permissions": DEMO_PERMISSIONS}])
    seeded = seed_linen_shop(
        session,
        settings=settings,
        box=secret_box(settings),
        secret_key=keys.secret_key,
        restricted_key=keys.restricted_keys[0].key,
        webhook_base_url=None,
    )
    session.add(
        ShopifyInstall(
            shop_id=seeded.shop_id,
            encrypted_access_token=secret_box(settings).encrypt("shpat_unused"),
            scopes="read_orders",
            installed_at=utcnow(),
        )
    )
    session.commit()
    return seeded


def earlier_refunds(session: Session, linen: LinenShop, count: int) -> None:
    """``count`` refunds of $10.00 to Maya over the last weeks, each on a case of its own,
    all of them reported by Stripe as succeeded."""
    maya = session.scalars(
        select(Customer).where(
            Customer.shop_id == linen.shop_id, Customer.stripe_customer_id == linen.customer_id
        )
    ).one()
    now = utcnow()
    for week in range(1, count + 1):
        case = Case(shop_id=linen.shop_id, customer_id=maya.id, subject=f"Earlier claim {week}")
        session.add(case)
        session.flush()
        proposal = Proposal(
            shop_id=linen.shop_id,
            case_id=case.id,
            kind="refund",
            provider="stripe",
            target=f"pi_earlier_{week}",
            amount=1000,
            currency="usd",
            proposed_by=APPROVER,
            status="approved",
            verdict={},
            policy_version=1,
            digest="0" * 64,
        )
        session.add(proposal)
        session.flush()
        action_id = uuid.uuid4()
        session.add(
            Action(
                id=action_id,
                shop_id=linen.shop_id,
                case_id=case.id,
                proposal_id=proposal.id,
                proposal_revision=1,
                digest=proposal.digest,
                kind="refund",
                provider="stripe",
                target=proposal.target,
                customer_ref=linen.customer_id,
                amount=1000,
                currency="usd",
                idempotency_key=f"caseward-action-{action_id}",
                status="succeeded",
                approved_by=[APPROVER],
                approval_expires_at=now,
                created_at=now - timedelta(weeks=week),
            )
        )
    session.commit()


def propose_40(client: FlaskClient, shop: Shop, linen: LinenShop) -> dict[str, Any]:
    refund = {
        "kind": "refund",
        "target": linen.payment_intent_id,
        "amount": 4000,
        "currency": "usd",
    }
    made = api(client, shop, APPROVER, "POST", f"/api/cases/{linen.case_id}/proposals", refund)
    assert made.status_code == 201, made.get_json()
    answer: dict[str, Any] = made.get_json()
    return answer


@pytest.fixture
def shop(client: FlaskClient, session: Session, linen: LinenShop) -> Shop:
    shop = session.get(Shop, linen.shop_id)
    assert shop is not None
    saved = api(client, shop, OWNER, "PUT", "/api/shop/policy/form", FORM)
    assert saved.status_code == 200, saved.get_json()
    return shop


def test_a_customer_with_three_refunds_in_90_days_waits_for_a_person_who_may_approve(
    client: FlaskClient, session: Session, linen: LinenShop, shop: Shop
) -> None:
    earlier_refunds(session, linen, 3)

    answer = propose_40(client, shop, linen)

    proposal = answer["proposal"]
    assert answer["action"] is None
    assert proposal["status"] == "awaiting_approval"
    assert proposal["verdict"]["outcome"] == "needs_approval"
    page = text_of(open_page(client, shop, APPROVER, f"/app/cases/{linen.case_id}"))
    article = page.split(f'data-proposal="{proposal["id"]}"')[1].split("</article>")[0]
    assert "The checks say: needs approval." in article
    assert (
        "One person must approve: 1 signal asks for a person's judgement, whatever the "
        "auto-approve ceiling." in article
    )
    assert re.search(
        r"<td>Repeat claims</td>\s*<td><s-badge tone=\"warning\">signal</s-badge></td>\s*"
        rf"<td>{re.escape(SIGNAL_SAID)}</td>",
        article,
    )
    assert 'class="approve"' in article and "failed</s-badge>" not in article

    approve = {"digest": proposal["digest"]}
    approved = api(
        client, shop, APPROVER, "POST", f"/api/proposals/{proposal['id']}/approve", approve
    )

    assert approved.status_code == 200, approved.get_json()
    assert approved.get_json()["action"]["status"] == "queued"


def test_with_two_earlier_refunds_the_policy_approves_the_same_refund_itself(
    client: FlaskClient, session: Session, linen: LinenShop, shop: Shop
) -> None:
    earlier_refunds(session, linen, 2)

    answer = propose_40(client, shop, linen)

    assert answer["proposal"]["verdict"]["outcome"] == "allowed_by_policy"
    assert answer["action"] is not None and answer["action"]["status"] == "queued"
    repeat = {check["name"]: check for check in answer["proposal"]["verdict"]["checks"]}
    assert repeat["repeat_claims"]["passed"] is True
    assert repeat["repeat_claims"]["facts"]["claims"] == 2
