"""Recording what the provider reports, and what that means for the case.

An action's provider status moves only forward: a refund can go from pending to
succeeded and, days later, to failed, but never from failed back to succeeded,
whatever order webhooks and look-ups arrive in.
"""

from __future__ import annotations

from datetime import datetime

from sqlalchemy.orm import Session

from app import audit
from app.approvals.models import Proposal
from app.cases.models import Case, CaseStatus
from app.execution.models import Action, ActionStatus
from integrations.provider import ProviderAnswer, ProviderStatus

SYSTEM_ACTOR = "caseward:worker"

# Which provider-reported statuses may follow which.
_FORWARD: dict[str, frozenset[str]] = {
    ActionStatus.PENDING: frozenset(
        {
            ActionStatus.REQUIRES_ACTION,
            ActionStatus.SUCCEEDED,
            ActionStatus.FAILED,
            ActionStatus.CANCELED,
        }
    ),
    ActionStatus.REQUIRES_ACTION: frozenset(
        {ActionStatus.PENDING, ActionStatus.SUCCEEDED, ActionStatus.FAILED, ActionStatus.CANCELED}
    ),
    ActionStatus.SUCCEEDED: frozenset({ActionStatus.FAILED}),
    ActionStatus.FAILED: frozenset(),
    ActionStatus.CANCELED: frozenset(),
}


def apply_provider_answer(
    session: Session, action: Action, answer: ProviderAnswer, *, source: str, now: datetime
) -> bool:
    """Record the provider's word on the action; returns whether anything changed."""
    new_status = ProviderStatus(answer.status).value
    current = action.status
    if current == new_status and action.provider_ref == answer.reference:
        return False
    if current in _FORWARD and new_status not in _FORWARD[current]:
        audit.record(
            session,
            shop_id=action.shop_id,
            kind="action.stale_report_ignored",
            actor=SYSTEM_ACTOR,
            case_id=action.case_id,
            action_id=action.id,
            data={"source": source, "reported": new_status, "kept": current},
            now=now,
        )
        return False
    action.status = new_status
    action.provider_ref = answer.reference
    action.failure_reason = answer.failure_reason
    action.status_reason = None
    action.next_check_at = None
    audit.record(
        session,
        shop_id=action.shop_id,
        kind="action.provider_status",
        actor=f"provider:{action.provider}",
        case_id=action.case_id,
        action_id=action.id,
        data={
            "source": source,
            "previous": current,
            "status": new_status,
            "provider_ref": answer.reference,
            "failure_reason": answer.failure_reason,
            "replayed": answer.replayed,
        },
        now=now,
    )
    case = session.get(Case, action.case_id)
    assert case is not None
    if new_status == ActionStatus.SUCCEEDED:
        case.status = CaseStatus.RESOLVED
    elif new_status in (ActionStatus.PENDING, ActionStatus.REQUIRES_ACTION):
        case.status = CaseStatus.EXECUTING
    else:
        reason = f"the provider reports the {action.kind} {new_status}"
        if answer.failure_reason:
            reason += f" ({answer.failure_reason})"
        send_back_for_review(session, action, reason, now)
    return True


def send_back_for_review(session: Session, action: Action, reason: str, now: datetime) -> None:
    """Put the case in front of a named person: whoever approved, else whoever proposed."""
    case = session.get(Case, action.case_id)
    assert case is not None
    case.status = CaseStatus.NEEDS_ATTENTION
    case.owner = responsible_person(session, action)
    audit.record(
        session,
        shop_id=action.shop_id,
        kind="case.needs_attention",
        actor=SYSTEM_ACTOR,
        case_id=case.id,
        action_id=action.id,
        data={"reason": reason, "owner": case.owner, "action_status": action.status},
        now=now,
    )


def responsible_person(session: Session, action: Action) -> str:
    people = [who for who in action.approved_by if not who.startswith("policy:")]
    if people:
        return people[-1]
    proposal = session.get(Proposal, action.proposal_id)
    assert proposal is not None
    return proposal.proposed_by


def mark_unknown(
    session: Session, action: Action, reason: str, *, next_check_at: datetime, now: datetime
) -> None:
    """The provider may or may not have acted: look it up at ``next_check_at``."""
    action.status = ActionStatus.UNKNOWN
    action.status_reason = reason
    action.next_check_at = next_check_at
    audit.record(
        session,
        shop_id=action.shop_id,
        kind="action.unknown",
        actor=SYSTEM_ACTOR,
        case_id=action.case_id,
        action_id=action.id,
        data={"reason": reason, "next_check_at": next_check_at.isoformat()},
        now=now,
    )
