"""The embedded admin page: framed only by its own shop's admin, App Bridge loaded as
Shopify requires, and readable from the server alone when Shopify's CDN is out of reach."""

from __future__ import annotations

import base64
from urllib.parse import urlencode

import pytest
from flask.testing import FlaskClient
from shopify_app_support import CLIENT_ID, install_shop, session_token
from sqlalchemy.orm import Session

from app.connections.models import Connection
from app.crypto import secret_box
from app.settings import Settings
from app.shops.models import Shop, StaffMember, StaffRole


def _page_url(shop: str, token: str | None) -> str:
    host = base64.urlsafe_b64encode(
        f"admin.shopify.com/store/{shop.removesuffix('.myshopify.com')}".encode()
    )
    params = {"embedded": "1", "shop": shop, "host": host.decode().rstrip("=")}
    if token is not None:
        params["id_token"] = token
    return "/app?" + urlencode(params)


def _set_up(session: Session, settings: Settings, shop: Shop) -> None:
    """Stripe connected and writes on: what the setup page leads an owner to."""
    session.add(
        Connection(
            shop_id=shop.id,
            provider="stripe",
            livemode=False,
            encrypted_secret=secret_box(settings).encrypt("rk_test_linen"),
            key_hint="rk_test_...inen",
            created_by="1001",
        )
    )
    shop.writes_enabled = True
    session.commit()


def test_the_case_queue_opens_inside_its_shops_admin_only(
    client: FlaskClient, session: Session, settings: Settings
) -> None:
    linen = install_shop(session, settings, "linen").shop
    session.add(StaffMember(shop_id=linen.id, user_id="1001", role=StaffRole.OWNER))
    _set_up(session, settings, linen)

    page = client.get(_page_url(linen.domain, session_token(linen.domain, "1001")))

    assert page.status_code == 200, page.get_data(as_text=True)[:500]
    policy = page.headers["Content-Security-Policy"]
    assert "frame-ancestors https://linen.myshopify.com https://admin.shopify.com" in policy
    html = page.get_data(as_text=True)
    assert f'<meta name="shopify-api-key" content="{CLIENT_ID}">' in html
    assert '<script src="https://cdn.shopify.com/shopifycloud/app-bridge.js"></script>' in html
    # Everything the person needs is in the server's HTML, so a blocked CDN hides nothing.
    assert "Nothing waits for anyone." in html and "you are owner" in html
    assert page.headers["Cache-Control"] == "no-store"


@pytest.mark.parametrize(("user", "role"), [("1001", StaffRole.OWNER), ("1002", StaffRole.VIEWER)])
def test_a_new_shop_opens_on_setup_and_only_owners_get_the_forms(
    client: FlaskClient, session: Session, settings: Settings, user: str, role: str
) -> None:
    linen = install_shop(session, settings, "linen").shop
    session.add(StaffMember(shop_id=linen.id, user_id=user, role=role))
    session.commit()

    html = client.get(_page_url(linen.domain, session_token(linen.domain, user))).get_data(
        as_text=True
    )

    assert "Connect Stripe" in html and "Not connected yet" in html
    assert "Write: Refunds" in html  # the permissions the key needs, spelled out
    assert "Every action needs a person" in html  # the default policy in words
    assert "The shop is read-only" in html
    has_forms = 'id="stripe-key"' in html and 'id="writes"' in html
    assert has_forms is (role == StaffRole.OWNER)
    if role == StaffRole.OWNER:
        assert "Connect Stripe first." in html  # writes wait for a connection
    else:
        assert "An owner of this shop connects Stripe." in html


def test_a_page_load_without_a_token_is_sent_to_fetch_one(
    client: FlaskClient, session: Session, settings: Settings
) -> None:
    linen = install_shop(session, settings, "linen").shop

    page = client.get(_page_url(linen.domain, None))

    assert page.status_code == 302
    assert page.headers["Location"].startswith("http://localhost/app/patch-id-token?")


def test_a_page_load_with_a_forged_token_shows_no_shop_data(
    client: FlaskClient, session: Session, settings: Settings
) -> None:
    linen = install_shop(session, settings, "linen").shop

    page = client.get(_page_url(linen.domain, session_token(linen.domain, "1001", secret="f" * 40)))

    # Sent for a fresh token, the forged one left behind, nothing of the shop shown.
    assert page.status_code == 302
    assert page.headers["Location"].startswith("http://localhost/app/patch-id-token?")
    assert "id_token" not in page.headers["Location"]
    assert page.get_data() == b""
