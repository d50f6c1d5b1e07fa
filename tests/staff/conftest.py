"""A shop with one member of each role, and stored tokens for them, without a provider."""

from __future__ import annotations

from collections.abc import Callable
from datetime import timedelta

import pytest
from flask import Flask
from sqlalchemy.orm import Session
from staff_support import APPROVER, OWNER, PROPOSER, SHOP, VIEWER

from app.actors import Surface, system_actor
from app.clock import utcnow
from app.db import Database
from app.shops.models import Shop, StaffMember, StaffRole
from app.staff.tokens import issue_token


@pytest.fixture
def shop(session: Session) -> Shop:
    shop = Shop(domain=SHOP, name="Linen & Loom", writes_enabled=True)
    session.add(shop)
    session.flush()
    for user_id, role, limits in (
        (OWNER, StaffRole.OWNER, {"usd": 100_000}),
        (APPROVER, StaffRole.APPROVER, {"usd": 10_000}),
        (PROPOSER, StaffRole.PROPOSER, {}),
        (VIEWER, StaffRole.VIEWER, {}),
    ):
        session.add(
            StaffMember(shop_id=shop.id, user_id=user_id, role=role, approval_limits=limits)
        )
    session.commit()
    return shop


@pytest.fixture
def token_for(app: Flask, shop: Shop) -> Callable[..., str]:
    """A new stored token for ``user_id`` of ``shop`` (as ``flask issue-token`` makes)."""

    def issue(
        user_id: str, *, lifetime: timedelta = timedelta(days=1), shop_id: object = None
    ) -> str:
        with Database.state(app).session_factory() as session:
            target = session.get(Shop, shop_id or shop.id)
            assert target is not None
            issued = issue_token(
                session,
                shop=target,
                user_id=user_id,
                issued_by=system_actor("tests", Surface.CONSOLE),
                lifetime=lifetime,
                now=utcnow(),
                console=True,
            )
            session.commit()
            return issued.secret

    return issue
