"""Execute one approved action exactly once, and settle unclear outcomes.

The sequence for a queued action (see ARCHITECTURE.md):

1. In one transaction: lock the action (read in one round trip with its shop,
   proposal, case, the case's customer, the shop's connection to the provider,
   which the adapter is built from, and the shop's brakes) and the target, refuse to
   send if the shop's switches, the approval's expiry, or the digest under today's
   policy say so, hold it (nothing sent, nothing changed) while the shop's brake holds,
   re-run the checks on fresh provider facts, hold it if its send would pass one of the
   shop's ceilings (:mod:`app.execution.brakes`), then mark it ``submitting`` with an
   attempt row. The idempotency key was stored when the action was made.
2. Outside any transaction: one provider call with that key.
3. In a new transaction: lock the action again (read with its case and shop only)
   and record what the provider answered, or ``unknown``, on the action and on the
   attempt row of step 1 (gone, the job fails and keeps nothing: the action stays
   ``submitting`` until the sweep has it looked up); the shop's breaker counts it.
   A request that never reached the provider (a refused connection) or that it
   turned away unprocessed (429) is queued again at once, or after the provider's
   ``Retry-After``, with the same key: no reconciliation delay, nothing to look up.
   A job that arrives before that time sends nothing and asks to run when it is due.

A job that cannot run (the shop's connection is gone, the adapter refuses to
build, the provider no longer knows the shop's key) ends its action as
``cannot_run``, in front of a person, instead of being queued again at every sweep.
Any other error fails the job and is never read as "nothing was sent": the action keeps
its status (``submitting`` once marked) and the sweeper looks it up.
An approval that expired unsent sends the proposal back for approval: a new approval
makes a new action with a new key.

An ``unknown`` action is looked up at the provider (:func:`reconcile_action`) and
only resent, with the same key and parameters, when the provider shows nothing
and the key is still alive. Nothing here ever makes a second key.
"""

from __future__ import annotations

import logging
import random
import uuid
from collections.abc import Callable
from dataclasses import asdict, dataclass, fields
from datetime import datetime, timedelta
from typing import Any, cast

from sqlalchemy import CursorResult, Table, Uuid, and_, bindparam, select, update
from sqlalchemy.orm import Session

from app.actors import WORKER
from app.cases.digest import digest_of
from app.cases.models import Case, Customer
from app.cases.proposals import Proposal
from app.connections.adapters import AdapterFactory
from app.connections.models import Connection
from app.db import locked_row
from app.errors import CasewardError
from app.execution import brakes
from app.execution.evaluation import Draft, evaluate_draft
from app.execution.events import announce, approval_expired
from app.execution.ledger import line_item_refs
from app.execution.lifecycle import ACTION_MOVES, move_action
from app.execution.models import Action, ActionAttempt, ActionStatus, ShopBrakes, TargetLock
from app.execution.status import (
    apply_provider_answer,
    escalate,
    mark_unknown,
    record_reason,
    stop_action,
)
from app.guard import Outcome, PolicyRules
from app.jobs.context import WorkerContext
from app.shops.models import Shop, ShopPolicy
from app.shops.service import is_newest_policy, policy_rules
from app.shops.switches import WriteStop, writes_stopped
from app.words import Sentence, joined, said
from integrations.provider import (
    ACTION_ID_METADATA_KEY,
    ActionKind,
    ActionRequest,
    CredentialsRefused,
    CustomerFacts,
    IdempotencyConflict,
    InvalidRequest,
    NotSent,
    OutcomeUnknown,
    PaymentFacts,
    ProviderAdapter,
    ProviderAnswer,
    ProviderError,
    ProviderRejected,
    ProviderStatus,
    TargetFacts,
    Throttled,
)

log = logging.getLogger(__name__)

# A job that cannot run: no connection, refused credentials (when the adapter is built or
# at the fresh read), an adapter that refuses to build the request. Any other error fails
# the job, so a bug is never recorded as "nothing was sent".
_CANNOT_RUN = (CasewardError, CredentialsRefused, InvalidRequest)
# Pauses before resending a request that never reached the provider, when it gave no
# Retry-After: short, since nothing is in doubt, but not a hot loop against an outage.
_UNSENT_FIRST_PAUSE = 0.5
_UNSENT_MAX_PAUSE = 60.0


@dataclass(frozen=True)
class ExecutionContext(WorkerContext):
    """What an execution needs from the outside: storage, settings and time (a worker's),
    and the providers."""

    adapters: AdapterFactory
    # Puts the action's execution back on the queue after a delay (seconds); without
    # it the sweeper picks the action up once its ``next_check_at`` is due.
    resend_later: Callable[[uuid.UUID, float], None] | None = None
    # 0 <= jitter() < 1 spreads look-ups of unclear outcomes; tests pin it.
    jitter: Callable[[], float] = random.random


def execute_action(ctx: ExecutionContext, action_id: uuid.UUID) -> str:
    """Run a queued action; returns its status afterwards. Safe to call any number of times."""
    with ctx.session_factory() as session, session.begin():
        locked = _locked_action(session, action_id)
        if locked is None or locked.action.status != ActionStatus.QUEUED:
            return locked.action.status if locked is not None else "missing"
        action = locked.action
        early = _seconds_early(ctx, action)
        prepared = None if early else _prepare_send(ctx, session, locked, purpose="submit")
        status, request = action.status, action_request(action)
    if early is not None:
        # Here before the resend's time (Retry-After): ask again when it is due, rather
        # than leave the action waiting for the sweeper.
        _resend_later(ctx, action_id, early)
        return status
    if prepared is None:
        return status
    if isinstance(prepared, float):
        _resend_later(ctx, action_id, prepared)
        return status
    return _send(ctx, action_id, request, *prepared)


def reconcile_action(ctx: ExecutionContext, action_id: uuid.UUID) -> str:
    """Find an ``unknown`` action's effect at the provider; resend only if there is none."""
    with ctx.session_factory() as session, session.begin():
        locked = _locked_action(session, action_id)
        if locked is None or locked.action.status != ActionStatus.UNKNOWN:
            return locked.action.status if locked is not None else "missing"
        action = locked.action
        request = action_request(action)
        if not _absent_and_resendable(ctx, session, locked, request):
            return action.status
        prepared = _prepare_send(ctx, session, locked, purpose="resubmit")
        if not isinstance(prepared, tuple):
            return action.status
    return _send(ctx, action_id, request, *prepared)


def _absent_and_resendable(
    ctx: ExecutionContext, session: Session, locked: _Locked, request: ActionRequest
) -> bool:
    """Look the action up; record what was found. True only when the provider shows no
    effect and the key is still alive, so the same request may go out again."""
    now = ctx.clock()
    action = locked.action
    try:
        adapter = _adapter(ctx, session, locked)
    except _CANNOT_RUN as exc:
        reason = said("cannot look it up: %(error)s", error=str(exc))
        _stop(session, action, ActionStatus.NEEDS_DECISION, reason, now)
        return False
    attempt = _new_attempt(session, action, "find", now)
    action.checks_made += 1
    try:
        found = adapter.find(request)
    except ProviderError as exc:
        attempt.finished_at, attempt.outcome, attempt.detail = ctx.clock(), "error", str(exc)
        action.next_check_at = now + _backoff(ctx, action.checks_made)
        if _lookups_keep_failing(session, action, ctx.settings.lookup_failures_attention):
            failing = said("look-ups at the provider keep failing: %(error)s", error=str(exc))
            escalate(session, action, failing, now)
        return False
    attempt.finished_at = ctx.clock()
    if found is not None:
        attempt.outcome = "found"
        attempt.provider_ref, attempt.provider_status = found.reference, found.status
        apply_provider_answer(session, action, found, source="reconciliation", now=now)
        return False
    attempt.outcome = "absent"
    key_age = now - (action.first_sent_at or action.created_at)
    if key_age > timedelta(seconds=ctx.settings.idempotency_key_lifetime_seconds):
        reason = said(
            "the provider shows no effect and the idempotency key has expired: "
            "resending could duplicate the action, so a person decides"
        )
        _stop(session, action, ActionStatus.NEEDS_DECISION, reason, now)
        return False
    return True


def refresh_action(ctx: ExecutionContext, action_id: uuid.UUID) -> str:
    """Ask the provider for the action's current state and record it (after a webhook, or
    when the sweeper finds a status pending for a while)."""
    now = ctx.clock()
    with ctx.session_factory() as session, session.begin():
        locked = _locked_for_answer(session, action_id)
        if locked is None:
            return "missing"
        action = locked.action
        if action.status not in _REFRESHABLE:
            return action.status
        try:
            adapter = ctx.adapters(session, action.shop_id, action.provider)
        except _CANNOT_RUN as exc:
            # The last status recorded stands; there is nothing to ask until it is fixed.
            log.warning("refresh of action %s skipped: %s", action.id, exc)
            return action.status
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
    ctx: ExecutionContext, session: Session, locked: _Locked, *, purpose: str
) -> tuple[ProviderAdapter, _Attempt] | float | None:
    """Decide, under the target lock, whether the action may go out; mark it submitting.

    Returns the adapter to send with and the attempt made for the send; or the seconds to wait
    before trying again when the provider turned the fresh read away (429); or None
    when it must not go.
    """
    now = ctx.clock()
    action, shop, proposal, case = locked.action, locked.shop, locked.proposal, locked.case
    _lock_what_it_moves(session, action)
    policy = locked.policy
    # Not sending now means "never sent" only on the first send; after an unclear first
    # send the earlier request may still land, so a person decides and refreshes continue.
    first = purpose == "submit"
    stopped = ActionStatus.HALTED if first else ActionStatus.NEEDS_DECISION
    if _stopped_before_checks(session, locked, policy.version, first, now):
        return None
    assert proposal is not None
    try:
        adapter = _adapter(ctx, session, locked)
        evaluation = evaluate_draft(
            session,
            shop=shop,
            case=case,
            draft=_draft(action),
            proposed_by=proposal.proposed_by,
            policy=policy,
            adapter=adapter,
            now=now,
            own_action_id=action.id,
            approved_money=action.money_ref,
            # Only a blocking check stops a send; a signal never blocks.
            with_signals=False,
        )
    except Throttled as exc:
        if not first:
            raise  # the sweeper schedules the look-up again
        # The provider turned the fresh read away; nothing was sent. Try again later.
        return _queue_again(ctx, session, action, exc, now)
    except _CANNOT_RUN as exc:
        # Also a key the provider no longer knows, found by the fresh read: sent again by
        # the sweeper, it would fail the same way until a person connects it again.
        reason = said("the action cannot run: %(error)s", error=str(exc))
        _stop(session, action, ActionStatus.CANNOT_RUN if first else stopped, reason, now)
        return None
    landed = _own_write(evaluation.facts, str(action.id))
    if landed is not None:
        # Our earlier send did land after all (a slow commit): record it, send nothing.
        apply_provider_answer(session, action, landed, source="re-check", now=now)
        return None
    blocked = evaluation.verdict.outcome == Outcome.BLOCKED
    if blocked:
        failing = joined([check.said for check in evaluation.verdict.failed])
        _stop(
            session, action, stopped, said("checks at execution: %(failing)s", failing=failing), now
        )
    approval_ttl = timedelta(seconds=ctx.settings.approval_ttl_seconds)
    # Not blocked, it is held, queued as it is, when its send would pass one of the shop's
    # ceilings or a brake tripped meanwhile.
    if blocked or (
        first and brakes.hold_before_send(session, action, approval_ttl=approval_ttl, now=now)
    ):
        return None
    number = _new_attempt(session, action, purpose, now).number
    action.first_sent_at = action.first_sent_at or now
    action.submitted_at = now
    action.next_check_at = None
    move_action(
        session,
        action,
        ActionStatus.SUBMITTING,
        event=f"action.{purpose}",
        actor=WORKER,
        now=now,
        data={"attempt": number, "idempotency_key": action.idempotency_key},
    )
    return adapter, _Attempt(number, purpose)


def _adapter(ctx: ExecutionContext, session: Session, locked: _Locked) -> ProviderAdapter:
    action = locked.action
    return ctx.adapters(session, action.shop_id, action.provider, connection=locked.connection)


def _stopped_before_checks(
    session: Session, locked: _Locked, policy_version: int, first: bool, now: datetime
) -> bool:
    """The switches, the approval's expiry, the digest and the shop's brake, before any
    provider call; True when the action does not go now.

    These hold for an action already approved, whoever approved it: the switches are read
    as a person's approval reads them (:func:`app.shops.switches.writes_stopped`), the
    first that holds stops it; an expired approval or a changed digest stops it too,
    which no approval rule can know in advance. A tripped brake stops nothing: it holds
    a first send, queued as it is, until a person resumes (:mod:`app.execution.brakes`).
    """
    shop, proposal, action = locked.shop, locked.proposal, locked.action
    stopped = ActionStatus.HALTED if first else ActionStatus.NEEDS_DECISION
    stops = writes_stopped(shop)
    if stops:
        reason = _WRITES_STOPPED[stops[0]]
        if stops[0] is WriteStop.UNINSTALLED and first:
            stopped = ActionStatus.CANNOT_RUN
    elif now > action.approval_expires_at:
        reason = said("the approval expired before the action was executed")
        if first and proposal is not None:
            reason = said(
                "the approval expired before the action was executed; nothing was sent, "
                "and the proposal awaits approval again"
            )
            _stop(session, action, ActionStatus.EXPIRED, reason, now)
            announce(approval_expired, action, session=session, proposal=proposal, now=now)
            return True
    elif proposal is None or digest_of(proposal, policy_version) != action.digest:
        reason = said("the proposal or the shop's policy changed after approval")
    else:
        return first and brakes.holding(locked.brakes)
    _stop(session, action, stopped, reason, now)
    return True


_WRITES_STOPPED = {
    WriteStop.UNINSTALLED: said("the shop has uninstalled Caseward"),
    WriteStop.KILL_SWITCH: said("the shop's kill switch is on"),
    WriteStop.PROTECTION_MODE: said("the shop is in protection mode (read-only)"),
}


def _send(
    ctx: ExecutionContext,
    action_id: uuid.UUID,
    request: ActionRequest,
    adapter: ProviderAdapter,
    attempt: _Attempt,
) -> str:
    """The one provider call, outside any transaction, then its recording."""
    answer: ProviderAnswer | None = None
    error: Exception | None = None
    try:
        answer = adapter.submit(request)
    except ProviderError as exc:
        error = exc
    with ctx.session_factory() as session, session.begin():
        status, resend_in = _record(ctx, session, action_id, attempt, answer, error)
    if resend_in is not None:
        _resend_later(ctx, action_id, resend_in)
    return status


def _seconds_early(ctx: ExecutionContext, action: Action) -> float | None:
    """How long before its ``next_check_at`` a queued action's job arrived, if it did."""
    if action.next_check_at is None:
        return None
    early = (action.next_check_at - ctx.clock()).total_seconds()
    return early if early > 0 else None


def _resend_later(ctx: ExecutionContext, action_id: uuid.UUID, delay: float) -> None:
    """After the commit, like every enqueue: the row already says queued, not before when."""
    if ctx.resend_later is not None:
        ctx.resend_later(action_id, delay)


def _record(
    ctx: ExecutionContext,
    session: Session,
    action_id: uuid.UUID,
    attempt: _Attempt,
    answer: ProviderAnswer | None,
    error: Exception | None,
) -> tuple[str, float | None]:
    """Record the call's outcome on the action and on its attempt row (one UPDATE: the row
    is not read back); also returns the delay before a resend, if one is due."""
    now = ctx.clock()
    locked = _locked_for_answer(session, action_id)
    assert locked is not None
    ended = _AttemptEnd()
    status, resend_in = _settle(ctx, session, locked.action, attempt, ended, answer, error, now)
    failed = brakes.send_failed(ended.outcome, ended.provider_status)
    if failed is not None:
        brakes.count_send(session, locked.action, failed=failed, seen=locked.brakes, now=now)
    ending = {"finished_at": now, **asdict(ended)}
    params = {"of_action": action_id, "of_number": attempt.number}
    params |= {f"end_{name}": value for name, value in ending.items()}
    result = cast(CursorResult[Any], session.execute(_END_ATTEMPT, params))
    if result.rowcount != 1:
        # The row was written with the send's mark, under the action's lock: without it
        # the answer has no attempt to go on. The job fails, nothing of it is kept, and
        # the sweeper looks the action up at the provider.
        raise RuntimeError(f"action {action_id} has no attempt {attempt.number} to end")
    return status, resend_in


def _settle(
    ctx: ExecutionContext,
    session: Session,
    action: Action,
    attempt: _Attempt,
    ended: _AttemptEnd,
    answer: ProviderAnswer | None,
    error: Exception | None,
    now: datetime,
) -> tuple[str, float | None]:
    """Move the action on what the call came to, and say in ``ended`` what the attempt did."""
    if answer is not None:
        ended.outcome = "answered"
        ended.provider_ref, ended.provider_status = answer.reference, answer.status
        apply_provider_answer(session, action, answer, source="submit", now=now)
        return action.status, None
    assert error is not None
    ended.detail = f"{type(error).__name__}: {error}"
    if isinstance(error, NotSent | Throttled) and action.status == ActionStatus.SUBMITTING:
        ended.outcome = "throttled" if isinstance(error, Throttled) else "not_sent"
        if attempt.purpose == "submit":
            delay = _queue_again(ctx, session, action, error, now)
            return action.status, delay
        # A resend that did not go out: the first send is still unclear, look it up again.
        delay = _resend_delay(ctx, error, attempt.number)
        mark_unknown(
            session, action, str(error), next_check_at=now + timedelta(seconds=delay), now=now
        )
        return action.status, None
    if isinstance(error, OutcomeUnknown | NotSent | Throttled):
        # NotSent/Throttled here: the sweeper already called it unknown; it stays so.
        ended.outcome = "unknown"
        if action.status in (ActionStatus.SUBMITTING, ActionStatus.UNKNOWN):
            next_check_at = now + _backoff(ctx, action.checks_made)
            mark_unknown(session, action, str(error), next_check_at=next_check_at, now=now)
        return action.status, None
    ended.outcome = "rejected"
    if isinstance(error, ProviderRejected):
        # Stripe ran this key afresh and said no: the request did nothing there, ever.
        to = ActionStatus.REJECTED
        reason = said("the provider refused the action: %(error)s", error=str(error))
    elif isinstance(error, IdempotencyConflict) or attempt.purpose != "submit":
        # An earlier send of this action may still land: a person decides.
        to = ActionStatus.NEEDS_DECISION
        reason = said("the action could not be sent again: %(error)s", error=str(error))
    else:
        to = ActionStatus.CANNOT_RUN
        reason = said("the action was not sent: %(error)s", error=str(error))
    if to not in ACTION_MOVES[ActionStatus(action.status)]:
        # Already settled by a look-up that raced this answer; the look-up's word stands.
        return action.status, None
    _stop(session, action, to, reason, now)
    # What the action shows is the provider's own words; the event keeps Caseward's.
    record_reason(action, str(error))
    return action.status, None


def _stop(
    session: Session, action: Action, to: ActionStatus, reason: Sentence, now: datetime
) -> None:
    stop_action(session, action, to, reason, actor=WORKER, now=now)


def _queue_again(
    ctx: ExecutionContext,
    session: Session,
    action: Action,
    error: NotSent | Throttled,
    now: datetime,
) -> float:
    """Nothing reached the provider: queue the same action again, same key, after a pause."""
    delay = _resend_delay(ctx, error, action.attempts_made)
    action.next_check_at = now + timedelta(seconds=delay)
    record_reason(action, str(error))
    if action.status != ActionStatus.QUEUED:
        move_action(
            session,
            action,
            ActionStatus.QUEUED,
            event="action.requeued",
            actor=WORKER,
            now=now,
            data={"reason": str(error), "resend_in_seconds": delay},
        )
    return delay


def _resend_delay(ctx: ExecutionContext, error: NotSent | Throttled, attempts: int) -> float:
    """The provider's ``Retry-After`` when it gave one; else a short, jittered backoff."""
    if isinstance(error, Throttled) and error.retry_after is not None:
        return max(error.retry_after, 0.0)
    base = min(_UNSENT_FIRST_PAUSE * 2.0 ** min(attempts - 1, 10), _UNSENT_MAX_PAUSE)
    return base * (0.5 + 0.5 * ctx.jitter())


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


def _backoff(ctx: ExecutionContext, checks_made: int) -> timedelta:
    """Doubling delays up to the cap, each cut by a random part of up to half, so that
    look-ups of actions that went unclear together do not run in step."""
    settings = ctx.settings
    delay = settings.reconcile_delay_seconds * 2.0 ** min(checks_made, 16)
    capped = min(delay, settings.reconcile_max_delay_seconds)
    return timedelta(seconds=capped * (0.5 + 0.5 * ctx.jitter()))


def _lookups_keep_failing(session: Session, action: Action, limit: int) -> bool:
    """The last ``limit`` look-ups (this one included) all failed to get an answer."""
    outcomes = session.scalars(
        select(ActionAttempt.outcome)
        .where(ActionAttempt.action_id == action.id, ActionAttempt.purpose == "find")
        .order_by(ActionAttempt.number.desc())
        .limit(limit)
    ).all()
    return limit > 0 and len(outcomes) >= limit and all(o == "error" for o in outcomes)


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


def _lock_what_it_moves(session: Session, action: Action) -> None:
    """Hold the lock on the money a refund gives back (one lock for a Shopify order and
    the Stripe payment behind it), or on the action's target for other kinds, until the
    transaction ends: actions on the same money are checked and marked one at a time."""
    if action.money_ref is not None:
        locked_row(
            session, TargetLock, shop_id=action.shop_id, provider="money", target=action.money_ref
        )
    else:
        locked_row(
            session,
            TargetLock,
            shop_id=action.shop_id,
            provider=action.provider,
            target=action.target,
        )


@dataclass(frozen=True)
class _Attempt:
    """The attempt row a send was marked with: its number and why it went out."""

    number: int
    purpose: str  # submit | resubmit


@dataclass
class _AttemptEnd:
    """What the attempt row says once its call is over."""

    outcome: str = ""
    provider_ref: str | None = None
    provider_status: str | None = None
    detail: str | None = None


@dataclass(frozen=True)
class _Locked:
    """An action, row-locked, with what its checks and sending read next. Held here, they
    stay in the session's identity map (which keeps only what is referenced), so
    ``session.get`` of them, also deeper down (the case's customer), sends no query. The
    connection is the shop's to the action's provider (None for Shopify, whose token lives
    with the install, or when there is none), handed to the adapter factory; the brakes
    are the shop's (None until its first send makes them), read without their lock."""

    action: Action
    shop: Shop
    proposal: Proposal | None
    case: Case
    customer: Customer | None
    policy: PolicyRules
    connection: Connection | None
    brakes: ShopBrakes | None


# Built once, at import: the worker runs it twice an action, and building an eight-table
# select (and the key SQLAlchemy caches its compiled form under) takes longer than the
# database takes to answer it. The parameter is typed by hand, as a bind built before the
# mappers are configured may not know its column's type (``audit._LOCKED_HEAD``).
_LOCKED_ACTION = (
    select(Action, Shop, Proposal, Case, Customer, ShopPolicy, Connection, ShopBrakes)
    .join(Shop, Shop.id == Action.shop_id)
    .join(Case, Case.id == Action.case_id)
    .outerjoin(Proposal, Proposal.id == Action.proposal_id)
    .outerjoin(Customer, Customer.id == Case.customer_id)
    .outerjoin(ShopPolicy, is_newest_policy(Action.shop_id))
    .outerjoin(
        Connection,
        and_(Connection.shop_id == Action.shop_id, Connection.provider == Action.provider),
    )
    .outerjoin(ShopBrakes, ShopBrakes.shop_id == Action.shop_id)
    .where(Action.id == bindparam("action_id", type_=Uuid))
    .with_for_update(of=Action)
)


def _locked_action(session: Session, action_id: uuid.UUID) -> _Locked | None:
    """The action, row-locked, and its shop, proposal, case, the case's customer, the
    shop's newest policy, its connection to the provider and its brakes, in one round
    trip. The connection is read as the statement began, not after any wait for the lock:
    nothing that changes a connection takes the action's lock, so a later read would be
    no newer in any way that counts (a key revoked after either read is refused at the
    send). The brakes are read so too: a brake tripped since is seen under its own lock,
    right before the send is marked (:func:`app.execution.brakes.hold_before_send`)."""
    row = session.execute(_LOCKED_ACTION, {"action_id": action_id}).first()
    if row is None:
        return None
    action, shop, proposal, case, customer, policy, connection, shop_brakes = row
    return _Locked(
        action, shop, proposal, case, customer, policy_rules(policy), connection, shop_brakes
    )


@dataclass(frozen=True)
class _LockedForAnswer:
    """An action, row-locked, with what recording a provider's answer reads next: the case
    it moves and the shop named in the customer's update (held as in :class:`_Locked`)."""

    action: Action
    case: Case
    shop: Shop
    brakes: ShopBrakes | None


# Built once, at import, like _LOCKED_ACTION. The brakes come unlocked: the breaker needs
# them locked only when an answer changes what it counts (brakes.count_send).
_LOCKED_FOR_ANSWER = (
    select(Action, Case, Shop, ShopBrakes)
    .join(Case, Case.id == Action.case_id)
    .join(Shop, Shop.id == Action.shop_id)
    .outerjoin(ShopBrakes, ShopBrakes.shop_id == Action.shop_id)
    .where(Action.id == bindparam("action_id", type_=Uuid))
    .with_for_update(of=Action)
)


def _locked_for_answer(session: Session, action_id: uuid.UUID) -> _LockedForAnswer | None:
    """The action, row-locked, with its case, shop and brakes, in one round trip: recording
    an answer needs neither the proposal, the customer nor the policy that the checks read."""
    row = session.execute(_LOCKED_FOR_ANSWER, {"action_id": action_id}).first()
    return None if row is None else _LockedForAnswer(*row)


# Built once, at import, as every answer is recorded with it (typed by hand as
# _LOCKED_ACTION's parameter is). Core, on the table: the ORM's UPDATE would flush the
# session first and sync the objects it matched, which nothing here needs (the row is not
# read back, so the session keeps no stale copy); 0.1 ms of every job, measured. The
# parameters are named apart from the columns, whose names SQLAlchemy keeps for itself in
# an UPDATE.
_ATTEMPTS = cast(Table, ActionAttempt.__table__)
_END_ATTEMPT = (
    update(_ATTEMPTS)
    .where(
        _ATTEMPTS.c.action_id == bindparam("of_action", type_=Uuid),
        _ATTEMPTS.c.number == bindparam("of_number"),
    )
    .values(
        {
            name: bindparam(f"end_{name}")
            for name in ("finished_at", *(field.name for field in fields(_AttemptEnd)))
        }
    )
)


def _new_attempt(session: Session, action: Action, purpose: str, now: datetime) -> ActionAttempt:
    """The action's next attempt row, numbered from its count under the action's row lock."""
    action.attempts_made += 1
    attempt = ActionAttempt(
        action_id=action.id,
        number=action.attempts_made,
        purpose=purpose,
        idempotency_key=action.idempotency_key,
        started_at=now,
    )
    session.add(attempt)
    return attempt
