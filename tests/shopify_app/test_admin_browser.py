"""The embedded admin in a real browser, framed by the Shopify sandbox's stand-in admin
with its App Bridge stand-in: an owner tests a Stripe key, saves it, turns writes on and
issues an agent's credential, each call carrying a fresh session token; and the page
still reads when Shopify's CDN cannot be reached. The setup page, as the owner and as a
viewer see it, has no serious or critical accessibility violation (axe-core). The pages
wear Polaris' colours and list their pages in the admin's own navigation, or their own
when App Bridge cannot load."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from dataclasses import replace

import pytest
from admin_browser_support import (
    APP_PAGES,
    admin_nav,
    axe_violations,
    polaris_tokens,
    rgba,
    serious,
)
from sandbox_settings import with_sandbox
from shopify_app_support import APP_SECRET, CLIENT_ID
from shopify_support import serving_sandbox
from sqlalchemy import select
from sqlalchemy.orm import Session

from app.agents.service import authenticate_agent
from app.audit import AuditEvent
from app.clock import utcnow
from app.connections.models import Connection
from app.settings import Settings
from app.shops.models import Shop
from integrations.shopify.sandbox import SandboxShop, ShopifySandbox
from integrations.stripe.sandbox import DEMO_PERMISSIONS, StripeSandbox

CHROMIUM = shutil.which("chromium")
pytestmark = pytest.mark.skipif(
    CHROMIUM is None, reason="Debian's chromium is not installed (.ci/run installs it)"
)
OWNER, CLERK = 1001, 1002


@pytest.fixture
def shopify() -> Iterator[ShopifySandbox]:
    with serving_sandbox(CLIENT_ID, APP_SECRET) as box:
        yield box


@pytest.fixture
def bridge(shopify: ShopifySandbox) -> str:
    """The App Bridge the page loads: the stand-in's, unless a test says otherwise."""
    return f"{shopify.url}/admin-standin/app-bridge.js"


@pytest.fixture
def settings(
    settings: Settings, sandbox: StripeSandbox, shopify: ShopifySandbox, bridge: str
) -> Settings:
    assert shopify.url is not None
    return replace(
        with_sandbox(settings, sandbox),
        shopify_api_base=shopify.url,
        shopify_app_bridge_url=bridge,
        shopify_admin_origin=shopify.url,
    )


@pytest.fixture
def linen(shopify: ShopifySandbox, web_url: str) -> SandboxShop:
    shopify.standin.app_url = web_url
    shop = shopify.create_shop("linen", owner_user_id=OWNER)
    shopify.add_staff(shop.domain, user_id=CLERK)
    return shop


@pytest.fixture
def page() -> Iterator[object]:
    from playwright.sync_api import sync_playwright  # noqa: PLC0415

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=CHROMIUM,
            args=["--no-sandbox", "--disable-gpu", "--disable-background-networking"],
        )
        # The admin's CSP lets in only its own scripts; axe-core is let in for the check.
        yield browser.new_context(bypass_csp=True).new_page()
        browser.close()


def _admin(shopify: ShopifySandbox, user: int) -> str:
    return f"{shopify.url}/admin-standin/store/linen/apps/caseward?user={user}"


def test_an_owner_sets_the_shop_up_from_inside_the_admin(
    page: object,
    shopify: ShopifySandbox,
    linen: SandboxShop,
    sandbox: StripeSandbox,
    session: Session,
) -> None:
    from playwright.sync_api import Page, expect  # noqa: PLC0415

    assert isinstance(page, Page)
    expect.set_options(timeout=30_000)  # a deadline a loaded machine meets (default: 5 s)
    keys = sandbox.create_account(restricted_keys=[{"permissions": DEMO_PERMISSIONS}])
    restricted = keys.restricted_keys[0].key

    page.goto(_admin(shopify, OWNER))
    app = page.frame_locator("#app")
    expect(app.get_by_role("heading", name="Set up Caseward")).to_be_visible()
    assert serious(axe_violations(page), "owner, setup") == []
    app.get_by_label("Restricted key").fill(restricted)
    app.get_by_role("button", name="Test key").click()
    expect(app.locator("#stripe-key output")).to_have_text(
        "The key has every permission Caseward needs."
    )
    app.get_by_role("button", name="Save").click()
    expect(app.locator("#stripe-key output")).to_contain_text("Connected with rk_test_")
    app.get_by_role("button", name="Turn writes on").click()
    expect(app.locator("#writes output")).to_contain_text("Writes are on")

    shop = session.scalars(select(Shop).where(Shop.domain == linen.domain)).one()
    assert shop.writes_enabled is True
    connection = session.scalars(select(Connection).where(Connection.shop_id == shop.id)).one()
    assert restricted not in page.content() and connection.key_hint.startswith("rk_test_")
    done = session.execute(
        select(AuditEvent.kind, AuditEvent.actor, AuditEvent.actor_surface).where(
            AuditEvent.shop_id == shop.id,
            AuditEvent.kind.in_(["connection.saved", "shop.writes_enabled"]),
        )
    ).all()
    assert sorted(done) == [
        ("connection.saved", str(OWNER), "shopify_admin"),
        ("shop.writes_enabled", str(OWNER), "shopify_admin"),
    ]

    # An agent's credential, issued on the settings page: its secret is shown there once.
    admin_nav(page).get_by_role("link", name="Settings").click()
    issue = app.locator("form.agent-issue")
    issue.get_by_label("Agent's name").fill("Claude")
    issue.get_by_label("Ceiling per proposal (optional)").fill("USD 50.00")
    issue.get_by_role("button", name="Issue a credential").click()
    expect(issue.locator("output")).to_contain_text("it is not shown again")
    secret = issue.locator("pre.agent-secret").inner_text()
    session.expire_all()
    credential = authenticate_agent(session, secret, utcnow())
    assert credential is not None and credential.shop_id == shop.id
    assert (credential.allowed_kinds, credential.ceiling) == (["refund"], {"usd": 5000})


def test_a_viewer_sees_where_the_shop_stands_and_no_forms(
    page: object, shopify: ShopifySandbox, linen: SandboxShop
) -> None:
    from playwright.sync_api import Page, expect  # noqa: PLC0415

    assert isinstance(page, Page)
    expect.set_options(timeout=30_000)
    page.goto(_admin(shopify, OWNER))  # the owner's visit installs the app
    expect(page.frame_locator("#app").get_by_text("you are owner")).to_be_visible()

    page.goto(_admin(shopify, CLERK))
    app = page.frame_locator("#app")
    expect(app.get_by_text("you are viewer")).to_be_visible()
    expect(app.get_by_text("An owner of this shop connects Stripe.")).to_be_visible()
    expect(app.locator("form")).to_have_count(0)
    assert serious(axe_violations(page), "viewer, setup") == []


@pytest.mark.parametrize("bridge", ["https://cdn.shopify.com/shopifycloud/app-bridge.js"])
def test_the_page_reads_the_same_when_shopifys_cdn_cannot_be_reached(
    page: object, shopify: ShopifySandbox, linen: SandboxShop
) -> None:
    from playwright.sync_api import Page, expect  # noqa: PLC0415

    assert isinstance(page, Page)
    expect.set_options(timeout=30_000)
    page.route("https://cdn.shopify.com/**", lambda route: route.abort())

    page.goto(_admin(shopify, OWNER))

    app = page.frame_locator("#app")
    expect(app.get_by_role("heading", name="Set up Caseward")).to_be_visible()
    expect(app.get_by_text("Write: Refunds", exact=False)).to_be_visible()
    expect(app.get_by_text("The shop is read-only", exact=False)).to_be_visible()


def _background(frame: object, selector: str) -> tuple[float, ...]:
    from playwright.sync_api import FrameLocator  # noqa: PLC0415

    assert isinstance(frame, FrameLocator)
    colour = frame.locator(selector).first.evaluate("(e) => getComputedStyle(e).backgroundColor")
    return rgba(colour)


def test_in_the_admin_the_page_wears_polaris_colours_and_its_nav_is_the_admins(
    page: object, shopify: ShopifySandbox, linen: SandboxShop
) -> None:
    from playwright.sync_api import Page, expect  # noqa: PLC0415

    assert isinstance(page, Page)
    expect.set_options(timeout=30_000)  # a deadline a loaded machine meets (default: 5 s)
    tokens = polaris_tokens()

    page.goto(_admin(shopify, OWNER))

    app = page.frame_locator("#app")
    expect(app.get_by_role("heading", name="Set up Caseward")).to_be_visible()
    assert _background(app, "body") == rgba(tokens["--p-color-bg"])
    assert _background(app, "s-section") == rgba(tokens["--p-color-bg-surface"])
    assert _background(app, "button.primary") == rgba(tokens["--p-color-bg-fill-brand"])
    # The app's pages are in the admin's left navigation, not twice inside the page.
    nav = admin_nav(page)
    expect(nav.get_by_role("listitem")).to_have_text(APP_PAGES)
    expect(nav.locator('[aria-current="page"]')).to_have_text("Today")
    expect(app.locator("nav.pages")).to_be_hidden()

    nav.get_by_role("link", name="Cases", exact=True).click()

    expect(app.get_by_role("heading", name="Cases", level=1)).to_be_visible()
    expect(admin_nav(page).locator('[aria-current="page"]')).to_have_text("Cases")
    assert _background(app, "button.primary") == rgba(tokens["--p-color-bg-fill-brand"])


@pytest.mark.parametrize("bridge", ["https://cdn.shopify.com/shopifycloud/app-bridge.js"])
def test_without_app_bridge_the_page_keeps_polaris_look_and_its_own_nav(
    page: object, shopify: ShopifySandbox, linen: SandboxShop
) -> None:
    from playwright.sync_api import Page, expect  # noqa: PLC0415

    assert isinstance(page, Page)
    expect.set_options(timeout=30_000)
    tokens = polaris_tokens()
    page.route("https://cdn.shopify.com/**", lambda route: route.abort())

    page.goto(_admin(shopify, OWNER))

    app = page.frame_locator("#app")
    expect(app.get_by_role("heading", name="Set up Caseward")).to_be_visible()
    assert _background(app, "s-section") == rgba(tokens["--p-color-bg-surface"])
    pages = app.get_by_role("navigation", name="Caseward pages")
    expect(pages.get_by_role("link")).to_have_text(APP_PAGES)
