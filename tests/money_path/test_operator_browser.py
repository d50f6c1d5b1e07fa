"""The demo's click path in a real browser: sign in, read the checks, approve $48.00,
and see Stripe's refund id appear once the worker has executed it."""

from __future__ import annotations

import shutil
from collections.abc import Iterator

import pytest
from flask import Flask
from money_path_harness import Account, Staff, WorkerProcess, wait_for
from screenshots import screenshot_folder

from app.demo import APPROVER, SHOP_DOMAIN, LinenShop

CHROMIUM = shutil.which("chromium")
pytestmark = pytest.mark.skipif(
    CHROMIUM is None, reason="Debian's chromium is not installed (.ci/run installs it)"
)


@pytest.fixture
def page() -> Iterator[object]:
    from playwright.sync_api import sync_playwright  # noqa: PLC0415

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=CHROMIUM,
            args=["--no-sandbox", "--disable-gpu", "--disable-background-networking"],
        )
        yield browser.new_page(viewport={"width": 1100, "height": 1200})
        browser.close()


def test_an_approver_clicks_a_48_dollar_refund_through_to_stripe(
    app: Flask,
    web_url: str,
    linen: LinenShop,
    account: Account,
    worker: WorkerProcess,
    page: object,
) -> None:
    from playwright.sync_api import Page, expect  # noqa: PLC0415

    assert isinstance(page, Page)
    expect.set_options(timeout=30_000)  # a deadline a loaded machine meets (default: 5 s)
    token = Staff.issue_token(app, SHOP_DOMAIN, APPROVER)

    page.goto(f"{web_url}/operator/login")
    page.fill("#token", token)
    page.get_by_role("button", name="Sign in").click()
    page.get_by_role("link", name="One apron arrived torn (order #1001)").click()
    expect(page.locator("tr", has_text="Enough left to refund")).to_contain_text("passed")
    with page.expect_navigation():  # a form post; the server answers with the case page
        page.get_by_role("button", name="Approve $48.00").click()
    assert page.url.endswith(f"/operator/cases/{linen.case_id}")
    assert token not in page.content()

    refund_row = page.locator("tr", has_text="refund $48.00")

    def succeeded_after_reload() -> bool:
        page.reload()  # the page does not update itself: a person reloads it
        return "succeeded" in refund_row.inner_text()

    wait_for(succeeded_after_reload, timeout=30, what="the case page to show the refund done")
    refunds = account.stripe.v1.refunds.list(
        params={"payment_intent": linen.payment_intent_id}
    ).data
    assert [(r.amount, r.status) for r in refunds] == [(4800, "succeeded")]
    expect(refund_row).to_contain_text(refunds[0].id)
    expect(refund_row).to_contain_text("succeeded")
    expect(refund_row).to_contain_text("Attempt 1 at the provider: sent, the provider answered")
    folder = screenshot_folder()
    folder.mkdir(exist_ok=True)
    page.screenshot(path=folder / "operator-case.png", full_page=True)
