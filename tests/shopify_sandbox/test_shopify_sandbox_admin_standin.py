"""The stand-in admin answers at the admin's own addresses too: a link to a case inside the
admin (the helpdesk sidebar's, an email's) opens that case in the framed app, and without
a signed-in person it asks which of the shop's staff is opening it. It is drawn with the
app's copy of Polaris' stylesheet, and answers for Polaris' web components with a script
that defines none of them."""

from __future__ import annotations

import html
import re

from shopify_sandbox_support import OWNER, STAFF

from integrations.shopify.sandbox import SandboxShop, ShopifySandbox

APP = "http://app.example"
CASE = "/app/cases/0b2c9d4e-8f1a-4c3b-9e7d-1a2b3c4d5e6f"


def _get(sandbox: ShopifySandbox, target: str) -> tuple[int, str]:
    answer = sandbox.handle_api("GET", target, {}, b"")
    return answer.status, answer.body.decode()


def test_a_link_to_a_case_inside_the_admin_frames_that_case(
    sandbox: ShopifySandbox, shop: SandboxShop, token: str
) -> None:
    sandbox.standin.app_url = APP

    status, page = _get(sandbox, f"/store/linen-and-loom/apps/caseward{CASE}?user={OWNER}")

    assert status == 200
    (frame,) = re.findall(r'<iframe[^>]* src="([^"]+)"', page)
    assert html.unescape(frame).startswith(
        f"{APP}{CASE}?embedded=1&shop=linen-and-loom.myshopify.com"
    )
    assert "id_token=" in frame
    # The stand-in's own address frames the app's home, as before.
    status, page = _get(sandbox, f"/admin-standin/store/linen-and-loom/apps/caseward?user={OWNER}")
    assert status == 200 and f'src="{APP}/app?embedded=1' in page


def test_without_a_signed_in_person_it_asks_who_of_the_shops_staff_opens_it(
    sandbox: ShopifySandbox, shop: SandboxShop, token: str
) -> None:
    sandbox.standin.app_url = APP

    status, page = _get(sandbox, f"/store/linen-and-loom/apps/caseward{CASE}")

    assert status == 200
    links = re.findall(r'<a href="([^"]+)">([^<]+)</a>', page)
    assert [href for href, _name in links] == [
        f"/store/linen-and-loom/apps/caseward{CASE}?user={OWNER}",
        f"/store/linen-and-loom/apps/caseward{CASE}?user={STAFF}",
    ]
    assert all(name.strip() for _href, name in links)


def test_polaris_web_components_are_answered_with_a_script_that_defines_none(
    sandbox: ShopifySandbox,
) -> None:
    answer = sandbox.handle_api("GET", "/admin-standin/polaris.js", {}, b"")

    assert answer.status == 200
    assert answer.headers["Content-Type"] == "text/javascript"
    # The pages' own styles draw the elements while they are not defined.
    assert "customElements" not in answer.body.decode()


def test_the_admin_page_wears_the_apps_copy_of_polaris(
    sandbox: ShopifySandbox, shop: SandboxShop, token: str
) -> None:
    sandbox.standin.app_url = APP

    status, page = _get(sandbox, f"/store/linen-and-loom/apps/caseward?user={OWNER}")

    assert status == 200
    assert f'<link rel="stylesheet" href="{APP}/static/polaris.css">' in page
    (style,) = re.findall(r"<style>(.*?)</style>", page, re.DOTALL)
    assert "var(--p-color-bg)" in style
    assert re.findall(r"#[0-9a-f]{3,8}\b|rgba?\(", style, re.IGNORECASE) == []
