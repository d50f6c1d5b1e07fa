"""Owners issue agents their credentials through the staff API: the secret is answered
once and never listed, other roles are refused, and revoking is at once. A credential
allows every MCP tool unless the owner names fewer, and a proposal an agent made names
the agent in the API's answers."""

from __future__ import annotations

import uuid

from api_support import Staff
from sqlalchemy import select
from sqlalchemy.orm import Session

from app.agents.models import AgentCredential
from app.agents.service import agent_actor, authenticate_agent
from app.approvals.drafts import parse_draft
from app.approvals.service import create_proposal
from app.cases.models import Case
from app.clock import utcnow
from app.connections.adapters import connection_adapters
from app.crypto import secret_box
from app.demo import APRON_LINE, LinenShop
from app.settings import Settings
from app.shops.models import Shop

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
    assert answer["agent"]["allowed_tools"] == [
        "action_status",
        "draft_reply",
        "find_case",
        "list_orders_and_payments",
        "propose_action",
        "read_case",
    ]


def test_an_owner_chooses_the_tools_an_agent_may_call(linen: LinenShop, owner: Staff) -> None:
    issued = owner.post(
        "/api/agents", {**CLAUDE, "allowed_tools": ["read_case", "find_case", "read_case"]}
    )

    assert issued.status_code == 201, issued.get_json()
    assert issued.get_json()["agent"]["allowed_tools"] == ["find_case", "read_case"]
    assert owner.get("/api/agents").get_json()["agents"][0]["allowed_tools"] == [
        "find_case",
        "read_case",
    ]


def test_a_proposal_an_agent_made_names_the_agent(
    linen: LinenShop, owner: Staff, session: Session, settings: Settings
) -> None:
    agent_id = owner.post("/api/agents", CLAUDE).get_json()["agent"]["id"]
    credential = session.get(AgentCredential, uuid.UUID(agent_id))
    shop, case = session.get(Shop, linen.shop_id), session.get(Case, linen.case_id)
    assert credential is not None and shop is not None and case is not None
    made = create_proposal(
        session,
        shop=shop,
        case=case,
        actor=agent_actor(credential),
        agent=credential,
        draft=parse_draft(
            {
                "kind": "refund",
                "target": linen.payment_intent_id,
                "amount": 2400,
                "currency": "usd",
                "line_items": [{"line_id": APRON_LINE, "amount": 2400}],
            }
        ),
        adapter=connection_adapters(settings, secret_box(settings))(session, shop.id, "stripe"),
        settings=settings,
        now=utcnow(),
    ).proposal
    session.commit()

    proposals = owner.get(f"/api/cases/{linen.case_id}").get_json()["proposals"]

    by_id = {proposal["id"]: proposal for proposal in proposals}
    assert by_id[str(made.id)]["proposed_by"] == f"agent:{agent_id}"
    assert by_id[str(made.id)]["proposed_by_agent"] == {"id": agent_id, "name": "Claude"}
    assert by_id[str(linen.proposal_id)]["proposed_by_agent"] is None


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
        ({**CLAUDE, "allowed_tools": []}, "allowed_tools"),
        ({**CLAUDE, "allowed_tools": ["approve_proposal"]}, "allowed_tools"),
        ({**CLAUDE, "allowed_tools": "read_case"}, "allowed_tools"),
    ):
        refused = owner.post("/api/agents", body)
        assert refused.status_code == 400
        assert refused.get_json()["error"]["field"] == field
