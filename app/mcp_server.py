"""The MCP server agents reach Caseward through: find and read cases, propose, follow.

An agent may propose an action and follow it; it never approves or executes one. A
proposal from an agent meets the same checks and waits for the same people as a
staff member's (``approvals/service.py::create_proposal``); approving needs a staff
member's role, which no agent has. Only an owner's explicit shop policy can approve
without a person, exactly as for anyone's proposal.

Every tool call, in order:

1. the agent's secret is read from the request's ``Authorization: Bearer cwag_...``
   header (streamable HTTP) or, over stdio, from ``CASEWARD_AGENT_SECRET``;
2. ``agents/service.py::authenticate_agent`` finds the live credential by hash (unknown
   or revoked: refused); its shop bounds every query the tool makes;
3. the tool's work runs in a savepoint, so a refusal undoes only the work;
4. ``agent.tool_called`` is audited with the agent as actor, the tool's name and, when
   refused, the refusal's code (never the customer's words), and committed;
5. an action the shop's policy approved is queued after the commit.

``python -m app.mcp_server --port 8765`` serves streamable HTTP at ``/mcp``;
``python -m app.mcp_server --stdio`` serves one agent over stdio.
"""

from __future__ import annotations

import argparse
import functools
import os
import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from sqlalchemy import func, select
from sqlalchemy.orm import Session, sessionmaker

from app import audit
from app.agents.models import AgentCredential
from app.agents.service import agent_actor, authenticate_agent
from app.approvals.drafts import parse_draft
from app.approvals.models import Proposal
from app.approvals.service import create_proposal
from app.cases.models import Case, Customer, Order
from app.cases.service import case_file, get_case
from app.clock import utcnow
from app.crypto import secret_box
from app.db import make_engine, make_session_factory
from app.errors import CasewardError, InvalidInput, NotFound
from app.execution.models import Action
from app.execution.providers import AdapterFactory, connection_adapters
from app.execution.queueing import enqueue_execution, execution_queue
from app.queue import connect_redis
from app.settings import Settings
from app.shops.models import Shop
from app.validation import optional_uuid, text
from app.words import said

SECRET_ENV_VAR = "CASEWARD_AGENT_SECRET"  # noqa: S105  (the variable's name, not a secret)
STREAMABLE_HTTP_PATH = "/mcp"
_BEARER = "bearer "

INSTRUCTIONS = (
    "Caseward guards a shop's refunds, credits, discounts and subscription changes. "
    "These tools find and read the shop's cases, propose an action on a case and follow "
    "it. No tool approves or executes anything: every proposal is checked against the "
    "payment provider's facts and then waits until a person approves it in Caseward "
    "(or, for what it allows, a policy the shop's owner set there)."
)


@dataclass(frozen=True)
class ServerContext:
    """What the tools need: the database, the shops' provider adapters, the settings,
    where approved actions are queued, and the time."""

    session_factory: sessionmaker[Session]
    adapters: AdapterFactory
    settings: Settings
    enqueue: Callable[[uuid.UUID], object]
    clock: Callable[[], datetime] = utcnow


def context_from_settings(settings: Settings) -> ServerContext:
    """The context for a server process of its own, built like a worker's."""
    factory = make_session_factory(make_engine(settings.database_url))
    audit.bind_key_ring(factory, audit.audit_key_ring(settings))

    # One connection for the process: each policy-approved action only pushes its job.
    queue = execution_queue(connect_redis(settings), settings.queue_name)
    return ServerContext(
        session_factory=factory,
        adapters=connection_adapters(settings, secret_box(settings)),
        settings=settings,
        enqueue=functools.partial(enqueue_execution, queue),
    )


def build_server(context: ServerContext, *, stdio_secret: str | None = None) -> MCPServer:
    """The MCP server and its four tools. ``stdio_secret`` is the agent's secret when
    there are no HTTP headers to carry it (stdio)."""
    server = MCPServer(name="caseward", instructions=INSTRUCTIONS)

    def call(ctx: Context, tool: str, work: _Work) -> dict[str, Any]:
        return _authenticated_call(context, _secret(ctx, stdio_secret), tool, work)

    @server.tool(
        description=(
            "Find the cases of the customer with this email address, in the shop your "
            "credential belongs to. Read-only."
        )
    )
    def find_case(customer_email: str, ctx: Context) -> dict[str, Any]:
        return call(ctx, "find_case", lambda s, c: _find_case(s, c, customer_email))

    @server.tool(
        description=(
            "Read one case: its status, how sure Caseward is who the customer is "
            "(identity level), the customer's orders, the proposals made with the checks' "
            "outcome, and the actions with their status. Read-only."
        )
    )
    def read_case(case_id: str, ctx: Context) -> dict[str, Any]:
        return call(ctx, "read_case", lambda s, c: _read_case(s, c, case_id))

    @server.tool(
        description=(
            "Propose an action on a case. `proposal` is the JSON of Caseward's "
            "POST /api/cases/{case_id}/proposals: kind, target, amount and currency (integer "
            "minor units), line_items, params, reason; nothing else is accepted. The proposal "
            "is checked against the payment provider and then waits for a person to approve "
            "it in Caseward (or a policy the shop's owner set there). This tool never approves "
            "or executes anything; it returns the proposal's status and the checks' outcome."
        )
    )
    def propose_action(case_id: str, proposal: dict[str, Any], ctx: Context) -> dict[str, Any]:
        return call(ctx, "propose_action", lambda s, c: _propose(context, s, c, case_id, proposal))

    @server.tool(
        description=(
            "The status of an action (after a person approved a proposal): queued, "
            "submitting, succeeded, failed and so on, as the payment provider reported it. "
            "Read-only; it neither approves nor executes."
        )
    )
    def action_status(action_id: str, ctx: Context) -> dict[str, Any]:
        return call(ctx, "action_status", lambda s, c: _action_status(s, c, action_id))

    return server


# ------------------------------------------------------------------ each call


@dataclass(frozen=True)
class _Answer:
    """A tool's answer, and the action the shop's policy approved, to queue after commit."""

    data: dict[str, Any]
    approved_action_id: uuid.UUID | None = None


_Work = Callable[[Session, AgentCredential], _Answer]


def _secret(ctx: Context, stdio_secret: str | None) -> str | None:
    headers = ctx.headers
    if headers is None:
        return stdio_secret
    authorization = headers.get("authorization", "")
    if not authorization.lower().startswith(_BEARER):
        return None
    return authorization[len(_BEARER) :].strip()


def _authenticated_call(
    context: ServerContext,
    secret: str | None,
    tool: str,
    work: _Work,
) -> dict[str, Any]:
    now = context.clock()
    with context.session_factory() as session:
        credential = authenticate_agent(session, secret, now) if secret else None
        if credential is None:
            raise ToolError(
                "a valid, unrevoked Caseward agent credential is required "
                "(Authorization: Bearer cwag_...)"
            )
        refusal: CasewardError | None = None
        answer = _Answer({})
        try:
            with session.begin_nested():
                answer = work(session, credential)
        except CasewardError as error:
            refusal = error
        audit.record(
            session,
            shop_id=credential.shop_id,
            kind="agent.tool_called",
            actor=agent_actor(credential),
            data={"tool": tool, "refused": refusal.code if refusal else None},
            now=now,
        )
        session.commit()
    if refusal is not None:
        raise ToolError(refusal.message) from refusal
    if answer.approved_action_id is not None:
        context.enqueue(answer.approved_action_id)
    return answer.data


# ------------------------------------------------------------------ the tools


def _find_case(session: Session, credential: AgentCredential, email: str) -> _Answer:
    address = text(email, "customer_email", required=True) or ""
    cases = session.scalars(
        select(Case)
        .join(Customer, Customer.id == Case.customer_id)
        .where(
            Case.shop_id == credential.shop_id,
            Customer.shop_id == credential.shop_id,
            func.lower(Customer.email) == address.strip().lower(),
        )
        .order_by(Case.created_at.desc())
    )
    return _Answer(
        {
            "cases": [
                {
                    "case_id": str(case.id),
                    "subject": case.subject,
                    "status": case.status,
                    "identity_level": case.identity_level,
                    "created_at": case.created_at.isoformat(),
                }
                for case in cases
            ]
        }
    )


def _read_case(session: Session, credential: AgentCredential, case_id: str) -> _Answer:
    file = case_file(session, credential.shop_id, _uuid(case_id, "case_id"))
    return _Answer(
        {
            "case_id": str(file.case.id),
            "status": file.case.status,
            "identity_level": file.case.identity_level,
            "orders": [_order(order) for order in file.orders],
            "proposals": [_proposal(proposal) for proposal, _approvals in file.proposals],
            "actions": [_action(action) for action, _attempts in file.actions],
        }
    )


def _propose(
    context: ServerContext,
    session: Session,
    credential: AgentCredential,
    case_id: str,
    proposal: Mapping[str, Any],
) -> _Answer:
    shop = session.get(Shop, credential.shop_id)
    if shop is None:
        raise NotFound(said("case not found"), field="case_id")
    case = get_case(session, shop.id, _uuid(case_id, "case_id"))
    draft = parse_draft(proposal)
    result = create_proposal(
        session,
        shop=shop,
        case=case,
        actor=agent_actor(credential),
        agent=credential,
        draft=draft,
        adapter=context.adapters(session, shop.id, draft.provider),
        settings=context.settings,
        now=context.clock(),
    )
    return _Answer(
        _proposal(result.proposal), result.action.id if result.action is not None else None
    )


def _action_status(session: Session, credential: AgentCredential, action_id: str) -> _Answer:
    action = session.get(Action, _uuid(action_id, "action_id"))
    if action is None or action.shop_id != credential.shop_id:
        raise NotFound(said("action not found"), field="action_id")
    return _Answer(_action(action))


# ------------------------------------------------------------------ answers


def _order(order: Order) -> dict[str, Any]:
    return {
        "order_id": str(order.id),
        "name": order.name,
        "currency": order.currency,
        "total": order.total,
        "payment_provider": order.payment_provider,
        "payment_id": order.payment_id,
        "shopify_order_id": order.shopify_order_id,
        "lines": [
            {key: line.get(key) for key in ("id", "title", "quantity", "paid")}
            for line in order.lines
        ],
        "fulfilled_at": order.fulfilled_at.isoformat() if order.fulfilled_at else None,
        "delivered_at": order.delivered_at.isoformat() if order.delivered_at else None,
    }


def _proposal(proposal: Proposal) -> dict[str, Any]:
    verdict = proposal.verdict or {}
    return {
        "proposal_id": str(proposal.id),
        "kind": proposal.kind,
        "target": proposal.target,
        "amount": proposal.amount,
        "currency": proposal.currency,
        "status": proposal.status,
        "proposed_by": proposal.proposed_by,
        "verdict_outcome": verdict.get("outcome"),
        "approvals_required": proposal.approvals_required,
        "failed_checks": [
            {"check": check["name"], "reason": check["reason"]}
            for check in verdict.get("checks", [])
            if not check["passed"]
        ],
    }


def _action(action: Action) -> dict[str, Any]:
    return {
        "action_id": str(action.id),
        "proposal_id": str(action.proposal_id),
        "kind": action.kind,
        "amount": action.amount,
        "currency": action.currency,
        "status": action.status,
        "status_reason": action.status_reason,
    }


def _uuid(value: str, field: str) -> uuid.UUID:
    parsed = optional_uuid(value, field)
    if parsed is None:  # only for None, which no tool's text argument is
        raise InvalidInput(
            said("%(field)s must be an id like 3f2b6c1e-...-...", field=field), field=field
        )
    return parsed


# ------------------------------------------------------------------ the process


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m app.mcp_server", description=__doc__)
    door = parser.add_mutually_exclusive_group(required=True)
    door.add_argument("--port", type=int, help="serve streamable HTTP on this port")
    door.add_argument(
        "--stdio", action="store_true", help=f"serve one agent over stdio ({SECRET_ENV_VAR})"
    )
    parser.add_argument("--host", default="127.0.0.1")
    args = parser.parse_args(argv)
    settings = Settings.from_env()
    settings.require_production_secrets()
    context = context_from_settings(settings)
    if args.stdio:
        build_server(context, stdio_secret=os.environ.get(SECRET_ENV_VAR)).run("stdio")
    else:
        build_server(context).run(
            "streamable-http",
            host=args.host,
            port=args.port,
            streamable_http_path=STREAMABLE_HTTP_PATH,
        )


if __name__ == "__main__":
    main()
