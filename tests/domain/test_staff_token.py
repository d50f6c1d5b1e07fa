"""Staff tokens: only a live token whose hash is stored counts; its last use is kept."""

from __future__ import annotations

import hashlib
from datetime import timedelta

import pytest
from sent_statements import statements_sent
from sqlalchemy import delete
from sqlalchemy.orm import Session

from app.actors import Surface, staff
from app.clock import utcnow
from app.errors import InvalidInput, NotFound
from app.shops.models import Shop, StaffMember, StaffRole
from app.shops.service import shop_and_member, staff_member
from app.staff.tokens import (
    LAST_USED_RESOLUTION,
    TokenRefused,
    authenticate_token,
    issue_token,
    lifetime_from_days,
    revoke_token,
)


@pytest.fixture
def shop(session: Session) -> Shop:
    shop = Shop(domain="linen.myshopify.com", name="Linen")
    session.add(shop)
    session.flush()
    session.add(StaffMember(shop_id=shop.id, user_id="sam", role=StaffRole.APPROVER))
    session.commit()
    return shop


def _issue(session: Session, shop: Shop, lifetime: timedelta = timedelta(days=1)) -> str:
    issued = issue_token(
        session,
        shop=shop,
        user_id="sam",
        issued_by=staff("sam", Surface.STAFF_API),
        lifetime=lifetime,
        now=utcnow(),
    )
    session.commit()
    return issued.secret


def test_an_issued_token_names_its_shop_and_person_and_is_stored_as_a_hash(
    session: Session, shop: Shop
) -> None:
    secret = _issue(session, shop)

    row = authenticate_token(session, secret, now=utcnow())

    assert (row.shop_id, row.user_id) == (shop.id, "sam")
    assert row.token_hash == hashlib.sha256(secret.encode()).hexdigest()
    assert secret.startswith("cwst_") and row.prefix == secret[:12]


@pytest.mark.parametrize("garbage", ["", "a", "cwst_", "cwst_" + "A" * 43, "e30.e30"])
def test_garbage_and_unknown_tokens_are_refused(session: Session, shop: Shop, garbage: str) -> None:
    _issue(session, shop)
    with pytest.raises(TokenRefused):
        authenticate_token(session, garbage, now=utcnow())


def test_expired_and_revoked_tokens_are_refused_naming_their_shop(
    session: Session, shop: Shop
) -> None:
    expiring, revoked = _issue(session, shop, timedelta(seconds=5)), _issue(session, shop)
    row = authenticate_token(session, revoked, now=utcnow())
    revoke_token(
        session,
        shop_id=shop.id,
        token_id=row.id,
        actor=staff("sam", Surface.STAFF_API),
        now=utcnow(),
    )
    session.commit()

    for secret, now in ((expiring, utcnow() + timedelta(seconds=5)), (revoked, utcnow())):
        with pytest.raises(TokenRefused) as refused:
            authenticate_token(session, secret, now=now)
        assert refused.value.shop_id == shop.id


def test_last_use_is_written_at_most_once_a_minute(session: Session, shop: Shop) -> None:
    secret = _issue(session, shop)
    first = utcnow()

    row = authenticate_token(session, secret, now=first)
    authenticate_token(session, secret, now=first + LAST_USED_RESOLUTION / 2)
    assert row.last_used_at == first
    authenticate_token(session, secret, now=first + LAST_USED_RESOLUTION)
    assert row.last_used_at == first + LAST_USED_RESOLUTION


def test_lifetimes_are_at_most_a_year_and_only_for_staff(session: Session, shop: Shop) -> None:
    assert lifetime_from_days(None) == timedelta(days=30)
    assert lifetime_from_days(365) == timedelta(days=365)
    for days in (366, 0, -1):
        with pytest.raises(InvalidInput):
            lifetime_from_days(days)
    with pytest.raises(InvalidInput):
        _issue(session, shop, timedelta(days=366))
    with pytest.raises(NotFound):
        issue_token(
            session,
            shop=shop,
            user_id="mallory",
            issued_by=staff("mallory", Surface.STAFF_API),
            lifetime=timedelta(days=1),
            now=utcnow(),
        )


def test_a_token_is_read_with_its_shop_and_the_persons_role_in_one_statement(
    session: Session, shop: Shop
) -> None:
    """Every staff request reads all three; a person removed from the shop is found
    removed by the same read."""
    secret = _issue(session, shop)
    engine = session.get_bind()
    with statements_sent(engine) as sent, Session(engine) as request:
        row = authenticate_token(request, secret, now=utcnow())
        found, member = shop_and_member(request, row.shop_id, row.user_id)
        assert (found, member) == (
            request.get(Shop, shop.id),
            staff_member(request, shop.id, "sam"),
        )
        assert member is not None and member.role == StaffRole.APPROVER
    statements = [s.statement for s in sent]
    assert len([s for s in statements if "staff_members" in s or "shops" in s]) == 1
    session.execute(delete(StaffMember).where(StaffMember.user_id == "sam"))
    session.commit()
    with Session(engine) as request:
        row = authenticate_token(request, secret, now=utcnow())
        assert shop_and_member(request, row.shop_id, row.user_id) == (
            request.get(Shop, shop.id),
            None,
        )
