"""The demo's walk in a real browser, inside the Shopify sandbox's stand-in admin: the
approver finds the linen case in the queue, reads the $48.00 refund in words, approves it,
and after a real RQ worker has sent it, the case file shows Stripe's refund id; a staff
member without a role reads the same case with no approve button, and the API refuses
their approval. The linen shop is seeded as ``make run`` seeds it, in Caseward and in the
Shopify sandbox; screenshots of each step are kept for the README (renewed with
``CASEWARD_SCREENSHOTS=1``)."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from dataclasses import dataclass

import pytest
import stripe
from admin_browser_support import admin_nav, axe_violations, serious
from flask import Flask
from money_path_harness import WorkerProcess, wait_for
from sandbox_settings import with_sandbox
from screenshots import screenshot_folder
from shopify_app_support import APP_SECRET, CLIENT_ID
from shopify_support import serving_sandbox
from sqlalchemy import select
from sqlalchemy.orm import Session

from app.cases.proposals import Approval, Proposal, ProposalStatus
from app.crypto import secret_box
from app.db import Database
from app.demo import APP_HANDLE, DemoCase, open_demo
from app.execution.models import Action
from app.settings import Settings
from integrations.shopify.sandbox import ShopifySandbox, seed_demo_shop
from integrations.shopify.sandbox.demo import (
    APPROVER_USER_ID,
    DEMO_SHOP,
    OWNER_USER_ID,
    VIEWER_USER_ID,
)
from integrations.stripe.sandbox import DEMO_PERMISSIONS, StripeSandbox

CHROMIUM = shutil.which("chromium")
pytestmark = pytest.mark.skipif(
    CHROMIUM is None, reason="Debian's chromium is not installed (.ci/run installs it)"
)
SCREENSHOTS = screenshot_folder()
SUBJECT = "One apron arrived torn (order #1001)"


@dataclass(frozen=True)
class Demo:
    """The seeded demo as the browser meets it, and the Stripe account behind it."""

    case: DemoCase
    proposal: Proposal
    stripe: stripe.StripeClient
    admin: str  # the stand-in admin's address of the app, without ``?user=``


@pytest.fixture
def shopify() -> Iterator[ShopifySandbox]:
    with serving_sandbox(CLIENT_ID, APP_SECRET) as box:
        yield box


@pytest.fixture
def settings(settings: Settings, sandbox: StripeSandbox, shopify: ShopifySandbox) -> Settings:
    assert shopify.url is not None
    return with_sandbox(
        settings,
        sandbox,
        shopify_api_base=shopify.url,
        shopify_app_bridge_url=f"{shopify.url}/admin-standin/app-bridge.js",
        shopify_admin_origin=shopify.url,
    )


@pytest.fixture
def demo(
    app: Flask,
    settings: Settings,
    sandbox: StripeSandbox,
    shopify: ShopifySandbox,
    web_url: str,
) -> Demo:
    """The linen shop in Caseward (its staff's Shopify ids with their roles) and in the
    Shopify sandbox (order #1001 paid by the demo's Stripe payment), the app framed by
    the stand-in admin."""
    keys = sandbox.create_account(restricted_keys=[{"permissions": DEMO_PERMISSIONS}])
    with Database.state(app).session_factory() as session:
        case = open_demo(
            session,
            settings=settings,
            box=secret_box(settings),
            secret_key=keys.secret_key,
            restricted_key=keys.restricted_keys[0].key,
            web=web_url,
        )
        proposal = session.scalars(select(Proposal).where(Proposal.case_id == case.case_id)).one()
    seed_demo_shop(shopify, payment_reference=case.payment_id)
    shopify.standin.app_url = web_url
    client = stripe.StripeClient(
        keys.secret_key, base_addresses={"api": settings.stripe_api_base}, max_network_retries=0
    )
    admin = f"{shopify.url}/admin-standin/store/{DEMO_SHOP}/apps/{APP_HANDLE}"
    return Demo(case, proposal, client, admin)


@pytest.fixture
def worker(settings: Settings, redis_url: str) -> Iterator[WorkerProcess]:
    process = WorkerProcess(settings, redis_url)
    yield process
    process.stop()


@pytest.fixture
def page() -> Iterator[object]:
    from playwright.sync_api import sync_playwright  # noqa: PLC0415

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=CHROMIUM,
            args=["--no-sandbox", "--disable-gpu", "--disable-background-networking"],
        )
        # Tall enough that a screenshot holds a whole proposal, from its words to its button.
        yield browser.new_page(viewport={"width": 1280, "height": 1300})
        browser.close()


def _screenshot(page: object, name: str, top: object = None) -> None:
    """The admin as the person sees it, the frame scrolled to ``top`` (a locator) first."""
    from playwright.sync_api import Locator, Page  # noqa: PLC0415

    assert isinstance(page, Page)
    if isinstance(top, Locator):
        top.evaluate("element => element.scrollIntoView({ block: 'start' })")
    SCREENSHOTS.mkdir(exist_ok=True)
    page.screenshot(path=SCREENSHOTS / f"{name}.png")


def test_an_approver_walks_the_linen_case_from_the_queue_to_stripes_refund(
    page: object, demo: Demo, worker: WorkerProcess
) -> None:
    from playwright.sync_api import Page, expect  # noqa: PLC0415

    assert isinstance(page, Page)
    expect.set_options(timeout=30_000)  # a deadline a loaded machine meets (default: 5 s)

    page.goto(f"{demo.admin}?user={APPROVER_USER_ID}")
    app = page.frame_locator("#app")
    expect(app.get_by_text("you are approver")).to_be_visible()
    # The app opens on the shop's day: the case waits for an approval, with its money.
    expect(app.locator('[data-figure="awaiting"] dd')).to_contain_text("1 · $48.00")
    _screenshot(page, "today")

    admin_nav(page).get_by_role("link", name="Cases").click()
    expect(app.locator('s-badge[data-count="needs_approval"]')).to_have_text("1")
    row = app.locator("tr", has_text=SUBJECT)
    expect(row).to_contain_text("Needs approval")
    _screenshot(page, "queue")

    row.get_by_role("link", name=SUBJECT).click()
    expect(app.get_by_role("heading", name=SUBJECT, level=1)).to_be_visible()
    proposal = app.locator(f'[data-proposal="{demo.proposal.id}"]')
    in_words = proposal.locator(".in-words")
    expect(in_words).to_contain_text("Refund $48.00 of order #1001")
    expect(in_words).to_contain_text(f"Stripe payment {demo.case.payment_id}")
    expect(in_words).to_contain_text("to the original payment method")
    _screenshot(page, "case-before-approval", top=in_words)

    proposal.get_by_role("button", name="Approve").click()
    expect(proposal.locator("form.approve output")).to_have_text(
        "Approved: the action is queued and will be sent once."
    )

    frame = page.frame(name="app-iframe")
    assert frame is not None
    action = app.locator("article.action")

    def succeeded_after_reload() -> bool:
        frame.goto(frame.url)  # the case file does not update itself: a person reloads it
        return "succeeded" in action.locator("s-badge").first.inner_text()

    wait_for(succeeded_after_reload, timeout=30, what="the case file to show the refund done")
    refunds = demo.stripe.v1.refunds.list(params={"payment_intent": demo.case.payment_id}).data
    assert [(refund.amount, refund.status) for refund in refunds] == [(4800, "succeeded")]
    expect(action).to_contain_text(f"Provider reference {refunds[0].id}")
    expect(action).to_contain_text("Approved by Sam Approver")
    _screenshot(page, "case-after-refund", top=action)


def test_a_staff_member_without_a_role_reads_the_case_but_cannot_approve_it(
    page: object, demo: Demo, session: Session
) -> None:
    from playwright.sync_api import Page, expect  # noqa: PLC0415

    assert isinstance(page, Page)
    expect.set_options(timeout=30_000)

    page.goto(f"{demo.admin}?user={VIEWER_USER_ID}")
    app = page.frame_locator("#app")
    expect(app.get_by_text("you are viewer")).to_be_visible()
    app.get_by_role("link", name=SUBJECT).click()
    proposal = app.locator(f'[data-proposal="{demo.proposal.id}"]')
    in_words = proposal.locator(".in-words")
    expect(in_words).to_contain_text("Refund $48.00 of order #1001")
    expect(proposal.get_by_role("button")).to_have_count(0)
    _screenshot(page, "case-as-viewer", top=in_words)

    # The button is a courtesy: the API refuses the approval itself, from this very page.
    frame = page.frame(name="app-iframe")
    assert frame is not None
    status = frame.evaluate(
        """async ([url, digest]) => (await fetch(url, {
            method: "POST",
            headers: { "Content-Type": "application/json" },
            body: JSON.stringify({ digest }),
        })).status""",
        [f"/api/proposals/{demo.proposal.id}/approve", demo.proposal.digest],
    )
    assert status == 403
    assert session.get_one(Proposal, demo.proposal.id).status == ProposalStatus.AWAITING_APPROVAL
    assert session.scalars(select(Approval)).all() == []
    assert session.scalars(select(Action)).all() == []


# Every page of the admin, by the link that opens it, and the heading it opens on.
ADMIN_PAGES = (
    ("Today", "Today"),
    ("Cases", "Cases"),
    ("Settings", "Settings"),
    ("Audit log", "Audit log"),
    ("History check", "History check"),
)


@pytest.fixture
def checked_page() -> Iterator[object]:
    """A browser page that lets axe-core into the admin's frame (its CSP allows only the
    app's own scripts, each with the page's nonce)."""
    from playwright.sync_api import sync_playwright  # noqa: PLC0415

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=CHROMIUM,
            args=["--no-sandbox", "--disable-gpu", "--disable-background-networking"],
        )
        context = browser.new_context(bypass_csp=True, viewport={"width": 1280, "height": 1300})
        yield context.new_page()
        browser.close()


@pytest.mark.parametrize(
    ("user", "role"),
    [(OWNER_USER_ID, "owner"), (APPROVER_USER_ID, "approver"), (VIEWER_USER_ID, "viewer")],
)
def test_every_admin_page_reads_without_serious_accessibility_problems(
    checked_page: object, demo: Demo, user: int, role: str
) -> None:
    """axe-core (WCAG 2 A and AA) on every admin page and on the case, as each kind of
    staff member sees it: nothing serious or critical; the rest is printed."""
    from playwright.sync_api import Page, expect  # noqa: PLC0415

    page = checked_page
    assert isinstance(page, Page)
    expect.set_options(timeout=30_000)
    page.goto(f"{demo.admin}?user={user}")
    app = page.frame_locator("#app")
    expect(app.get_by_text(f"you are {role}")).to_be_visible()
    pages = admin_nav(page)
    found = {}
    for link, heading in ADMIN_PAGES:
        pages.get_by_role("link", name=link, exact=True).click()
        expect(app.get_by_role("heading", name=heading, level=1)).to_be_visible()
        found[heading] = axe_violations(page)
        if role == "owner" and heading not in ("Today", "Cases"):  # the walk keeps those
            _screenshot(page, heading.lower().replace(" ", "-"))
    if role == "owner":  # the policy's own page, an owner's only
        pages.get_by_role("link", name="Settings", exact=True).click()
        app.get_by_role("link", name="Change the policy, or read its versions").click()
        expect(app.get_by_role("heading", name="Policy", level=1)).to_be_visible()
        found["Policy"] = axe_violations(page)
        _screenshot(page, "policy")
    pages.get_by_role("link", name="Cases", exact=True).click()
    app.get_by_role("link", name=SUBJECT).click()
    expect(app.get_by_role("heading", name=SUBJECT, level=1)).to_be_visible()
    found["the case"] = axe_violations(page)

    assert {
        where: serious(violations, f"{role}, {where}") for where, violations in found.items()
    } == {where: [] for where in found}
