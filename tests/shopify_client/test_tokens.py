"""Token exchange and refresh through shopifyapp, answered by a local server in
Shopify's JSON shapes and reached through the sandbox routing (so these also prove the
routing carries the shop in the Host header)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from shopify_client_support import SHOP, Answer, ScriptedServer, session_token
from shopify_support import verify_admin

from integrations.shopify.auth import (
    RETRY_HEADER,
    AdminVerified,
    OfflineToken,
    ShopifyAuth,
    ShopifyTokenError,
)

OFFLINE_GRANT = {
    "access_token": "shpat_offline_0001",
    "scope": "read_orders,write_orders",
    "expires_in": 3600,
    "refresh_token": "shprt_refresh_0001",
    "refresh_token_expires_in": 7_776_000,
}


def verified(auth: ShopifyAuth) -> AdminVerified:
    return verify_admin(auth, session_token())


def stored(expires_in: timedelta | None) -> OfflineToken:
    now = datetime.now(UTC)
    return OfflineToken(
        shop=SHOP,
        token="shpat_old",
        scope="read_orders",
        expires_at=None if expires_in is None else now + expires_in,
        refresh_token=None if expires_in is None else "shprt_old",
        refresh_token_expires_at=None if expires_in is None else now + timedelta(days=90),
    )


def test_exchange_gives_an_expiring_offline_token(
    auth: ShopifyAuth, server: ScriptedServer
) -> None:
    session = verified(auth)
    server.queue(Answer(body=OFFLINE_GRANT))

    token = auth.exchange_offline_token(session)

    assert token.shop == SHOP
    assert token.token == "shpat_offline_0001"
    assert token.refresh_token == "shprt_refresh_0001"
    assert token.expires_at is not None
    assert timedelta(minutes=59) < token.expires_at - datetime.now(UTC) <= timedelta(hours=1)
    assert "shpat" not in repr(token) and "shprt" not in repr(token)
    (request,) = server.received
    assert request.path == "/admin/oauth/access_token"
    assert request.headers["Host"] == SHOP
    sent = request.json()
    assert sent["grant_type"] == "urn:ietf:params:oauth:grant-type:token-exchange"
    assert sent["subject_token"] == session.id_token
    assert (
        sent["requested_token_type"] == "urn:shopify:params:oauth:token-type:offline-access-token"
    )
    assert sent["expiring"] == 1


def test_a_refused_session_token_carries_the_retry_answer(
    auth: ShopifyAuth, server: ScriptedServer
) -> None:
    server.queue(Answer(status=400, body={"error": "invalid_subject_token"}))

    with pytest.raises(ShopifyTokenError) as refused:
        auth.exchange_offline_token(verified(auth))

    assert refused.value.code == "invalid_subject_token"
    assert refused.value.answer.status == 401
    assert refused.value.answer.headers == {RETRY_HEADER: "1"}


def test_online_exchange_says_who_the_staff_member_is(
    auth: ShopifyAuth, server: ScriptedServer
) -> None:
    server.queue(
        Answer(
            body={
                "access_token": "shpua_online_0001",
                "scope": "read_orders",
                "expires_in": 86399,
                "associated_user_scope": "read_orders",
                "associated_user": {
                    "id": 902541635,
                    "first_name": "Ada",
                    "last_name": "Lovelace",
                    "email": "ada@example.com",
                    "email_verified": True,
                    "account_owner": True,
                    "locale": "en",
                    "collaborator": False,
                },
            }
        )
    )

    user = auth.exchange_online_user(verified(auth))

    assert (user.id, user.email, user.account_owner) == ("902541635", "ada@example.com", True)
    requested = server.received[0].json()["requested_token_type"]
    assert requested == "urn:shopify:params:oauth:token-type:online-access-token"


def test_a_token_with_time_left_is_not_refreshed(auth: ShopifyAuth, server: ScriptedServer) -> None:
    token = stored(timedelta(minutes=30))

    assert auth.refresh_if_needed(token) is token
    assert server.received == []


def test_a_non_expiring_token_is_never_refreshed(auth: ShopifyAuth, server: ScriptedServer) -> None:
    token = stored(None)

    assert auth.refresh_if_needed(token) is token
    assert server.received == []


def test_a_token_about_to_expire_is_refreshed(auth: ShopifyAuth, server: ScriptedServer) -> None:
    server.queue(
        Answer(
            body={
                **OFFLINE_GRANT,
                "access_token": "shpat_new",
                "refresh_token": "shprt_new",
            }
        )
    )

    fresh = auth.refresh_if_needed(stored(timedelta(seconds=30)))

    assert (fresh.shop, fresh.token, fresh.refresh_token) == (SHOP, "shpat_new", "shprt_new")
    assert fresh.expires_at is not None and fresh.expires_at > datetime.now(UTC) + timedelta(
        minutes=59
    )
    (request,) = server.received
    assert request.headers["Host"] == SHOP
    assert request.json()["grant_type"] == "refresh_token"
    assert request.json()["refresh_token"] == "shprt_old"


def test_a_revoked_refresh_token_needs_a_new_grant(
    auth: ShopifyAuth, server: ScriptedServer
) -> None:
    server.queue(Answer(status=400, body={"error": "invalid_grant"}))

    with pytest.raises(ShopifyTokenError) as refused:
        auth.refresh_if_needed(stored(timedelta(seconds=10)))

    assert refused.value.code == "invalid_grant"
    assert "shprt" not in str(refused.value)
