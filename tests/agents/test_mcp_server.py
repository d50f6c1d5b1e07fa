"""An agent on the MCP server proposes within its credential and never approves.

The SDK's own client talks streamable HTTP to ``/mcp`` of the web app served over HTTP,
over the linen shop (Maya's $96.00 order of two aprons, paid through the Stripe sandbox,
and a $48.00 refund a proposer already proposed).
"""

from __future__ import annotations

import sys
from datetime import datetime
from pathlib import Path
from typing import Any
from unittest.mock import ANY

import pytest
from admin_pages_support import page_url
from flask import Flask
from mcp.client.stdio import StdioServerParameters
from mcp_support import RATE_LIMIT_CALLS, Agent, calls_over_stdio, refusal
from redis import Redis
from rq import Queue
from shopify_app_support import session_token
from sqlalchemy import select
from sqlalchemy.orm import Session

from app.actors import Surface, staff
from app.agents.mcp_server import SECRET_ENV_VAR
from app.agents.models import AgentCredential, AgentTool
from app.agents.service import issue_agent_credential, revoke_agent_credential
from app.approvals.service import approve_proposal
from app.audit import AuditEvent
from app.cases.models import Case
from app.cases.proposals import Proposal
from app.clock import utcnow
from app.conversations.models import Message
from app.crypto import secret_box
from app.demo import APPROVER, APRON_LINE, OWNER, PROPOSER, SUBJECT, LinenShop
from app.drafting.models import CaseDraftRecord
from app.errors import Forbidden
from app.settings import Settings, SettingsError
from app.shopify.models import ShopifyInstall
from app.shops.models import Shop

AS_OWNER = staff(OWNER, Surface.STAFF_API)
FINE_REPLY = "Thanks, Maya. A refund of $48.00 for the torn apron is with our team for review."


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
    tools: tuple[str, ...] = tuple(AgentTool),
) -> tuple[AgentCredential, str]:
    issued = issue_agent_credential(
        session,
        shop=_shop(session, linen),
        actor=AS_OWNER,
        name="Support assistant",
        allowed_kinds=kinds,
        allowed_tools=tools,
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


def _drafts(session: Session, linen: LinenShop) -> list[CaseDraftRecord]:
    session.expire_all()
    return list(
        session.scalars(select(CaseDraftRecord).where(CaseDraftRecord.case_id == linen.case_id))
    )


def _tool_calls(session: Session, linen: LinenShop) -> list[dict[str, Any]]:
    session.expire_all()
    return [
        event.data
        for event in session.scalars(
            select(AuditEvent)
            .where(AuditEvent.shop_id == linen.shop_id, AuditEvent.kind == "agent.tool_called")
            .order_by(AuditEvent.seq)
        )
    ]


def test_six_tools_are_listed_and_none_approves_executes_or_sends(
    session: Session, linen: LinenShop, mcp_url: str
) -> None:
    _credential, secret = _issue(session, linen)

    tools = Agent(mcp_url, secret).tools()

    assert sorted(tool.name for tool in tools) == [
        "action_status",
        "draft_reply",
        "find_case",
        "list_orders_and_payments",
        "propose_action",
        "read_case",
    ]
    assert not [
        tool.name
        for tool in tools
        if any(verb in tool.name for verb in ("approve", "execute", "send"))
    ]
    for tool in tools:
        assert "No tool approves, executes or sends anything" in (tool.description or "")
    propose = next(tool for tool in tools if tool.name == "propose_action")
    assert "a person to approve it in Caseward" in (propose.description or "")


def _text_argument(title: str) -> dict[str, str]:
    return {"title": title, "type": "string"}


def _arguments(tool: str, **properties: dict[str, Any]) -> dict[str, Any]:
    return {
        "properties": properties,
        "required": list(properties),
        "title": f"{tool}Arguments",
        "type": "object",
    }


# What an agent's client was told each tool takes, as the server first listed them: a
# client that cached these schemas keeps working.
LISTED_ARGUMENTS = {
    "find_case": _arguments("find_case", customer_email=_text_argument("Customer Email")),
    "read_case": _arguments("read_case", case_id=_text_argument("Case Id")),
    "list_orders_and_payments": _arguments(
        "list_orders_and_payments", case_id=_text_argument("Case Id")
    ),
    "propose_action": _arguments(
        "propose_action",
        case_id=_text_argument("Case Id"),
        proposal={"additionalProperties": True, "title": "Proposal", "type": "object"},
    ),
    "action_status": _arguments("action_status", action_id=_text_argument("Action Id")),
    "draft_reply": _arguments(
        "draft_reply", case_id=_text_argument("Case Id"), text=_text_argument("Text")
    ),
}


def test_each_tool_is_listed_with_the_arguments_it_always_took(
    session: Session, linen: LinenShop, mcp_url: str
) -> None:
    _credential, secret = _issue(session, linen)

    tools = Agent(mcp_url, secret).tools()

    assert {tool.name: tool.input_schema for tool in tools} == LISTED_ARGUMENTS
    assert [tool.name for tool in tools] == list(LISTED_ARGUMENTS)
    assert [
        tool.name for tool in tools if tool.annotations and tool.annotations.read_only_hint
    ] == [
        "find_case",
        "read_case",
        "list_orders_and_payments",
        "action_status",
    ]


def test_a_48_dollar_refund_waits_for_a_person(
    session: Session, settings: Settings, linen: LinenShop, mcp_url: str
) -> None:
    credential, secret = _issue(session, linen, ceiling={"usd": 5_000})
    agent = Agent(mcp_url, secret)

    found = agent.answer("find_case", customer_email="Maya@Example.com")
    case_id = found["cases"][0]["case_id"]
    proposed = agent.answer("propose_action", case_id=case_id, proposal=_refund(linen, 4_800))

    assert [case["case_id"] for case in found["cases"]] == [str(linen.case_id)]
    assert proposed["status"] == "awaiting_approval"
    assert proposed["proposed_by"] == f"agent:{credential.id}"
    assert proposed["verdict_outcome"] == "needs_approval"
    assert Queue(settings.queue_name, connection=Redis.from_url(settings.redis_url)).count == 0
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


def test_a_refund_above_what_was_paid_is_blocked_with_each_failed_check_named(
    session: Session, linen: LinenShop, mcp_url: str
) -> None:
    _credential, secret = _issue(session, linen)
    agent = Agent(mcp_url, secret)

    proposed = agent.answer(
        "propose_action", case_id=str(linen.case_id), proposal=_refund(linen, 20_000)
    )
    read = agent.answer("read_case", case_id=str(linen.case_id))

    failed = [
        {
            "check": "refundable_remaining",
            "reason": "Refund of $200.00 exceeds what is left to refund ($96.00 of $96.00 "
            "captured: $0.00 refunded, $0.00 in flight).",
        },
        {
            "check": "line_items",
            "reason": "Refund of $200.00 for Linen apron, natural (line apron-natural) exceeds "
            "what is left for that line ($96.00 of $96.00 paid: $0.00 refunded, $0.00 in "
            "flight).",
        },
    ]
    assert (proposed["status"], proposed["verdict_outcome"]) == ("blocked", "blocked")
    assert proposed["failed_checks"] == failed
    assert [(p["verdict_outcome"], p["failed_checks"]) for p in read["proposals"]] == [
        ("needs_approval", []),
        ("blocked", failed),
    ]


def test_a_case_is_found_only_by_an_identity_caseward_verified(
    session: Session, linen: LinenShop, mcp_url: str
) -> None:
    """Someone who typed Maya's address into a chat is not Maya: that case stays hidden."""
    _credential, secret = _issue(session, linen)
    case = session.get(Case, linen.case_id)
    assert case is not None
    unverified = Case(
        shop_id=case.shop_id,
        customer_id=case.customer_id,
        subject="Refund my order",
        request_text="I am Maya, refund me",
        identity_level="claim",
        status="open",
    )
    session.add(unverified)
    session.commit()

    found = Agent(mcp_url, secret).answer("find_case", customer_email="maya@example.com")

    assert [case["case_id"] for case in found["cases"]] == [str(linen.case_id)]


def test_every_call_is_audited_as_the_agent_without_customer_text(
    session: Session, linen: LinenShop, mcp_url: str
) -> None:
    credential, secret = _issue(session, linen)
    agent = Agent(mcp_url, secret)

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
    session: Session, linen: LinenShop, mcp_url: str
) -> None:
    _credential, secret = _issue(session, linen, ceiling={"usd": 5_000})

    result = Agent(mcp_url, secret).call(
        "propose_action", case_id=str(linen.case_id), proposal=_refund(linen, 9_600)
    )

    assert result.is_error
    assert "may propose up to $50.00, not $96.00" in refusal(result)
    assert len(_proposals(session, linen)) == 1  # the proposer's, seeded with the shop
    assert _tool_calls(session, linen) == [
        {"tool": "propose_action", "refused": "over_agent_ceiling"}
    ]


def test_a_kind_the_credential_does_not_allow_is_refused(
    session: Session, linen: LinenShop, mcp_url: str
) -> None:
    _credential, secret = _issue(session, linen, kinds=("customer_credit",))

    result = Agent(mcp_url, secret).call(
        "propose_action", case_id=str(linen.case_id), proposal=_refund(linen, 1_000)
    )

    assert result.is_error
    assert "may not propose a refund" in refusal(result)
    assert len(_proposals(session, linen)) == 1


def test_a_tool_the_credential_does_not_allow_is_refused_and_audited(
    session: Session, linen: LinenShop, mcp_url: str
) -> None:
    _credential, secret = _issue(session, linen, tools=("find_case", "read_case"))
    agent = Agent(mcp_url, secret)

    listed = agent.call("find_case", customer_email="maya@example.com")
    proposed = agent.call(
        "propose_action", case_id=str(linen.case_id), proposal=_refund(linen, 4_800)
    )

    assert not listed.is_error
    assert proposed.is_error
    assert "may not call propose_action; it allows find_case, read_case" in refusal(proposed)
    assert len(_proposals(session, linen)) == 1
    assert _tool_calls(session, linen) == [
        {"tool": "find_case", "refused": None},
        {"tool": "propose_action", "refused": "tool_not_allowed"},
    ]


def test_an_agent_over_its_rate_limit_is_refused_until_the_window_moves(
    session: Session, linen: LinenShop, mcp_url: str
) -> None:
    _credential, secret = _issue(session, linen)
    _other, other_secret = _issue(session, linen)

    results = Agent(mcp_url, secret).calls(
        "find_case", RATE_LIMIT_CALLS + 1, customer_email="maya@example.com"
    )
    another_agent = Agent(mcp_url, other_secret).call(
        "find_case", customer_email="maya@example.com"
    )

    assert [result.is_error for result in results] == [False] * RATE_LIMIT_CALLS + [True]
    assert (
        "too many tool calls with this agent credential (at most 10 per 1 minute); try again in"
        in refusal(results[-1])
    )
    assert not another_agent.is_error  # counted per credential
    assert _tool_calls(session, linen)[-2] == {"tool": "find_case", "refused": "rate_limited"}


def test_orders_and_payments_show_what_was_refunded_and_what_is_in_flight(
    session: Session, settings: Settings, linen: LinenShop, mcp_url: str
) -> None:
    _credential, secret = _issue(session, linen)
    agent = Agent(mcp_url, secret)
    before = agent.answer("list_orders_and_payments", case_id=str(linen.case_id))
    shop = _shop(session, linen)
    proposal = session.get(Proposal, linen.proposal_id)
    assert proposal is not None
    approve_proposal(
        session,
        shop=shop,
        proposal_id=proposal.id,
        actor=staff(APPROVER, Surface.STAFF_API),
        digest=proposal.digest,
        settings=settings,
        now=utcnow(),
    )
    session.commit()

    after = agent.answer("list_orders_and_payments", case_id=str(linen.case_id))

    assert [(order["name"], order["payment"]) for order in before["orders"]] == [
        (
            "#1001",
            {
                "provider": "stripe",
                "payment_id": linen.payment_intent_id,
                "amount": 9_600,
                "currency": "usd",
                "refunded_through_caseward": 0,
                "in_flight": 0,
            },
        )
    ]
    assert before["actions"] == []
    payment = after["orders"][0]["payment"]
    assert (payment["refunded_through_caseward"], payment["in_flight"]) == (0, 4_800)
    assert [(a["kind"], a["amount"], a["status"]) for a in after["actions"]] == [
        ("refund", 4_800, "queued")
    ]


def test_a_reply_claiming_a_refund_the_provider_has_not_reported_is_refused(
    session: Session, linen: LinenShop, mcp_url: str
) -> None:
    _credential, secret = _issue(session, linen)

    result = Agent(mcp_url, secret).call(
        "draft_reply",
        case_id=str(linen.case_id),
        text="Good news, Maya: your refund has been processed.",
    )

    assert result.is_error
    assert "would tell the customer more than the provider reported" in refusal(result)
    assert "the reply says been processed, which the payment provider has not reported" in (
        refusal(result)
    )
    assert _drafts(session, linen) == []
    assert _tool_calls(session, linen) == [{"tool": "draft_reply", "refused": "reply_refused"}]


def test_a_fine_reply_is_kept_as_the_agents_draft_and_never_sent(
    session: Session, linen: LinenShop, mcp_url: str
) -> None:
    credential, secret = _issue(session, linen)

    drafted = Agent(mcp_url, secret).answer(
        "draft_reply", case_id=str(linen.case_id), text=FINE_REPLY
    )

    assert drafted == {
        "draft_id": ANY,
        "case_id": str(linen.case_id),
        "text": FINE_REPLY,
        "status": "waiting_for_a_person_to_send",
    }
    assert [(str(d.id), d.agent_id, d.reply) for d in _drafts(session, linen)] == [
        (drafted["draft_id"], credential.id, FINE_REPLY)
    ]
    assert session.scalars(select(Message).where(Message.shop_id == linen.shop_id)).all() == []
    drafted_events = session.scalars(
        select(AuditEvent).where(
            AuditEvent.shop_id == linen.shop_id, AuditEvent.kind == "case.reply_drafted"
        )
    ).all()
    assert [(e.actor, e.case_id, e.data) for e in drafted_events] == [
        (f"agent:{credential.id}", linen.case_id, {"draft_id": drafted["draft_id"]})
    ]


def test_another_shops_case_is_not_found(
    session: Session, linen: LinenShop, other_shop: LinenShop, mcp_url: str
) -> None:
    _credential, secret = _issue(session, linen)
    agent = Agent(mcp_url, secret)
    theirs = str(other_shop.case_id)

    found = agent.answer("find_case", customer_email="maya@example.com")
    refused = [
        agent.call("read_case", case_id=theirs),
        agent.call("list_orders_and_payments", case_id=theirs),
        agent.call("propose_action", case_id=theirs, proposal=_refund(other_shop, 1_000)),
        agent.call("draft_reply", case_id=theirs, text=FINE_REPLY),
    ]

    assert [case["case_id"] for case in found["cases"]] == [str(linen.case_id)]
    assert [result.is_error and "case not found" in refusal(result) for result in refused] == [
        True
    ] * 4
    assert len(_proposals(session, other_shop)) == 1
    assert _drafts(session, other_shop) == []


def test_an_approval_smuggled_into_a_tool_argument_is_refused(
    session: Session, linen: LinenShop, mcp_url: str
) -> None:
    _credential, secret = _issue(session, linen)
    agent = Agent(mcp_url, secret)

    inside = agent.call(
        "propose_action", case_id=str(linen.case_id), proposal=_refund(linen, 4_800, approved=True)
    )
    beside = agent.call(
        "propose_action",
        case_id=str(linen.case_id),
        proposal=_refund(linen, 4_800),
        approved=True,
    )

    assert inside.is_error and "approved" in refusal(inside)
    assert beside.is_error
    assert "propose_action takes no argument approved" in refusal(beside)
    assert len(_proposals(session, linen)) == 1
    assert _tool_calls(session, linen) == [
        {"tool": "propose_action", "refused": "invalid_input"},
        {"tool": "propose_action", "refused": "unknown_argument"},
    ]


def test_a_revoked_credential_is_refused(session: Session, linen: LinenShop, mcp_url: str) -> None:
    credential, secret = _issue(session, linen)
    agent = Agent(mcp_url, secret)
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
        Agent(mcp_url, "cwag_not-a-real-secret")
        .call("find_case", customer_email="maya@example.com")
        .is_error
    )
    assert _tool_calls(session, linen) == [{"tool": "find_case", "refused": None}]


def test_the_case_page_marks_the_agents_proposal_and_draft(
    app: Flask, session: Session, settings: Settings, linen: LinenShop, mcp_url: str
) -> None:
    _credential, secret = _issue(session, linen)
    agent = Agent(mcp_url, secret)
    proposed = agent.answer(
        "propose_action", case_id=str(linen.case_id), proposal=_refund(linen, 2_400)
    )
    agent.answer("draft_reply", case_id=str(linen.case_id), text=FINE_REPLY)
    shop = _shop(session, linen)
    session.add(
        ShopifyInstall(
            shop_id=shop.id,
            # Never used: the owner is a member already, so no token is exchanged.
            encrypted_access_token=secret_box(settings).encrypt("shpat_unused"),
            scopes="read_orders",
            installed_at=utcnow(),
        )
    )
    session.commit()

    page = app.test_client().get(
        page_url(shop.domain, f"/app/cases/{linen.case_id}", session_token(shop.domain, OWNER))
    )

    assert page.status_code == 200, page.get_data(as_text=True)[:800]
    html = page.get_data(as_text=True)
    agents_proposal = html.split(f'data-proposal="{proposed["proposal_id"]}"')[1].split(
        "</article>"
    )[0]
    persons_proposal = html.split(f'data-proposal="{linen.proposal_id}"')[1].split("</article>")[0]
    assert "Proposed by agent Support assistant" in agents_proposal
    assert "Proposed by agent" not in persons_proposal
    assert "Drafted by agent Support assistant" in html
    assert "A refund of $48.00 for the torn apron is with our team for review." in html


def test_a_rate_limit_that_does_not_parse_stops_the_start() -> None:
    with pytest.raises(SettingsError, match="CASEWARD_AGENT_RATE_LIMIT must read like"):
        Settings.from_env({"CASEWARD_AGENT_RATE_LIMIT": "as many as it likes"})


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


def test_over_stdio_the_secret_comes_from_the_environment_and_revoking_is_at_once(
    session: Session, settings: Settings, linen: LinenShop
) -> None:
    credential, secret = _issue(session, linen)
    server = StdioServerParameters(
        command=sys.executable,
        args=["-m", "app.agents.mcp_server", "--stdio"],
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

    def revoke() -> None:
        revoke_agent_credential(
            session,
            shop=_shop(session, linen),
            actor=AS_OWNER,
            credential_id=credential.id,
            now=utcnow(),
        )
        session.commit()

    found, refused = calls_over_stdio(
        server, "find_case", {"customer_email": "maya@example.com"}, between=revoke
    )

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
