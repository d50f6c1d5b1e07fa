"""The storefront chat in the shopper's language, in a real browser on the sandbox shop's
pages: a French storefront's embed names its locale, every request through the app proxy
carries it, the widget takes over the words the app sends (the app's French catalogue,
served by a stand-in app), remembers them for the next page, says a failure of the app in
them, and fills in the order number the shopper already wrote when they verify.

The sandbox's storefront renders its pages in English, so the browser gives the page's embed
what ``blocks/chat.liquid`` renders on a French storefront: ``data-locale="fr"``."""

from __future__ import annotations

import shutil
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from shopify_support import serving_sandbox
from widget_support import CLIENT_ID, CLIENT_SECRET, StandInApp, serving_app

from app.web.widget_words import labels
from integrations.shopify.sandbox import ShopifySandbox

CHROMIUM = shutil.which("chromium")
pytestmark = pytest.mark.skipif(
    CHROMIUM is None, reason="Debian's chromium is not installed (.ci/run installs it)"
)
SHOP = "linen.myshopify.com"
TIMEOUT = 30_000  # a deadline a loaded machine meets (Playwright's default is 5 s)
FRENCH = labels("fr")


@pytest.fixture(scope="module")
def shopify() -> Iterator[ShopifySandbox]:
    with serving_sandbox(CLIENT_ID, CLIENT_SECRET) as box:
        box.create_shop("linen")
        yield box


@pytest.fixture(scope="module")
def served(shopify: ShopifySandbox) -> Iterator[StandInApp]:
    with serving_app(poll_after=1) as stand_in:
        shopify.storefront.app_proxy_url = stand_in.url
        yield stand_in


@pytest.fixture
def app(served: StandInApp) -> Iterator[StandInApp]:
    """The stand-in app answering in French."""
    served.labels = FRENCH
    yield served
    served.labels, served.offered_order = None, None


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


# The embed as a French storefront renders it, set as the parser adds it, before the
# widget's module runs (modules run once the page is parsed).
AS_FRENCH_STOREFRONT = """
new MutationObserver((changes, observer) => {
    const root = document.querySelector("[data-caseward-chat]");
    if (root) {
        root.dataset.locale = "fr";
        observer.disconnect();
    }
}).observe(document, { childList: true, subtree: true });
"""


@pytest.fixture
def french_page(
    browser: Any, shopify: ShopifySandbox, app: StandInApp
) -> Iterator[Callable[..., Any]]:
    """Open the French storefront's home page; in a fresh browser context (its own
    localStorage), or in ``context``."""
    contexts: list[Any] = []
    assert shopify.url is not None
    home = f"http://{SHOP}:{shopify.url.rsplit(':', 1)[1]}/"

    def open_page(context: Any = None) -> Any:
        if context is None:
            context = browser.new_context()
            contexts.append(context)
        page = context.new_page()
        page.add_init_script(AS_FRENCH_STOREFRONT)
        page.goto(home)
        return page

    yield open_page
    for context in contexts:
        context.close()


def test_a_french_storefronts_chat_speaks_french_and_the_next_page_starts_in_it(
    french_page: Callable[..., Any], app: StandInApp
) -> None:
    from playwright.sync_api import expect  # noqa: PLC0415

    page = french_page()
    page.get_by_role("button", name="Chat with us").click()  # nothing said in French yet

    dialog = page.get_by_role("dialog", name=FRENCH["title"])
    expect(dialog).to_be_visible()
    expect(page.get_by_role("button", name=FRENCH["open"])).to_have_attribute(
        "aria-expanded", "true"
    )
    message = page.get_by_label(FRENCH["message"])
    message.fill("Mon tablier est arrivé déchiré.")
    message.press("Enter")
    expect(dialog.get_by_role("listitem").filter(has_text="déchiré")).to_be_visible()
    expect(dialog.get_by_role("button", name=FRENCH["verify"])).to_be_visible()
    expect(dialog.get_by_role("button", name=FRENCH["person"])).to_have_count(1)

    asked = [
        *app.requests_to("GET", "/proxy/chat"),
        *app.requests_to("POST", "/proxy/chat/messages"),
    ]
    assert asked and all(request.query["locale"] == ["fr"] for request in asked)

    following = french_page(page.context)
    expect(following.get_by_role("button", name=FRENCH["open"])).to_be_visible()


def test_a_failure_of_the_app_is_said_in_the_shoppers_words_not_the_apps(
    french_page: Callable[..., Any], app: StandInApp
) -> None:
    from playwright.sync_api import expect  # noqa: PLC0415

    page = french_page()
    page.get_by_role("button", name="Chat with us").click()
    message = page.get_by_label(FRENCH["message"])
    failed = {"error": {"code": "provider_unavailable", "message": "Stripe did not answer."}}
    app.answer_next("POST", "/proxy/chat/messages", 502, failed)

    message.fill("Bonjour ?")
    message.press("Enter")

    dialog = page.get_by_role("dialog", name=FRENCH["title"])
    expect(dialog.get_by_text(FRENCH["unreachable"])).to_be_visible()
    expect(dialog.get_by_text("Stripe did not answer.")).to_have_count(0)


def test_the_order_number_already_written_is_filled_in_to_verify(
    french_page: Callable[..., Any], app: StandInApp
) -> None:
    from playwright.sync_api import expect  # noqa: PLC0415

    app.offered_order = "#1001"
    page = french_page()
    page.get_by_role("button", name="Chat with us").click()
    message = page.get_by_label(FRENCH["message"])
    message.fill("Ma commande #1001 est arrivée abîmée.")
    message.press("Enter")

    page.get_by_role("button", name=FRENCH["verify"]).click()

    expect(page.get_by_label(FRENCH["order"])).to_have_value("#1001")
    expect(page.get_by_label(FRENCH["email"])).to_have_value("")
