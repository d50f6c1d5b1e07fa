"""App Home requests: session tokens made exactly as Shopify makes them, good and bad.

A fetch carries ``Authorization: Bearer <token>``; a page load carries ``?id_token=``.
Every refusal must be the answer App Bridge understands: on a fetch, 401 with
``X-Shopify-Retry-Invalid-Session-Request: 1`` (it retries with a fresh token); on a page
without a usable token, a redirect to the patch-id-token page.
"""

from __future__ import annotations

from urllib.parse import parse_qs, urlsplit

import pytest
from shopify_client_support import CLIENT_ID, OLD_SECRET, SECRET, SHOP, session_token

from integrations.shopify.auth import (
    RETRY_HEADER,
    AdminVerified,
    Refusal,
    ShopifyAuth,
)

PATCH = "/auth/patch-id-token"
API_URL = "https://caseward.example.com/app/api/cases"
PAGE_URL = "https://caseward.example.com/app?shop=demo.myshopify.com&host=YWRtaW4"


def fetch(auth: ShopifyAuth, token: str, **options: bool) -> AdminVerified | Refusal:
    return auth.verify_admin_request(
        "GET",
        API_URL,
        {"Authorization": f"Bearer {token}", "Accept": "application/json"},
        b"",
        patch_id_token_path=PATCH,
        **options,
    )


def page(auth: ShopifyAuth, token: str | None) -> AdminVerified | Refusal:
    url = PAGE_URL if token is None else f"{PAGE_URL}&id_token={token}"
    return auth.verify_admin_request("GET", url, {}, b"", patch_id_token_path=PATCH)


def assert_retry_refusal(result: AdminVerified | Refusal, code: str) -> None:
    assert isinstance(result, Refusal), result
    assert result.code == code
    assert result.answer.status == 401
    assert result.answer.headers == {RETRY_HEADER: "1"}


def test_a_valid_fetch_names_the_shop_and_the_user(auth: ShopifyAuth) -> None:
    result = fetch(auth, session_token(sub="4711"))

    assert isinstance(result, AdminVerified)
    assert result.shop == SHOP
    assert result.user_id == "4711"
    assert result.session_id is not None
    assert result.headers == {}
    # If the token proves unusable later (exchange refused), App Bridge must retry.
    assert result.invalid_token_answer.status == 401
    assert result.invalid_token_answer.headers == {RETRY_HEADER: "1"}
    assert result.id_token not in repr(result)


def test_a_valid_page_load_gets_the_frame_ancestors_header(auth: ShopifyAuth) -> None:
    result = page(auth, session_token())

    assert isinstance(result, AdminVerified)
    assert result.headers["Content-Security-Policy"] == (
        "frame-ancestors https://demo.myshopify.com https://admin.shopify.com;"
    )
    assert result.invalid_token_answer.status == 302


def test_a_forged_signature_on_a_fetch_is_refused_with_the_retry_header(
    auth: ShopifyAuth,
) -> None:
    assert_retry_refusal(
        fetch(auth, session_token(secret="shpss_not_the_app_secret_00000000000")),
        "invalid_id_token",
    )


def test_expiry_has_ten_seconds_of_leeway(auth: ShopifyAuth) -> None:
    """shopifyapp decodes with ``leeway=10``: 5 s past ``exp`` still passes (clocks
    drift), 20 s past is refused as expired."""
    five_past = session_token(issued_ago=65, lifetime=60)
    twenty_past = session_token(issued_ago=80, lifetime=60)

    assert isinstance(fetch(auth, five_past), AdminVerified)
    assert_retry_refusal(fetch(auth, twenty_past), "expired_id_token")


def test_not_before_has_the_same_leeway(auth: ShopifyAuth) -> None:
    assert isinstance(fetch(auth, session_token(issued_ago=-5)), AdminVerified)
    assert_retry_refusal(fetch(auth, session_token(issued_ago=-20)), "invalid_id_token")


def test_a_token_for_another_app_is_refused(auth: ShopifyAuth) -> None:
    assert_retry_refusal(fetch(auth, session_token(aud="someone-elses-app")), "invalid_aud")


def test_iss_and_dest_of_different_shops_are_refused(auth: ShopifyAuth) -> None:
    token = session_token(shop=SHOP, iss_shop="other.myshopify.com")

    assert_retry_refusal(fetch(auth, token), "iss_dest_mismatch")


def test_a_dest_outside_myshopify_is_refused(auth: ShopifyAuth) -> None:
    token = session_token(shop="shop.example.com")

    assert_retry_refusal(fetch(auth, token), "invalid_dest")


@pytest.mark.parametrize("claim", ["exp", "nbf", "sub"])
def test_a_token_without_a_required_claim_is_refused(auth: ShopifyAuth, claim: str) -> None:
    """PyJWT checks ``exp`` only when present: a token without one would never expire."""
    assert_retry_refusal(fetch(auth, session_token(omit=(claim,))), "missing_claim")


def test_a_fetch_route_without_a_token_asks_for_a_retry(auth: ShopifyAuth) -> None:
    result = auth.verify_admin_request(
        "POST", API_URL, {}, b"{}", patch_id_token_path=PATCH, fetch=True
    )

    assert_retry_refusal(result, "missing_session_token")


def test_an_empty_bearer_on_a_fetch_route_asks_for_a_retry(auth: ShopifyAuth) -> None:
    assert_retry_refusal(fetch(auth, "", fetch=True), "missing_session_token")


def test_a_page_without_a_token_goes_to_the_patch_page(auth: ShopifyAuth) -> None:
    result = page(auth, None)

    assert isinstance(result, Refusal)
    assert result.answer.status == 302
    location = urlsplit(result.answer.headers["Location"])
    assert location.path == PATCH
    assert parse_qs(location.query)["shopify-reload"] == [
        "/app?shop=demo.myshopify.com&host=YWRtaW4"
    ]


def test_a_page_with_a_stale_token_goes_to_the_patch_page(auth: ShopifyAuth) -> None:
    result = page(auth, session_token(issued_ago=120))

    assert isinstance(result, Refusal)
    assert result.answer.status == 302
    assert urlsplit(result.answer.headers["Location"]).path == PATCH


def test_tokens_signed_with_the_old_secret_pass_only_during_rotation() -> None:
    rotating = ShopifyAuth(CLIENT_ID, SECRET, old_client_secret=OLD_SECRET)
    rotated = ShopifyAuth(CLIENT_ID, SECRET)
    token = session_token(secret=OLD_SECRET)

    assert isinstance(fetch(rotating, token), AdminVerified)
    assert_retry_refusal(fetch(rotated, token), "invalid_id_token")


def test_the_patch_page_frames_only_for_a_shop_domain(auth: ShopifyAuth) -> None:
    good = auth.patch_id_token_response(
        "GET", f"https://caseward.example.com{PATCH}?shop={SHOP}&shopify-reload=%2Fapp", {}, b""
    )
    hostile = auth.patch_id_token_response(
        "GET",
        f"https://caseward.example.com{PATCH}?shop=evil.example;script-src%20*&shopify-reload=%2Fapp",
        {},
        b"",
    )

    assert good.status == 200
    assert good.headers["Content-Security-Policy"] == (
        f"frame-ancestors https://{SHOP} https://admin.shopify.com;"
    )
    assert f'data-api-key="{CLIENT_ID}"' in good.body
    assert hostile.status == 400
    assert "Content-Security-Policy" not in hostile.headers
