"""Execute one approved action exactly once, and settle unclear outcomes.

The sequence for a queued action (see ARCHITECTURE.md):

1. In one transaction: lock the action and the target, refuse to send if the
   shop's switches, the approval's expiry, or the digest under today's policy say
   so, re-run the checks on fresh provider facts, then mark it ``submitting``
   with an attempt row. The idempotency key was stored when the action was made.
2. Outside any transaction: one provider call with that key.
3. In a new transaction: record what the provider answered, or ``unknown``.

An ``unknown`` action is looked up at the provider (:func:`reconcile_action`) and
only resent, with the same key and parameters, when the provider shows nothing
and the key is still alive. Nothing here ever makes a second key.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta

from sqlalchemy import func, select
from sqlalchemy.orm import Session, sessionmaker

from app import audit
from app.approvals.digest import digest_of
from app.approvals.models import Proposal
from app.cases.models import Case
from app.db import locked_row
from app.evaluation import Draft, evaluate_draft, line_item_refs
from app.execution.models import Action, ActionAttempt, ActionStatus, TargetLock
from app.execution.providers import AdapterFactory
from app.execution.status import apply_provider_answer, mark_unknown, send_back_for_review
from app.guard import IdentityLevel
from app.settings import Settings
from app.shops.service import current_policy, get_shop
from integrations.provider import (
    ACTION_ID_METADATA_KEY,
    ActionKind,
    ActionRequest,
    CustomerFacts,
    IdempotencyConflict,
    OutcomeUnknown,
    PaymentFacts,
    ProviderAdapter,
    ProviderAnswer,
    ProviderError,
    ProviderRejected,
    ProviderStatus,
    TargetFacts,
)

SYSTEM_ACTOR = "caseward:worker"


@dataclass(frozen=True)
class ExecutionContext:
    """What an execution needs from the outside: storage, providers, settings, time."""

    session_factory: sessionmaker[Session]
    adapters: AdapterFactory
    settings: Settings
    clock: Callable[[], datetime]


def execute_action(ctx: ExecutionContext, action_id: uuid.UUID) -> str:
    """Run a queued action; returns its status afterwards. Safe to call any number of times."""
    with ctx.session_factory() as session, session.begin():
        action = _locked_action(session, action_id)
        if action is None or action.status != ActionStatus.QUEUED:
            return action.status if action is not None else "missing"
        prepared = _prepare_send(ctx, session, action, purpose="submit")
        if prepared is None:
            return action.status
        request = action_request(action)
    return _send(ctx, action_id, request, *prepared)


def reconcile_action(ctx: ExecutionContext, action_id: uuid.UUID) -> str:
    """Find an ``unknown`` action's effect at the provider; resend only if there is none."""
    now = ctx.clock()
    with ctx.session_factory() as session, session.begin():
        action = _locked_action(session, action_id)
        if action is None or action.status != ActionStatus.UNKNOWN:
            return action.status if action is not None else "missing"
        request = action_request(action)
        adapter = ctx.adapters(session, action.shop_id, action.provider)
        number = _next_attempt_number(session, action.id)
        attempt = ActionAttempt(
            action_id=action.id,
            number=number,
            purpose="find",
            idempotency_key=action.idempotency_key,
            started_at=now,
        )
        session.add(attempt)
        action.checks_made += 1
        try:
            found = adapter.find(request)
        except ProviderError as exc:
            attempt.finished_at, attempt.outcome, attempt.detail = ctx.clock(), "error", str(exc)
            action.next_check_at = now + _backoff(ctx.settings, action.checks_made)
            return action.status
        attempt.finished_at = ctx.clock()
        if found is not None:
            attempt.outcome = "found"
            attempt.provider_ref, attempt.provider_status = found.reference, found.status
            apply_provider_answer(session, action, found, source="reconciliation", now=now)
            return action.status
        attempt.outcome = "absent"
        first_sent = action.first_sent_at or action.created_at
        key_age = now - first_sent
        if key_age > timedelta(seconds=ctx.settings.idempotency_key_lifetime_seconds):
            action.status = ActionStatus.NEEDS_DECISION
            action.status_reason = (
                "the provider shows no effect and the idempotency key has expired: "
                "resending could duplicate the action, so a person decides"
            )
            send_back_for_review(session, action, action.status_reason, now)
            return action.status
        action.status = ActionStatus.QUEUED
        prepared = _prepare_send(ctx, session, action, purpose="resubmit")
        if prepared is None:
            return action.status
    return _send(ctx, action_id, request, *prepared)


def refresh_action(ctx: ExecutionContext, action_id: uuid.UUID) -> str:
    """Ask the provider for the action's current state and record it (after a webhook, or
    when the sweeper finds a status pending for a while)."""
    now = ctx.clock()
    with ctx.session_factory() as session, session.begin():
        action = _locked_action(session, action_id)
        if action is None:
            return "missing"
        if action.status not in _REFRESHABLE:
            return action.status
        adapter = ctx.adapters(session, action.shop_id, action.provider)
        found = adapter.find(action_request(action))
        if found is not None:
            apply_provider_answer(session, action, found, source="refresh", now=now)
        return action.status


# Sent (or possibly sent) actions whose provider state may still move.
_REFRESHABLE = (
    ActionStatus.SUBMITTING,
    ActionStatus.UNKNOWN,
    ActionStatus.NEEDS_DECISION,
    *ActionStatus.PROVIDER_OPEN,
)


def action_request(action: Action) -> ActionRequest:
    """The one request for this action; the same on every send."""
    params: dict[str, object] = dict(action.params)
    if action.line_items:
        params["line_items"] = list(action.line_items)
    return ActionRequest(
        action_id=str(action.id),
        kind=ActionKind(action.kind),
        target=action.target,
        idempotency_key=action.idempotency_key,
        amount=action.amount,
        currency=action.currency,
        params=params,
        metadata={ACTION_ID_METADATA_KEY: str(action.id)},
    )


# ------------------------------------------------------------------ internals


def _prepare_send(
    ctx: ExecutionContext, session: Session, action: Action, *, purpose: str
) -> tuple[ProviderAdapter, int] | None:
    """Decide, under the target lock, whether the action may go out; mark it submitting.

    Returns the adapter to send with and the attempt number, or None when it must not go.
    """
    now = ctx.clock()
    locked_row(
        session, TargetLock, shop_id=action.shop_id, provider=action.provider, target=action.target
    )
    shop = get_shop(session, action.shop_id)
    proposal = session.get(Proposal, action.proposal_id)
    policy = current_policy(session, shop.id)
    adapter: ProviderAdapter | None = None
    stop_reason: str | None = None
    # Not sending now means "never sent" only on the first send; after an unclear first
    # send the earlier request may still land, so a person decides and refreshes continue.
    stopped = ActionStatus.HALTED if purpose == "submit" else ActionStatus.NEEDS_DECISION
    if shop.kill_switch:
        stop_reason = "the shop's kill switch is on"
    elif not shop.writes_enabled:
        stop_reason = "the shop is in protection mode (read-only)"
    elif now > action.approval_expires_at:
        stop_reason = "the approval expired before the action was executed"
        if purpose == "submit":
            stopped = ActionStatus.EXPIRED
    elif proposal is None or digest_of(proposal, policy.version) != action.digest:
        stop_reason = "the proposal or the shop's policy changed after approval"
    if stop_reason is None:
        case = session.get(Case, action.case_id)
        assert case is not None and proposal is not None
        adapter = ctx.adapters(session, action.shop_id, action.provider)
        evaluation = evaluate_draft(
            session,
            shop=shop,
            draft=_draft(action),
            identity_level=IdentityLevel(case.identity_level),
            proposed_by=proposal.proposed_by,
            policy=policy,
            adapter=adapter,
            now=now,
            own_action_id=action.id,
        )
        landed = _own_write(evaluation.facts, str(action.id))
        if landed is not None:
            # Our earlier send did land after all (a slow commit): record it, send nothing.
            apply_provider_answer(session, action, landed, source="re-check", now=now)
            return None
        if evaluation.verdict.outcome == "blocked":
            failing = [c.reason for c in evaluation.verdict.checks if not c.passed]
            stop_reason = "checks at execution: " + "; ".join(failing)
    if stop_reason is not None or adapter is None:
        action.status = stopped
        action.status_reason = stop_reason
        send_back_for_review(session, action, stop_reason or "not sent", now)
        return None
    number = _next_attempt_number(session, action.id)
    session.add(
        ActionAttempt(
            action_id=action.id,
            number=number,
            purpose=purpose,
            idempotency_key=action.idempotency_key,
            started_at=now,
        )
    )
    action.status = ActionStatus.SUBMITTING
    action.first_sent_at = action.first_sent_at or now
    action.submitted_at = now
    audit.record(
        session,
        shop_id=action.shop_id,
        kind=f"action.{purpose}",
        actor=SYSTEM_ACTOR,
        case_id=action.case_id,
        action_id=action.id,
        data={"attempt": number, "idempotency_key": action.idempotency_key},
        now=now,
    )
    return adapter, number


def _send(
    ctx: ExecutionContext,
    action_id: uuid.UUID,
    request: ActionRequest,
    adapter: ProviderAdapter,
    attempt_number: int,
) -> str:
    """The one provider call, outside any transaction, then its recording."""
    answer: ProviderAnswer | None = None
    error: Exception | None = None
    try:
        answer = adapter.submit(request)
    except (ProviderError, ValueError) as exc:
        # ValueError: the adapter refused to build the request, so nothing left this time.
        error = exc
    with ctx.session_factory() as session, session.begin():
        return _record(ctx, session, action_id, attempt_number, answer, error)


def _record(
    ctx: ExecutionContext,
    session: Session,
    action_id: uuid.UUID,
    attempt_number: int,
    answer: ProviderAnswer | None,
    error: Exception | None,
) -> str:
    now = ctx.clock()
    action = _locked_action(session, action_id)
    assert action is not None
    attempt = session.scalars(
        select(ActionAttempt).where(
            ActionAttempt.action_id == action_id, ActionAttempt.number == attempt_number
        )
    ).one()
    attempt.finished_at = now
    if answer is not None:
        attempt.outcome = "answered"
        attempt.provider_ref, attempt.provider_status = answer.reference, answer.status
        apply_provider_answer(session, action, answer, source="submit", now=now)
        return action.status
    assert error is not None
    attempt.detail = f"{type(error).__name__}: {error}"
    if isinstance(error, OutcomeUnknown):
        attempt.outcome = "unknown"
        if action.status in (ActionStatus.SUBMITTING, ActionStatus.UNKNOWN):
            next_check_at = now + _backoff(ctx.settings, action.checks_made)
            mark_unknown(session, action, str(error), next_check_at=next_check_at, now=now)
        return action.status
    attempt.outcome = "rejected"
    if isinstance(error, ProviderRejected):
        # Stripe ran this key afresh and said no: the request did nothing there, ever.
        action.status = ActionStatus.REJECTED
        reason = f"the provider refused the action: {error}"
    elif isinstance(error, IdempotencyConflict) or attempt.purpose != "submit":
        # An earlier send of this action may still land: a person decides.
        action.status = ActionStatus.NEEDS_DECISION
        reason = f"the action could not be sent again: {error}"
    else:
        action.status = ActionStatus.HALTED
        reason = f"the action was not sent: {error}"
    action.status_reason = str(error)
    send_back_for_review(session, action, reason, now)
    return action.status


def _own_write(facts: TargetFacts, action_id: str) -> ProviderAnswer | None:
    """This action's own effect among fresh provider facts, recognised by our metadata."""
    ours = ACTION_ID_METADATA_KEY
    if isinstance(facts, PaymentFacts):
        for refund in facts.refunds:
            if refund.metadata.get(ours) == action_id:
                return ProviderAnswer(
                    refund.id, refund.status, {}, failure_reason=refund.failure_reason
                )
    elif isinstance(facts, CustomerFacts):
        matches = [c.id for c in facts.credits if c.metadata.get(ours) == action_id]
        matches += [d.id for d in facts.discounts if d.metadata.get(ours) == action_id]
        if matches:
            return ProviderAnswer(matches[0], ProviderStatus.SUCCEEDED, {})
    elif facts.metadata.get(ours) == action_id:
        return ProviderAnswer(facts.id, ProviderStatus.SUCCEEDED, {})
    return None


def _backoff(settings: Settings, checks_made: int) -> timedelta:
    delay = settings.reconcile_delay_seconds * (2 ** min(checks_made, 16))
    return timedelta(seconds=min(delay, settings.reconcile_max_delay_seconds))


def _draft(action: Action) -> Draft:
    return Draft(
        kind=ActionKind(action.kind),
        provider=action.provider,
        target=action.target,
        customer_ref=action.customer_ref,
        amount=action.amount,
        currency=action.currency,
        line_items=line_item_refs(action.line_items),
        params=dict(action.params),
        reason=None,
    )


def _locked_action(session: Session, action_id: uuid.UUID) -> Action | None:
    return session.scalars(
        select(Action).where(Action.id == action_id).with_for_update()
    ).one_or_none()


def _next_attempt_number(session: Session, action_id: uuid.UUID) -> int:
    current = session.scalar(
        select(func.max(ActionAttempt.number)).where(ActionAttempt.action_id == action_id)
    )
    return (current or 0) + 1
