"""The storefront chat's whole story in a real browser, against the real app: a shopper on
the linen shop's storefront (the Shopify sandbox, whose app proxy forwards to Caseward
served over HTTP) asks for a refund, proves who they are with the code mailed to the
order's email, a person approves the drafted $48.00 refund through the staff API, and the
widget tells the shopper what Stripe reports, first "Refund submitted", then "Refunded".

The sequence:

1. an unverified shopper opens the chat with the keyboard and writes; the drafting job (a
   real RQ worker, background queue) answers by asking them to verify;
2. they give order #1001 and maya@example.com, type the code from the mail outbox, and see
   they are verified, then the reply that a $48.00 refund was prepared for review;
3. the approver approves the drafted proposal's digest (the one click of the admin);
4. the worker sends the refund, which Stripe holds ``pending`` until the sandbox's clock
   passes :data:`SETTLE_AFTER`; the widget shows the case submitted, then refunded once
   Stripe's ``refund.updated`` webhook is recorded, each update said once;
5. axe-core checks the open panel in every state (WCAG 2 A and AA): nothing serious or
   critical.

Screenshots of the open panel at each step, and on a phone, are kept for docs/conversations.md
(renewed with ``CASEWARD_SCREENSHOTS=1``). axe-core comes from ``npm ci --prefix widget``.
"""

from __future__ import annotations

import re
import shutil
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import stripe
from flask import Flask
from sandbox_settings import with_sandbox
from screenshots import screenshot_folder
from shopify_support import serving_sandbox
from storefront_support import APP_SECRET, CLIENT_ID, newest_code

from app.crypto import SecretBox, secret_box
from app.db import Database
from app.demo import APPROVER, SHOP_DOMAIN, LinenShop, seed_linen_shop
from app.settings import Settings
from integrations.mail import Outbox
from integrations.shopify.sandbox import ShopifySandbox, seed_demo_shop
from integrations.stripe.sandbox import DEMO_PERMISSIONS, StripeSandbox

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "money_path"))
from money_path_harness import Staff, WorkerProcess

CHROMIUM = shutil.which("chromium")
pytestmark = pytest.mark.skipif(
    CHROMIUM is None, reason="Debian's chromium is not installed (.ci/run installs it)"
)
AXE = Path(__file__).resolve().parents[2] / "widget" / "node_modules" / "axe-core" / "axe.min.js"
SCREENSHOTS = screenshot_folder(Path(__file__).resolve().parent / "screenshots")
TIMEOUT = 30_000  # a deadline a loaded machine meets; the widget polls every 5 s
# Sandbox seconds a refund stays pending: the test moves the sandbox's clock past them
# once the shopper has seen "submitted", so that state is never missed between polls.
SETTLE_AFTER = 30
ASKS = (
    "Hi! One of the two linen aprons I bought arrived with a torn seam. "
    "Could I get a refund for that one?"
)
ASKED_TO_VERIFY = "please verify it's you first"
PREPARED = re.compile(r"prepared a refund of \$48\.00 .*review")
SUBMITTED_UPDATE = "Your refund of $48.00 has been submitted to the payment provider."
REFUNDED_UPDATE = "Your refund of $48.00 has been made to your original payment method."
# The case's status as the shopper reads it, in the order it may only move.
IN_REVIEW = "Your request is with our team for review."
SUBMITTED = "Refund submitted; waiting for the payment provider."
REFUNDED = "Refunded: the payment provider confirmed it."
STATUS_ORDER = (
    "We are looking into it.",
    IN_REVIEW,
    "Approved; it is being sent to the payment provider.",
    SUBMITTED,
    REFUNDED,
)
# Records every heading the case box shows, as the shopper saw it, in order.
WATCH_CASE_HEADINGS = """root => {
    window.caseHeadings = [];
    const seen = () => {
        const heading = root.querySelector(".cw-case h3");
        const text = heading ? heading.textContent : null;
        if (text && window.caseHeadings.at(-1) !== text) window.caseHeadings.push(text);
    };
    new MutationObserver(seen).observe(root, { subtree: true, childList: true });
}"""
RUN_AXE = """async root => {
    const only = { type: "tag", values: ["wcag2a", "wcag2aa"] };
    const results = await axe.run(root, { runOnly: only });
    return results.violations.map(v => ({
        id: v.id, impact: v.impact, help: v.help, nodes: v.nodes.map(n => n.target.join(" ")),
    }));
}"""


@dataclass(frozen=True)
class Storefront:
    """The linen shop in Caseward and in the Shopify sandbox, its storefront's address,
    and the Stripe account that holds Maya's payment."""

    linen: LinenShop
    url: str
    stripe: stripe.StripeClient


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    from playwright.sync_api import expect, sync_playwright  # noqa: PLC0415

    expect.set_options(timeout=TIMEOUT)
    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(
            executable_path=CHROMIUM,
            args=[
                "--no-sandbox",
                "--disable-gpu",
                "--disable-background-networking",
                "--host-resolver-rules=MAP *.myshopify.com 127.0.0.1",
            ],
        )
        yield launched
        launched.close()


@pytest.fixture
def shopify() -> Iterator[ShopifySandbox]:
    with serving_sandbox(CLIENT_ID, APP_SECRET) as box:
        yield box


@pytest.fixture
def settings(settings: Settings, sandbox: StripeSandbox) -> Settings:
    return with_sandbox(
        settings,
        sandbox,
        shopify_api_key=CLIENT_ID,
        shopify_api_secret=APP_SECRET,
        encryption_keys=(SecretBox.generate_key(),),
    )


@pytest.fixture
def storefront(
    app: Flask,
    settings: Settings,
    sandbox: StripeSandbox,
    shopify: ShopifySandbox,
    web_url: str,
) -> Storefront:
    """The linen shop seeded as in the money path's tests, its Stripe refunds held
    pending, and the Shopify sandbox's storefront forwarding its app proxy to the app."""
    keys = sandbox.create_account(restricted_keys=[{"permissions": DEMO_PERMISSIONS}])
    with Database.state(app).session_factory() as session:
        linen = seed_linen_shop(
            session,
            settings=settings,
            box=secret_box(settings),
            secret_key=keys.secret_key,
            restricted_key=keys.restricted_keys[0].key,
            webhook_base_url=web_url,
        )
        session.commit()
    sandbox.set_refund_mode(keys.id, "pending_processing", settle_after=SETTLE_AFTER)
    seed_demo_shop(shopify, payment_reference=linen.payment_intent_id)
    shopify.storefront.app_proxy_url = f"{web_url}/proxy"
    assert shopify.url is not None
    port = shopify.url.rsplit(":", 1)[1]
    client = stripe.StripeClient(
        keys.secret_key, base_addresses={"api": settings.stripe_api_base}, max_network_retries=0
    )
    return Storefront(linen, f"http://{SHOP_DOMAIN}:{port}/", client)


@pytest.fixture
def page(browser: Any) -> Iterator[Any]:
    """A fresh browser context (its own localStorage), wide enough for the open panel."""
    context = browser.new_context(viewport={"width": 1280, "height": 800})
    yield context.new_page()
    context.close()


@pytest.fixture
def worker(storefront: Storefront, settings: Settings, redis_url: str) -> Iterator[WorkerProcess]:
    process = WorkerProcess(settings, redis_url)
    yield process
    process.stop()


def _axe_source() -> str:
    if not AXE.is_file():
        pytest.fail("axe-core is not installed (widget/node_modules): run `npm ci --prefix widget`")
    return AXE.read_text()


def _no_serious_violations(page: Any, state: str) -> None:
    """axe-core on the widget's root: nothing serious or critical; the rest is printed."""
    violations = page.locator("[data-caseward-chat]").evaluate(RUN_AXE)
    for violation in violations:
        print(f"axe, {state}: {violation}")
    assert [v for v in violations if v["impact"] in ("serious", "critical")] == [], state


def _screenshot(page: Any, name: str) -> None:
    SCREENSHOTS.mkdir(exist_ok=True)
    page.screenshot(path=SCREENSHOTS / f"{name}.png")


def test_a_shopper_verifies_and_watches_their_refund_go_through_as_stripe_reports_it(
    page: Any,
    app: Flask,
    settings: Settings,
    sandbox: StripeSandbox,
    storefront: Storefront,
    worker: WorkerProcess,
) -> None:
    from playwright.sync_api import expect  # noqa: PLC0415

    axe = _axe_source()
    page.goto(storefront.url)
    page.add_script_tag(content=axe)
    page.locator("[data-caseward-chat]").evaluate(WATCH_CASE_HEADINGS)

    # 1. Not logged in, by keyboard: the launcher, then the message, sent with Enter.
    launcher = page.get_by_role("button", name="Chat with us")
    launcher.focus()
    page.keyboard.press("Enter")
    dialog = page.get_by_role("dialog", name="Chat with us")
    expect(dialog).to_be_visible()
    expect(page.get_by_label("Your message")).to_be_focused()
    page.keyboard.type(ASKS)
    page.keyboard.press("Enter")

    said = dialog.get_by_role("list", name="Conversation").get_by_role("listitem")
    expect(said.filter(has_text=ASKS)).to_have_count(1)
    expect(said.filter(has_text=ASKED_TO_VERIFY)).to_be_visible()
    expect(dialog).not_to_contain_text("1001")
    _no_serious_violations(page, "chat")
    _screenshot(page, "storefront-asks-to-verify")

    # 2. Order number and email, then the code mailed to the order's email.
    verify = dialog.get_by_role("button", name="Verify it's you")
    expect(verify, "the chat still offers to verify after it polled").to_be_visible()
    verify.click()
    page.get_by_label("Order number").fill("#1001")
    page.get_by_label("Email").fill("maya@example.com")
    _no_serious_violations(page, "verify form")
    dialog.get_by_role("button", name="Send me a code").click()
    expect(dialog.get_by_text("We sent a code to m•••@example.com.")).to_be_visible()
    code = page.get_by_label("Six-digit code")
    expect(code).to_be_focused()
    page.keyboard.type(
        newest_code(Outbox(settings.mail_outbox_path, settings.mail_from), "maya@example.com")
    )
    _no_serious_violations(page, "code step")
    _screenshot(page, "storefront-code-step")
    dialog.get_by_role("button", name="Verify", exact=True).click()

    expect(dialog.get_by_text("You're verified.")).to_be_visible()
    expect(said.filter(has_text=PREPARED)).to_be_visible()
    heading = dialog.get_by_role("region", name="Your case").get_by_role("heading")
    expect(heading).to_have_text(re.compile(f": {re.escape(IN_REVIEW)}$"))

    # 3. The approver's one click.
    approver = Staff(app.test_client(), app, SHOP_DOMAIN, APPROVER)
    [case] = [
        c
        for c in approver.get("/api/cases").get_json()["cases"]
        if c["id"] != str(storefront.linen.case_id)
    ]
    [proposal] = approver.get(f"/api/cases/{case['id']}").get_json()["proposals"]
    assert (proposal["proposed_by"], proposal["amount"]["amount"]) == ("system:drafter", 4800)
    approved = approver.post(
        f"/api/proposals/{proposal['id']}/approve", {"digest": proposal["digest"]}
    )
    assert approved.status_code == 200, approved.get_json()

    # 4. Stripe holds the refund pending; then the sandbox's clock passes its settling.
    expect(heading).to_have_text(re.compile(f": {re.escape(SUBMITTED)}$"))
    expect(said.filter(has_text=SUBMITTED_UPDATE)).to_have_count(1)
    refunds = storefront.stripe.v1.refunds.list(
        params={"payment_intent": storefront.linen.payment_intent_id}
    ).data
    assert [(r.amount, r.status) for r in refunds] == [(4800, "pending")]
    sandbox.advance_clock(SETTLE_AFTER + 1)

    expect(heading).to_have_text(re.compile(f": {re.escape(REFUNDED)}$"))
    expect(said.filter(has_text=SUBMITTED_UPDATE)).to_have_count(1)
    expect(said.filter(has_text=REFUNDED_UPDATE)).to_have_count(1)
    shown = [text.split(": ", 1)[1] for text in page.evaluate("window.caseHeadings")]
    assert shown == [status for status in STATUS_ORDER if status in shown], shown
    _no_serious_violations(page, "final status")
    heading.scroll_into_view_if_needed()  # the shopper scrolls up to their case's status
    _screenshot(page, "storefront-refunded")

    page.set_viewport_size({"width": 375, "height": 667})
    heading.scroll_into_view_if_needed()
    expect(heading).to_be_in_viewport()
    _screenshot(page, "storefront-phone")
