"""The what-if in a real browser, inside the Shopify sandbox's stand-in admin: the owner
types a lower ceiling into the policy form, presses the what-if button, and reads what it
would have changed in the last 90 days, each action linking to its case; nothing is saved."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from dataclasses import replace

import pytest
from sandbox_settings import with_sandbox
from shopify_app_support import APP_SECRET, CLIENT_ID
from shopify_support import serving_sandbox
from sqlalchemy import select
from sqlalchemy.orm import Session
from whatif_support import ShopPast

from app.actors import Surface, staff
from app.cases.models import case_reference
from app.clock import utcnow
from app.settings import Settings
from app.shops.models import Shop
from app.shops.service import current_policy, save_policy
from integrations.shopify.sandbox import SandboxShop, ShopifySandbox
from integrations.stripe.sandbox import StripeSandbox

CHROMIUM = shutil.which("chromium")
pytestmark = pytest.mark.skipif(
    CHROMIUM is None, reason="Debian's chromium is not installed (.ci/run installs it)"
)
OWNER = 1001


@pytest.fixture
def shopify() -> Iterator[ShopifySandbox]:
    with serving_sandbox(CLIENT_ID, APP_SECRET) as box:
        yield box


@pytest.fixture
def settings(settings: Settings, sandbox: StripeSandbox, shopify: ShopifySandbox) -> Settings:
    assert shopify.url is not None
    return replace(
        with_sandbox(settings, sandbox),
        shopify_api_base=shopify.url,
        shopify_app_bridge_url=f"{shopify.url}/admin-standin/app-bridge.js",
        shopify_admin_origin=shopify.url,
    )


@pytest.fixture
def linen(shopify: ShopifySandbox, web_url: str) -> SandboxShop:
    shopify.standin.app_url = web_url
    return shopify.create_shop("linen", owner_user_id=OWNER)


@pytest.fixture
def page() -> Iterator[object]:
    from playwright.sync_api import sync_playwright  # noqa: PLC0415

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=CHROMIUM,
            args=["--no-sandbox", "--disable-gpu", "--disable-background-networking"],
        )
        yield browser.new_context(bypass_csp=True).new_page()
        browser.close()


def test_the_owner_sees_what_a_lower_ceiling_would_have_changed(
    page: object, shopify: ShopifySandbox, linen: SandboxShop, session: Session
) -> None:
    from playwright.sync_api import Page, expect  # noqa: PLC0415

    assert isinstance(page, Page)
    expect.set_options(timeout=30_000)  # a deadline a loaded machine meets (default: 5 s)
    admin = f"{shopify.url}/admin-standin/store/linen/apps/caseward"
    page.goto(f"{admin}?user={OWNER}")  # the owner's visit installs the app
    app = page.frame_locator("#app")
    expect(app.get_by_role("heading", name="Set up Caseward")).to_be_visible()
    shop = session.scalars(select(Shop).where(Shop.domain == linen.domain)).one()
    owner = staff(str(OWNER), Surface.SHOPIFY_ADMIN)
    rules = {"auto_approve_ceiling": {"usd": 5000}}
    save_policy(session, shop=shop, actor=owner, rules=rules, now=utcnow())
    past = ShopPast(session, shop, utcnow())
    proposal = past.proposal(customer="cus_maya", amount=3000, days=12)
    past.record(
        "re_outside", days=40, amount=2500, payment="pi_g", customer="cus_g", payment_amount=5000
    )
    session.commit()

    page.goto(f"{admin}/app/policy?user={OWNER}")
    app.get_by_label("Approved by the policy itself up to").fill("20.00")
    app.get_by_role("button", name="See what this would have done (last 90 days)").click()

    results = app.locator("#what-if")
    expect(results).to_be_visible()
    expect(results).to_contain_text("Nothing was changed")
    escalated = results.locator('[data-change="would_escalate"]')
    expect(escalated.locator(".count")).to_have_text("2")
    expect(escalated.locator(".money")).to_have_text("$55.00")
    expect(results.locator('[data-change="unchanged"] .count')).to_have_text("0")
    rows = results.locator("tbody tr")
    expect(rows).to_have_count(2)
    link = rows.first.get_by_role("link")
    expect(link).to_have_text(case_reference(proposal.case_id))
    assert f"/app/cases/{proposal.case_id}" in (link.get_attribute("href") or "")
    expect(rows.nth(1)).to_contain_text("re_outside (rebuilt)")
    session.expire_all()
    assert current_policy(session, shop.id).version == 2
