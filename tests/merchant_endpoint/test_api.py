"""Connecting a shop's own endpoint through the staff API, and rotating its signing secret
(Caseward issue 11, point 5).

Owners only, audited; the endpoint is https (plain http only for this machine, outside
production); the signing secret is shown in the one answer that made it and is stored
only encrypted; a rotation keeps the previous secret signing for the grace period.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable
from datetime import timedelta

import pytest
from flask import Flask
from flask.testing import FlaskClient
from merchant_support import Staff
from sqlalchemy import select
from sqlalchemy.orm import Session

from app.audit import AuditEvent
from app.clock import utcnow
from app.connections.merchant import endpoint_url, signing_secrets
from app.connections.models import Connection
from app.crypto import secret_box
from app.demo import APPROVER, OWNER, STAFF
from app.errors import InvalidInput
from app.settings import Settings
from app.shops.models import Shop, StaffMember
from integrations.merchant_endpoint.signing import SigningSecrets, is_secret

CONNECT = "/api/shop/connections/merchant"
ROTATE = "/api/shop/connections/merchant/secret"
ENDPOINT = "https://linen.example.com/caseward"


@pytest.fixture
def domain() -> str:
    # A domain of the test's own: on SQLite the module's tests share one database.
    return f"own-endpoint-{uuid.uuid4().hex[:8]}.myshopify.com"


@pytest.fixture
def shop_id(app: Flask, session: Session, domain: str) -> uuid.UUID:
    """A shop with the demo's staff and no connection."""
    shop = Shop(domain=domain, name="Linen & Loom", created_at=utcnow())
    session.add(shop)
    session.flush()
    for user_id, role, _limit in STAFF:
        session.add(StaffMember(shop_id=shop.id, user_id=user_id, role=role))
    session.commit()
    return shop.id


@pytest.fixture
def staff(
    client: FlaskClient, app: Flask, shop_id: uuid.UUID, domain: str
) -> Callable[[str], Staff]:
    return lambda user_id: Staff(client, app, domain, user_id)


def _connection(session: Session, shop_id: uuid.UUID) -> Connection | None:
    session.expire_all()
    return session.scalars(
        select(Connection).where(Connection.shop_id == shop_id, Connection.provider == "merchant")
    ).one_or_none()


def _events(session: Session, shop_id: uuid.UUID) -> list[AuditEvent]:
    return list(
        session.scalars(
            select(AuditEvent).where(AuditEvent.shop_id == shop_id).order_by(AuditEvent.seq)
        )
    )


def _stored(session: Session, settings: Settings, shop_id: uuid.UUID) -> SigningSecrets:
    connection = _connection(session, shop_id)
    assert connection is not None
    return signing_secrets(connection, secret_box(settings))


def test_an_owner_connects_and_sees_the_signing_secret_once(
    owner: Staff, shop_id: uuid.UUID, session: Session, settings: Settings
) -> None:
    answer = owner.put(CONNECT, {"endpoint_url": ENDPOINT + "/"})

    assert answer.status_code == 200, answer.get_json()
    body = answer.get_json()
    secret = body["signing_secret"]
    assert is_secret(secret)
    assert body["provider"] == "merchant" and body["endpoint_url"] == ENDPOINT
    assert body["livemode"] is True and body["previous_secret_until"] is None
    assert body["key"].startswith("whsec_…") and secret not in body["key"]

    row = _connection(session, shop_id)
    assert row is not None and row.endpoint_url == ENDPOINT and row.key_hint == body["key"]
    # Only ciphertext is kept; it opens to the secret with the installation's key.
    assert secret.encode() not in row.encrypted_secret
    assert secret.removeprefix("whsec_").encode() not in row.encrypted_secret
    assert _stored(session, settings, shop_id) == SigningSecrets(current=secret)

    again = owner.put(CONNECT, {"endpoint_url": "https://pay.linen.example.com/hooks"})
    assert again.status_code == 200
    assert again.get_json()["signing_secret"] is None
    assert again.get_json()["endpoint_url"] == "https://pay.linen.example.com/hooks"
    assert _stored(session, settings, shop_id) == SigningSecrets(current=secret)

    listed = owner.get("/api/shop").get_json()["connections"]
    assert {"provider": "merchant", "key": body["key"], "livemode": True} in listed

    events = _events(session, shop_id)
    saved = [e.data for e in events if e.kind == "connection.saved"]
    assert [(d["provider"], d["endpoint_url"], d["secret_made"]) for d in saved] == [
        ("merchant", ENDPOINT, True),
        ("merchant", "https://pay.linen.example.com/hooks", False),
    ]
    assert all(e.actor == OWNER for e in events if e.kind == "connection.saved")
    assert secret.removeprefix("whsec_") not in json.dumps([e.data for e in events])


NOT_PLAIN_HTTPS = (
    "http://linen.example.com/caseward",
    "ftp://linen.example.com/caseward",
    "linen.example.com/caseward",
    "https://user:password@linen.example.com/caseward",
    "https://linen.example.com/caseward?shop=1",
    "https://linen.example.com/caseward#top",
    "https://linen example.com/caseward",
    "https://linen.example.com:99999/caseward",
    "https://",
    "",
    "https://linen.example.com/" + "a" * 255,
)


def test_an_endpoint_that_is_not_plain_https_is_refused(
    owner: Staff, shop_id: uuid.UUID, session: Session
) -> None:
    for url in NOT_PLAIN_HTTPS:
        answer = owner.put(CONNECT, {"endpoint_url": url})

        assert answer.status_code == 400, (url, answer.get_json())
        assert answer.get_json()["error"]["field"] == "endpoint_url"
    assert _connection(session, shop_id) is None


def test_plain_http_is_for_this_machine_outside_production_only(
    owner: Staff, shop_id: uuid.UUID
) -> None:
    local = owner.put(CONNECT, {"endpoint_url": "http://127.0.0.1:8080/caseward"})
    assert local.status_code == 200, local.get_json()
    assert local.get_json()["livemode"] is False

    assert endpoint_url("http://localhost:5000", production=False) == "http://localhost:5000"
    public = ["93.184.215.14"]
    assert endpoint_url(ENDPOINT, production=True, resolve=lambda *_: public) == ENDPOINT
    for here in ("http://localhost:5000", "https://localhost/caseward", "https://127.0.0.1"):
        with pytest.raises(InvalidInput) as refused:
            endpoint_url(here, production=True)
        assert refused.value.field == "endpoint_url"


def test_a_rotation_keeps_the_previous_secret_for_the_grace_period(
    owner: Staff, shop_id: uuid.UUID, session: Session, settings: Settings
) -> None:
    assert owner.post(ROTATE, {}).status_code == 400  # nothing to rotate yet
    first = owner.put(CONNECT, {"endpoint_url": ENDPOINT}).get_json()["signing_secret"]

    before = utcnow()
    rotated = owner.post(ROTATE, {})

    assert rotated.status_code == 200, rotated.get_json()
    body = rotated.get_json()
    second = body["signing_secret"]
    assert is_secret(second) and second != first
    stored = _stored(session, settings, shop_id)
    assert (stored.current, stored.previous) == (second, first)
    assert stored.previous_until is not None
    assert before + timedelta(hours=24) <= stored.previous_until <= utcnow() + timedelta(hours=24)
    assert body["previous_secret_until"] == stored.previous_until.isoformat()
    assert stored.in_use(utcnow()) == (second, first)
    assert stored.in_use(stored.previous_until) == (second,)

    # After a leak: the old one stops at once, and only the last two ever sign.
    third = owner.post(ROTATE, {"grace_seconds": 0}).get_json()
    assert third["previous_secret_until"] is None
    assert _stored(session, settings, shop_id) == SigningSecrets(third["signing_secret"])
    fourth = owner.post(ROTATE, {"grace_seconds": 3600}).get_json()
    assert _stored(session, settings, shop_id).in_use(utcnow()) == (
        fourth["signing_secret"],
        third["signing_secret"],
    )

    rotations = [e.data for e in _events(session, shop_id) if e.kind == "connection.secret_rotated"]
    assert [r["provider"] for r in rotations] == ["merchant"] * 3
    assert [r["previous_until"] is None for r in rotations] == [False, True, False]
    every_word = json.dumps([e.data for e in _events(session, shop_id)])
    for secret in (first, second, third["signing_secret"], fourth["signing_secret"]):
        assert secret.removeprefix("whsec_") not in every_word


def test_a_grace_period_out_of_bounds_is_refused(owner: Staff) -> None:
    owner.put(CONNECT, {"endpoint_url": ENDPOINT})

    for grace in (-1, 7 * 86400 + 1, "3600", 1.5, True):
        answer = owner.post(ROTATE, {"grace_seconds": grace})

        assert answer.status_code == 400, grace
        assert answer.get_json()["error"]["field"] == "grace_seconds"


def test_only_an_owner_connects_or_rotates_and_the_refusals_are_on_record(
    staff: Callable[[str], Staff], owner: Staff, shop_id: uuid.UUID, session: Session
) -> None:
    approver = staff(APPROVER)

    assert approver.put(CONNECT, {"endpoint_url": ENDPOINT}).status_code == 403
    assert _connection(session, shop_id) is None
    owner.put(CONNECT, {"endpoint_url": ENDPOINT})
    hint = _connection(session, shop_id)
    assert hint is not None
    assert approver.post(ROTATE, {}).status_code == 403
    assert approver.put(CONNECT, {"endpoint_url": ENDPOINT, "extra": 1}).status_code == 400

    refused = [e for e in _events(session, shop_id) if e.kind == "request.refused"]
    assert len(refused) == 2 and all(e.actor == APPROVER for e in refused)
    unchanged = _connection(session, shop_id)
    assert unchanged is not None and unchanged.key_hint == hint.key_hint
