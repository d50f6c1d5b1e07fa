"""JSON shapes of the API's resources. Amounts stay integer minor units, with a display form."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from app.agents.models import AgentCredential
from app.audit import AuditEvent
from app.cases.models import Case, Customer, Order
from app.cases.proposals import Approval, Proposal
from app.connections.merchant import MERCHANT, MerchantConnected
from app.conversations.models import Message
from app.drafting.models import CaseDraftRecord
from app.execution.models import Action, ActionAttempt
from app.history_audit.models import HistoryScan
from app.history_audit.scan import scan_progress
from app.inbox.views import ActionView, ProposalView
from app.money import Money


def money(amount: int | None, currency: str | None) -> dict[str, Any] | None:
    """An order's amount, its currency as stored."""
    if amount is None or currency is None:
        return None
    return {"amount": amount, "currency": currency, "display": Money(amount, currency).format()}


def money_json(money: Money | None) -> dict[str, Any] | None:
    """A proposal's or an action's money (:mod:`app.inbox.views`)."""
    if money is None:
        return None
    return {"amount": money.amount, "currency": money.currency, "display": money.format()}


def proposal_json(
    proposal: Proposal,
    approvals: list[Approval] | None = None,
    agent: AgentCredential | None = None,
) -> dict[str, Any]:
    """The proposal; ``agent``: the credential that proposed it, when an agent did (the
    caller reads it, :func:`app.agents.service.proposing_agent`)."""
    view = ProposalView.of(proposal)
    body: dict[str, Any] = {
        "id": str(proposal.id),
        "case_id": str(proposal.case_id),
        "revision": proposal.revision,
        "status": view.status,
        "kind": proposal.kind,
        "provider": proposal.provider,
        "target": proposal.target,
        "money_ref": proposal.money_ref,
        "customer_ref": proposal.customer_ref,
        "amount": money_json(view.money),
        "line_items": proposal.line_items,
        "params": proposal.params,
        "reason": proposal.reason,
        "rejection_reason": proposal.rejection_reason,
        "proposed_by": proposal.proposed_by,
        "proposed_by_agent": {"id": str(agent.id), "name": agent.name} if agent else None,
        "approvals_required": proposal.approvals_required,
        "policy_version": proposal.policy_version,
        "digest": proposal.digest,
        "verdict": proposal.verdict,
    }
    if approvals is not None:
        body["approvals"] = [
            {
                "approver": a.approver,
                "digest": a.digest,
                "created_at": a.created_at.isoformat(),
                "expires_at": a.expires_at.isoformat(),
                "void_reason": a.void_reason,
                "consumed_by_action": str(a.consumed_by_action) if a.consumed_by_action else None,
            }
            for a in approvals
        ]
    return body


def action_json(action: Action, attempts: list[ActionAttempt] | None = None) -> dict[str, Any]:
    view = ActionView.of(action)
    body: dict[str, Any] = {
        "id": str(action.id),
        "case_id": str(action.case_id),
        "proposal_id": str(action.proposal_id),
        "proposal_revision": action.proposal_revision,
        "kind": action.kind,
        "provider": action.provider,
        "target": action.target,
        "money_ref": action.money_ref,
        "amount": money_json(view.money),
        "line_items": action.line_items,
        "params": action.params,
        "digest": action.digest,
        "status": view.status,
        "status_reason": action.status_reason,
        "provider_ref": action.provider_ref,
        "failure_reason": action.failure_reason,
        "idempotency_key": action.idempotency_key,
        "approved_by": action.approved_by,
        "created_at": action.created_at.isoformat(),
    }
    if attempts is not None:
        body["attempts"] = [
            {
                "number": a.number,
                "purpose": a.purpose,
                "idempotency_key": a.idempotency_key,
                "started_at": a.started_at.isoformat(),
                "finished_at": a.finished_at.isoformat() if a.finished_at else None,
                "outcome": a.outcome,
                "provider_ref": a.provider_ref,
                "provider_status": a.provider_status,
                "detail": a.detail,
            }
            for a in attempts
        ]
    return body


def history_scan_json(scan: HistoryScan) -> dict[str, Any]:
    """A scan of the read-only audit with its progress (shares of the window, 0 to 1)."""
    progress = scan_progress(scan)
    return {
        "id": str(scan.id),
        "provider": scan.provider,
        "status": scan.status,
        "window_days": scan.window_days,
        "since": scan.since.isoformat(),
        "requested_by": scan.requested_by,
        "error": scan.error,
        "created_at": scan.created_at.isoformat(),
        "started_at": _moment(scan.started_at),
        "heartbeat_at": _moment(scan.heartbeat_at),
        "finished_at": _moment(scan.finished_at),
        "progress": {
            "share": round(progress.share, 4),
            "records": progress.records,
            "pages": progress.pages,
            "requests": progress.requests,
            "seconds_left": progress.seconds_left,
            "streams": [
                {
                    "name": stream.name,
                    "done": stream.done,
                    "share": round(stream.share, 4),
                    "records": stream.records,
                    "pages": stream.pages,
                }
                for stream in progress.streams
            ],
        },
    }


def _moment(value: datetime | None) -> str | None:
    return value.isoformat() if value is not None else None


def customer_json(customer: Customer | None) -> dict[str, Any] | None:
    if customer is None:
        return None
    return {
        "id": str(customer.id),
        "email": customer.email,
        "name": customer.name,
        "stripe_customer_id": customer.stripe_customer_id,
        "merchant_customer_id": customer.merchant_customer_id,
    }


def merchant_connected_json(connected: MerchantConnected) -> dict[str, Any]:
    """The shop's own endpoint; the signing secret only in the answer that made it."""
    connection, until = connected.connection, connected.previous_until
    return {
        "provider": MERCHANT,
        "endpoint_url": connection.endpoint_url,
        "key": connection.key_hint,
        "livemode": connection.livemode,
        "signing_secret": connected.new_secret,
        "previous_secret_until": until.isoformat() if until is not None else None,
    }


def order_json(order: Order) -> dict[str, Any]:
    return {
        "id": str(order.id),
        "name": order.name,
        "shopify_order_id": order.shopify_order_id,
        "total": money(order.total, order.currency),
        "payment_provider": order.payment_provider,
        "payment_id": order.payment_id,
        "lines": [
            {**line, "paid": money(int(line["paid"]), order.currency)} for line in order.lines
        ],
        "fulfilled_at": order.fulfilled_at.isoformat() if order.fulfilled_at else None,
        "delivered_at": order.delivered_at.isoformat() if order.delivered_at else None,
    }


def case_summary_json(case: Case) -> dict[str, Any]:
    return {
        "id": str(case.id),
        "subject": case.subject,
        "status": case.status,
        "owner": case.owner,
        "identity_level": case.identity_level,
        "created_at": case.created_at.isoformat(),
        "updated_at": case.updated_at.isoformat(),
    }


def audit_json(event: AuditEvent) -> dict[str, Any]:
    return {
        "seq": event.seq,
        "kind": event.kind,
        "actor": event.actor,
        "actor_kind": event.actor_kind,
        "actor_surface": event.actor_surface,
        "case_id": str(event.case_id) if event.case_id else None,
        "action_id": str(event.action_id) if event.action_id else None,
        "data": event.data,
        "created_at": event.created_at.isoformat(),
        "hash": event.hash,
    }


def message_json(message: Message) -> dict[str, Any]:
    return {
        "id": str(message.id),
        "author": message.author,
        "text": message.body,
        "created_at": message.created_at.isoformat(),
    }


def agent_json(credential: AgentCredential) -> dict[str, Any]:
    """An agent credential as owners see it: never its secret, only its first characters."""
    return {
        "id": str(credential.id),
        "name": credential.name,
        "prefix": credential.prefix,
        "allowed_kinds": credential.allowed_kinds,
        "allowed_tools": credential.allowed_tools,
        "ceiling": credential.ceiling,
        "created_by": credential.created_by,
        "created_at": credential.created_at.isoformat(),
        "revoked_at": credential.revoked_at.isoformat() if credential.revoked_at else None,
        "last_used_at": credential.last_used_at.isoformat() if credential.last_used_at else None,
    }


def drafting_json(record: CaseDraftRecord | None) -> dict[str, Any] | None:
    """The case's newest run of Caseward's drafter: the claim it stated and, when the
    check refused them, its own words, which the customer never received."""
    if record is None:
        return None
    return {
        "id": str(record.id),
        "drafter": record.drafter,
        "model": record.model,
        "next_step": record.next_step,
        "summary": record.summary,
        "claim": record.claim,
        "refused_text": record.refused_text,
        "failure": record.failure,
        "proposal_id": str(record.proposal_id) if record.proposal_id else None,
        "created_at": _moment(record.created_at),
    }
