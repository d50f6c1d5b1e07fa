"""Shopify's webhooks: only signed deliveries count, each event once, uninstall for real."""

from __future__ import annotations

import json
from dataclasses import replace

import pytest
from flask import Flask
from flask.testing import FlaskClient
from shopify_app_support import APP_SECRET, an_hour_before, deliver, install_shop
from sqlalchemy import func, select
from sqlalchemy.orm import Session

from app import create_app
from app.audit import AuditEvent, verify_chain
from app.execution.models import ProviderEvent
from app.settings import Settings
from app.shopify.models import ShopifyInstall
from app.shops.models import Shop

UNINSTALLED = {"id": 548380009, "name": "Linen & Loom", "domain": "linen.myshopify.com"}


def _events(session: Session, kind: str) -> list[AuditEvent]:
    return list(session.scalars(select(AuditEvent).where(AuditEvent.kind == kind)))


def _stored(session: Session) -> int:
    return session.scalar(select(func.count()).select_from(ProviderEvent)) or 0


def test_an_uninstall_forgets_the_tokens_and_stops_the_shop_keeping_its_evidence(
    client: FlaskClient, session: Session, settings: Settings
) -> None:
    linen = install_shop(session, settings, "linen").shop

    answer = deliver(client, "linen.myshopify.com", "app/uninstalled", UNINSTALLED)

    assert answer.status_code == 200, answer.get_json()
    assert answer.get_json()["acted"] == "uninstalled"
    session.expire_all()
    shop = session.get(Shop, linen.id)
    assert shop is not None and shop.uninstalled_at is not None
    assert session.get(ShopifyInstall, linen.id) is None
    [event] = _events(session, "shop.uninstalled")
    assert (event.actor, event.actor_kind, event.actor_surface) == (
        "system:shopify",
        "system",
        "provider",
    )


def test_an_uninstall_arriving_twice_changes_nothing_the_second_time(
    client: FlaskClient, session: Session, settings: Settings
) -> None:
    install_shop(session, settings, "linen")

    first = deliver(client, "linen.myshopify.com", "app/uninstalled", UNINSTALLED, event_id="e1")
    redelivered = deliver(
        client, "linen.myshopify.com", "app/uninstalled", UNINSTALLED, event_id="e1"
    )
    second_event = deliver(
        client, "linen.myshopify.com", "app/uninstalled", UNINSTALLED, event_id="e2"
    )

    assert first.get_json()["acted"] == "uninstalled"
    assert redelivered.get_json() == {"received": True, "duplicate": True}
    assert second_event.status_code == 200 and second_event.get_json()["acted"] is None
    assert len(_events(session, "shop.uninstalled")) == 1
    assert _stored(session) == 2  # e1 once, e2 once


def test_an_uninstall_triggered_before_the_current_install_is_stale_and_ignored(
    client: FlaskClient, session: Session, settings: Settings
) -> None:
    installed = install_shop(session, settings, "linen")

    answer = deliver(
        client,
        "linen.myshopify.com",
        "app/uninstalled",
        UNINSTALLED,
        triggered_at=an_hour_before(installed.installed_at),
    )

    assert answer.get_json()["acted"] == "stale"
    session.expire_all()
    assert session.get(ShopifyInstall, installed.shop.id) is not None
    assert session.get(Shop, installed.shop.id).uninstalled_at is None  # type: ignore[union-attr]
    [ignored] = _events(session, "webhook.stale_ignored")
    assert ignored.data["topic"] == "app/uninstalled"


@pytest.mark.parametrize(
    "forgery",
    ["tampered body", "signed with another secret", "no signature", "signature of nothing"],
)
def test_a_delivery_that_does_not_verify_is_refused_with_nothing_stored(
    client: FlaskClient, session: Session, settings: Settings, forgery: str
) -> None:
    linen = install_shop(session, settings, "linen").shop
    kwargs: dict[str, object] = {
        "tampered body": {"body": json.dumps({**UNINSTALLED, "id": 1}).encode()},
        "signed with another secret": {"secret": "shpss_someone-elses-secret"},
        "no signature": {"signature": ""},
        "signature of nothing": {"signature": "AAAA"},
    }[forgery]  # type: ignore[assignment]

    answer = deliver(client, "linen.myshopify.com", "app/uninstalled", UNINSTALLED, **kwargs)  # type: ignore[arg-type]

    assert answer.status_code == 401
    assert answer.get_json()["error"]["code"] == "unauthenticated"
    session.expire_all()
    assert _stored(session) == 0
    assert session.get(ShopifyInstall, linen.id) is not None


def test_the_previous_secret_still_verifies_during_a_rotation(
    session: Session, settings: Settings
) -> None:
    rotated = replace(
        settings, shopify_api_secret="shpss_the-new-secret", shopify_old_api_secret=APP_SECRET
    )
    app: Flask = create_app(rotated)
    install_shop(session, settings, "linen")

    answer = deliver(app.test_client(), "linen.myshopify.com", "app/uninstalled", UNINSTALLED)

    assert answer.status_code == 200 and answer.get_json()["acted"] == "uninstalled"


def test_granted_scopes_are_recorded(
    client: FlaskClient, session: Session, settings: Settings
) -> None:
    linen = install_shop(session, settings, "linen").shop
    payload = {
        "id": 1,
        "previous": ["read_orders", "write_orders"],
        "current": ["read_orders", "write_orders", "read_customers"],
        "updated_at": "2026-12-01T10:00:00Z",
    }

    answer = deliver(client, "linen.myshopify.com", "app/scopes_update", payload)

    assert answer.get_json()["acted"] == "scopes_updated"
    session.expire_all()
    install = session.get(ShopifyInstall, linen.id)
    assert install is not None and install.scopes == "read_orders,write_orders,read_customers"


def test_a_signed_delivery_for_a_shop_that_never_installed_is_answered_and_not_kept(
    client: FlaskClient, session: Session
) -> None:
    answer = deliver(client, "stranger.myshopify.com", "app/uninstalled", UNINSTALLED)

    assert answer.status_code == 200 and answer.get_json()["known_shop"] is False
    assert _stored(session) == 0


def test_the_chain_still_verifies_after_uninstall_and_its_repeats(
    client: FlaskClient, session: Session, settings: Settings, app: Flask
) -> None:
    linen = install_shop(session, settings, "linen").shop
    for event_id in ("e1", "e1", "e2"):
        deliver(client, "linen.myshopify.com", "app/uninstalled", UNINSTALLED, event_id=event_id)

    report = verify_chain(session, linen.id)
    assert report.intact and report.events == 1
