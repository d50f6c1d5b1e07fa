"""Proposals, and approvals bound to the exact digest of what was reviewed.

The rules this module enforces:

* every proposal, whoever makes it, passes the same checks (:mod:`app.guard`);
* an approval counts only for the digest it was given to, only once, and only
  until it expires; editing a proposal voids every approval of it;
* whether a person may approve now (role, limit, two-person rule, the proposal's
  status and digest, the shop's switches) is decided by
  :func:`app.approvals.may_approve.why_not_approvable`, and refused here with the
  first reason it gives;
* the proposal row is locked while it is approved, so two people clicking at
  once yield one action.

Callers commit, and only then enqueue the returned action.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass, replace
from datetime import datetime, timedelta
from typing import Protocol

from sqlalchemy import Uuid, and_, bindparam, select
from sqlalchemy.orm import Session

from app import audit
from app.actors import DRAFTER, WORKER, Actor, ActorKind, Surface, system_actor
from app.approvals.may_approve import (
    NEXT_STEP,
    Approver,
    Refusal,
    why_not_approvable,
    why_not_approver,
)
from app.cases.customer_link import explained, link_customer
from app.cases.digest import digest_of
from app.cases.lifecycle import move_case, move_proposal
from app.cases.models import Case, CaseStatus
from app.cases.proposals import Approval, Proposal, ProposalStatus
from app.cases.service import get_case
from app.errors import Conflict, Forbidden, NotFound
from app.execution.evaluation import Draft, Evaluation, evaluate_draft, line_item_rows
from app.execution.events import approval_expired
from app.execution.lifecycle import move_action
from app.execution.models import Action, ActionStatus
from app.execution.status import record_reason
from app.guard import Outcome, PolicyRules, Verdict, stored_verdict
from app.money import Money
from app.settings import Settings
from app.shops.models import Shop, ShopPolicy, StaffRole
from app.shops.service import (
    current_policy,
    is_newest_policy,
    policy_rules,
    require_role,
    staff_member,
)
from app.words import Code, Sentence, said
from integrations.provider import CustomerDirectory, ProviderAdapter


class ProposingAgent(Protocol):
    """What an outside agent's credential allows it to propose (its
    :class:`app.agents.models.AgentCredential`)."""

    @property
    def id(self) -> uuid.UUID: ...

    @property
    def allowed_kinds(self) -> list[str]: ...

    @property
    def ceiling(self) -> dict[str, int] | None: ...


@dataclass(frozen=True)
class ProposalResult:
    proposal: Proposal
    action: Action | None = None


def create_proposal(
    session: Session,
    *,
    shop: Shop,
    case: Case,
    actor: Actor,
    draft: Draft,
    adapter: ProviderAdapter,
    settings: Settings,
    now: datetime,
    agent: ProposingAgent | None = None,
) -> ProposalResult:
    # Caseward's own drafter proposes for the cases conversations open, and an agent
    # within what its credential allows; their proposals meet the same checks and wait
    # for the same approvals as anyone's.
    if actor.kind is ActorKind.AGENT:
        _require_agent_allows(actor, agent, draft)
    elif actor != DRAFTER:
        require_role(session, shop.id, actor, StaffRole.CAN_PROPOSE, said("propose actions"))
    proposal = Proposal(
        id=uuid.uuid4(), shop_id=shop.id, case_id=case.id, proposed_by=actor.ref, revision=1
    )
    return _apply(
        session,
        shop=shop,
        case=case,
        proposal=proposal,
        draft=draft,
        adapter=adapter,
        settings=settings,
        actor=actor,
        event="proposal.created",
        now=now,
    )


def revise_proposal(
    session: Session,
    *,
    shop: Shop,
    proposal_id: uuid.UUID,
    actor: Actor,
    draft: Draft,
    adapter: ProviderAdapter,
    settings: Settings,
    now: datetime,
) -> ProposalResult:
    """Edit a proposal: a new revision and digest, every earlier approval void."""
    require_role(session, shop.id, actor, StaffRole.CAN_PROPOSE, said("edit proposals"))
    proposal = _locked_proposal(session, shop.id, proposal_id)
    case = get_case(session, shop.id, proposal.case_id)
    action = _current_action(session, proposal)
    if action is not None:
        if action.status != ActionStatus.QUEUED:
            raise Conflict(
                said(
                    "the approved action is already %(status)s; it can no longer be edited. "
                    "Follow the action's status, and propose a new action if more is needed",
                    status=Code("action", action.status),
                ),
                code="already_executing",
            )
        # Approved but not yet sent: the worker will see the digest change and send nothing.
        _halt(session, action, said("the proposal was edited after approval"), actor, now)
    elif proposal.status not in ProposalStatus.OPEN:
        raise Conflict(
            said(
                "a proposal %(status)s cannot be edited; %(next_step)s",
                status=Code("proposal", proposal.status),
                next_step=NEXT_STEP[ProposalStatus(proposal.status)],
            ),
            code="proposal_closed",
        )
    _void_approvals(session, proposal, said("the proposal was edited"), now)
    proposal.revision += 1
    return _apply(
        session,
        shop=shop,
        case=case,
        proposal=proposal,
        draft=draft,
        adapter=adapter,
        settings=settings,
        actor=actor,
        event="proposal.revised",
        now=now,
    )


def approve_proposal(
    session: Session,
    *,
    shop: Shop,
    proposal_id: uuid.UUID,
    actor: Actor,
    digest: str,
    settings: Settings,
    now: datetime,
) -> ProposalResult:
    """Record one person's approval of ``digest``; the last one needed creates the action.

    The facts are not re-read here: the worker checks again against fresh provider
    data, under the target lock, right before the call, which is the check that counts.
    """
    approver = _approver(session, shop.id, actor)
    # Who may approve at all is answered before the proposal is read, as any role is.
    _refuse_with_first(why_not_approver(approver))
    proposal, case, policy = _locked_for_approval(session, shop.id, proposal_id)
    valid = _valid_approvals(session, proposal, now)
    _refuse_with_first(
        why_not_approvable(
            shop=shop,
            approver=approver,
            proposal=proposal,
            approvals=valid,
            policy_version=policy.version,
            now=now,
            reviewed_digest=digest,
        )
    )
    approval = _approval(session, proposal, digest, actor, settings, now)
    audit.record(
        session,
        shop_id=shop.id,
        kind="proposal.approved",
        actor=actor,
        case_id=case.id,
        data={"digest": digest, "revision": proposal.revision},
        now=now,
    )
    valid.append(approval)
    if len(valid) < proposal.approvals_required:
        return ProposalResult(proposal)
    action = _create_action(session, shop, case, proposal, valid, actor, now)
    return ProposalResult(proposal, action)


def reject_proposal(
    session: Session,
    *,
    shop: Shop,
    proposal_id: uuid.UUID,
    actor: Actor,
    reason: str,
    now: datetime,
) -> Proposal:
    require_role(session, shop.id, actor, StaffRole.CAN_APPROVE, said("reject actions"))
    proposal = _locked_proposal(session, shop.id, proposal_id)
    if proposal.status not in ProposalStatus.OPEN:
        raise Conflict(
            said(
                "the proposal is %(status)s; %(next_step)s",
                status=Code("proposal", proposal.status),
                next_step=NEXT_STEP[ProposalStatus(proposal.status)],
            ),
            code=f"proposal_{proposal.status}",
        )
    _void_approvals(session, proposal, said("the proposal was rejected"), now)
    proposal.rejection_reason = reason
    move_proposal(
        session, proposal, ProposalStatus.REJECTED, event="proposal.rejected", actor=actor, now=now
    )
    return proposal


@approval_expired.connect
def reopen_after_expiry(
    action: Action, *, session: Session, proposal: Proposal, now: datetime
) -> None:
    """The approval expired before its action was sent: nothing happened at the provider,
    so the proposal goes back for approval as a new revision (a new approval makes a new
    action, with a new idempotency key)."""
    _void_approvals(session, proposal, said("the approval expired before execution"), now)
    proposal.revision += 1
    move_proposal(
        session,
        proposal,
        ProposalStatus.AWAITING_APPROVAL,
        event="proposal.reopened",
        actor=WORKER,
        now=now,
        data={
            "reason": "the approval expired unsent",
            "expired_action_id": str(action.id),
            "revision": proposal.revision,
        },
    )


# ------------------------------------------------------------------ internals


def _approver(session: Session, shop_id: uuid.UUID, actor: Actor) -> Approver:
    """The actor as :mod:`app.approvals.may_approve` reads a person: staff with their
    membership's role and limits; anyone else with no role."""
    member = staff_member(session, shop_id, actor.id) if actor.kind is ActorKind.STAFF else None
    if member is None:
        return Approver(actor.ref, None, {})
    return Approver(actor.ref, member.role, member.approval_limits)


def _refuse_with_first(refusals: list[Refusal]) -> None:
    if refusals:
        raise refusals[0].error()


def _require_agent_allows(actor: Actor, agent: ProposingAgent | None, draft: Draft) -> None:
    """An agent proposes only with its own credential, only the kinds it allows, and
    only up to its ceiling in the draft's currency (no ceiling there: nothing)."""
    if agent is None or str(agent.id) != actor.id:
        raise Forbidden(
            said("%(actor)s may propose only with its own credential", actor=actor.ref),
            code="agent_not_allowed",
        )
    if draft.kind.value not in agent.allowed_kinds:
        raise Forbidden(
            said(
                "%(actor)s may not propose a %(kind)s; its credential allows %(allowed)s",
                actor=actor.ref,
                kind=Code("kind", draft.kind.value),
                allowed=", ".join(agent.allowed_kinds),
            ),
            code="agent_kind_not_allowed",
        )
    if agent.ceiling is None or draft.amount is None or draft.currency is None:
        return
    ceiling = int(agent.ceiling.get(draft.currency, 0))
    if draft.amount > ceiling:
        raise Forbidden(
            said(
                "%(actor)s may propose up to %(ceiling)s, not %(amount)s",
                actor=actor.ref,
                ceiling=Money(ceiling, draft.currency),
                amount=Money(draft.amount, draft.currency),
            ),
            code="over_agent_ceiling",
        )


def _apply(
    session: Session,
    *,
    shop: Shop,
    case: Case,
    proposal: Proposal,
    draft: Draft,
    adapter: ProviderAdapter,
    settings: Settings,
    actor: Actor,
    event: str,
    now: datetime,
) -> ProposalResult:
    """Check ``draft``, write it into ``proposal`` with its verdict and digest, record it,
    and let an explicit shop policy approve it when it says so."""
    evaluation = _evaluate(session, shop, case, proposal, draft, adapter, actor, now)
    verdict = evaluation.verdict
    proposal.kind = draft.kind.value
    proposal.provider = draft.provider
    proposal.target = draft.target
    # Bound to the case's customer, whoever the draft named: the digest covers it.
    proposal.customer_ref = evaluation.case_customer
    proposal.money_ref = evaluation.money_ref
    proposal.amount = draft.amount
    proposal.currency = draft.currency
    proposal.line_items = line_item_rows(draft.line_items)
    proposal.params = dict(draft.params)
    proposal.reason = draft.reason
    proposal.verdict = verdict.to_dict()
    proposal.guard_inputs = evaluation.inputs.to_dict()
    proposal.policy_version = verdict.policy_version
    proposal.approvals_required = verdict.approvals_required
    status = (
        ProposalStatus.BLOCKED
        if verdict.outcome == Outcome.BLOCKED
        else ProposalStatus.AWAITING_APPROVAL
    )
    proposal.digest = digest_of(proposal, proposal.policy_version)
    session.add(proposal)
    move_proposal(
        session,
        proposal,
        status,
        event=event,
        actor=actor,
        now=now,
        data=_proposal_audit(proposal, evaluation.verdict),
    )
    if status == ProposalStatus.AWAITING_APPROVAL:
        move_case(session, case, CaseStatus.AWAITING_APPROVAL, actor=actor, now=now)
    session.flush()  # the proposal written before an approval of it (no relationship orders them)
    return ProposalResult(
        proposal, _auto_approve(session, shop, case, proposal, settings, actor.surface, now)
    )


def _evaluate(
    session: Session,
    shop: Shop,
    case: Case,
    proposal: Proposal,
    draft: Draft,
    adapter: ProviderAdapter,
    actor: Actor,
    now: datetime,
) -> Evaluation:
    # Stripe and the merchant's own endpoint know the case's customer only by an id of
    # their own: learn it by their verified email before the checks bind the proposal to it.
    lookup = (
        link_customer(
            session,
            case=case,
            provider=draft.provider,
            directory=adapter,
            actor=actor,
            now=now,
        )
        if isinstance(adapter, CustomerDirectory)
        else None
    )
    evaluation = evaluate_draft(
        session,
        shop=shop,
        case=case,
        draft=draft,
        proposed_by=proposal.proposed_by,
        policy=current_policy(session, shop.id),
        adapter=adapter,
        now=now,
    )
    if lookup is None:
        return evaluation
    return replace(evaluation, verdict=explained(evaluation.verdict, lookup))


def _auto_approve(
    session: Session,
    shop: Shop,
    case: Case,
    proposal: Proposal,
    settings: Settings,
    surface: Surface,
    now: datetime,
) -> Action | None:
    """An explicit shop policy may approve small actions itself; by default it never does."""
    if proposal.status != ProposalStatus.AWAITING_APPROVAL:
        return None
    stored = stored_verdict(proposal.verdict)
    if stored is None or stored.outcome != Outcome.ALLOWED_BY_POLICY:
        return None
    # The policy version that allowed it is the approver, on the proposer's surface.
    approver = system_actor(f"policy:v{proposal.policy_version}", surface)
    approval = _approval(session, proposal, proposal.digest, approver, settings, now)
    return _create_action(session, shop, case, proposal, [approval], approver, now)


def _approval(
    session: Session,
    proposal: Proposal,
    digest: str,
    approver: Actor,
    settings: Settings,
    now: datetime,
) -> Approval:
    approval = Approval(
        shop_id=proposal.shop_id,
        proposal_id=proposal.id,
        digest=digest,
        approver=approver.ref,
        created_at=now,
        expires_at=now + timedelta(seconds=settings.approval_ttl_seconds),
    )
    session.add(approval)
    return approval


def _create_action(
    session: Session,
    shop: Shop,
    case: Case,
    proposal: Proposal,
    approvals: list[Approval],
    approver: Actor,
    now: datetime,
) -> Action:
    """The one action the approvals allow; ``approver`` gave the last of them."""
    action_id = uuid.uuid4()
    action = Action(
        id=action_id,
        shop_id=shop.id,
        case_id=case.id,
        proposal_id=proposal.id,
        proposal_revision=proposal.revision,
        digest=proposal.digest,
        kind=proposal.kind,
        provider=proposal.provider,
        target=proposal.target,
        customer_ref=proposal.customer_ref,
        amount=proposal.amount,
        currency=proposal.currency,
        line_items=list(proposal.line_items),
        params=dict(proposal.params),
        money_ref=proposal.money_ref,
        # Derived from the action alone and stored now, before any call: every send of
        # this action, by any worker, after any crash, uses this key and no other.
        idempotency_key=f"caseward-action-{action_id}",
        status=ActionStatus.QUEUED,
        approved_by=[approval.approver for approval in approvals],
        approval_expires_at=min(approval.expires_at for approval in approvals),
        created_at=now,
        updated_at=now,
    )
    session.add(action)
    # Written with the action at commit: the approval just given is inserted already
    # consumed, so only earlier approvals (two-person amounts) take an update.
    for approval in approvals:
        approval.consumed_by_action = action.id
    move_proposal(
        session,
        proposal,
        ProposalStatus.APPROVED,
        event="proposal.status_changed",
        actor=approver,
        now=now,
        data={"action_id": str(action.id)},
    )
    move_case(session, case, CaseStatus.EXECUTING, actor=approver, now=now, action=action)
    audit.record(
        session,
        shop_id=shop.id,
        kind="action.queued",
        actor=approver,
        case_id=case.id,
        action_id=action.id,
        data={
            "digest": action.digest,
            "approved_by": action.approved_by,
            "idempotency_key": action.idempotency_key,
            "kind": action.kind,
            "target": action.target,
            "amount": action.amount,
            "currency": action.currency,
        },
        now=now,
    )
    return action


def _valid_approvals(session: Session, proposal: Proposal, now: datetime) -> list[Approval]:
    params = {"proposal_id": proposal.id, "digest": proposal.digest, "now": now}
    return list(session.scalars(_VALID_APPROVALS, params))


# Built once, at import, as every approval runs it; the proposal's parameter is typed by
# hand, as in _LOCKED_FOR_APPROVAL.
_VALID_APPROVALS = select(Approval).where(
    Approval.proposal_id == bindparam("proposal_id", type_=Uuid),
    Approval.digest == bindparam("digest"),
    Approval.voided_at.is_(None),
    Approval.consumed_by_action.is_(None),
    Approval.expires_at > bindparam("now"),
)


def _void_approvals(session: Session, proposal: Proposal, reason: Sentence, now: datetime) -> None:
    for approval in session.scalars(
        select(Approval).where(
            Approval.proposal_id == proposal.id,
            Approval.voided_at.is_(None),
        )
    ):
        approval.voided_at = now
        approval.void_reason = str(reason)
        approval.void_sentence = reason.to_dict()


def _halt(session: Session, action: Action, reason: Sentence, actor: Actor, now: datetime) -> None:
    data = record_reason(action, reason)
    move_action(
        session, action, ActionStatus.HALTED, event="action.halted", actor=actor, now=now, data=data
    )


def _locked_proposal(session: Session, shop_id: uuid.UUID, proposal_id: uuid.UUID) -> Proposal:
    proposal = session.scalars(
        select(Proposal)
        .where(Proposal.id == proposal_id, Proposal.shop_id == shop_id)
        .with_for_update()
    ).one_or_none()
    if proposal is None:
        raise NotFound(said("proposal not found"))
    return proposal


# Built once, at import, as the worker's locked read is (app.execution.executor), with
# its parameters typed by hand for the same reason.
_LOCKED_FOR_APPROVAL = (
    select(Proposal, Case, ShopPolicy)
    .join(Case, and_(Case.id == Proposal.case_id, Case.shop_id == Proposal.shop_id))
    .outerjoin(ShopPolicy, is_newest_policy(Proposal.shop_id))
    .where(
        Proposal.id == bindparam("proposal_id", type_=Uuid),
        Proposal.shop_id == bindparam("shop_id", type_=Uuid),
    )
    .with_for_update(of=Proposal)
)


def _locked_for_approval(
    session: Session, shop_id: uuid.UUID, proposal_id: uuid.UUID
) -> tuple[Proposal, Case, PolicyRules]:
    """The proposal, row-locked, with its case and the shop's newest policy, in one round
    trip. The case and policy are read as the statement began, not after any wait for the
    lock: whoever holds the proposal's lock and moves its case changes the proposal too,
    which the digest and status checks then refuse."""
    row = session.execute(
        _LOCKED_FOR_APPROVAL, {"proposal_id": proposal_id, "shop_id": shop_id}
    ).first()
    if row is None:
        raise NotFound(said("proposal not found"))
    proposal, case, policy = row
    return proposal, case, policy_rules(policy)


def _current_action(session: Session, proposal: Proposal) -> Action | None:
    """The revision's action, row-locked: a worker may be about to send it."""
    return session.scalars(
        select(Action)
        .where(Action.proposal_id == proposal.id, Action.proposal_revision == proposal.revision)
        .with_for_update()
    ).one_or_none()


def _proposal_audit(proposal: Proposal, verdict: Verdict) -> dict[str, object]:
    return {
        "proposal_id": str(proposal.id),
        "revision": proposal.revision,
        "digest": proposal.digest,
        "kind": proposal.kind,
        "target": proposal.target,
        "amount": proposal.amount,
        "currency": proposal.currency,
        "line_items": proposal.line_items,
        "params": proposal.params,
        "verdict": verdict.to_dict(),
    }
