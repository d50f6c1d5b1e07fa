"""The JSON API behind the embedded admin: a Shopify session token names the shop and the
person; Caseward's own roles decide what they may do; another shop's ids reach nothing."""

from __future__ import annotations

import pytest
from flask import Flask
from flask.testing import FlaskClient
from shopify_app_support import bearer, install_shop, session_token
from sqlalchemy import select
from sqlalchemy.orm import Session

from app.actors import Surface, staff
from app.audit import AuditEvent
from app.cases.models import Case, Customer
from app.cases.service import open_case
from app.clock import utcnow
from app.settings import Settings
from app.shops.models import Shop, StaffMember, StaffRole

RETRY = "X-Shopify-Retry-Invalid-Session-Request"


def _member(session: Session, shop: Shop, user_id: str, role: str) -> None:
    session.add(StaffMember(shop_id=shop.id, user_id=user_id, role=role, approval_limits={}))
    session.commit()


def _case(session: Session, shop: Shop, owner: str, subject: str) -> Case:
    customer = Customer(shop_id=shop.id, email=f"buyer@{shop.domain}")
    session.add(customer)
    session.flush()
    case = open_case(
        session,
        shop=shop,
        actor=staff(owner, Surface.SHOPIFY_ADMIN),
        customer_id=customer.id,
        subject=subject,
        request_text="Where is my refund?",
        identity_level="strong",
        now=utcnow(),
    )
    session.commit()
    return case


@pytest.fixture
def two_shops(session: Session, settings: Settings) -> tuple[Shop, Shop]:
    linen = install_shop(session, settings, "linen").shop
    pottery = install_shop(session, settings, "pottery").shop
    _member(session, linen, "1001", StaffRole.OWNER)
    _member(session, pottery, "2001", StaffRole.OWNER)
    return linen, pottery


def test_a_session_token_reads_its_own_shops_cases_as_its_staff_member(
    client: FlaskClient, session: Session, two_shops: tuple[Shop, Shop]
) -> None:
    linen, pottery = two_shops
    _case(session, linen, "1001", "Torn pillowcase")
    _case(session, pottery, "2001", "Chipped mug")

    answer = client.get("/api/cases", headers=bearer(session_token(linen.domain, "1001")))

    assert answer.status_code == 200, answer.get_json()
    assert [c["subject"] for c in answer.get_json()["cases"]] == ["Torn pillowcase"]


def test_another_shops_case_is_not_found_and_nothing_of_it_leaks(
    client: FlaskClient, session: Session, two_shops: tuple[Shop, Shop]
) -> None:
    linen, pottery = two_shops
    theirs = _case(session, pottery, "2001", "Chipped mug")

    answer = client.get(
        f"/api/cases/{theirs.id}", headers=bearer(session_token(linen.domain, "1001"))
    )

    assert answer.status_code == 404
    assert "Chipped" not in answer.get_data(as_text=True)


@pytest.mark.parametrize(
    "forgery",
    [
        "signed with another secret",
        "for another app",
        "expired past the skew",
        "iss and dest of different shops",
        "not yet valid",
    ],
)
def test_a_bad_session_token_gets_401_asking_app_bridge_to_retry(
    client: FlaskClient, two_shops: tuple[Shop, Shop], forgery: str
) -> None:
    linen, pottery = two_shops
    token = {
        "signed with another secret": session_token(linen.domain, "1001", secret="x" * 40),
        "for another app": session_token(linen.domain, "1001", aud="someone-elses-app"),
        "expired past the skew": session_token(linen.domain, "1001", issued_ago=60 + 30),
        "iss and dest of different shops": session_token(
            linen.domain, "1001", iss_shop=pottery.domain
        ),
        "not yet valid": session_token(linen.domain, "1001", issued_ago=-60),
    }[forgery]

    answer = client.get("/api/cases", headers=bearer(token))

    assert answer.status_code == 401
    assert answer.headers.get(RETRY) == "1"
    assert answer.get_json()["error"]["code"] == "invalid_session_token"


def test_a_token_just_past_its_expiry_is_accepted_within_the_skew(
    client: FlaskClient, two_shops: tuple[Shop, Shop]
) -> None:
    linen, _ = two_shops
    token = session_token(linen.domain, "1001", issued_ago=60 + 5)

    assert client.get("/api/cases", headers=bearer(token)).status_code == 200


def test_a_viewer_can_read_but_not_change_anything(
    client: FlaskClient, session: Session, two_shops: tuple[Shop, Shop]
) -> None:
    linen, _ = two_shops
    _member(session, linen, "1002", StaffRole.VIEWER)
    token = session_token(linen.domain, "1002")

    assert client.get("/api/cases", headers=bearer(token)).status_code == 200
    refused = client.put("/api/shop/writes", json={"enabled": True}, headers=bearer(token))

    assert refused.status_code == 403
    session.expire_all()
    assert session.get(Shop, linen.id).writes_enabled is False  # type: ignore[union-attr]


def test_what_a_shopify_staff_member_does_is_audited_as_them_through_the_admin(
    client: FlaskClient, session: Session, two_shops: tuple[Shop, Shop]
) -> None:
    linen, _ = two_shops

    answer = client.put(
        "/api/shop/writes",
        json={"enabled": True},
        headers=bearer(session_token(linen.domain, "1001")),
    )

    assert answer.status_code == 200, answer.get_json()
    event = session.scalars(
        select(AuditEvent).where(AuditEvent.shop_id == linen.id).order_by(AuditEvent.seq.desc())
    ).first()
    assert event is not None
    assert (event.actor, event.actor_kind, event.actor_surface) == (
        "1001",
        "staff",
        "shopify_admin",
    )


def test_a_staff_token_still_works_beside_session_tokens(
    client: FlaskClient, two_shops: tuple[Shop, Shop]
) -> None:
    answer = client.get("/api/cases", headers=bearer("cwst_not-a-real-token"))

    assert answer.status_code == 401
    assert answer.get_json()["error"]["code"] == "invalid_token"
    assert RETRY not in answer.headers


def test_refused_session_tokens_count_against_the_client_like_refused_staff_tokens(
    app: Flask, client: FlaskClient, two_shops: tuple[Shop, Shop]
) -> None:
    linen, _ = two_shops
    app.config["CASEWARD_REFUSED_TOKENS_PER_CLIENT"] = "3/hour"
    good = bearer(session_token(linen.domain, "1001"))
    forged = bearer(session_token(linen.domain, "1001", secret="x" * 40))
    for _ in range(3):
        assert client.get("/api/cases", headers=forged).status_code == 401

    limited = client.get("/api/cases", headers=good)

    assert limited.status_code == 429
    assert limited.get_json()["error"]["code"] == "rate_limited"
