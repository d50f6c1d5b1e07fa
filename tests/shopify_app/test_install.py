"""Installing as Shopify installs embedded apps: the first session token is exchanged for
an offline token, the account owner becomes owner, everyone else a viewer; the store's
currency is kept as Shopify reports it; uninstalling (delivered by the sandbox, maybe twice)
stops the shop; a reinstall starts read-only with every case and audit event kept; an
expiring token is refreshed once, under a lock."""

from __future__ import annotations

import base64
import time
from collections.abc import Iterator
from dataclasses import replace
from datetime import timedelta
from urllib.parse import urlencode

import pytest
from flask import Flask
from flask.testing import FlaskClient
from shopify_app_support import APP_SECRET, CLIENT_ID
from sqlalchemy import select
from sqlalchemy.orm import Session

from app.audit import AuditEvent, verify_chain
from app.clock import utcnow
from app.crypto import secret_box
from app.settings import Settings
from app.shopify.install import shop_currency, usable_token
from app.shopify.models import ShopifyInstall
from app.shops.models import Shop, StaffMember
from app.web.shopify_admin import shopify_auth
from integrations.shopify.auth import ShopifyAuth
from integrations.shopify.sandbox import Clock, Fault, SandboxShop, ShopifySandbox

OWNER, CLERK = 1001, 1002


@pytest.fixture
def shopify() -> Iterator[ShopifySandbox]:
    box = ShopifySandbox(
        api_key=CLIENT_ID,
        api_secret=APP_SECRET,
        clock=Clock(),
        webhook_retry_delays=(0.2, 0.5),
    )
    box.start()
    yield box
    box.stop()


@pytest.fixture
def settings(settings: Settings, shopify: ShopifySandbox) -> Settings:
    assert shopify.url is not None
    return replace(settings, shopify_api_base=shopify.url)


@pytest.fixture
def linen(shopify: ShopifySandbox) -> SandboxShop:
    shop = shopify.create_shop("linen", owner_user_id=OWNER)
    shopify.add_staff(shop.domain, user_id=CLERK)
    return shop


def _open_app(client: FlaskClient, shopify: ShopifySandbox, shop: str, user: int) -> str:
    host = base64.urlsafe_b64encode(f"admin.shopify.com/store/{shop}".encode()).decode()
    query = urlencode(
        {
            "embedded": "1",
            "shop": shop,
            "host": host.rstrip("="),
            # Issued now by the wall clock, which is what the app checks it against.
            "id_token": shopify.session_token(shop, user_id=user, issued_at=time.time()),
        }
    )
    page = client.get(f"/app?{query}")
    assert page.status_code == 200, page.get_data(as_text=True)[:300]
    return page.get_data(as_text=True)


def _kinds(session: Session, shop: Shop) -> list[str]:
    return list(
        session.scalars(
            select(AuditEvent.kind).where(AuditEvent.shop_id == shop.id).order_by(AuditEvent.seq)
        )
    )


def _shop(session: Session, domain: str) -> Shop:
    session.expire_all()
    return session.scalars(select(Shop).where(Shop.domain == domain)).one()


def _refresh_due(session: Session, shop: Shop) -> ShopifyInstall:
    """An hour on: 30 s left, inside the last minute when Shopify's package refreshes."""
    stored = session.get(ShopifyInstall, shop.id)
    assert stored is not None and stored.access_token_expires_at is not None
    stored.access_token_expires_at = utcnow() + timedelta(seconds=30)
    session.commit()
    return stored


def _usable_token(session: Session, shop: Shop, auth: ShopifyAuth, settings: Settings) -> str:
    token = usable_token(
        session,
        shop,
        box=secret_box(settings),
        refresh=auth.refresh_if_needed,
        currency_of=lambda fresh: shop_currency(shop.domain, fresh, auth.http_client),
        now=utcnow(),
    )
    session.commit()
    return token.token


def test_the_first_visit_installs_the_shop_read_only_with_its_owner_and_an_encrypted_token(
    client: FlaskClient, session: Session, shopify: ShopifySandbox, linen: SandboxShop
) -> None:
    html = _open_app(client, shopify, linen.domain, OWNER)

    shop = _shop(session, linen.domain)
    install = session.get(ShopifyInstall, shop.id)
    assert install is not None and install.access_token_expires_at is not None
    assert b"shpat_" not in install.encrypted_access_token  # ciphertext only
    assert shop.writes_enabled is False and "read-only" in html
    member = session.scalars(select(StaffMember).where(StaffMember.shop_id == shop.id)).one()
    assert (member.user_id, member.role) == (str(OWNER), "owner")
    # Installing starts the read-only check of the shop's history, on read scopes alone.
    assert _kinds(session, shop) == ["shop.installed", "staff.joined", "history.scan_started"]


def test_the_install_keeps_the_currency_the_store_sells_in(
    client: FlaskClient, session: Session, shopify: ShopifySandbox
) -> None:
    kyoto = shopify.create_shop("kyoto-linen", currency="JPY", owner_user_id=OWNER)

    _open_app(client, shopify, kyoto.domain, OWNER)

    shop = _shop(session, kyoto.domain)
    assert shop.currency == "jpy"
    installed = session.scalars(
        select(AuditEvent).where(AuditEvent.shop_id == shop.id, AuditEvent.kind == "shop.installed")
    ).one()
    assert installed.data["currency"] == "jpy"


def test_shopify_not_saying_the_currency_does_not_stop_the_install_and_a_refresh_asks_again(
    client: FlaskClient,
    session: Session,
    shopify: ShopifySandbox,
    linen: SandboxShop,
    settings: Settings,
    app: Flask,
) -> None:
    shopify.arm_fault(Fault(kind="error_500_before_commit", operation="Shop"))

    html = _open_app(client, shopify, linen.domain, OWNER)

    shop = _shop(session, linen.domain)
    assert shop.currency is None and "read-only" in html
    _refresh_due(session, shop)
    auth = shopify_auth(app)
    assert auth is not None
    _usable_token(session, shop, auth, settings)

    shop = _shop(session, linen.domain)
    assert shop.currency == "usd"
    assert _kinds(session, shop)[-1] == "shop.currency_learned"
    # Known now: the next refresh does not ask.
    _refresh_due(session, shop)
    _usable_token(session, shop, auth, settings)
    asked = [op for op in shopify.received_operations(linen.domain) if op.name == "Shop"]
    assert len(asked) == 2  # at the install, and at the first refresh


def test_staff_other_than_the_account_owner_start_as_viewers(
    client: FlaskClient, session: Session, shopify: ShopifySandbox, linen: SandboxShop
) -> None:
    _open_app(client, shopify, linen.domain, OWNER)
    html = _open_app(client, shopify, linen.domain, CLERK)

    shop = _shop(session, linen.domain)
    roles = dict(
        session.execute(
            select(StaffMember.user_id, StaffMember.role).where(StaffMember.shop_id == shop.id)
        ).all()
    )
    assert roles == {str(OWNER): "owner", str(CLERK): "viewer"}
    assert "you are viewer" in html


def test_each_person_is_kept_with_the_name_shopify_knows_them_by_even_if_admitted_before(
    client: FlaskClient, session: Session, shopify: ShopifySandbox, linen: SandboxShop
) -> None:
    shopify.add_staff(
        linen.domain, user_id=CLERK + 1, first_name="Ana", last_name="Ruiz", email="ana@linen.test"
    )
    _open_app(client, shopify, linen.domain, OWNER)
    _open_app(client, shopify, linen.domain, CLERK + 1)

    shop = _shop(session, linen.domain)
    people = dict(
        session.execute(
            select(StaffMember.user_id, StaffMember.name).where(StaffMember.shop_id == shop.id)
        ).all()
    )
    assert people == {str(OWNER): f"Owner {OWNER}", str(CLERK + 1): "Ana Ruiz"}

    # Someone admitted before Caseward kept names is named by Shopify on their next visit.
    ana = session.scalars(
        select(StaffMember).where(
            StaffMember.shop_id == shop.id, StaffMember.user_id == str(CLERK + 1)
        )
    ).one()
    ana.name = None
    session.commit()
    _open_app(client, shopify, linen.domain, CLERK + 1)
    session.expire_all()
    assert ana.name == "Ana Ruiz"
    named = session.scalars(
        select(AuditEvent).where(AuditEvent.shop_id == shop.id, AuditEvent.kind == "staff.named")
    ).one()
    assert named.data == {"user_id": str(CLERK + 1), "name": "Ana Ruiz"}
    assert verify_chain(session, shop.id).broken_at is None


def test_uninstall_delivered_twice_then_reinstall_starts_clean_and_keeps_the_evidence(
    client: FlaskClient,
    session: Session,
    shopify: ShopifySandbox,
    linen: SandboxShop,
    web_url: str,
    app: Flask,
) -> None:
    shopify.subscribe(url=f"{web_url}/webhooks/shopify", topics=["app/uninstalled"])
    _open_app(client, shopify, linen.domain, OWNER)
    shop = _shop(session, linen.domain)
    shop.writes_enabled = True
    session.commit()

    uninstalled = shopify.uninstall(linen.domain)
    assert shopify.wait_for_webhooks(timeout=10)
    shopify.deliver_event(uninstalled.id)  # Shopify may deliver it again

    shop = _shop(session, linen.domain)
    assert shop.uninstalled_at is not None
    assert session.get(ShopifyInstall, shop.id) is None

    shopify.install(linen.domain)
    _open_app(client, shopify, linen.domain, OWNER)

    shop = _shop(session, linen.domain)
    assert shop.uninstalled_at is None and shop.writes_enabled is False
    assert session.get(ShopifyInstall, shop.id) is not None
    assert _kinds(session, shop) == [
        "shop.installed",
        "staff.joined",
        "history.scan_started",
        "shop.uninstalled",
        # The check begun at the first install is still queued: no second one.
        "shop.reinstalled",
    ]
    assert verify_chain(session, shop.id).intact


def test_an_expiring_token_is_refreshed_once_and_the_new_one_kept(
    client: FlaskClient,
    session: Session,
    shopify: ShopifySandbox,
    linen: SandboxShop,
    settings: Settings,
    app: Flask,
) -> None:
    _open_app(client, shopify, linen.domain, OWNER)
    shop = _shop(session, linen.domain)
    stored = _refresh_due(session, shop)
    auth = shopify_auth(app)
    assert auth is not None
    box = secret_box(settings)
    first_token = box.decrypt(stored.encrypted_access_token)

    now = utcnow()
    refreshed = usable_token(
        session,
        shop,
        box=box,
        refresh=auth.refresh_if_needed,
        currency_of=lambda fresh: shop_currency(shop.domain, fresh, auth.http_client),
        now=now,
    )
    session.commit()
    again = _usable_token(session, shop, auth, settings)

    assert refreshed.token != first_token
    assert refreshed.expires_at is not None and refreshed.expires_at - now > timedelta(minutes=59)
    assert again == refreshed.token  # kept, not refreshed a second time
    install = session.get(ShopifyInstall, shop.id)
    assert install is not None and install.refreshed_at == now
    token_calls = [
        r for r in shopify.received_requests(linen.domain) if r.path == "/admin/oauth/access_token"
    ]
    assert len(token_calls) == 3  # offline and online exchange at install, one refresh


def test_a_persons_first_request_may_be_an_api_fetch_and_admits_them_as_viewer(
    client: FlaskClient, session: Session, shopify: ShopifySandbox, linen: SandboxShop
) -> None:
    _open_app(client, shopify, linen.domain, OWNER)
    token = shopify.session_token(linen.domain, user_id=CLERK, issued_at=time.time())
    headers = {"Authorization": f"Bearer {token}"}

    assert client.get("/api/cases", headers=headers).status_code == 200
    refused = client.put("/api/shop/writes", json={"enabled": True}, headers=headers)

    assert refused.status_code == 403
    shop = _shop(session, linen.domain)
    clerk = session.scalars(
        select(StaffMember).where(StaffMember.shop_id == shop.id, StaffMember.user_id == str(CLERK))
    ).one()
    assert clerk.role == "viewer"
    assert shop.writes_enabled is False
