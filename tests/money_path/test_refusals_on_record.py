"""Every refused request about money or access leaves an audit event: who tried, what,
and why, written after the request's own rollback so that the rollback cannot erase it.

Staff API over the test client; the shop's audit chain read from the database.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from fault_support import case_json
from money_path_harness import Staff
from sqlalchemy import select
from sqlalchemy.orm import Session

from app.audit import AuditEvent, verify_chain
from app.demo import APPROVER, OWNER, PROPOSER, LinenShop
from app.shops.models import StaffMember

NEXT_STEP = {
    "stale_digest": "review it again and approve its current digest",
    "proposal_approved": "follow the action's status",
    "proposal_blocked": "edit it so that its failing checks pass, or reject it",
    "kill_switch": "until an owner turns it off in Settings",
    "protection_mode": "an owner must turn writes on in Settings",
}


def _refusals(session: Session, linen: LinenShop) -> list[AuditEvent]:
    session.expire_all()
    return list(
        session.scalars(
            select(AuditEvent)
            .where(AuditEvent.shop_id == linen.shop_id, AuditEvent.kind == "request.refused")
            .order_by(AuditEvent.seq)
        )
    )


def _seeded(staff: Staff, linen: LinenShop) -> dict[str, Any]:
    proposal: dict[str, Any] = case_json(staff, linen.case_id)["proposals"][0]
    return proposal


def _approve(staff: Staff, proposal: dict[str, Any], digest: str | None = None) -> Any:
    return staff.post(
        f"/api/proposals/{proposal['id']}/approve", {"digest": digest or proposal["digest"]}
    )


def _wrong_role(staff: Callable[[str], Staff], linen: LinenShop, session: Session) -> Any:
    proposer = staff(PROPOSER)
    return proposer, _approve(proposer, _seeded(proposer, linen))


def _over_limit(staff: Callable[[str], Staff], linen: LinenShop, session: Session) -> Any:
    member = session.scalars(select(StaffMember).filter_by(user_id=APPROVER)).one()
    member.approval_limits = {"usd": 1000}
    session.commit()
    approver = staff(APPROVER)
    return approver, _approve(approver, _seeded(approver, linen))


def _stale_digest(staff: Callable[[str], Staff], linen: LinenShop, session: Session) -> Any:
    approver = staff(APPROVER)
    return approver, _approve(approver, _seeded(approver, linen), digest="0" * 64)


def _replayed(staff: Callable[[str], Staff], linen: LinenShop, session: Session) -> Any:
    approver = staff(APPROVER)
    proposal = _seeded(approver, linen)
    assert _approve(approver, proposal).status_code == 200
    return approver, _approve(approver, proposal)


def _blocked(staff: Callable[[str], Staff], linen: LinenShop, session: Session) -> Any:
    approver = staff(APPROVER)
    response = approver.post(
        f"/api/cases/{linen.case_id}/proposals",
        {"kind": "refund", "target": linen.payment_intent_id, "amount": 20000, "currency": "usd"},
    )
    proposal = response.get_json()["proposal"]
    assert proposal["status"] == "blocked"
    return approver, _approve(approver, proposal)


def _self_approval(staff: Callable[[str], Staff], linen: LinenShop, session: Session) -> Any:
    owner = staff(OWNER)
    rules = {"two_person_threshold": {"usd": 1000}}
    assert owner.put("/api/shop/policy", {"rules": rules}).status_code == 200
    response = owner.post(
        f"/api/cases/{linen.case_id}/proposals",
        {"kind": "refund", "target": linen.payment_intent_id, "amount": 2000, "currency": "usd"},
    )
    proposal = response.get_json()["proposal"]
    assert proposal["approvals_required"] == 2
    return owner, _approve(owner, proposal)


def _kill_switch(staff: Callable[[str], Staff], linen: LinenShop, session: Session) -> Any:
    approver = staff(APPROVER)
    assert approver.put("/api/shop/kill-switch", {"engaged": True}).status_code == 200
    return approver, _approve(approver, _seeded(approver, linen))


def _protection_mode(staff: Callable[[str], Staff], linen: LinenShop, session: Session) -> Any:
    assert staff(OWNER).put("/api/shop/writes", {"enabled": False}).status_code == 200
    approver = staff(APPROVER)
    return approver, _approve(approver, _seeded(approver, linen))


@pytest.mark.parametrize(
    ("attempt", "status", "code"),
    [
        (_wrong_role, 403, "role_not_allowed"),
        (_over_limit, 403, "over_approval_limit"),
        (_self_approval, 403, "two_person_rule"),
        (_stale_digest, 409, "stale_digest"),
        (_replayed, 409, "proposal_approved"),
        (_blocked, 409, "proposal_blocked"),
        (_kill_switch, 409, "kill_switch"),
        (_protection_mode, 409, "protection_mode"),
    ],
    ids=lambda value: getattr(value, "__name__", str(value)),
)
def test_a_refused_approval_is_on_the_record(
    attempt: Callable[[Callable[[str], Staff], LinenShop, Session], Any],
    status: int,
    code: str,
    staff: Callable[[str], Staff],
    linen: LinenShop,
    session: Session,
) -> None:
    who, response = attempt(staff, linen, session)

    assert response.status_code == status, response.get_json()
    assert response.get_json()["error"]["code"] == code
    [refusal] = _refusals(session, linen)
    if status == 409:  # every conflict says what to do next
        assert NEXT_STEP[code] in response.get_json()["error"]["message"]
    assert refusal.actor == who.user_id
    assert refusal.data["code"] == code
    assert refusal.data["status"] == status
    assert refusal.data["path"].endswith("/approve")
    assert refusal.data["message"] == response.get_json()["error"]["message"]
    assert refusal.case_id == linen.case_id
    # The case's own trail shows it, and the chain still holds.
    trail = who.get(f"/api/cases/{linen.case_id}/audit").get_json()["events"]
    assert trail[-1]["kind"] == "request.refused"
    assert verify_chain(session, linen.shop_id).intact


@pytest.mark.parametrize(
    ("who", "path", "body", "code"),
    [
        (PROPOSER, "/api/shop/kill-switch", {"engaged": True}, "role_not_allowed"),
        (APPROVER, "/api/shop/writes", {"enabled": False}, "role_not_allowed"),
        (APPROVER, "/api/shop/policy", {"rules": {}}, "role_not_allowed"),
    ],
)
def test_refused_changes_to_the_shops_switches_are_on_the_record(
    who: str,
    path: str,
    body: dict[str, Any],
    code: str,
    staff: Callable[[str], Staff],
    linen: LinenShop,
    session: Session,
) -> None:
    response = staff(who).put(path, body)

    assert response.status_code == 403
    [refusal] = _refusals(session, linen)
    assert (refusal.actor, refusal.data["code"], refusal.data["path"]) == (who, code, path)
    assert refusal.case_id is None


def test_a_removed_members_request_is_refused_on_the_record(
    staff: Callable[[str], Staff], linen: LinenShop, session: Session
) -> None:
    stranger = staff("mallory.stranger")  # holds a token, has no role in the shop

    response = stranger.get(f"/api/cases/{linen.case_id}")

    assert response.status_code == 403
    [refusal] = _refusals(session, linen)
    assert (refusal.actor, refusal.data["code"]) == ("mallory.stranger", "no_role")
    assert refusal.case_id == linen.case_id


def test_a_revoked_tokens_request_is_refused_on_the_record(
    staff: Callable[[str], Staff], linen: LinenShop, session: Session
) -> None:
    approver, owner = staff(APPROVER), staff(OWNER)
    [mine] = [t for t in approver.get("/api/tokens").get_json()["tokens"] if not t["revoked_at"]]
    assert owner.delete(f"/api/tokens/{mine['id']}").status_code in (200, 204)

    response = _approve(approver, _seeded(owner, linen))

    assert response.status_code == 401
    [refusal] = _refusals(session, linen)
    assert (refusal.actor, refusal.data["code"]) == (APPROVER, "invalid_token")
