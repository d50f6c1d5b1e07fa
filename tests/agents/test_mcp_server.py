"""An agent on the MCP server proposes within its credential and never approves.

The SDK's own client talks streamable HTTP to the server on a free port, over the
linen shop (Maya's $96.00 order of two aprons, paid through the Stripe sandbox).
"""

from __future__ import annotations

import sys
from datetime import datetime
from pathlib import Path
from typing import Any
from unittest.mock import ANY

import pytest
from mcp.client.stdio import StdioServerParameters
from mcp_support import Agent, McpServerUnderTest, call_over_stdio, refusal
from sqlalchemy import select
from sqlalchemy.orm import Session

from app.actors import Surface, staff
from app.agents.models import AgentCredential
from app.agents.service import issue_agent_credential, revoke_agent_credential
from app.approvals.models import Proposal
from app.audit import AuditEvent
from app.clock import utcnow
from app.demo import APRON_LINE, OWNER, PROPOSER, SUBJECT, LinenShop
from app.errors import Forbidden
from app.mcp_server import SECRET_ENV_VAR
from app.settings import Settings
from app.shops.models import Shop

AS_OWNER = staff(OWNER, Surface.STAFF_API)


def _shop(session: Session, linen: LinenShop) -> Shop:
    shop = session.get(Shop, linen.shop_id)
    assert shop is not None
    return shop


def _issue(
    session: Session,
    linen: LinenShop,
    *,
    kinds: tuple[str, ...] = ("refund",),
    ceiling: dict[str, int] | None = None,
) -> tuple[AgentCredential, str]:
    issued = issue_agent_credential(
        session,
        shop=_shop(session, linen),
        actor=AS_OWNER,
        name="Support assistant",
        allowed_kinds=kinds,
        ceiling=ceiling,
        now=utcnow(),
    )
    session.commit()
    return issued.credential, issued.secret


def _refund(linen: LinenShop, amount: int, **extra: Any) -> dict[str, Any]:
    return {
        "kind": "refund",
        "target": linen.payment_intent_id,
        "amount": amount,
        "currency": "usd",
        "line_items": [{"line_id": APRON_LINE, "amount": amount}],
        "params": {"reason": "requested_by_customer"},
        "reason": "One apron arrived torn.",
        **extra,
    }


def _proposals(session: Session, linen: LinenShop) -> list[Proposal]:
    session.expire_all()
    return list(session.scalars(select(Proposal).where(Proposal.case_id == linen.case_id)))


def test_tools_are_listed_and_none_approves(
    session: Session, linen: LinenShop, mcp_server: McpServerUnderTest
) -> None:
    _credential, secret = _issue(session, linen)

    tools = Agent(mcp_server.url, secret).tools()

    assert {tool.name for tool in tools} == {
        "find_case",
        "read_case",
        "propose_action",
        "action_status",
    }
    assert not [tool.name for tool in tools if "approve" in tool.name]
    propose = next(tool for tool in tools if tool.name == "propose_action")
    assert "never approves or executes" in (propose.description or "")
    assert "a person to approve it in Caseward" in (propose.description or "")


def test_a_48_dollar_refund_waits_for_a_person(
    session: Session, linen: LinenShop, mcp_server: McpServerUnderTest
) -> None:
    credential, secret = _issue(session, linen, ceiling={"usd": 5_000})
    agent = Agent(mcp_server.url, secret)

    found = agent.answer("find_case", customer_email="Maya@Example.com")
    case_id = found["cases"][0]["case_id"]
    proposed = agent.answer("propose_action", case_id=case_id, proposal=_refund(linen, 4_800))

    assert [case["case_id"] for case in found["cases"]] == [str(linen.case_id)]
    assert proposed["status"] == "awaiting_approval"
    assert proposed["proposed_by"] == f"agent:{credential.id}"
    assert proposed["verdict_outcome"] == "needs_approval"
    assert mcp_server.enqueued == []
    stored = next(p for p in _proposals(session, linen) if str(p.id) == proposed["proposal_id"])
    assert (stored.status, stored.proposed_by, stored.amount) == (
        "awaiting_approval",
        f"agent:{credential.id}",
        4_800,
    )
    read = agent.answer("read_case", case_id=case_id)
    assert read["identity_level"] == "strong"
    assert [order["name"] for order in read["orders"]] == ["#1001"]
    assert {p["proposal_id"]: p["status"] for p in read["proposals"]}[
        proposed["proposal_id"]
    ] == "awaiting_approval"
    assert read["actions"] == []


def test_every_call_is_audited_as_the_agent_without_customer_text(
    session: Session, linen: LinenShop, mcp_server: McpServerUnderTest
) -> None:
    credential, secret = _issue(session, linen)
    agent = Agent(mcp_server.url, secret)

    agent.answer("find_case", customer_email="maya@example.com")
    agent.call("read_case", case_id=str(credential.id))  # no such case: refused, still audited

    session.expire_all()
    events = session.scalars(
        select(AuditEvent)
        .where(AuditEvent.shop_id == linen.shop_id, AuditEvent.kind == "agent.tool_called")
        .order_by(AuditEvent.seq)
    ).all()
    assert [(e.actor, e.actor_kind, e.actor_surface) for e in events] == [
        (f"agent:{credential.id}", "agent", "mcp")
    ] * 2
    assert [e.data for e in events] == [
        {"tool": "find_case", "refused": None},
        {"tool": "read_case", "refused": "not_found"},
    ]
    refreshed = session.get(AgentCredential, credential.id)
    assert refreshed is not None and isinstance(refreshed.last_used_at, datetime)


def test_a_proposal_above_the_ceiling_is_refused(
    session: Session, linen: LinenShop, mcp_server: McpServerUnderTest
) -> None:
    _credential, secret = _issue(session, linen, ceiling={"usd": 5_000})

    result = Agent(mcp_server.url, secret).call(
        "propose_action", case_id=str(linen.case_id), proposal=_refund(linen, 9_600)
    )

    assert result.is_error
    assert "may propose up to $50.00, not $96.00" in refusal(result)
    assert len(_proposals(session, linen)) == 1  # the proposer's, seeded with the shop


def test_a_kind_the_credential_does_not_allow_is_refused(
    session: Session, linen: LinenShop, mcp_server: McpServerUnderTest
) -> None:
    _credential, secret = _issue(session, linen, kinds=("customer_credit",))

    result = Agent(mcp_server.url, secret).call(
        "propose_action", case_id=str(linen.case_id), proposal=_refund(linen, 1_000)
    )

    assert result.is_error
    assert "may not propose a refund" in refusal(result)
    assert len(_proposals(session, linen)) == 1


def test_another_shops_case_is_not_found(
    session: Session,
    linen: LinenShop,
    other_shop: LinenShop,
    mcp_server: McpServerUnderTest,
) -> None:
    _credential, secret = _issue(session, linen)
    agent = Agent(mcp_server.url, secret)

    found = agent.answer("find_case", customer_email="maya@example.com")
    read = agent.call("read_case", case_id=str(other_shop.case_id))
    proposed = agent.call(
        "propose_action", case_id=str(other_shop.case_id), proposal=_refund(other_shop, 1_000)
    )

    assert [case["case_id"] for case in found["cases"]] == [str(linen.case_id)]
    assert read.is_error and "case not found" in refusal(read)
    assert proposed.is_error and "case not found" in refusal(proposed)
    assert len(_proposals(session, other_shop)) == 1


def test_an_approval_smuggled_into_the_proposal_is_refused(
    session: Session, linen: LinenShop, mcp_server: McpServerUnderTest
) -> None:
    _credential, secret = _issue(session, linen)

    result = Agent(mcp_server.url, secret).call(
        "propose_action", case_id=str(linen.case_id), proposal=_refund(linen, 4_800, approved=True)
    )

    assert result.is_error
    assert "approved" in refusal(result)
    assert len(_proposals(session, linen)) == 1


def test_a_revoked_credential_is_refused(
    session: Session, linen: LinenShop, mcp_server: McpServerUnderTest
) -> None:
    credential, secret = _issue(session, linen)
    agent = Agent(mcp_server.url, secret)
    assert agent.answer("find_case", customer_email="maya@example.com")["cases"]
    revoke_agent_credential(
        session,
        shop=_shop(session, linen),
        actor=AS_OWNER,
        credential_id=credential.id,
        now=utcnow(),
    )
    session.commit()

    result = agent.call("find_case", customer_email="maya@example.com")

    assert result.is_error
    assert "valid, unrevoked Caseward agent credential" in refusal(result)
    assert (
        Agent(mcp_server.url, "cwag_not-a-real-secret")
        .call("find_case", customer_email="maya@example.com")
        .is_error
    )


def test_only_an_owner_issues_agent_credentials(session: Session, linen: LinenShop) -> None:
    shop = _shop(session, linen)

    with pytest.raises(Forbidden, match="may not issue agent credentials"):
        issue_agent_credential(
            session,
            shop=shop,
            actor=staff(PROPOSER, Surface.STAFF_API),
            name="Assistant",
            allowed_kinds=["refund"],
            ceiling=None,
            now=utcnow(),
        )


def test_over_stdio_the_secret_comes_from_the_environment(
    session: Session, settings: Settings, linen: LinenShop
) -> None:
    credential, secret = _issue(session, linen)
    server = StdioServerParameters(
        command=sys.executable,
        args=["-m", "app.mcp_server", "--stdio"],
        cwd=Path(__file__).resolve().parents[2],
        env={
            "DATABASE_URL": settings.database_url,
            "REDIS_URL": settings.redis_url,
            "CASEWARD_INSTANCE_PATH": str(settings.instance_path),
            "CASEWARD_ENCRYPTION_KEYS": ",".join(settings.encryption_keys),
            "STRIPE_API_BASE": settings.stripe_api_base,
            SECRET_ENV_VAR: secret,
        },
    )

    found = call_over_stdio(server, "find_case", customer_email="maya@example.com")
    revoke_agent_credential(
        session,
        shop=_shop(session, linen),
        actor=AS_OWNER,
        credential_id=credential.id,
        now=utcnow(),
    )
    session.commit()
    refused = call_over_stdio(server, "find_case", customer_email="maya@example.com")

    assert not found.is_error, refusal(found)
    assert found.structured_content == {
        "cases": [
            {
                "case_id": str(linen.case_id),
                "subject": SUBJECT,
                "status": "awaiting_approval",
                "identity_level": "strong",
                "created_at": ANY,
            }
        ]
    }
    assert refused.is_error
