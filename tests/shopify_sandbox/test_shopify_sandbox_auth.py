"""Token exchange, refresh and the access token's life, driven by Shopify's own
``shopifyapp`` client and raw HTTP."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import httpx
import jwt
from shopify_app.exchange.refresh_token import refresh_access_token
from shopify_app.exchange.token_exchange import token_exchange
from shopify_app.verify.app_home_req import verify_app_home_req
from shopify_sandbox_documents import SHOP
from shopify_sandbox_support import API_KEY, API_SECRET, OWNER, STAFF, exchange, graphql

from integrations.shopify.sandbox import SandboxShop, ShopifySandbox

TOKEN_URL = "https://linen-and-loom.myshopify.com/admin/oauth/access_token"
UNAUTHORIZED = "[API] Invalid API key or access token (unrecognized login or wrong password)"


def _shop_name(client: httpx.Client, shop: SandboxShop, token: str) -> int:
    return graphql(client, shop.domain, token, SHOP).status_code


def test_an_expiring_offline_token_comes_with_a_refresh_token_and_reads_the_shop(
    client: httpx.Client, sandbox: ShopifySandbox, shop: SandboxShop
) -> None:
    result = exchange(client, sandbox, shop)

    assert result.ok and result.log.code == "success"
    token = result.access_token
    assert token.access_mode == "offline" and token.shop == "linen-and-loom"
    assert token.token.startswith("shpat_") and token.refresh_token.startswith("shprt_")
    assert set(token.scope.split(",")) >= {"read_orders", "write_orders"}
    answer = graphql(client, shop.domain, token.token, SHOP).json()
    assert answer["data"]["shop"]["myshopifyDomain"] == "linen-and-loom.myshopify.com"


def test_the_raw_answer_has_shopifys_fields_and_a_form_encoded_request_works(
    client: httpx.Client, sandbox: ShopifySandbox, shop: SandboxShop
) -> None:
    form = {
        "client_id": API_KEY,
        "client_secret": API_SECRET,
        "grant_type": "urn:ietf:params:oauth:grant-type:token-exchange",
        "subject_token": sandbox.session_token(shop.domain, user_id=OWNER),
        "subject_token_type": "urn:ietf:params:oauth:token-type:id_token",
        "requested_token_type": "urn:shopify:params:oauth:token-type:offline-access-token",
        "expiring": "1",
    }
    answer = client.post(TOKEN_URL, data=form)

    assert answer.status_code == 200
    body = answer.json()
    assert set(body) == {
        "access_token",
        "scope",
        "expires_in",
        "refresh_token",
        "refresh_token_expires_in",
    }
    assert body["expires_in"] == 3600
    non_expiring = client.post(TOKEN_URL, data={**form, "expiring": "0"}).json()
    assert set(non_expiring) == {"access_token", "scope"}


def test_an_online_token_names_its_user(
    client: httpx.Client, sandbox: ShopifySandbox, shop: SandboxShop
) -> None:
    result = exchange(client, sandbox, shop, user_id=STAFF, mode="online")

    assert result.ok
    assert result.access_token.access_mode == "online"
    assert result.access_token.user.id == STAFF
    assert result.access_token.user.account_owner is False
    owner = exchange(client, sandbox, shop, user_id=OWNER, mode="online")
    assert owner.access_token.user.account_owner is True


def test_the_session_token_carries_the_admins_claims_and_passes_shopifys_verifier(
    sandbox: ShopifySandbox, shop: SandboxShop
) -> None:
    now = datetime.now(UTC).timestamp()
    session = sandbox.session_token(shop.domain, user_id=OWNER, exp_in=60, issued_at=now)
    claims = jwt.decode(session, API_SECRET, algorithms=["HS256"], audience=API_KEY)

    assert claims["iss"] == "https://linen-and-loom.myshopify.com/admin"
    assert claims["dest"] == "https://linen-and-loom.myshopify.com"
    assert claims["sub"] == str(OWNER) and claims["exp"] - claims["iat"] == 60
    assert {"nbf", "jti", "sid"} <= set(claims)
    verified = verify_app_home_req(
        {
            "method": "GET",
            "url": f"https://caseward.example/app?shop={shop.domain}&id_token={session}",
            "headers": {"authorization": f"Bearer {session}"},
        },
        {"client_id": API_KEY, "client_secret": API_SECRET},
        "/auth/patch-id-token",
    )
    assert verified.ok, verified.log
    assert verified.shop == "linen-and-loom" and verified.user_id == str(OWNER)


def test_a_bad_session_token_is_an_invalid_subject_token(
    client: httpx.Client, sandbox: ShopifySandbox, shop: SandboxShop
) -> None:
    other = sandbox.create_shop("other-shop", owner_user_id=OWNER)
    forged = jwt.encode(
        jwt.decode(
            sandbox.session_token(shop.domain, user_id=OWNER),
            options={"verify_signature": False},
        ),
        "not-the-app-secret-but-long-enough-0123",
        algorithm="HS256",
    )
    expired = sandbox.session_token(shop.domain, user_id=OWNER, exp_in=60)
    sandbox.advance_clock(71)
    for_other_shop = sandbox.session_token(other.domain, user_id=OWNER)
    for subject in (forged, expired, for_other_shop):
        result = token_exchange(
            "offline",
            {"client_id": API_KEY, "client_secret": API_SECRET},
            id_token={
                "exchangeable": True,
                "token": subject,
                # What the app believes; the sandbox checks the token itself.
                "claims": {"dest": f"https://{shop.domain}"},
            },
            http_client=client,
        )
        assert not result.ok
        assert result.log.code == "invalid_subject_token"
        assert result.http_logs[-1].res.status == 400
    assert sandbox.received_requests(shop.domain)[-1].status == 400


def test_the_session_token_is_checked_with_ten_seconds_of_leeway(
    client: httpx.Client, sandbox: ShopifySandbox, shop: SandboxShop
) -> None:
    session = sandbox.session_token(shop.domain, user_id=OWNER, exp_in=60)
    sandbox.advance_clock(69)
    assert exchange_raw(client, session).status_code == 200


def exchange_raw(client: httpx.Client, session: str) -> httpx.Response:
    return client.post(
        TOKEN_URL,
        json={
            "client_id": API_KEY,
            "client_secret": API_SECRET,
            "grant_type": "urn:ietf:params:oauth:grant-type:token-exchange",
            "subject_token": session,
            "subject_token_type": "urn:ietf:params:oauth:token-type:id_token",
            "requested_token_type": "urn:shopify:params:oauth:token-type:offline-access-token",
            "expiring": 1,
        },
    )


def test_a_wrong_client_secret_is_an_invalid_client(
    client: httpx.Client, sandbox: ShopifySandbox, shop: SandboxShop
) -> None:
    session = sandbox.session_token(shop.domain, user_id=OWNER)
    result = token_exchange(
        "offline",
        {"client_id": API_KEY, "client_secret": "wrong"},
        id_token={"exchangeable": True, "token": session, "claims": {"dest": shop.domain}},
        http_client=client,
    )
    assert result.log.code == "invalid_client"


def test_access_tokens_expire_on_the_sandbox_clock_and_refresh_once(
    client: httpx.Client, sandbox: ShopifySandbox, shop: SandboxShop
) -> None:
    issued = exchange(client, sandbox, shop).access_token
    assert _shop_name(client, shop, issued.token) == 200

    sandbox.advance_clock(3600)
    expired = graphql(client, shop.domain, issued.token, SHOP)
    assert expired.status_code == 401
    assert expired.json() == {"errors": UNAUTHORIZED}

    # shopifyapp refreshes only what it believes is about to expire (on the wall clock).
    due = {
        "shop": issued.shop,
        "access_mode": "offline",
        "refresh_token": issued.refresh_token,
        "expires": (datetime.now(UTC) - timedelta(minutes=1)).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "refresh_token_expires": issued.refresh_token_expires,
    }
    config = {"client_id": API_KEY, "client_secret": API_SECRET}
    refreshed = refresh_access_token(due, config, http_client=client)
    assert refreshed.ok, refreshed.log
    assert refreshed.access_token.refresh_token != issued.refresh_token
    assert _shop_name(client, shop, refreshed.access_token.token) == 200

    # A refresh token is single-use.
    again = refresh_access_token(due, config, http_client=client)
    assert again.log.code == "invalid_grant"


def test_unknown_tokens_and_unknown_shops_are_refused(
    client: httpx.Client, sandbox: ShopifySandbox, shop: SandboxShop, token: str
) -> None:
    assert graphql(client, shop.domain, "shpat_" + "0" * 32, SHOP).status_code == 401
    assert graphql(client, shop.domain, "", SHOP).status_code == 401
    other = sandbox.create_shop("other-shop")
    assert graphql(client, other.domain, token, SHOP).status_code == 401  # not its token
    assert graphql(client, "no-such-shop.myshopify.com", token, SHOP).status_code == 404
    wrong_version = client.post(
        f"https://{shop.domain}/admin/api/2023-01/graphql.json",
        json={"query": SHOP},
        headers={"X-Shopify-Access-Token": token},
    )
    assert wrong_version.status_code == 404


def test_uninstalling_revokes_every_token_at_once(
    client: httpx.Client, sandbox: ShopifySandbox, shop: SandboxShop, token: str
) -> None:
    refresh = exchange(client, sandbox, shop).access_token

    sandbox.uninstall(shop.domain)

    assert graphql(client, shop.domain, token, SHOP).status_code == 401
    refreshed = refresh_access_token(
        {
            "shop": refresh.shop,
            "access_mode": "offline",
            "refresh_token": refresh.refresh_token,
            "expires": "2000-01-01T00:00:00Z",
            "refresh_token_expires": refresh.refresh_token_expires,
        },
        {"client_id": API_KEY, "client_secret": API_SECRET},
        http_client=client,
    )
    assert not refreshed.ok and refreshed.log.code == "invalid_client"
    sandbox.install(shop.domain)
    assert exchange(client, sandbox, shop).ok
