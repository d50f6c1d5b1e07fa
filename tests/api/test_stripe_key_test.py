"""Testing a Stripe key before connecting: an owner learns which permissions the key
lacks, from the sandbox over HTTP, and nothing is stored, audited or written at Stripe.
"""

from __future__ import annotations

import uuid

import pytest
from api_support import Account, Staff, new_account
from flask import Flask
from flask.testing import FlaskClient
from sqlalchemy import func, select
from sqlalchemy.orm import Session

from app.audit import AuditEvent
from app.clock import utcnow
from app.connections.models import Connection
from app.settings import Settings
from app.shops.models import Shop, StaffMember, StaffRole
from integrations.stripe.sandbox import DEMO_PERMISSIONS, StripeSandbox

DOMAIN = "key-test-linen.myshopify.com"
OWNER, PROPOSER, VIEWER = "kim.owner", "kai.proposer", "kit.viewer"
TEST_KEY = "/api/shop/connections/stripe/test"
NEEDED = {
    "rak_charge_read",
    "rak_payment_intent_read",
    "rak_customer_read",
    "rak_subscription_read",
    "rak_dispute_read",
    "rak_refund_write",
    "rak_customer_write",
    "rak_coupon_write",
    "rak_promotion_code_write",
    "rak_subscription_write",
    "rak_webhook_write",
}


@pytest.fixture
def shop_id(session: Session) -> uuid.UUID:
    """A shop not connected to Stripe yet, with an owner, a proposer and a viewer."""
    shop = Shop(domain=DOMAIN, name="Key Test Linen", created_at=utcnow())
    session.add(shop)
    session.flush()
    for user_id, role in (
        (OWNER, StaffRole.OWNER),
        (PROPOSER, StaffRole.PROPOSER),
        (VIEWER, StaffRole.VIEWER),
    ):
        session.add(StaffMember(shop_id=shop.id, user_id=user_id, role=role))
    session.commit()
    return shop.id


def _as(user_id: str, client: FlaskClient, app: Flask) -> Staff:
    return Staff(client, app, DOMAIN, user_id)


def _connections(session: Session, shop_id: uuid.UUID) -> int:
    session.expire_all()
    return (
        session.scalar(
            select(func.count()).select_from(Connection).where(Connection.shop_id == shop_id)
        )
        or 0
    )


def _audit_kinds(session: Session, shop_id: uuid.UUID) -> list[str]:
    session.expire_all()
    return list(
        session.scalars(
            select(AuditEvent.kind).where(AuditEvent.shop_id == shop_id).order_by(AuditEvent.seq)
        )
    )


def _accepted_writes(sandbox: StripeSandbox, account: Account) -> list[str]:
    return [
        f"{r.method} {r.path}"
        for r in sandbox.received_requests(account.id)
        if r.method != "GET" and r.status is not None and 200 <= r.status < 300
    ]


def test_the_owner_learns_the_key_has_every_permission_and_nothing_is_kept(
    shop_id: uuid.UUID,
    client: FlaskClient,
    app: Flask,
    account: Account,
    sandbox: StripeSandbox,
    session: Session,
) -> None:
    owner = _as(OWNER, client, app)
    audited_before = _audit_kinds(session, shop_id)

    response = owner.post(TEST_KEY, {"api_key": account.restricted_key, "livemode": False})

    assert response.status_code == 200, response.get_json()
    answer = response.get_json()
    assert answer["ok"] is True
    assert set(answer["granted"]) == NEEDED
    assert (answer["missing"], answer["unknown"]) == ([], [])
    assert answer["message"] == "The key has every permission Caseward needs."
    assert _connections(session, shop_id) == 0
    assert _audit_kinds(session, shop_id) == audited_before
    assert _accepted_writes(sandbox, account) == []


def test_the_owner_is_told_what_to_add_in_the_dashboard(
    shop_id: uuid.UUID,
    client: FlaskClient,
    app: Flask,
    sandbox: StripeSandbox,
    settings: Settings,
    session: Session,
) -> None:
    permissions = {**DEMO_PERMISSIONS, "refunds": "read", "disputes": "none"}
    account = new_account(sandbox, settings, permissions)
    owner = _as(OWNER, client, app)
    audited_before = _audit_kinds(session, shop_id)

    response = owner.post(TEST_KEY, {"api_key": account.restricted_key, "livemode": False})

    assert response.status_code == 200, response.get_json()
    answer = response.get_json()
    assert answer["ok"] is False
    assert answer["missing"] == ["rak_dispute_read", "rak_refund_write"]
    assert set(answer["granted"]) == NEEDED - {"rak_dispute_read", "rak_refund_write"}
    assert answer["message"] == (
        "In the Stripe dashboard, edit this restricted key and set Disputes: Read, Refunds: Write."
    )
    assert _connections(session, shop_id) == 0
    assert _audit_kinds(session, shop_id) == audited_before
    assert _accepted_writes(sandbox, account) == []


@pytest.mark.parametrize("user_id", [PROPOSER, VIEWER])
def test_only_owners_may_test_a_key_and_the_refusal_is_recorded(
    shop_id: uuid.UUID,
    client: FlaskClient,
    app: Flask,
    account: Account,
    sandbox: StripeSandbox,
    session: Session,
    user_id: str,
) -> None:
    member = _as(user_id, client, app)
    audited_before = _audit_kinds(session, shop_id)

    response = member.post(TEST_KEY, {"api_key": account.restricted_key, "livemode": False})

    assert response.status_code == 403
    assert response.get_json()["error"]["code"] == "role_not_allowed"
    assert _audit_kinds(session, shop_id) == [*audited_before, "request.refused"]
    assert sandbox.received_requests(account.id) == []  # Stripe was never asked


@pytest.mark.parametrize(
    ("which", "livemode"),
    [("secret", False), ("restricted", True), ("unknown", False)],
)
def test_a_key_caseward_would_not_hold_is_refused_naming_api_key(
    shop_id: uuid.UUID,
    client: FlaskClient,
    app: Flask,
    account: Account,
    session: Session,
    which: str,
    livemode: bool,
) -> None:
    key = {
        "secret": account.secret_key,
        "restricted": account.restricted_key,  # a test key for a live shop
        "unknown": "rk_test_51" + "Q" * 60 + "wxyz",  # Stripe has never seen it
    }[which]
    owner = _as(OWNER, client, app)
    audited_before = _audit_kinds(session, shop_id)

    response = owner.post(TEST_KEY, {"api_key": key, "livemode": livemode})

    assert response.status_code == 400
    error = response.get_json()["error"]
    assert error["field"] == "api_key"
    assert key not in error["message"]
    assert _connections(session, shop_id) == 0
    assert _audit_kinds(session, shop_id) == audited_before
