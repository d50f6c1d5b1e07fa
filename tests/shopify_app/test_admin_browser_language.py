"""In a real browser, an admin page opened in the admin's language reads in it and asks
Caseward's API in that language (``Accept-Language``), so a refusal comes back in the
words and number formats the page uses (what the API then says:
tests/api/test_errors_in_readers_language.py).

Shopify opens the app with the admin's ``locale`` in the address; the sandbox's stand-in
admin does not add one, so the test adds it to the address the stand-in frames.
"""

from __future__ import annotations

import pytest
import test_admin_browser as in_a_browser

from integrations.shopify.sandbox import SandboxShop, ShopifySandbox

# The browser and the stand-in admin framing the app, as the other browser tests have them.
bridge, linen, page, settings, shopify = (
    in_a_browser.bridge,
    in_a_browser.linen,
    in_a_browser.page,
    in_a_browser.settings,
    in_a_browser.shopify,
)

TEST_KEY = "/api/shop/connections/stripe/test"
pytestmark = pytest.mark.skipif(
    in_a_browser.CHROMIUM is None, reason="Debian's chromium is not installed (.ci/run installs it)"
)


def test_the_page_asks_the_api_in_its_own_language(
    page: object,
    shopify: ShopifySandbox,
    linen: SandboxShop,
) -> None:
    from playwright.sync_api import Page, Request, Route, expect  # noqa: PLC0415

    assert isinstance(page, Page)
    expect.set_options(timeout=30_000)  # a deadline a loaded machine meets (default: 5 s)

    def in_french(route: Route) -> None:
        route.continue_(url=f"{route.request.url}&locale=fr-CA")

    page.route(lambda url: "/app?" in url and "locale=" not in url, in_french)
    asked: list[Request] = []
    page.on("request", lambda request: asked.append(request) if TEST_KEY in request.url else None)

    page.goto(f"{shopify.url}/admin-standin/store/linen/apps/caseward?user={in_a_browser.OWNER}")
    app = page.frame_locator("#app")
    # The page in French, from the admin's catalogue.
    app.get_by_label("Clé restreinte").fill("sk_test_" + "4" * 24)
    app.get_by_role("button", name="Tester la clé").click()

    # The refusal is shown as the API said it, in French too.
    expect(app.locator("#stripe-key output")).to_contain_text(
        "Caseward n'accepte pas les clés secrètes"
    )
    [test_key] = asked
    assert test_key.all_headers()["accept-language"] == "fr-CA"
