"""A refund above the shop's ceiling for one refund, as the merchant meets it: the owner sets
the ceiling on the policy form, a proposal above it is checked on fresh facts from the Stripe
sandbox and comes back blocked, nobody can approve it, and the case page says why in words."""

from __future__ import annotations

import re

import pytest
from admin_pages_support import api, open_page, text_of
from flask.testing import FlaskClient
from sandbox_settings import with_sandbox
from sqlalchemy.orm import Session

from app.clock import utcnow
from app.crypto import secret_box
from app.demo import APPROVER, OWNER, LinenShop, seed_linen_shop
from app.settings import Settings
from app.shopify.models import ShopifyInstall
from app.shops.models import Shop
from integrations.stripe.sandbox import DEMO_PERMISSIONS, StripeSandbox

CEILING_SAID = "This refund of $40.00 is above the shop's ceiling of $30.00 for one refund."


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


def test_a_refund_above_the_refund_ceiling_cannot_be_approved_and_the_case_says_why(
    client: FlaskClient, session: Session, linen: LinenShop
) -> None:
    shop = session.get(Shop, linen.shop_id)
    assert shop is not None
    form = {
        "currency": "usd",
        "enabled_kinds": ["refund", "customer_credit", "discount"],
        "duplicate_window_days": "3",
        "max_percent_off": "50",
        "refund_ceiling": "30.00",
    }
    saved = api(client, shop, OWNER, "PUT", "/api/shop/policy/form", form)
    assert saved.status_code == 200, saved.get_json()

    refund = {
        "kind": "refund",
        "target": linen.payment_intent_id,
        "amount": 4000,
        "currency": "usd",
    }
    made = api(client, shop, APPROVER, "POST", f"/api/cases/{linen.case_id}/proposals", refund)
    assert made.status_code == 201, made.get_json()
    proposal = made.get_json()["proposal"]
    approve = {"digest": proposal["digest"]}
    refused = api(
        client, shop, APPROVER, "POST", f"/api/proposals/{proposal['id']}/approve", approve
    )

    assert proposal["status"] == "blocked"
    assert refused.status_code == 409
    assert refused.get_json()["error"]["code"] == "proposal_blocked"
    page = text_of(open_page(client, shop, APPROVER, f"/app/cases/{linen.case_id}"))
    article = page.split(f'data-proposal="{proposal["id"]}"')[1].split("</article>")[0]
    assert "The checks say: blocked." in article
    assert re.search(
        r"<td>Within the ceiling for one action of its kind</td>\s*<td><s-badge tone=\"critical\">"
        rf"failed</s-badge></td>\s*<td>{re.escape(CEILING_SAID)}</td>",
        article,
    )
    assert "Your approval would be refused now:" in article
    assert 'class="approve"' not in article
