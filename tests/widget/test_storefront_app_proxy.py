"""The sandbox's storefront and app proxy: a shop page carrying the chat embed as the
block renders it, and storefront requests reaching the app signed as Shopify signs them,
naming the signed-in customer and never carrying the shopper's cookies."""

from __future__ import annotations

import json
import re
import socket
from collections.abc import Iterator
from html.parser import HTMLParser
from pathlib import Path

import pytest
from shopify_app.types import ResultWithLoggedInCustomerId
from shopify_app.verify.app_proxy import verify_app_proxy_req
from shopify_support import serving_sandbox
from widget_support import (
    CLIENT_ID,
    CLIENT_SECRET,
    Received,
    StandInApp,
    serving_app,
    storefront,
)

from integrations.shopify.sandbox import SandboxShop, ShopifySandbox
from integrations.shopify.sandbox.storefront import ASSETS

BLOCK = Path(__file__).resolve().parents[2] / "widget" / "extension" / "blocks" / "chat.liquid"


@pytest.fixture
def shopify() -> Iterator[ShopifySandbox]:
    with serving_sandbox(CLIENT_ID, CLIENT_SECRET) as box:
        yield box


@pytest.fixture
def app(shopify: ShopifySandbox) -> Iterator[StandInApp]:
    with serving_app() as stand_in:
        shopify.storefront.app_proxy_url = stand_in.url
        yield stand_in


@pytest.fixture
def linen(shopify: ShopifySandbox) -> SandboxShop:
    return shopify.create_shop("linen")


def verify(received: Received, url: str | None = None) -> ResultWithLoggedInCustomerId:
    """The app's check of a proxied request, with shopifyapp's verifier."""
    return verify_app_proxy_req(
        {
            "method": received.method,
            "url": url or received.url,
            "headers": received.headers,
            "body": received.body.decode(),
        },
        {"client_id": CLIENT_ID, "client_secret": CLIENT_SECRET, "old_client_secret": None},
    )


def sign_in(shopify: ShopifySandbox, shop: str, customer_gid: str) -> str:
    """Sign the customer in on the storefront; returns the Cookie header to send."""
    number = customer_gid.rsplit("/", 1)[1]
    answer = storefront(shopify, shop, "GET", f"/account/login?customer={number}")
    assert answer.status == 200
    return answer.headers["set-cookie"].split(";", 1)[0]


def test_the_proxy_forwards_the_request_signed_and_without_the_shoppers_cookies(
    shopify: ShopifySandbox, app: StandInApp, linen: SandboxShop
) -> None:
    body = json.dumps({"conversation": None, "text": "Where is my order?"}).encode()
    answer = storefront(
        shopify,
        linen.domain,
        "POST",
        # A shopper's own shop= (or signature=) never reaches the app as theirs.
        "/apps/caseward/chat/messages?extra=1&extra=2&shop=other.myshopify.com",
        body=body,
        headers={"Content-Type": "application/json", "Cookie": "cart=c1; _secure_session_id=s1"},
    )

    assert answer.status == 200
    assert answer.json()["messages"][0]["text"] == "Where is my order?"
    [received] = app.received
    assert (received.method, received.path, received.body) == ("POST", "/proxy/chat/messages", body)
    assert received.headers["content-type"] == "application/json"
    assert "cookie" not in received.headers
    assert received.query["extra"] == ["1", "2"]
    assert received.query["shop"] == [linen.domain]
    assert received.query["path_prefix"] == ["/apps/caseward"]
    verified = verify(received)
    assert verified.ok, verified.log
    assert (verified.shop, verified.logged_in_customer_id) == ("linen", "")

    forged = received.url.replace("logged_in_customer_id=", "logged_in_customer_id=1")
    assert forged != received.url
    assert not verify(received, forged).ok


def test_a_signed_in_customer_is_named_to_the_app_until_they_sign_out(
    shopify: ShopifySandbox, app: StandInApp, linen: SandboxShop
) -> None:
    customer = shopify.seed_customer(linen.domain, email="maya@example.com")
    number = customer.rsplit("/", 1)[1]
    other = shopify.create_shop("other")

    cookie = sign_in(shopify, linen.domain, customer)
    storefront(shopify, linen.domain, "GET", "/apps/caseward/chat", headers={"Cookie": cookie})
    # The session is the linen shop's: another shop's storefront does not know it.
    storefront(shopify, other.domain, "GET", "/apps/caseward/chat", headers={"Cookie": cookie})
    storefront(shopify, linen.domain, "GET", "/account/logout", headers={"Cookie": cookie})
    storefront(shopify, linen.domain, "GET", "/apps/caseward/chat", headers={"Cookie": cookie})

    named = [verify(received) for received in app.received]
    assert all(result.ok for result in named)
    assert [(r.shop, r.logged_in_customer_id) for r in named] == [
        ("linen", number),
        ("other", ""),
        ("linen", ""),
    ]
    unknown = storefront(shopify, linen.domain, "GET", "/account/login?customer=999")
    assert unknown.status == 404 and "set-cookie" not in unknown.headers


def test_the_apps_answer_comes_back_as_the_app_gave_it(
    shopify: ShopifySandbox, app: StandInApp, linen: SandboxShop
) -> None:
    slow_down = {"error": {"field": None, "message": "Please wait a moment."}}
    app.answer_next("GET", "/proxy/chat", 429, slow_down, {"Retry-After": "7"})

    answer = storefront(shopify, linen.domain, "GET", "/apps/caseward/chat?conversation=abc")

    assert answer.status == 429
    assert answer.headers["retry-after"] == "7"
    assert answer.headers["content-type"] == "application/json"
    assert answer.json() == slow_down


def test_an_app_that_does_not_answer_is_a_bad_gateway(
    shopify: ShopifySandbox, linen: SandboxShop
) -> None:
    assert storefront(shopify, linen.domain, "GET", "/apps/caseward/chat").status == 404
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        closed_port = probe.getsockname()[1]
    shopify.storefront.app_proxy_url = f"http://127.0.0.1:{closed_port}/proxy"

    assert storefront(shopify, linen.domain, "GET", "/apps/caseward/chat").status == 502


class _Embed(HTMLParser):
    """The chat embed's root element, stylesheet and module script on a page."""

    def __init__(self) -> None:
        super().__init__()
        self.root: dict[str, str | None] = {}
        self.stylesheets: list[str | None] = []
        self.modules: list[str | None] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        found = dict(attrs)
        if "data-caseward-chat" in found:
            self.root = found
        elif tag == "link" and found.get("rel") == "stylesheet":
            self.stylesheets.append(found.get("href"))
        elif tag == "script" and found.get("type") == "module":
            self.modules.append(found.get("src"))


def test_the_storefront_carries_the_embed_with_the_merchants_settings(
    shopify: ShopifySandbox, linen: SandboxShop
) -> None:
    assert shopify.url is not None
    control = storefront(
        shopify,
        "127.0.0.1",
        "POST",
        f"/_sandbox/shops/{linen.domain}/storefront/embed",
        body=json.dumps(
            {"accent": "#7a1f5c", "position": "bottom-left", "greeting": "Hej!"}
        ).encode(),
        headers={"Authorization": f"Bearer {shopify.control_token}"},
    )
    assert control.status == 200

    page = _Embed()
    page.feed(storefront(shopify, linen.domain, "GET", "/pages/help").body.decode())

    assert page.root["data-accent"] == "#7a1f5c"
    assert page.root["data-accent-text"] == "#ffffff"
    assert page.root["data-position"] == "bottom-left"
    assert page.root["data-greeting"] == "Hej!"
    # The same element the block renders: every data attribute it sets, and no other.
    block_root = re.search(r"<div\s[^>]*data-caseward-chat[^>]*>", BLOCK.read_text())
    assert block_root is not None
    block_attributes = set(re.findall(r"(data-[\w-]+)", block_root.group(0)))
    assert {name for name in page.root if name.startswith("data-")} == block_attributes
    for asset in [*page.stylesheets, *page.modules]:
        assert asset is not None
        served = storefront(shopify, linen.domain, "GET", asset)
        assert served.status == 200
        assert served.body == (ASSETS / asset.rsplit("/", 1)[1]).read_bytes()
    assert len(page.stylesheets) == len(page.modules) == 1
