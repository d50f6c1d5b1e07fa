"""The storefront chat in a real browser, on the sandbox shop's own pages, talking through
the sandbox's app proxy to a stand-in app: a keyboard shopper opens and closes it, a
message with markup stays text, the verify step's fields are labelled and a wrong code is
said beside the code field, a busy app is waited out, and on a phone the panel takes the
whole width and does not move when motion is reduced.

The browser resolves ``*.myshopify.com`` to the sandbox, so the page, its assets and
``/apps/caseward`` share the shop's origin as at Shopify."""

from __future__ import annotations

import shutil
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from shopify_support import serving_sandbox
from widget_support import (
    CLIENT_ID,
    CLIENT_SECRET,
    EMAIL_HINT,
    GOOD_CODE,
    SHOP_REPLY,
    WRONG_CODE,
    StandInApp,
    serving_app,
)

from integrations.shopify.sandbox import ShopifySandbox

CHROMIUM = shutil.which("chromium")
pytestmark = pytest.mark.skipif(
    CHROMIUM is None, reason="Debian's chromium is not installed (.ci/run installs it)"
)
SHOP = "linen.myshopify.com"
MERCHANT_GREETING = "Hello from Linen & Loom! Ask us anything."
HOSTILE = '<img src=x onerror="document.body.dataset.pwned = 1">'
TIMEOUT = 30_000  # a deadline a loaded machine meets (Playwright's default is 5 s)


@pytest.fixture(scope="module")
def shopify() -> Iterator[ShopifySandbox]:
    with serving_sandbox(CLIENT_ID, CLIENT_SECRET) as box:
        box.create_shop("linen")
        box.storefront.configure_embed(SHOP, greeting=MERCHANT_GREETING)
        yield box


@pytest.fixture(scope="module")
def app(shopify: ShopifySandbox) -> Iterator[StandInApp]:
    with serving_app(poll_after=1) as stand_in:
        shopify.storefront.app_proxy_url = stand_in.url
        yield stand_in


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
def storefront_page(
    browser: Any, shopify: ShopifySandbox, app: StandInApp
) -> Iterator[Callable[..., Any]]:
    """Open the shop's home page in a fresh browser context (its own localStorage)."""
    contexts: list[Any] = []
    assert shopify.url is not None
    port = shopify.url.rsplit(":", 1)[1]

    def open_page(**options: Any) -> Any:
        context = browser.new_context(**options)
        contexts.append(context)
        page = context.new_page()
        page.goto(f"http://{SHOP}:{port}/")
        return page

    yield open_page
    for context in contexts:
        context.close()


def _open_chat(page: Any) -> Any:
    from playwright.sync_api import expect  # noqa: PLC0415

    page.get_by_role("button", name="Chat with us").click()
    dialog = page.get_by_role("dialog", name="Chat with us")
    expect(dialog).to_be_visible()
    return dialog


def _send(page: Any, text: str) -> None:
    page.get_by_label("Your message").fill(text)
    page.get_by_label("Your message").press("Enter")


def _contrast(foreground: str, background: str) -> float:
    """WCAG contrast ratio of two ``rgb(r, g, b)`` colours."""

    def luminance(colour: str) -> float:
        channels = [int(part) / 255 for part in colour[colour.index("(") + 1 : -1].split(",")[:3]]
        linear = [c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4 for c in channels]
        return 0.2126 * linear[0] + 0.7152 * linear[1] + 0.0722 * linear[2]

    lighter, darker = sorted((luminance(foreground), luminance(background)), reverse=True)
    return (lighter + 0.05) / (darker + 0.05)


def test_a_keyboard_shopper_opens_the_chat_and_escape_brings_them_back(
    storefront_page: Callable[..., Any],
) -> None:
    from playwright.sync_api import expect  # noqa: PLC0415

    page = storefront_page()
    launcher = page.get_by_role("button", name="Chat with us")
    launcher.focus()
    page.keyboard.press("Enter")

    dialog = page.get_by_role("dialog", name="Chat with us")
    expect(dialog).to_be_visible()
    expect(launcher).to_have_attribute("aria-expanded", "true")
    assert launcher.get_attribute("aria-controls") == dialog.get_attribute("id")
    expect(page.get_by_label("Your message")).to_be_focused()
    # The merchant's greeting (the embed's setting) wins over the app's.
    expect(dialog.get_by_text(MERCHANT_GREETING)).to_be_visible()
    expect(dialog.get_by_role("list", name="Conversation")).to_have_attribute("aria-live", "polite")
    assert dialog.evaluate("node => getComputedStyle(node).animationName") == "cw-rise"

    page.keyboard.press("Escape")

    expect(dialog).to_be_hidden()
    expect(launcher).to_have_attribute("aria-expanded", "false")
    expect(launcher).to_be_focused()
    looks = launcher.evaluate(
        "node => { const s = getComputedStyle(node);"
        " return [s.outlineStyle, s.outlineWidth, s.color, s.backgroundColor]; }"
    )
    assert looks[:2] == ["solid", "3px"]
    assert _contrast(looks[2], looks[3]) >= 4.5


def test_a_message_with_markup_is_shown_as_text_and_replies_arrive_while_open(
    storefront_page: Callable[..., Any], app: StandInApp
) -> None:
    from playwright.sync_api import expect  # noqa: PLC0415

    page = storefront_page()
    dialog = _open_chat(page)
    _send(page, HOSTILE)

    mine = dialog.get_by_role("listitem").filter(has_text=HOSTILE)
    theirs = dialog.get_by_role("listitem").filter(has_text=SHOP_REPLY)
    expect(mine).to_be_visible()
    expect(theirs).to_be_visible()
    expect(page.locator("img")).to_have_count(0)
    assert page.evaluate("document.body.dataset.pwned") is None
    # The shopper's own messages sit on the right, the shop's on the left.
    mine_box, theirs_box = mine.bounding_box(), theirs.bounding_box()
    assert mine_box["x"] + mine_box["width"] > theirs_box["x"] + theirs_box["width"]
    assert mine_box["x"] > theirs_box["x"]

    conversation = page.evaluate("localStorage.getItem('caseward-chat:conversation')")
    app.say(conversation, "A person will answer within the hour.")

    expect(dialog.get_by_text("A person will answer within the hour.")).to_be_visible()


def test_a_wrong_code_is_said_beside_the_code_field(
    storefront_page: Callable[..., Any],
) -> None:
    from playwright.sync_api import expect  # noqa: PLC0415

    page = storefront_page()
    dialog = _open_chat(page)
    _send(page, "Where is my order?")
    dialog.get_by_role("button", name="Verify it's you").click()
    page.get_by_label("Order number").fill("#1001")
    page.get_by_label("Email").fill("maya@example.com")
    dialog.get_by_role("button", name="Send me a code").click()

    expect(dialog.get_by_text(f"We sent a code to {EMAIL_HINT}.")).to_be_visible()
    code = page.get_by_label("Six-digit code")
    expect(code).to_be_focused()
    unlabelled = dialog.evaluate(
        "node => [...node.querySelectorAll('input, textarea')]"
        ".filter(field => field.labels.length === 0).map(field => field.name)"
    )
    assert unlabelled == []

    code.fill("000000")
    dialog.get_by_role("button", name="Verify", exact=True).click()

    expect(code).to_have_accessible_description(WRONG_CODE)
    expect(code).to_have_attribute("aria-invalid", "true")
    expect(code.locator("xpath=..").get_by_text(WRONG_CODE)).to_be_visible()

    code.fill(GOOD_CODE)
    dialog.get_by_role("button", name="Verify", exact=True).click()

    expect(dialog.get_by_text("You're verified.")).to_be_visible()
    expect(dialog.get_by_role("button", name="Verify it's you")).to_be_hidden()


def test_a_busy_app_is_waited_out_calmly(
    storefront_page: Callable[..., Any], app: StandInApp
) -> None:
    from playwright.sync_api import expect  # noqa: PLC0415

    page = storefront_page()
    dialog = _open_chat(page)
    busy = {"error": {"field": None, "message": "Too many requests."}}
    app.answer_next("POST", "/proxy/chat/messages", 429, busy, {"Retry-After": "2"})
    sent_before = len(app.requests_to("POST", "/proxy/chat/messages"))

    _send(page, "Is anyone there?")

    expect(dialog.get_by_role("status").filter(has_text="Please wait")).to_be_visible()
    expect(dialog.get_by_role("listitem").filter(has_text="Is anyone there?")).to_be_visible()
    expect(dialog.get_by_text("Please wait")).to_have_count(0)
    assert len(app.requests_to("POST", "/proxy/chat/messages")) == sent_before + 2


def test_on_a_phone_the_panel_takes_the_whole_width_and_stays_still(
    storefront_page: Callable[..., Any],
) -> None:
    page = storefront_page(viewport={"width": 375, "height": 667}, reduced_motion="reduce")
    dialog = _open_chat(page)

    box = dialog.bounding_box()
    assert (box["x"], box["width"]) == (0, 375)
    assert box["y"] + box["height"] == pytest.approx(667, abs=1)
    assert dialog.evaluate("node => getComputedStyle(node).animationName") == "none"
