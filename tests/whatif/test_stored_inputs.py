"""A proposal keeps what its checks were asked with, and a replay of it is the check it had:
the demo's $48.00 refund, proposed on fresh facts from the Stripe sandbox, replays to the
verdict it was stored with, and a policy with a lower ceiling for one refund would have
blocked it, saying why."""

from __future__ import annotations

import json

import pytest
from admin_pages_support import api
from flask.testing import FlaskClient
from sandbox_settings import with_sandbox
from sqlalchemy.orm import Session

from app.cases.proposals import Proposal
from app.clock import utcnow
from app.crypto import secret_box
from app.demo import OWNER, LinenShop, seed_linen_shop
from app.guard import GuardInputs, Verdict, evaluate
from app.settings import Settings
from app.shopify.models import ShopifyInstall
from app.shops.models import Shop
from app.shops.service import current_policy, shop_switches
from integrations.stripe.sandbox import DEMO_PERMISSIONS, StripeSandbox


@pytest.fixture
def settings(settings: Settings, sandbox: StripeSandbox) -> Settings:
    return with_sandbox(settings, sandbox)


@pytest.fixture
def linen(settings: Settings, sandbox: StripeSandbox, session: Session) -> LinenShop:
    """The demo's linen shop with Maya's refund proposed, installed in Shopify."""
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


def test_a_proposal_keeps_its_inputs_and_replays_to_its_verdict(
    session: Session, linen: LinenShop, settings: Settings
) -> None:
    proposal = session.get(Proposal, linen.proposal_id)
    shop = session.get(Shop, linen.shop_id)
    assert proposal is not None and shop is not None and proposal.guard_inputs is not None

    inputs = GuardInputs.from_dict(proposal.guard_inputs)
    verdict = evaluate(
        inputs.proposal,
        inputs.facts,
        policy=current_policy(session, shop.id),
        switches=shop_switches(shop),
        **inputs.arguments(),
    )

    assert verdict.to_dict() == Verdict.from_dict(proposal.verdict).to_dict()
    assert (inputs.proposal.target, inputs.facts.id) == (linen.payment_intent_id,) * 2
    assert inputs.order is not None and inputs.order.name == "#1001"
    stored = json.dumps(proposal.guard_inputs)
    assert "maya@example.com" not in stored and "_test_" not in stored


def test_a_lower_refund_ceiling_would_have_blocked_the_refund_just_proposed(
    client: FlaskClient, session: Session, linen: LinenShop
) -> None:
    shop = session.get(Shop, linen.shop_id)
    assert shop is not None
    rules = {"kind_ceilings": {"refund": {"usd": 3000}}}

    answer = api(client, shop, OWNER, "POST", "/api/shop/policy/what-if", {"rules": rules})

    assert answer.status_code == 200, answer.get_json()
    body = answer.get_json()
    assert body["classes"]["would_block"] == {
        "count": 1,
        "money": [{"amount": 4800, "currency": "usd", "display": "$48.00"}],
    }
    [item] = body["items"]
    assert item["case_id"] == str(linen.case_id) and not item["reconstructed"]
    assert [failing["said"] for failing in item["candidate"]["failing"]] == [
        "This refund of $48.00 is above the shop's ceiling of $30.00 for one refund."
    ]
