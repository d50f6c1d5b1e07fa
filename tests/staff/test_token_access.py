"""Stored staff tokens: revocable at once, expiring, hashed, and only as strong as the
person's current membership, re-read on every request."""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from datetime import datetime, timedelta

from flask.testing import FlaskClient
from sqlalchemy import select, text
from sqlalchemy.orm import Session
from staff_support import APPROVER, OWNER, PROPOSER, VIEWER, bearer

from app.audit import AuditEvent
from app.shops.models import Shop
from app.staff.models import StaffToken


def test_a_revoked_token_is_refused_on_the_next_request(
    client: FlaskClient, shop: Shop, token_for: Callable[..., str]
) -> None:
    token = token_for(APPROVER)
    assert client.get("/api/cases", headers=bearer(token)).status_code == 200
    [listed] = client.get("/api/tokens", headers=bearer(token)).get_json()["tokens"]

    revoked = client.delete(f"/api/tokens/{listed['id']}", headers=bearer(token))

    assert revoked.status_code == 200
    assert revoked.get_json()["revoked_by"] == APPROVER
    refused = client.get("/api/cases", headers=bearer(token))
    assert refused.status_code == 401
    assert refused.get_json()["error"]["code"] == "invalid_token"


def test_an_expired_token_is_refused(
    client: FlaskClient, shop: Shop, token_for: Callable[..., str], session: Session
) -> None:
    token = token_for(APPROVER)
    row = session.scalars(select(StaffToken)).one()
    row.expires_at = row.created_at - timedelta(seconds=1)
    session.commit()

    response = client.get("/api/cases", headers=bearer(token))

    assert response.status_code == 401
    assert "expired" in response.get_json()["error"]["message"]


def test_unknown_and_malformed_tokens_are_refused(client: FlaskClient, shop: Shop) -> None:
    for garbage in ("cwst_" + "A" * 43, "not-a-token", "e30.e30", ""):
        assert client.get("/api/cases", headers=bearer(garbage)).status_code == 401
    assert client.get("/api/cases").status_code == 401


def test_a_demoted_approver_cannot_use_approver_powers_on_the_next_request(
    client: FlaskClient, shop: Shop, token_for: Callable[..., str]
) -> None:
    approver, owner = token_for(APPROVER), token_for(OWNER)
    engage = {"engaged": True}
    assert (
        client.put("/api/shop/kill-switch", json=engage, headers=bearer(approver)).status_code
        == 200
    )

    demoted = client.put(f"/api/staff/{APPROVER}", json={"role": "viewer"}, headers=bearer(owner))

    assert demoted.status_code == 200
    refused = client.put("/api/shop/kill-switch", json=engage, headers=bearer(approver))
    assert refused.status_code == 403
    assert refused.get_json()["error"]["code"] == "role_not_allowed"
    refused = client.post(
        "/api/proposals/00000000-0000-0000-0000-000000000000/approve",
        json={"digest": "x"},
        headers=bearer(approver),
    )
    assert refused.status_code == 403


def test_a_removed_member_loses_reads_and_their_tokens(
    client: FlaskClient, shop: Shop, token_for: Callable[..., str], session: Session
) -> None:
    viewer, owner = token_for(VIEWER), token_for(OWNER)
    assert client.get("/api/cases", headers=bearer(viewer)).status_code == 200

    removed = client.delete(f"/api/staff/{VIEWER}", headers=bearer(owner))

    assert removed.get_json() == {"removed": VIEWER, "tokens_revoked": 1}
    assert client.get("/api/cases", headers=bearer(viewer)).status_code == 401
    assert client.get("/api/shop", headers=bearer(viewer)).status_code == 401
    rows = session.scalars(select(StaffToken).where(StaffToken.user_id == VIEWER)).all()
    assert [r.revoked_by for r in rows] == [OWNER]


def test_a_token_without_a_membership_reads_nothing(
    client: FlaskClient, shop: Shop, token_for: Callable[..., str], session: Session
) -> None:
    """Membership is read per request: a row deleted behind the API's back counts too."""
    token = token_for(VIEWER)
    session.execute(text("DELETE FROM staff_members WHERE user_id = :u"), {"u": VIEWER})
    session.commit()

    for path in ("/api/cases", "/api/shop", "/api/tokens"):
        response = client.get(path, headers=bearer(token))
        assert response.status_code == 403, path
        assert response.get_json()["error"]["code"] == "no_role"


def test_a_viewer_reads_but_cannot_open_cases_or_change_settings(
    client: FlaskClient, shop: Shop, token_for: Callable[..., str]
) -> None:
    viewer, proposer = token_for(VIEWER), token_for(PROPOSER)
    case = {"subject": "Where is my order?"}

    assert client.get("/api/cases", headers=bearer(viewer)).status_code == 200
    assert client.get("/api/shop", headers=bearer(viewer)).status_code == 200
    refused = client.post("/api/cases", json=case, headers=bearer(viewer))
    assert refused.status_code == 403
    assert refused.get_json()["error"]["code"] == "role_not_allowed"
    assert (
        client.put(
            "/api/shop/kill-switch", json={"engaged": True}, headers=bearer(viewer)
        ).status_code
        == 403
    )
    assert client.post("/api/cases", json=case, headers=bearer(proposer)).status_code == 201


def test_only_the_hash_and_a_short_prefix_are_stored(
    client: FlaskClient, shop: Shop, token_for: Callable[..., str], session: Session
) -> None:
    token = token_for(OWNER)
    issued = client.post("/api/tokens", json={"label": "script"}, headers=bearer(token))
    secret = issued.get_json()["token"]

    assert secret.startswith("cwst_") and len(secret) > 40
    rows = session.scalars(select(StaffToken)).all()
    assert {r.token_hash for r in rows} == {
        hashlib.sha256(t.encode()).hexdigest() for t in (token, secret)
    }
    for row in rows:
        assert len(row.prefix) == 12
        for value in (row.token_hash, row.prefix, row.label or ""):
            assert value not in (token, secret)
    dumped = " ".join(
        str(v) for row in session.execute(text("SELECT * FROM staff_tokens")) for v in row
    )
    assert secret not in dumped and token not in dumped
    events = session.scalars(select(AuditEvent).where(AuditEvent.kind == "staff.token_issued"))
    assert all(secret not in str(e.data) and token not in str(e.data) for e in events)


def test_the_token_list_shows_uses_but_never_a_secret_or_hash(
    client: FlaskClient, shop: Shop, token_for: Callable[..., str]
) -> None:
    token = token_for(APPROVER)
    client.get("/api/cases", headers=bearer(token))

    [listed] = client.get("/api/tokens", headers=bearer(token)).get_json()["tokens"]

    assert listed["prefix"] == token[:12]
    assert listed["last_used_at"] is not None
    assert listed["revoked_at"] is None
    assert "token" not in listed and "token_hash" not in listed
    assert token not in str(listed)


def test_people_see_and_revoke_their_own_tokens_and_owners_everyones(
    client: FlaskClient, shop: Shop, token_for: Callable[..., str]
) -> None:
    approver, proposer, owner = token_for(APPROVER), token_for(PROPOSER), token_for(OWNER)
    mine = client.get("/api/tokens", headers=bearer(approver)).get_json()["tokens"]
    theirs = client.get("/api/tokens", headers=bearer(proposer)).get_json()["tokens"]
    everyone = client.get("/api/tokens", headers=bearer(owner)).get_json()["tokens"]

    assert [t["user_id"] for t in mine] == [APPROVER]
    assert {t["user_id"] for t in everyone} == {APPROVER, PROPOSER, OWNER}
    refused = client.delete(f"/api/tokens/{theirs[0]['id']}", headers=bearer(approver))
    assert refused.status_code == 403
    assert client.delete(f"/api/tokens/{theirs[0]['id']}", headers=bearer(owner)).status_code == 200
    assert client.get("/api/cases", headers=bearer(proposer)).status_code == 401


def test_tokens_are_issued_for_oneself_or_by_an_owner_for_staff_only(
    client: FlaskClient, shop: Shop, token_for: Callable[..., str]
) -> None:
    approver, owner = token_for(APPROVER), token_for(OWNER)

    own = client.post("/api/tokens", json={}, headers=bearer(approver))
    assert own.status_code == 201
    assert own.get_json()["user_id"] == APPROVER
    for_other = client.post("/api/tokens", json={"user_id": PROPOSER}, headers=bearer(approver))
    assert for_other.status_code == 403
    by_owner = client.post("/api/tokens", json={"user_id": PROPOSER}, headers=bearer(owner))
    assert by_owner.status_code == 201
    stranger = client.post("/api/tokens", json={"user_id": "mallory"}, headers=bearer(owner))
    assert stranger.status_code == 404
    assert stranger.get_json()["error"]["field"] == "user_id"
    assert client.get("/api/cases", headers=bearer(by_owner.get_json()["token"])).status_code == 200


def test_a_token_lives_30_days_by_default_and_at_most_a_year(
    client: FlaskClient, shop: Shop, token_for: Callable[..., str]
) -> None:
    token = token_for(APPROVER)

    default = client.post("/api/tokens", json={}, headers=bearer(token)).get_json()
    year = client.post("/api/tokens", json={"expires_in_days": 365}, headers=bearer(token))
    too_long = client.post("/api/tokens", json={"expires_in_days": 366}, headers=bearer(token))

    lifetime = datetime.fromisoformat(default["expires_at"]) - datetime.fromisoformat(
        default["created_at"]
    )
    assert lifetime == timedelta(days=30)
    assert year.status_code == 201
    assert too_long.status_code == 400
    error = too_long.get_json()["error"]
    assert error["field"] == "expires_in_days"
    assert "at most 365 days" in error["message"]
