"""The MCP server agents reach Caseward through: find and read cases, propose, follow.

Six tools (:class:`~app.agents.models.AgentTool`): ``find_case``, ``read_case``,
``list_orders_and_payments``, ``propose_action``, ``action_status`` and ``draft_reply``.
An agent may propose an action, follow it and draft a reply; no tool approves, executes
or sends anything. A proposal from an agent meets the same checks and waits for the same
people as a staff member's (``approvals/service.py::create_proposal``); approving needs a
staff member's role, which no agent has. Only an owner's explicit shop policy can approve
without a person, exactly as for anyone's proposal. A drafted reply is checked like any
reply and kept for a person to send (``agents/replies.py::keep_agent_reply``).

Every tool call, in order:

1. the agent's secret is read from the request's ``Authorization: Bearer cwag_...``
   header (streamable HTTP) or, over stdio, from ``CASEWARD_AGENT_SECRET``;
2. ``agents/service.py::authenticate_agent`` finds the live credential by hash (unknown
   or revoked: refused, nothing else happens); its shop bounds every query the tool makes;
3. the call counts against the credential's rate limit (``agents/call_limit.py``);
4. the credential must allow the tool (``allowed_tools``), and the call may carry no
   argument the tool does not take (an ``approved`` flag is refused, never ignored);
5. the tool's work runs in a savepoint, so a refusal undoes only the work;
6. ``agent.tool_called`` is audited with the agent as actor, the tool's name and, when
   refused at step 3, 4 or 5, the refusal's code (never the customer's words), and
   committed;
7. an action the shop's policy approved is queued after the commit.

The web app serves the tools over streamable HTTP at ``/mcp`` (``web/mcp_mount.py``,
stateless, JSON answers: any web worker answers any request);
``python -m app.agents.mcp_server --stdio`` serves one agent over stdio.
"""

from __future__ import annotations

import argparse
import functools
import os
import uuid
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
from mcp.server.transport_security import TransportSecuritySettings
from mcp_types import ToolAnnotations
from sqlalchemy import func, or_, select
from sqlalchemy.orm import Session, sessionmaker

from app import audit
from app.agents.call_limit import CallLimit, call_limit
from app.agents.models import AgentCredential, AgentTool
from app.agents.replies import keep_agent_reply
from app.agents.service import agent_actor, authenticate_agent
from app.approvals.drafts import parse_draft
from app.approvals.service import create_proposal
from app.cases.models import Case, Customer, Order
from app.cases.proposals import Proposal
from app.cases.service import get_case
from app.clock import utcnow
from app.connections.adapters import AdapterFactory, connection_adapters
from app.crypto import secret_box
from app.db import make_engine, make_session_factory
from app.errors import CasewardError, Forbidden, InvalidInput, NotFound
from app.execution.models import Action, ActionStatus
from app.execution.queueing import enqueue_execution
from app.guard.identity import IdentityLevel
from app.inbox.case_file import case_file
from app.inbox.views import ActionView, ProposalView
from app.jobs.connection import connect_redis
from app.jobs.queueing import queue_named
from app.logs import log_plainly
from app.money import Money
from app.settings import Settings
from app.shops.models import Shop
from app.validation import optional_uuid, text
from app.words import said
from integrations.provider import ActionKind

SECRET_ENV_VAR = "CASEWARD_AGENT_SECRET"  # noqa: S105  (the variable's name, not a secret)
_BEARER = "bearer "

# Said by every tool's description, so a model knows where its part ends.
HAND_OVER = (
    "No tool approves, executes or sends anything: a person does that in Caseward "
    "(or, for what it allows, a policy the shop's owner set there)."
)
INSTRUCTIONS = (
    "Caseward guards a shop's refunds, credits, discounts and subscription changes. "
    "These tools find and read the shop's cases, their orders and payments, propose an "
    "action on a case, follow it, and draft a reply for a person to send. Every proposal "
    "is checked against the payment provider's facts and then waits until a person "
    "approves it. " + HAND_OVER
)
_READ_ONLY = ToolAnnotations(read_only_hint=True, destructive_hint=False)
_ADDS_FOR_A_PERSON = ToolAnnotations(read_only_hint=False, destructive_hint=False)
_VERIFIED = (IdentityLevel.MEDIUM, IdentityLevel.STRONG)
_CASES_FOUND = 20


@dataclass(frozen=True)
class ServerContext:
    """What the tools need: the database, the shops' provider adapters, the settings,
    where approved actions are queued, each credential's call limit, and the time."""

    session_factory: sessionmaker[Session]
    adapters: AdapterFactory
    settings: Settings
    enqueue: Callable[[uuid.UUID], object]
    call_limit: CallLimit
    clock: Callable[[], datetime] = utcnow


def context_from_settings(settings: Settings) -> ServerContext:
    """The context for a server process of its own (stdio), built like a worker's."""
    factory = make_session_factory(make_engine(settings.database_url))
    audit.bind_key_ring(factory, audit.audit_key_ring(settings))
    # One connection for the process: each policy-approved action only pushes its job.
    redis = connect_redis(settings)
    return ServerContext(
        session_factory=factory,
        adapters=connection_adapters(settings, secret_box(settings)),
        settings=settings,
        enqueue=functools.partial(enqueue_execution, queue_named(redis, settings.queue_name)),
        call_limit=call_limit(redis, settings.agent_rate_limit),
    )


def build_server(context: ServerContext, *, stdio_secret: str | None = None) -> MCPServer:
    """The MCP server and its six tools, added in the order they are listed.
    ``stdio_secret`` is the agent's secret when there are no HTTP headers to carry it
    (stdio)."""
    # First: the SDK's server sets up the process's logging where nothing did (Rich's
    # handler on the root logger, every record and traceback boxed in 80 columns).
    log_plainly()
    server = MCPServer(name="caseward", instructions=INSTRUCTIONS)
    calls = _Calls(context, stdio_secret)
    _add_find_case(server, calls)
    _add_read_case(server, calls)
    _add_list_orders_and_payments(server, calls)
    _add_propose_action(server, calls)
    _add_action_status(server, calls)
    _add_draft_reply(server, calls)
    return server


def streamable_http_sessions(
    server: MCPServer, *, max_request_body_size: int
) -> StreamableHTTPSessionManager:
    """``server``'s streamable HTTP endpoint, stateless and answering JSON: each request
    stands alone, so any process of the web app can answer it and nothing streams.
    Serve requests with its ``handle_request`` inside its ``run()`` context."""
    server.streamable_http_app(
        stateless_http=True,
        json_response=True,
        max_request_body_size=max_request_body_size,
        # The SDK guards local servers against DNS rebinding by Host header. Every tool
        # call here needs the agent's bearer secret, which a page a browser was lured to
        # does not have, and the app answers on whatever host it is deployed at.
        transport_security=TransportSecuritySettings(enable_dns_rebinding_protection=False),
    )
    return server.session_manager


# ------------------------------------------------------------------ the tools listed
# Each function's name is its tool's name: the SDK titles the input schema after it.


def _add_find_case(server: MCPServer, calls: _Calls) -> None:
    """``find_case``: the newest verified cases of a customer, by email address."""

    @server.tool(
        name=AgentTool.FIND_CASE,
        description=(
            "Find the newest cases of the customer with this email address, in the shop "
            "your credential belongs to, among the cases whose customer Caseward has "
            "verified (identity level medium: the helpdesk sender's address; strong: a "
            "storefront login or a one-time code). An unverified conversation is not "
            "found here: the customer verifies first. Read-only. " + HAND_OVER
        ),
        annotations=_READ_ONLY,
    )
    def find_case(customer_email: str, ctx: Context) -> dict[str, Any]:
        return calls.run(
            ctx,
            AgentTool.FIND_CASE,
            ("customer_email",),
            lambda s, c: _find_case(s, c, customer_email),
        )


def _add_read_case(server: MCPServer, calls: _Calls) -> None:
    """``read_case``: one case with its orders, proposals and actions."""

    @server.tool(
        name=AgentTool.READ_CASE,
        description=(
            "Read one case: its status, how sure Caseward is who the customer is "
            "(identity level), the customer's orders, the proposals made with the checks' "
            "outcome, and the actions with their status. Read-only. " + HAND_OVER
        ),
        annotations=_READ_ONLY,
    )
    def read_case(case_id: str, ctx: Context) -> dict[str, Any]:
        return calls.run(
            ctx, AgentTool.READ_CASE, ("case_id",), lambda s, c: _read_case(s, c, case_id)
        )


def _add_list_orders_and_payments(server: MCPServer, calls: _Calls) -> None:
    """``list_orders_and_payments``: a case's orders, each with its payment and refunds."""

    @server.tool(
        name=AgentTool.LIST_ORDERS_AND_PAYMENTS,
        description=(
            "List the orders of a case's customer, each with the payment behind it "
            "(provider, payment id, amount in integer minor units), what Caseward has "
            "refunded of it as the provider reported, and what is still in flight; and "
            "the case's actions. Read-only. " + HAND_OVER
        ),
        annotations=_READ_ONLY,
    )
    def list_orders_and_payments(case_id: str, ctx: Context) -> dict[str, Any]:
        return calls.run(
            ctx,
            AgentTool.LIST_ORDERS_AND_PAYMENTS,
            ("case_id",),
            lambda s, c: _orders_and_payments(s, c, case_id),
        )


def _add_propose_action(server: MCPServer, calls: _Calls) -> None:
    """``propose_action``: a proposal on a case, checked, waiting for a person."""

    @server.tool(
        name=AgentTool.PROPOSE_ACTION,
        description=(
            "Propose an action on a case. `proposal` is the JSON of Caseward's "
            "POST /api/cases/{case_id}/proposals: kind, target, amount and currency (integer "
            "minor units), line_items, params, reason; nothing else is accepted. The proposal "
            "is checked against the payment provider and then waits for a person to approve "
            "it in Caseward (or a policy the shop's owner set there). This tool never approves "
            "or executes anything; it returns the proposal's status and the checks' outcome. "
            + HAND_OVER
        ),
        annotations=_ADDS_FOR_A_PERSON,
    )
    def propose_action(case_id: str, proposal: dict[str, Any], ctx: Context) -> dict[str, Any]:
        return calls.run(
            ctx,
            AgentTool.PROPOSE_ACTION,
            ("case_id", "proposal"),
            lambda s, c: _propose(calls.context, s, c, case_id, proposal),
        )


def _add_action_status(server: MCPServer, calls: _Calls) -> None:
    """``action_status``: an approved action's status, as the provider reported it."""

    @server.tool(
        name=AgentTool.ACTION_STATUS,
        description=(
            "The status of an action (after a person approved a proposal): queued, "
            "submitting, succeeded, failed and so on, as the payment provider reported it. "
            "Read-only. " + HAND_OVER
        ),
        annotations=_READ_ONLY,
    )
    def action_status(action_id: str, ctx: Context) -> dict[str, Any]:
        return calls.run(
            ctx,
            AgentTool.ACTION_STATUS,
            ("action_id",),
            lambda s, c: _action_status(s, c, action_id),
        )


def _add_draft_reply(server: MCPServer, calls: _Calls) -> None:
    """``draft_reply``: a reply to a case's customer, checked and kept for a person to send."""

    @server.tool(
        name=AgentTool.DRAFT_REPLY,
        description=(
            "Draft a reply to the customer of a case. It is checked against what the "
            "payment provider has reported for the case's actions and the amounts under "
            'review: a reply that says more ("your refund has been processed" before the '
            "provider said so, or another amount) is refused with the problems named. "
            "Otherwise it is kept as your draft for a person to read and send; this tool "
            "never sends it. " + HAND_OVER
        ),
        annotations=_ADDS_FOR_A_PERSON,
    )
    def draft_reply(case_id: str, text: str, ctx: Context) -> dict[str, Any]:
        return calls.run(
            ctx,
            AgentTool.DRAFT_REPLY,
            ("case_id", "text"),
            lambda s, c: _draft_reply(calls.context, s, c, case_id, text),
        )


# ------------------------------------------------------------------ each call


@dataclass(frozen=True)
class _Answer:
    """A tool's answer, and the action the shop's policy approved, to queue after commit."""

    data: dict[str, Any]
    approved_action_id: uuid.UUID | None = None


_Work = Callable[[Session, AgentCredential], _Answer]


@dataclass(frozen=True)
class _Calls:
    """How every tool runs its work: as the agent whose secret the call carries, through
    the steps of :func:`_authenticated_call`."""

    context: ServerContext
    stdio_secret: str | None

    def run(
        self, ctx: Context, tool: AgentTool, accepts: Iterable[str], work: _Work
    ) -> dict[str, Any]:
        """``work``'s answer for a call of ``tool``, which takes the arguments ``accepts``."""
        return _authenticated_call(
            self.context,
            _secret(ctx, self.stdio_secret),
            tool,
            _unknown_arguments(ctx, accepts),
            work,
        )


def _secret(ctx: Context, stdio_secret: str | None) -> str | None:
    headers = ctx.headers
    if headers is None:
        return stdio_secret
    authorization = headers.get("authorization", "")
    if not authorization.lower().startswith(_BEARER):
        return None
    return authorization[len(_BEARER) :].strip()


def _unknown_arguments(ctx: Context, accepts: Iterable[str]) -> list[str]:
    """Arguments the call carries that the tool does not take (the SDK would drop them)."""
    arguments = (ctx.request_context.params or {}).get("arguments") or {}
    return sorted(set(arguments) - set(accepts))


def _authenticated_call(
    context: ServerContext,
    secret: str | None,
    tool: AgentTool,
    unknown_arguments: list[str],
    work: _Work,
) -> dict[str, Any]:
    now = context.clock()
    with context.session_factory() as session:
        credential = authenticate_agent(session, secret, now) if secret else None
        if credential is None:
            raise ToolError(
                str(
                    said(
                        "a valid, unrevoked Caseward agent credential is required "
                        "(Authorization: Bearer cwag_...)"
                    )
                )
            )
        refusal: CasewardError | None = None
        answer = _Answer({})
        try:
            context.call_limit.count(credential.id)
            _require_allowed(credential, tool, unknown_arguments)
            with session.begin_nested():
                answer = work(session, credential)
        except CasewardError as error:
            refusal = error
        audit.record(
            session,
            shop_id=credential.shop_id,
            kind="agent.tool_called",
            actor=agent_actor(credential),
            data={"tool": tool.value, "refused": refusal.code if refusal else None},
            now=now,
        )
        session.commit()
    if refusal is not None:
        raise ToolError(refusal.message) from refusal
    if answer.approved_action_id is not None:
        context.enqueue(answer.approved_action_id)
    return answer.data


def _require_allowed(credential: AgentCredential, tool: AgentTool, unknown: list[str]) -> None:
    if tool not in credential.allowed_tools:
        raise Forbidden(
            said(
                "this agent credential may not call %(tool)s; it allows %(allowed)s",
                tool=tool.value,
                allowed=", ".join(credential.allowed_tools),
            ),
            code="tool_not_allowed",
        )
    if unknown:
        raise InvalidInput(
            said(
                "%(tool)s takes no argument %(fields)s; no tool approves, executes or sends",
                tool=tool.value,
                fields=", ".join(unknown),
            ),
            field=unknown[0],
            code="unknown_argument",
        )


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
            # Found by an identity Caseward verified, never by an address someone typed.
            Case.identity_level.in_(_VERIFIED),
        )
        .order_by(Case.created_at.desc())
        .limit(_CASES_FOUND)
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


def _orders_and_payments(session: Session, credential: AgentCredential, case_id: str) -> _Answer:
    file = case_file(session, credential.shop_id, _uuid(case_id, "case_id"))
    # Every refund of the shop on this money, from any case: a refund made for another
    # case of the same order has left the payment all the same.
    refs = {ref for order in file.orders for ref in _money_refs(order)}
    refunds = (
        [
            ActionView.of(action)
            for action in session.scalars(
                select(Action).where(
                    Action.shop_id == credential.shop_id,
                    Action.kind == ActionKind.REFUND,
                    or_(Action.money_ref.in_(refs), Action.target.in_(refs)),
                )
            )
        ]
        if refs
        else []
    )
    return _Answer(
        {
            "case_id": str(file.case.id),
            "orders": [_order_and_payment(order, refunds) for order in file.orders],
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


def _draft_reply(
    context: ServerContext,
    session: Session,
    credential: AgentCredential,
    case_id: str,
    body: str,
) -> _Answer:
    case = get_case(session, credential.shop_id, _uuid(case_id, "case_id"))
    kept = keep_agent_reply(session, case=case, agent=credential, body=body, now=context.clock())
    return _Answer(
        {
            "draft_id": str(kept.id),
            "case_id": str(case.id),
            "text": kept.reply,
            "status": "waiting_for_a_person_to_send",
        }
    )


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


def _money_refs(order: Order) -> set[str]:
    """The ids a refund of ``order`` names as its money or target."""
    return {ref for ref in (order.payment_id, order.shopify_order_id) if ref}


def _order_and_payment(order: Order, refunds: list[ActionView]) -> dict[str, Any]:
    refs = _money_refs(order)
    # Each refund of this order's money in its currency: its status and amount.
    own = [
        (view.status, view.money.amount)
        for view in refunds
        if (view.action.money_ref in refs or view.action.target in refs)
        and view.money is not None
        and view.money.currency == order.currency
    ]
    return {
        **_order(order),
        "payment": {
            "provider": order.payment_provider,
            "payment_id": order.payment_id,
            "amount": order.total,
            "currency": order.currency,
            "refunded_through_caseward": sum(
                amount for status, amount in own if status == ActionStatus.SUCCEEDED
            ),
            "in_flight": sum(
                amount for status, amount in own if status in ActionStatus.NOT_SETTLED
            ),
        },
    }


def _proposal(proposal: Proposal) -> dict[str, Any]:
    view = ProposalView.of(proposal)
    return {
        "proposal_id": str(proposal.id),
        "kind": proposal.kind,
        "target": proposal.target,
        **_minor_units(view.money),
        "status": view.status,
        "proposed_by": proposal.proposed_by,
        "verdict_outcome": view.verdict.outcome.value if view.verdict else None,
        "approvals_required": proposal.approvals_required,
        "failed_checks": [{"check": check.name, "reason": check.reason} for check in view.failed],
        # Raised abuse signals: nothing blocks, but a person must decide.
        "signals": [{"check": check.name, "reason": check.reason} for check in view.signals],
    }


def _action(action: Action) -> dict[str, Any]:
    view = ActionView.of(action)
    return {
        "action_id": str(action.id),
        "proposal_id": str(action.proposal_id),
        "kind": action.kind,
        **_minor_units(view.money),
        "status": view.status,
        "status_reason": action.status_reason,
    }


def _minor_units(money: Money | None) -> dict[str, Any]:
    """``amount`` (integer minor units) and ``currency``, both None for no money."""
    if money is None:
        return {"amount": None, "currency": None}
    return {"amount": money.amount, "currency": money.currency}


def _uuid(value: str, field: str) -> uuid.UUID:
    parsed = optional_uuid(value, field)
    if parsed is None:  # only for None, which no tool's text argument is
        raise InvalidInput(
            said("%(field)s must be an id like 3f2b6c1e-...-...", field=field), field=field
        )
    return parsed


# ------------------------------------------------------------------ the process


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m app.agents.mcp_server", description=__doc__)
    parser.add_argument(
        "--stdio",
        action="store_true",
        required=True,
        help=f"serve one agent over stdio, its secret in {SECRET_ENV_VAR} "
        "(streamable HTTP is served by the web app at /mcp)",
    )
    parser.parse_args(argv)
    settings = Settings.from_env()
    settings.require_production_secrets()
    context = context_from_settings(settings)
    build_server(context, stdio_secret=os.environ.get(SECRET_ENV_VAR)).run("stdio")


if __name__ == "__main__":
    main()
