"""Recording what the provider reports, and what that means for the case.

An action's provider status moves only forward: a refund can go from pending to
succeeded and, days later, to failed, but never from failed back to succeeded,
whatever order webhooks and look-ups arrive in (the table is
:data:`app.execution.lifecycle.ACTION_MOVES`; a report it does not allow is kept as
``action.stale_report_ignored``). Whatever stops an action, or leaves it unclear too
long, puts its case in front of a named person. A refund that fails after the provider
had taken it, and the customer had been told so, is announced for its shop's owner
(:data:`~app.execution.events.refund_failed_after_told`).
"""

from __future__ import annotations

from datetime import datetime

from sqlalchemy.orm import Session

from app import audit
from app.actors import WORKER, Actor, Surface, system_actor
from app.cases.lifecycle import move_case
from app.cases.models import Case, CaseStatus
from app.cases.proposals import Proposal
from app.execution.events import announce, refund_failed_after_told, status_moved
from app.execution.lifecycle import move_action, provider_report_applies
from app.execution.models import Action, ActionStatus
from app.words import Code, Sentence, said
from integrations.provider import ActionKind, ProviderAnswer, ProviderStatus


def apply_provider_answer(
    session: Session, action: Action, answer: ProviderAnswer, *, source: str, now: datetime
) -> bool:
    """Record the provider's word on the action; returns whether anything changed."""
    new_status = ActionStatus(ProviderStatus(answer.status).value)
    current = action.status
    if current == new_status and action.provider_ref == answer.reference:
        return False
    if not provider_report_applies(current, new_status):
        audit.record(
            session,
            shop_id=action.shop_id,
            kind="action.stale_report_ignored",
            actor=WORKER,
            case_id=action.case_id,
            action_id=action.id,
            data={"source": source, "reported": new_status.value, "kept": current},
            now=now,
        )
        return False
    action.provider_ref = answer.reference
    action.failure_reason = answer.failure_reason
    action.status_reason = action.status_sentence = None
    action.next_check_at = None
    move_action(
        session,
        action,
        new_status,
        event="action.provider_status",
        actor=system_actor(f"provider:{action.provider}", Surface.PROVIDER),
        now=now,
        data={
            "source": source,
            "provider_ref": answer.reference,
            "failure_reason": answer.failure_reason,
            "replayed": answer.replayed,
        },
    )
    case = session.get(Case, action.case_id)
    assert case is not None
    if new_status in ActionStatus.PROVIDER_OPEN:
        # While another proposal of the case awaits approval, the case stays with its approvers.
        if case.status != CaseStatus.AWAITING_APPROVAL:
            done = new_status == ActionStatus.SUCCEEDED
            to = CaseStatus.RESOLVED if done else CaseStatus.EXECUTING
            move_case(session, case, to, actor=WORKER, now=now, action=action)
    else:
        reported = said(
            "the provider reports: %(kind)s %(status)s",
            kind=Code("kind", action.kind),
            status=Code("action", new_status.value),
        )
        if answer.failure_reason:
            reported = said(
                "%(reported)s (%(failure_reason)s)",
                reported=reported,
                failure_reason=answer.failure_reason,
            )
        send_back_for_review(session, action, reported, now)
    announce(status_moved, action, session=session, case=case, now=now)
    # The customer heard of it at pending or succeeded (the provider had taken it): now it
    # failed, what they were told no longer holds.
    if (
        action.kind == ActionKind.REFUND
        and current in ActionStatus.PROVIDER_OPEN
        and new_status in ActionStatus.PROVIDER_FAILED
    ):
        announce(refund_failed_after_told, action, session=session, now=now)
    return True


def record_reason(action: Action, reason: Sentence | str) -> dict[str, object]:
    """Put ``reason`` on the action (its English, and the sentence when Caseward said
    it); returns it as an audit event's data carries it."""
    action.status_reason = str(reason)
    action.status_sentence = reason.to_dict() if isinstance(reason, Sentence) else None
    return reason_data(reason)


def reason_data(reason: Sentence | str) -> dict[str, object]:
    """A reason as audit data: the English, and the sentence for the admin to translate."""
    if isinstance(reason, Sentence):
        return {"reason": str(reason), "said": reason.to_dict()}
    return {"reason": reason}


def send_back_for_review(session: Session, action: Action, reason: Sentence, now: datetime) -> None:
    """Put the case in front of a named person: whoever approved, else whoever proposed."""
    case = session.get(Case, action.case_id)
    assert case is not None
    move_case(
        session,
        case,
        CaseStatus.NEEDS_ATTENTION,
        actor=WORKER,
        now=now,
        owner=responsible_person(session, action),
        reason=reason,
        action=action,
    )


def stop_action(
    session: Session,
    action: Action,
    to: ActionStatus,
    reason: Sentence,
    *,
    actor: Actor,
    now: datetime,
) -> None:
    """The action goes no further without a person: record why and show them the case."""
    data = record_reason(action, reason)
    action.next_check_at = None
    move_action(session, action, to, event=f"action.{to.value}", actor=actor, now=now, data=data)
    send_back_for_review(session, action, reason, now)


def escalate(session: Session, action: Action, reason: Sentence, now: datetime) -> None:
    """An outcome still unclear after too long: a person sees it, once per action.

    The action keeps its status (look-ups go on); only the case changes hands.
    """
    if action.escalated_at is not None:
        return
    action.escalated_at = now
    send_back_for_review(session, action, reason, now)


def responsible_person(session: Session, action: Action) -> str:
    people = [who for who in action.approved_by if not who.startswith("policy:")]
    if people:
        return people[-1]
    proposal = session.get(Proposal, action.proposal_id)
    assert proposal is not None
    return proposal.proposed_by


def mark_unknown(
    session: Session,
    action: Action,
    reason: Sentence | str,
    *,
    next_check_at: datetime,
    now: datetime,
) -> None:
    """The provider may or may not have acted: look it up at ``next_check_at``.
    ``reason`` is a plain str when it is the provider's (or the network's) own words."""
    data = record_reason(action, reason)
    action.next_check_at = next_check_at
    move_action(
        session,
        action,
        ActionStatus.UNKNOWN,
        event="action.unknown",
        actor=WORKER,
        now=now,
        data={**data, "next_check_at": next_check_at.isoformat()},
    )
