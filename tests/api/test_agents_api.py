"""Owners issue agents their credentials through the staff API: the secret is answered
once and never listed, other roles are refused, and revoking is at once."""

from __future__ import annotations

from api_support import Staff
from sqlalchemy import select
from sqlalchemy.orm import Session

from app.agents.models import AgentCredential
from app.agents.service import authenticate_agent
from app.clock import utcnow
from app.demo import LinenShop

CLAUDE = {"name": "Claude", "allowed_kinds": ["refund"], "ceiling": {"usd": 5000}}


def test_an_owner_issues_a_credential_whose_secret_is_answered_once(
    linen: LinenShop, owner: Staff, session: Session
) -> None:
    issued = owner.post("/api/agents", CLAUDE)

    assert issued.status_code == 201, issued.get_json()
    answer = issued.get_json()
    secret = answer["secret"]
    assert secret.startswith("cwag_") and answer["agent"]["prefix"] == secret[:12]
    assert (answer["agent"]["allowed_kinds"], answer["agent"]["ceiling"]) == (
        ["refund"],
        {"usd": 5000},
    )
    listed = owner.get("/api/agents").get_json()["agents"]
    assert [agent["id"] for agent in listed] == [answer["agent"]["id"]]
    assert secret not in str(listed)
    stored = session.scalars(select(AgentCredential)).one()
    assert secret not in (stored.secret_digest, stored.prefix)


def test_only_an_owner_issues_lists_or_revokes(
    linen: LinenShop, owner: Staff, approver: Staff, proposer: Staff
) -> None:
    agent_id = owner.post("/api/agents", CLAUDE).get_json()["agent"]["id"]

    for person in (approver, proposer):
        assert person.post("/api/agents", CLAUDE).status_code == 403
        assert person.get("/api/agents").status_code == 403
        assert person.delete(f"/api/agents/{agent_id}").status_code == 403


def test_a_revoked_credential_is_refused_at_once(
    linen: LinenShop, owner: Staff, session: Session
) -> None:
    issued = owner.post("/api/agents", CLAUDE).get_json()
    assert authenticate_agent(session, issued["secret"], utcnow()) is not None
    session.rollback()

    revoked = owner.delete(f"/api/agents/{issued['agent']['id']}")

    assert revoked.status_code == 200 and revoked.get_json()["agent"]["revoked_at"]
    assert authenticate_agent(session, issued["secret"], utcnow()) is None


def test_a_credential_that_allows_nothing_is_refused_naming_the_field(
    linen: LinenShop, owner: Staff
) -> None:
    for body, field in (
        ({**CLAUDE, "allowed_kinds": []}, "allowed_kinds"),
        ({**CLAUDE, "allowed_kinds": ["approve"]}, "allowed_kinds"),
        ({**CLAUDE, "ceiling": {"usd": "lots"}}, "ceiling.usd"),
    ):
        refused = owner.post("/api/agents", body)
        assert refused.status_code == 400
        assert refused.get_json()["error"]["field"] == field
