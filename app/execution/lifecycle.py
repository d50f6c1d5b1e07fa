"""Status changes of actions: one table, one function.

Every change of an ``Action`` status goes through :func:`move_action`, which checks it
against :data:`ACTION_MOVES`, applies it and writes its audit event in the caller's
transaction. A change the table does not list is a bug in the caller and raises
:class:`app.cases.lifecycle.IllegalTransition`, except a provider report that would
move an action backwards, which is expected (webhooks and look-ups arrive in any order):
:func:`provider_report_applies` says whether to record it, and the caller audits it as
ignored.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime

from sqlalchemy.orm import Session

from app import audit
from app.actors import Actor
from app.cases.lifecycle import IllegalTransition
from app.execution.models import Action, ActionStatus

A = ActionStatus
_PROVIDER = frozenset({A.PENDING, A.REQUIRES_ACTION, A.SUCCEEDED, A.FAILED, A.CANCELED})

# Which action statuses may follow which. Ours first, then the provider's, which only
# move forward: a refund may fail days after it succeeded, never succeed after failing.
ACTION_MOVES: Mapping[ActionStatus, frozenset[ActionStatus]] = {
    # A re-check may find the action's own write already landed (a provider status).
    A.QUEUED: frozenset({A.SUBMITTING, A.HALTED, A.EXPIRED, A.CANNOT_RUN}) | _PROVIDER,
    # Nothing reached the provider (refused connection, 429): queued again, same key.
    A.SUBMITTING: frozenset(
        {A.QUEUED, A.UNKNOWN, A.REJECTED, A.NEEDS_DECISION, A.HALTED, A.CANNOT_RUN}
    )
    | _PROVIDER,
    # Found, absent and resent, or stopped: the first send may still land, so a stop
    # after an unclear send is a person's decision, never "not sent".
    A.UNKNOWN: frozenset({A.UNKNOWN, A.SUBMITTING, A.NEEDS_DECISION, A.REJECTED}) | _PROVIDER,
    A.NEEDS_DECISION: _PROVIDER,
    A.PENDING: frozenset({A.REQUIRES_ACTION, A.SUCCEEDED, A.FAILED, A.CANCELED}),
    A.REQUIRES_ACTION: frozenset({A.PENDING, A.SUCCEEDED, A.FAILED, A.CANCELED}),
    A.SUCCEEDED: frozenset({A.FAILED}),
    A.FAILED: frozenset(),
    A.CANCELED: frozenset(),
    A.HALTED: frozenset(),
    A.EXPIRED: frozenset(),
    A.REJECTED: frozenset(),
    A.CANNOT_RUN: frozenset(),
}


def provider_report_applies(current: str, reported: str) -> bool:
    """Whether a provider's report moves the action on (False: stale, keep what we have)."""
    return ActionStatus(reported) in ACTION_MOVES[ActionStatus(current)]


def move_action(
    session: Session,
    action: Action,
    to: ActionStatus,
    *,
    event: str,
    actor: Actor,
    now: datetime,
    data: Mapping[str, object] | None = None,
) -> None:
    """Move ``action`` to ``to`` and record ``event`` with the previous and new status."""
    current = ActionStatus(action.status)
    if to not in ACTION_MOVES[current]:
        raise IllegalTransition(f"action {action.id}: {current} -> {to} is not allowed")
    action.status = to
    audit.record(
        session,
        shop_id=action.shop_id,
        kind=event,
        actor=actor,
        case_id=action.case_id,
        action_id=action.id,
        data={**(data or {}), "previous": current.value, "status": to.value},
        now=now,
    )
