"""Connecting Stripe is one call: the key is checked, the webhook endpoint registered at
Stripe (the sandbox over HTTP) and its signing secret kept, encrypted, on the connection.

A re-save keeps the stored secret; a merchant's own secret means no registration; a
key that may not create webhook endpoints is refused naming the permission, and
nothing is stored anywhere.
"""

from __future__ import annotations

import json
import uuid
from dataclasses import replace
from typing import Any

import pytest
from api_support import Account, Staff, new_account
from flask import Flask
from flask.testing import FlaskClient
from money_path_harness import wait_for
from sqlalchemy import func, select
from sqlalchemy.orm import Session

from app.audit import AuditEvent
from app.clock import utcnow
from app.connections.models import Connection
from app.crypto import secret_box
from app.execution.models import ProviderEvent
from app.settings import Settings
from app.shops.models import Shop, StaffMember, StaffRole
from integrations.stripe import seeding
from integrations.stripe.adapter import WEBHOOK_EVENTS
from integrations.stripe.sandbox import DEMO_PERMISSIONS, StripeSandbox

DOMAIN = "fresh-linen.myshopify.com"
OWNER = "fiona.owner"
CONNECT = "/api/shop/connections/stripe"


@pytest.fixture
def fresh_shop(session: Session) -> uuid.UUID:
    """A shop with its owner and no connection yet."""
    shop = Shop(domain=DOMAIN, name="Fresh Linen", created_at=utcnow())
    session.add(shop)
    session.flush()
    session.add(StaffMember(shop_id=shop.id, user_id=OWNER, role=StaffRole.OWNER))
    session.commit()
    return shop.id


@pytest.fixture
def fresh_owner(fresh_shop: uuid.UUID, client: FlaskClient, app: Flask) -> Staff:
    return Staff(client, app, DOMAIN, OWNER)


def _connect(
    client: FlaskClient, owner: Staff, body: dict[str, Any], base_url: str | None = None
) -> Any:
    extra = {"base_url": base_url} if base_url else {}
    return client.put(CONNECT, json=body, headers=owner._headers, **extra)


def _endpoints(account: Account) -> list[dict[str, Any]]:
    return [e.to_dict() for e in account.stripe.v1.webhook_endpoints.list()]


def _connection(session: Session, shop_id: uuid.UUID) -> Connection | None:
    session.expire_all()
    return session.scalars(select(Connection).where(Connection.shop_id == shop_id)).one_or_none()


def _stored_secret(session: Session, settings: Settings, shop_id: uuid.UUID) -> str | None:
    connection = _connection(session, shop_id)
    assert connection is not None
    if connection.encrypted_webhook_secret is None:
        return None
    return secret_box(settings).decrypt(connection.encrypted_webhook_secret)


def _connection_events(session: Session, shop_id: uuid.UUID) -> list[str]:
    """The shop's audited connection changes (a refusal itself may be on the record)."""
    kinds = session.scalars(select(AuditEvent.kind).where(AuditEvent.shop_id == shop_id))
    return [kind for kind in kinds if kind.startswith("connection.")]


def test_connecting_registers_the_webhook_endpoint_and_events_arrive(
    fresh_shop: uuid.UUID,
    fresh_owner: Staff,
    client: FlaskClient,
    account: Account,
    settings: Settings,
    session: Session,
    web_url: str,
) -> None:
    response = _connect(
        client, fresh_owner, {"api_key": account.restricted_key, "livemode": False}, web_url
    )

    assert response.status_code == 200, response.get_json()
    answer = response.get_json()
    connection = _connection(session, fresh_shop)
    assert connection is not None
    assert answer["webhook_registered"] is True
    assert answer["webhook_url"] == f"{web_url}/webhooks/stripe/{connection.id}"
    assert (answer["provider"], answer["livemode"]) == ("stripe", False)
    [endpoint] = _endpoints(account)
    assert endpoint["url"] == answer["webhook_url"]
    assert set(endpoint["enabled_events"]) == set(WEBHOOK_EVENTS)
    assert (_stored_secret(session, settings, fresh_shop) or "").startswith("whsec_")

    # The stored secret is the endpoint's: Stripe's next event arrives and is kept.
    payment = seeding.paid_checkout(
        account.stripe, email="maya@example.com", name="Maya Lin", amount=1000, currency="usd"
    )
    account.stripe.v1.refunds.create(
        params={"payment_intent": payment.payment_intent_id, "amount": 100}
    )
    wait_for(
        lambda: session.scalar(
            select(func.count())
            .select_from(ProviderEvent)
            .where(ProviderEvent.shop_id == fresh_shop, ProviderEvent.type == "refund.created")
        ),
        what="the refund.created event to reach the shop",
    )

    events = session.scalars(select(AuditEvent).where(AuditEvent.shop_id == fresh_shop)).all()
    registered = [e for e in events if e.kind == "connection.webhook_registered"]
    assert [e.data["endpoint_id"] for e in registered] == [endpoint["id"]]
    assert "whsec_" not in json.dumps([e.data for e in events])


def test_the_public_url_wins_over_the_requests_host(
    fresh_shop: uuid.UUID,
    fresh_owner: Staff,
    client: FlaskClient,
    app: Flask,
    account: Account,
    settings: Settings,
    web_url: str,
) -> None:
    app.config["CASEWARD_SETTINGS"] = replace(settings, public_url=web_url)

    response = _connect(client, fresh_owner, {"api_key": account.restricted_key, "livemode": False})

    assert response.status_code == 200, response.get_json()
    assert response.get_json()["webhook_url"].startswith(f"{web_url}/webhooks/stripe/")
    assert [e["url"] for e in _endpoints(account)] == [response.get_json()["webhook_url"]]


def test_resaving_the_key_keeps_the_stored_secret_and_registers_nothing_more(
    fresh_shop: uuid.UUID,
    fresh_owner: Staff,
    client: FlaskClient,
    account: Account,
    settings: Settings,
    session: Session,
    web_url: str,
) -> None:
    body = {"api_key": account.restricted_key, "livemode": False}
    first = _connect(client, fresh_owner, body, web_url)
    assert first.status_code == 200, first.get_json()
    secret = _stored_secret(session, settings, fresh_shop)

    again = _connect(client, fresh_owner, body, web_url)

    assert again.status_code == 200, again.get_json()
    assert again.get_json()["webhook_registered"] is False
    assert again.get_json()["webhook_url"] == first.get_json()["webhook_url"]
    assert _stored_secret(session, settings, fresh_shop) == secret
    assert len(_endpoints(account)) == 1


def test_a_merchants_own_secret_is_kept_and_nothing_is_registered(
    fresh_shop: uuid.UUID,
    fresh_owner: Staff,
    client: FlaskClient,
    account: Account,
    settings: Settings,
    session: Session,
    web_url: str,
) -> None:
    own = "whsec_registered_by_hand_0123456789"
    body = {"api_key": account.restricted_key, "livemode": False, "webhook_secret": own}

    response = _connect(client, fresh_owner, body, web_url)

    assert response.status_code == 200, response.get_json()
    assert response.get_json()["webhook_registered"] is False
    assert _stored_secret(session, settings, fresh_shop) == own
    assert _endpoints(account) == []
    # And a later re-save without one keeps it.
    resaved = _connect(
        client, fresh_owner, {"api_key": account.restricted_key, "livemode": False}, web_url
    )
    assert resaved.status_code == 200
    assert _stored_secret(session, settings, fresh_shop) == own


def test_a_key_that_may_not_register_webhooks_is_refused_and_nothing_is_stored(
    fresh_shop: uuid.UUID,
    fresh_owner: Staff,
    client: FlaskClient,
    sandbox: StripeSandbox,
    settings: Settings,
    session: Session,
    web_url: str,
) -> None:
    permissions = {k: v for k, v in DEMO_PERMISSIONS.items() if k != "webhook_endpoints"}
    account = new_account(sandbox, settings, permissions)

    response = _connect(
        client, fresh_owner, {"api_key": account.restricted_key, "livemode": False}, web_url
    )

    assert response.status_code == 400
    error = response.get_json()["error"]
    assert error["field"] == "api_key"
    assert "rak_webhook_write" in error["message"]
    assert _connection(session, fresh_shop) is None
    assert _connection_events(session, fresh_shop) == []
    assert _endpoints(account) == []


def test_a_secret_key_is_refused_before_anything_is_registered(
    fresh_shop: uuid.UUID,
    fresh_owner: Staff,
    client: FlaskClient,
    account: Account,
    session: Session,
    web_url: str,
) -> None:
    response = _connect(
        client, fresh_owner, {"api_key": account.secret_key, "livemode": False}, web_url
    )

    assert response.status_code == 400
    assert response.get_json()["error"]["field"] == "api_key"
    assert _connection(session, fresh_shop) is None
    assert _connection_events(session, fresh_shop) == []
    assert _endpoints(account) == []
