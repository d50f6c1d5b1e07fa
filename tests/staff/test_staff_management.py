"""Staff, roles and approval limits, managed by owners over the API and from the console."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from flask import Flask
from flask.testing import FlaskClient, FlaskCliRunner
from sqlalchemy import select
from sqlalchemy.orm import Session
from staff_support import APPROVER, OWNER, PROPOSER, SHOP, VIEWER, bearer

from app.actors import Surface, staff
from app.audit import AuditEvent
from app.clock import utcnow
from app.db import Database
from app.errors import Forbidden
from app.shops.models import Shop, StaffMember, StaffRole
from app.shops.service import require_role, staff_member
from app.staff.members import add_member, remove_member, update_member
from app.staff.models import StaffToken
from app.words import said


def _kinds(session: Session) -> list[str]:
    return list(session.scalars(select(AuditEvent.kind).order_by(AuditEvent.seq)))


def test_an_owner_adds_changes_and_removes_staff_and_each_change_is_audited(
    client: FlaskClient, shop: Shop, token_for: Callable[..., str], session: Session
) -> None:
    owner = bearer(token_for(OWNER))

    added = client.post(
        "/api/staff",
        json={"user_id": "kim", "role": "approver", "approval_limits": {"USD": 5000, "jpy": 900}},
        headers=owner,
    )
    changed = client.put(
        "/api/staff/kim", json={"role": "proposer", "approval_limits": {}}, headers=owner
    )
    listed = client.get("/api/staff", headers=owner).get_json()["staff"]
    removed = client.delete("/api/staff/kim", headers=owner)

    assert added.status_code == 201
    assert added.get_json()["approval_limits"] == {"usd": 5000, "jpy": 900}
    assert changed.get_json() == {
        "user_id": "kim",
        "email": None,
        "role": "proposer",
        "approval_limits": {},
    }
    assert "kim" in [m["user_id"] for m in listed]
    assert removed.status_code == 200
    assert _kinds(session)[-3:] == ["staff.added", "staff.changed", "staff.removed"]
    assert client.get("/api/staff", headers=owner).status_code == 200


def test_only_owners_manage_staff(
    client: FlaskClient, shop: Shop, token_for: Callable[..., str]
) -> None:
    approver = bearer(token_for(APPROVER))

    for response in (
        client.get("/api/staff", headers=approver),
        client.post("/api/staff", json={"user_id": "kim", "role": "owner"}, headers=approver),
        client.put(f"/api/staff/{APPROVER}", json={"role": "owner"}, headers=approver),
        client.delete(f"/api/staff/{PROPOSER}", headers=approver),
    ):
        assert response.status_code == 403
        assert response.get_json()["error"]["code"] == "role_not_allowed"


def test_a_user_id_no_member_can_have_is_refused_by_name(
    client: FlaskClient, shop: Shop, token_for: Callable[..., str]
) -> None:
    owner = bearer(token_for(OWNER))

    for response in (
        client.put("/api/staff/%00kim", json={"role": "viewer"}, headers=owner),
        client.delete("/api/staff/%07kim", headers=owner),
    ):
        assert response.status_code == 400
        assert response.get_json()["error"]["field"] == "user_id"


def test_limits_are_minor_units_in_known_currencies(
    client: FlaskClient, shop: Shop, token_for: Callable[..., str]
) -> None:
    owner = bearer(token_for(OWNER))

    for limits, field in (
        ({"usx": 100}, "approval_limits.usx"),
        ({"usd": 48.5}, "approval_limits.usd"),
        ({"usd": -1}, "approval_limits.usd"),
        ({"usd": True}, "approval_limits.usd"),
        (["usd"], "approval_limits"),
    ):
        response = client.put(
            f"/api/staff/{APPROVER}", json={"approval_limits": limits}, headers=owner
        )
        assert response.status_code == 400, limits
        assert response.get_json()["error"]["field"] == field
    role = client.put(f"/api/staff/{APPROVER}", json={"role": "admin"}, headers=owner)
    assert role.get_json()["error"]["field"] == "role"


def test_the_last_owner_can_be_neither_demoted_nor_removed(
    client: FlaskClient, shop: Shop, token_for: Callable[..., str]
) -> None:
    owner = bearer(token_for(OWNER))

    demoted = client.put(f"/api/staff/{OWNER}", json={"role": "approver"}, headers=owner)
    removed = client.delete(f"/api/staff/{OWNER}", headers=owner)

    for response in (demoted, removed):
        assert response.status_code == 409
        assert response.get_json()["error"]["code"] == "last_owner"
    client.put(f"/api/staff/{APPROVER}", json={"role": "owner"}, headers=owner)
    assert (
        client.put(f"/api/staff/{OWNER}", json={"role": "viewer"}, headers=owner).status_code == 200
    )


def test_the_console_manages_staff(runner: FlaskCliRunner, shop: Shop, session: Session) -> None:
    def staff(*args: str) -> str:
        result = runner.invoke(args=["staff", *args, "--shop", SHOP])
        assert result.exit_code == 0, result.output
        return result.output

    staff("add", "--user", "kim", "--role", "approver", "--limit", "usd=2500")
    staff("set-limit", "--user", "kim", "--currency", "EUR", "--amount", "1000")
    staff("set-role", "--user", "kim", "--role", "owner")
    listing = staff("list")
    member = session.scalars(select(StaffMember).where(StaffMember.user_id == "kim")).one()

    assert (member.role, member.approval_limits) == ("owner", {"usd": 2500, "eur": 1000})
    assert "kim\towner\teur=1000, usd=2500" in listing
    staff("remove", "--user", "kim")
    assert "kim" not in staff("list")
    assert _kinds(session)[-4:] == [
        "staff.added",
        "staff.changed",
        "staff.changed",
        "staff.removed",
    ]
    added_by = session.execute(
        select(AuditEvent.actor_kind, AuditEvent.actor_surface).where(
            AuditEvent.kind == "staff.added"
        )
    ).all()
    assert added_by and set(added_by) == {("system", "console")}


def test_the_console_refuses_with_a_reason(runner: FlaskCliRunner, shop: Shop) -> None:
    last_owner = runner.invoke(args=["staff", "remove", "--shop", SHOP, "--user", OWNER])
    bad_limit = runner.invoke(
        args=[
            "staff",
            "set-limit",
            "--shop",
            SHOP,
            "--user",
            VIEWER,
            "--currency",
            "xyz",
            "--amount",
            "1",
        ]
    )

    assert last_owner.exit_code != 0
    assert "at least one owner" in last_owner.output
    assert bad_limit.exit_code != 0
    assert "unknown currency" in bad_limit.output


def test_issue_token_prints_a_working_token_once_and_only_for_staff(
    runner: FlaskCliRunner, client: FlaskClient, shop: Shop, session: Session
) -> None:
    refused = runner.invoke(args=["issue-token", "--shop", SHOP, "--user", "mallory"])
    too_long = runner.invoke(
        args=["issue-token", "--shop", SHOP, "--user", APPROVER, "--days", "400"]
    )
    issued = runner.invoke(args=["issue-token", "--shop", SHOP, "--user", APPROVER])

    assert refused.exit_code != 0
    assert "mallory is not staff of linen.myshopify.com" in refused.output
    assert too_long.exit_code != 0
    assert "at most 365 days" in too_long.output
    assert issued.exit_code == 0, issued.output
    token = issued.stdout.strip()
    assert client.get("/api/cases", headers=bearer(token)).status_code == 200
    assert session.scalars(select(StaffToken)).one().user_id == APPROVER


def test_revoke_token_from_the_console_ends_it_at_once(
    runner: FlaskCliRunner, client: FlaskClient, shop: Shop, token_for: Callable[..., str]
) -> None:
    token = token_for(APPROVER)
    listing = runner.invoke(args=["list-tokens", "--shop", SHOP]).output
    token_id = listing.split("\t")[0]
    assert token[:12] in listing

    result = runner.invoke(args=["revoke-token", "--shop", SHOP, token_id])

    assert result.exit_code == 0, result.output
    assert client.get("/api/cases", headers=bearer(token)).status_code == 401
    unknown = runner.invoke(
        args=["revoke-token", "--shop", SHOP, "00000000-0000-0000-0000-000000000000"]
    )
    assert unknown.exit_code != 0


def test_a_role_read_earlier_in_the_session_follows_every_change_to_it(
    app: Flask, shop: Shop, session: Session
) -> None:
    """The role check after authentication takes the row from the session; a demotion, a
    removal and an adding back, in the session or committed by another, all count."""
    owner = staff(OWNER, Surface.STAFF_API)
    approver = staff(APPROVER, Surface.STAFF_API)
    approving = said("approve actions")
    assert require_role(session, shop.id, approver, StaffRole.CAN_APPROVE, approving)

    with Database.state(app).session_factory() as other:
        other_shop = other.get(Shop, shop.id)
        assert other_shop is not None
        update_member(
            other, shop=other_shop, actor=owner, user_id=APPROVER, role="viewer", now=utcnow()
        )
        other.commit()
    session.commit()  # the request's next transaction
    with pytest.raises(Forbidden):
        require_role(session, shop.id, approver, StaffRole.CAN_APPROVE, approving)

    remove_member(session, shop=shop, actor=owner, user_id=APPROVER, now=utcnow())
    assert staff_member(session, shop.id, APPROVER) is None
    add_member(
        session,
        shop=shop,
        actor=owner,
        user_id=APPROVER,
        role="approver",
        email=None,
        approval_limits={"usd": 500},
        now=utcnow(),
    )
    back = require_role(session, shop.id, approver, StaffRole.CAN_APPROVE, approving)
    assert back.approval_limits == {"usd": 500}
