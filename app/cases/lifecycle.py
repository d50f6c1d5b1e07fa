"""Status changes of proposals and cases: one table each, one function each.

Every change of a ``Proposal`` or ``Case`` status goes through :func:`move_proposal` or
:func:`move_case`, as every change of an action's goes through
:func:`app.execution.lifecycle.move_action`. Each checks the change against its table,
applies it and writes its audit event in the caller's transaction, so no status moves
without being allowed and evidenced. A change the table does not list is a bug in the
caller and raises :class:`IllegalTransition`.

Statuses are stored as plain strings; they become enums here, at the boundary.
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping
from datetime import datetime
from typing import Protocol

from sqlalchemy.orm import Session

from app import audit
from app.actors import Actor
from app.cases.models import Case, CaseStatus
from app.cases.proposals import Proposal, ProposalStatus
from app.words import Sentence

P = ProposalStatus
PROPOSAL_MOVES: Mapping[ProposalStatus | None, frozenset[ProposalStatus]] = {
    # None: a new proposal, checked for the first time.
    None: frozenset({P.BLOCKED, P.AWAITING_APPROVAL}),
    P.BLOCKED: frozenset({P.BLOCKED, P.AWAITING_APPROVAL, P.REJECTED}),
    P.AWAITING_APPROVAL: frozenset({P.BLOCKED, P.AWAITING_APPROVAL, P.APPROVED, P.REJECTED}),
    # Back to review: edited before its action was sent, or its approval expired unsent.
    P.APPROVED: frozenset({P.BLOCKED, P.AWAITING_APPROVAL}),
    P.REJECTED: frozenset(),
}

C = CaseStatus
CASE_MOVES: Mapping[CaseStatus, frozenset[CaseStatus]] = {
    C.OPEN: frozenset({C.AWAITING_APPROVAL, C.EXECUTING, C.NEEDS_ATTENTION}),
    C.AWAITING_APPROVAL: frozenset({C.EXECUTING, C.NEEDS_ATTENTION}),
    C.EXECUTING: frozenset({C.AWAITING_APPROVAL, C.RESOLVED, C.NEEDS_ATTENTION}),
    # A person took it up: approved again, or the provider's status moved on.
    C.NEEDS_ATTENTION: frozenset({C.AWAITING_APPROVAL, C.EXECUTING, C.RESOLVED, C.NEEDS_ATTENTION}),
    # A refund that succeeded can still fail days later.
    C.RESOLVED: frozenset({C.AWAITING_APPROVAL, C.EXECUTING, C.NEEDS_ATTENTION}),
}


class IllegalTransition(RuntimeError):
    """A status change its table does not allow: a bug in the code that asked for it."""


class ActionOnCase(Protocol):
    """The action a case moved for, as its audit event names it."""

    @property
    def id(self) -> uuid.UUID: ...

    @property
    def status(self) -> str: ...


def move_proposal(
    session: Session,
    proposal: Proposal,
    to: ProposalStatus,
    *,
    event: str,
    actor: Actor,
    now: datetime,
    data: Mapping[str, object] | None = None,
) -> None:
    """Move ``proposal`` to ``to`` (or give a new one its first status) and record it."""
    current = ProposalStatus(proposal.status) if proposal.status else None
    if to not in PROPOSAL_MOVES[current]:
        raise IllegalTransition(f"proposal {proposal.id}: {current} -> {to} is not allowed")
    proposal.status = to
    audit.record(
        session,
        shop_id=proposal.shop_id,
        kind=event,
        actor=actor,
        case_id=proposal.case_id,
        data={
            **(data or {}),
            "proposal_id": str(proposal.id),
            "previous": current.value if current else None,
            "status": to.value,
        },
        now=now,
    )


def move_case(
    session: Session,
    case: Case,
    to: CaseStatus,
    *,
    actor: Actor,
    now: datetime,
    owner: str | None = None,
    reason: Sentence | None = None,
    action: ActionOnCase | None = None,
) -> None:
    """Move ``case`` to ``to``; ``needs_attention`` always names its ``owner``.

    Staying where it is records nothing, except for ``needs_attention``, whose owner
    and reason may change with each new problem.
    """
    current = CaseStatus(case.status)
    if to == current and to != CaseStatus.NEEDS_ATTENTION:
        return
    if to not in CASE_MOVES[current]:
        raise IllegalTransition(f"case {case.id}: {current} -> {to} is not allowed")
    if to == CaseStatus.NEEDS_ATTENTION and not owner:
        raise IllegalTransition(f"case {case.id}: needs_attention needs a named owner")
    case.status = to
    if owner is not None:
        case.owner = owner
    data: dict[str, object] = {"previous": current.value, "status": to.value}
    if to == CaseStatus.NEEDS_ATTENTION:
        data.update(owner=owner, reason=None if reason is None else str(reason))
        if reason is not None:
            data["said"] = reason.to_dict()
    if action is not None:
        data["action_status"] = action.status
    audit.record(
        session,
        shop_id=case.shop_id,
        kind="case.needs_attention" if to == CaseStatus.NEEDS_ATTENTION else "case.status_changed",
        actor=actor,
        case_id=case.id,
        action_id=action.id if action is not None else None,
        data=data,
        now=now,
    )
