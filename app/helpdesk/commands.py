"""What an agent's macro asks of Caseward, done on the same paths as everything else.

- **prepare case**: the drafter drafts the case; a proposal goes through the same checks
  and waits for the same approval as any; the agent gets an internal note with the
  summary, the proposal and its checks, and a suggested reply already checked against
  what the provider has reported (:func:`draft_note`). Nothing reaches the customer.
- **send status**: the customer is told the case's action status as the provider reported
  it, worded per status, once per status (:func:`status_for_customer`).
- **approve**: the agent approves the open proposal as the member of staff whose email
  they use (:func:`approve_as_agent`), with that member's role and limit; an agent who is
  not staff, or above their limit, approves nothing and is told why.
"""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from app.actors import Surface, staff
from app.approvals.service import ProposalResult, approve_proposal
from app.cases.models import Case
from app.cases.proposals import Proposal, ProposalStatus
from app.conversations.updates import tell_customer
from app.drafting.service import Drafted
from app.errors import CasewardError
from app.execution.models import Action, ActionStatus
from app.guard import Verdict
from app.money import display
from app.settings import Settings
from app.shops.models import Shop, StaffMember


def draft_note(drafted: Drafted, *, approve_url: str, in_hand: Proposal | None = None) -> str:
    """The internal note an agent reads after "prepare case". ``in_hand``: the case's
    proposal already waiting (or approved), shown when the draft proposed nothing beside it."""
    lines = ["Caseward drafted this case.", f"Summary: {drafted.record.summary}"]
    proposal = drafted.proposal.proposal if drafted.proposal is not None else in_hand
    if proposal is not None:
        verdict = Verdict.from_dict(proposal.verdict)
        failed = verdict.reasons
        checks = "every check passed" if not failed else "blocked: " + "; ".join(failed)
        if verdict.signals:
            raised = "; ".join(check.reason for check in verdict.signals)
            checks += f"; a person must decide: {raised}"
        lines.append(
            f"Proposal: {proposal.kind} of {_amount(proposal)} ({proposal.status}; {checks})."
        )
        # An approved one (its action under way) is followed there, not decided.
        todo = "Approve or reject it" if proposal.status in ProposalStatus.OPEN else "Follow it"
        lines.append(f"{todo} in Caseward: {approve_url}")
    elif drafted.record.failure:
        lines.append(f"Nothing proposed: {drafted.record.failure}.")
    lines.append(
        f"Suggested reply (checked against what the provider reported):\n{drafted.reply_text}"
    )
    return "\n".join(lines)


def status_for_customer(session: Session, *, case: Case, actor_name: str, now: datetime) -> str:
    """Tell the customer the case's newest action status as the provider reported it;
    returns the internal note saying what was done."""
    action = session.scalars(
        select(Action)
        .where(Action.shop_id == case.shop_id, Action.case_id == case.id)
        .order_by(Action.created_at.desc())
        .limit(1)
    ).first()
    if action is None or action.status not in ActionStatus.PROVIDER_REPORTED:
        status = action.status if action is not None else "no action"
        return f"Nothing to tell the customer yet: the provider has reported nothing ({status})."
    told = tell_customer(
        session,
        action=action,
        case=case,
        actor=staff(actor_name, Surface.HELPDESK),
        now=now,
    )
    if told is None:
        return f"The customer was already told that the {action.kind} is {action.status}."
    return f"The customer is being told that the {action.kind} is {action.status}."


def approve_as_agent(
    session: Session,
    *,
    shop: Shop,
    case: Case,
    agent_email: str | None,
    settings: Settings,
    now: datetime,
) -> tuple[ProposalResult | None, str]:
    """Approve the case's proposal awaiting approval as the agent's staff self; returns
    the result (None when nothing was approved) and the note saying what happened."""
    member = (
        session.scalars(
            select(StaffMember).where(
                StaffMember.shop_id == shop.id,
                func.lower(StaffMember.email) == agent_email.strip().lower(),
            )
        ).first()
        if agent_email
        else None
    )
    if member is None:
        return None, (
            f"{agent_email or 'This agent'} is not a member of staff in Caseward: nothing was "
            "approved. Approve in Caseward, or ask the shop's owner to add you."
        )
    proposal = session.scalars(
        select(Proposal)
        .where(
            Proposal.shop_id == shop.id,
            Proposal.case_id == case.id,
            Proposal.status == ProposalStatus.AWAITING_APPROVAL,
        )
        .order_by(Proposal.created_at.desc())
        .limit(1)
    ).first()
    if proposal is None:
        return None, "No proposal of this case awaits approval: nothing was approved."
    try:
        result = approve_proposal(
            session,
            shop=shop,
            proposal_id=proposal.id,
            actor=staff(member.user_id, Surface.HELPDESK),
            digest=proposal.digest,
            settings=settings,
            now=now,
        )
    except CasewardError as refused:
        return None, f"Not approved: {refused.message}."
    if result.action is None:
        return result, f"Approved by {member.user_id}; it needs another approver."
    return result, f"Approved by {member.user_id}: the action is queued and will be sent once."


def _amount(proposal: Proposal) -> str:
    return display(proposal.amount, proposal.currency)
