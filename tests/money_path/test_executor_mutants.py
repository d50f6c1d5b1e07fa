"""The executor's quieter decisions, each pinned where a person would see it: what the
attempt log and the action say after a look-up, when a look-up that cannot start or
keeps failing goes to a person, the exact edge of the idempotency key's lifetime, and
how long the worker waits before looking again or resending.

Real PostgreSQL (or SQLite) and the Stripe sandbox over HTTP; the executor runs
in-process with a pinned clock and pinned jitter.
"""

from __future__ import annotations

import threading
import uuid
from collections.abc import Callable, Iterator
from dataclasses import replace
from datetime import datetime, timedelta
from typing import Any

import pytest
from fault_support import (
    WRITE_WINDOW_SECONDS,
    action_json,
    approve,
    case_json,
    direct_refund,
    propose_refund,
    refunds_of_action,
    reset_sandbox_switches,
    writes_used_up,
)
from money_path_harness import Account, Staff, unreachable, wait_for, writes_refused
from rq import Queue
from sqlalchemy import delete, select
from sqlalchemy.orm import Session

from app.audit import AuditEvent
from app.background import sweep
from app.cases.proposals import Proposal
from app.clock import utcnow
from app.connections.models import Connection
from app.crypto import secret_box
from app.demo import LinenShop
from app.errors import Forbidden
from app.execution.executor import (
    ExecutionContext,
    execute_action,
    reconcile_action,
    refresh_action,
)
from app.execution.models import Action, ActionAttempt
from app.migrations import downgrade, upgrade
from app.settings import Settings
from app.shops.models import Shop
from integrations.provider import (
    ActionKind,
    ActionRequest,
    ProviderAdapter,
    ProviderAnswer,
    TargetFacts,
)
from integrations.sandbox_kit import Fault
from integrations.stripe.sandbox import RateLimits, StripeSandbox


@pytest.fixture(autouse=True)
def _clean_sandbox(sandbox: StripeSandbox) -> Iterator[None]:
    reset_sandbox_switches(sandbox)
    yield
    reset_sandbox_switches(sandbox)


def _pinned(ctx: ExecutionContext, moment: datetime, jitter: float = 0.0) -> ExecutionContext:
    return replace(ctx, clock=lambda: moment, jitter=lambda: jitter)


def _unknown_action(
    fault: str,
    sandbox: StripeSandbox,
    account: Account,
    ctx: ExecutionContext,
    approver: Staff,
    linen: LinenShop,
) -> uuid.UUID:
    """An approved refund whose answer went missing (``fault`` says whether Stripe kept it)."""
    sandbox.pause_webhooks()
    sandbox.arm_fault(fault, method="POST", path="/v1/refunds", account=account.id)
    proposal = case_json(approver, linen.case_id)["proposals"][0]
    action_id = uuid.UUID(approve(approver, proposal))
    assert execute_action(ctx, action_id) == "unknown"
    return action_id


def _shops_key(session: Session, settings: Settings, linen: LinenShop) -> str:
    """The restricted key the shop's Stripe connection holds."""
    connection = session.get_one(Connection, linen.connection_id)
    return secret_box(settings).decrypt(connection.encrypted_secret)


def _executed_around_a_hold(
    sandbox: StripeSandbox,
    ctx: ExecutionContext,
    action_id: uuid.UUID,
    hold: Fault,
    meanwhile: Callable[[], object],
) -> str:
    """Execute the action while one of its requests is held inside Stripe: once it is
    waiting there, ``meanwhile`` runs, then the request goes on. Returns the status, or
    raises what the execution raised."""
    outcome: list[str] = []
    raised: list[Exception] = []

    def execute() -> None:
        try:
            outcome.append(execute_action(ctx, action_id))
        except Exception as exc:  # handed to the test's thread below
            raised.append(exc)

    worker = threading.Thread(target=execute)
    worker.start()
    try:
        wait_for(
            lambda: any(h.id == hold.id and h.waiting for h in sandbox.holds()),
            what="our request held inside Stripe",
        )
        meanwhile()
    finally:
        sandbox.release_hold(hold.id)
        worker.join(timeout=30)
    if raised:
        raise raised[0]
    [status] = outcome
    return status


def _action(session: Session, action_id: uuid.UUID) -> Action:
    session.expire_all()
    action = session.get(Action, action_id)
    assert action is not None
    return action


def _last_event(session: Session, action_id: uuid.UUID, kind: str) -> AuditEvent:
    return session.scalars(
        select(AuditEvent)
        .where(AuditEvent.action_id == action_id, AuditEvent.kind == kind)
        .order_by(AuditEvent.seq.desc())
        .limit(1)
    ).one()


def test_a_look_up_that_cannot_start_goes_to_a_person_and_sends_nothing(
    linen: LinenShop,
    approver: Staff,
    account: Account,
    sandbox: StripeSandbox,
    ctx: ExecutionContext,
    session: Session,
) -> None:
    action_id = _unknown_action("drop_before_commit", sandbox, account, ctx, approver, linen)

    def no_adapter(
        session: Session, shop_id: uuid.UUID, provider: str, *, connection: Connection | None = None
    ) -> ProviderAdapter:
        raise Forbidden("the Stripe connection was removed", code="not_connected")

    moment = utcnow()
    assert reconcile_action(_pinned(replace(ctx, adapters=no_adapter), moment), action_id) == (
        "needs_decision"
    )

    action = action_json(approver, str(action_id))
    assert action["status_reason"] == "cannot look it up: the Stripe connection was removed"
    assert [(a["purpose"], a["outcome"]) for a in action["attempts"]] == [("submit", "unknown")]
    assert refunds_of_action(account, str(action_id)) == []
    stopped = session.scalars(
        select(AuditEvent).where(
            AuditEvent.action_id == action_id, AuditEvent.kind == "action.needs_decision"
        )
    ).one()
    assert stopped.created_at == moment


def test_a_refund_found_by_the_look_up_is_recorded_from_it(
    linen: LinenShop,
    approver: Staff,
    account: Account,
    sandbox: StripeSandbox,
    ctx: ExecutionContext,
    session: Session,
) -> None:
    action_id = _unknown_action("drop_after_commit", sandbox, account, ctx, approver, linen)
    moment = utcnow()

    assert reconcile_action(_pinned(ctx, moment), action_id) == "succeeded"

    [refund] = refunds_of_action(account, str(action_id))
    action = action_json(approver, str(action_id))
    _, find = action["attempts"]
    assert (find["purpose"], find["outcome"]) == ("find", "found")
    assert (find["provider_ref"], find["provider_status"]) == (refund["id"], "succeeded")
    assert find["finished_at"] is not None
    assert find["started_at"] == moment.isoformat()
    assert action["provider_ref"] == refund["id"]
    recorded = session.scalars(
        select(AuditEvent).where(
            AuditEvent.action_id == action_id, AuditEvent.kind == "action.provider_status"
        )
    ).one()
    assert recorded.data["source"] == "reconciliation"
    assert recorded.created_at == moment


@pytest.mark.parametrize(("limit", "escalated"), [(0, False), (1, True), (2, False)])
def test_failed_look_ups_go_to_a_person_after_the_configured_number(
    limit: int,
    escalated: bool,
    linen: LinenShop,
    approver: Staff,
    account: Account,
    sandbox: StripeSandbox,
    ctx: ExecutionContext,
    settings: Settings,
    session: Session,
) -> None:
    action_id = _unknown_action("drop_before_commit", sandbox, account, ctx, approver, linen)
    failing = replace(
        unreachable(ctx, settings), settings=replace(settings, lookup_failures_attention=limit)
    )

    assert reconcile_action(failing, action_id) == "unknown"

    find = action_json(approver, str(action_id))["attempts"][-1]
    assert (find["purpose"], find["outcome"]) == ("find", "error")
    assert find["detail"] and find["detail"] != "None"
    assert (_action(session, action_id).escalated_at is not None) is escalated
    if escalated:
        handed_over = session.scalars(
            select(AuditEvent).where(
                AuditEvent.case_id == linen.case_id, AuditEvent.kind == "case.needs_attention"
            )
        ).one()
        # The person is told why, in the provider's own words: the look-up's error.
        assert handed_over.data["reason"] == (
            f"look-ups at the provider keep failing: {find['detail']}"
        )


def test_the_attempt_counter_arrives_counting_the_attempts_already_made(
    linen: LinenShop,
    approver: Staff,
    account: Account,
    sandbox: StripeSandbox,
    ctx: ExecutionContext,
    session: Session,
    settings: Settings,
) -> None:
    """An action's next attempt is numbered from ``attempts_made``; the revision that adds
    it counts the rows actions already had, or the next attempt would reuse a number."""
    action_id = _unknown_action("drop_before_commit", sandbox, account, ctx, approver, linen)
    assert reconcile_action(_pinned(ctx, utcnow()), action_id) == "succeeded"
    assert _action(session, action_id).attempts_made == 3  # submit, find, resubmit
    session.rollback()

    downgrade(settings.database_url, "0017_history_scan_stalled_runs")
    upgrade(settings.database_url)

    assert _action(session, action_id).attempts_made == 3


def test_a_resend_is_allowed_up_to_the_last_second_of_the_keys_lifetime(
    linen: LinenShop,
    approver: Staff,
    account: Account,
    sandbox: StripeSandbox,
    ctx: ExecutionContext,
    session: Session,
) -> None:
    action_id = _unknown_action("drop_before_commit", sandbox, account, ctx, approver, linen)
    first_sent = _action(session, action_id).first_sent_at
    assert first_sent is not None
    last_moment = first_sent + timedelta(seconds=ctx.settings.idempotency_key_lifetime_seconds)

    assert reconcile_action(_pinned(ctx, last_moment), action_id) == "succeeded"
    assert len(refunds_of_action(account, str(action_id))) == 1
    attempts = action_json(approver, str(action_id))["attempts"]
    assert [(a["purpose"], a["outcome"]) for a in attempts] == [
        ("submit", "unknown"),
        ("find", "absent"),
        ("resubmit", "answered"),
    ]


def test_a_microsecond_after_the_keys_lifetime_a_person_decides(
    linen: LinenShop,
    approver: Staff,
    account: Account,
    sandbox: StripeSandbox,
    ctx: ExecutionContext,
    session: Session,
) -> None:
    action_id = _unknown_action("drop_before_commit", sandbox, account, ctx, approver, linen)
    first_sent = _action(session, action_id).first_sent_at
    assert first_sent is not None
    lifetime = timedelta(seconds=ctx.settings.idempotency_key_lifetime_seconds)
    too_late = first_sent + lifetime + timedelta(microseconds=1)

    assert reconcile_action(_pinned(ctx, too_late), action_id) == "needs_decision"

    assert action_json(approver, str(action_id))["status_reason"] == (
        "the provider shows no effect and the idempotency key has expired: "
        "resending could duplicate the action, so a person decides"
    )
    assert _last_event(session, action_id, "action.needs_decision").created_at == too_late
    assert refunds_of_action(account, str(action_id)) == []


def test_the_first_look_up_waits_the_configured_delay_cut_by_jitter(
    linen: LinenShop,
    approver: Staff,
    sandbox: StripeSandbox,
    account: Account,
    ctx: ExecutionContext,
    session: Session,
) -> None:
    sandbox.pause_webhooks()
    sandbox.arm_fault("drop_before_commit", method="POST", path="/v1/refunds", account=account.id)
    action_id = uuid.UUID(approve(approver, case_json(approver, linen.case_id)["proposals"][0]))
    moment = utcnow()

    assert execute_action(_pinned(ctx, moment, jitter=0.0), action_id) == "unknown"

    # No look-up made yet: the base delay, halved by the lowest jitter.
    half = timedelta(seconds=ctx.settings.reconcile_delay_seconds * 0.5)
    action = _action(session, action_id)
    assert action.next_check_at == moment + half
    [attempt] = action_json(approver, str(action_id))["attempts"]
    assert action.status_reason and attempt["detail"].endswith(f": {action.status_reason}")
    unknown = _last_event(session, action_id, "action.unknown")
    assert (unknown.created_at, unknown.data["reason"]) == (moment, action.status_reason)


def test_an_unsent_request_is_resent_after_a_short_pause_that_doubles(
    linen: LinenShop,
    approver: Staff,
    ctx: ExecutionContext,
    settings: Settings,
    session: Session,
) -> None:
    action_id = uuid.UUID(approve(approver, case_json(approver, linen.case_id)["proposals"][0]))
    scheduled: list[float] = []
    moment = utcnow()
    refused = replace(
        _pinned(writes_refused(ctx, settings), moment, jitter=0.5),
        resend_later=lambda _, delay: scheduled.append(delay),
    )

    assert execute_action(refused, action_id) == "queued"
    assert execute_action(_pinned(refused, moment + timedelta(seconds=1), 0.5), action_id) == (
        "queued"
    )

    # 0.5 s, then 1 s, each times (0.5 + 0.5 x jitter).
    assert scheduled == [0.375, 0.75]
    action = action_json(approver, str(action_id))
    first = action["attempts"][0]
    assert first["outcome"] == "not_sent"
    assert first["detail"] == f"NotSent: {action['status_reason']}"
    requeued = _last_event(session, action_id, "action.requeued")
    assert requeued.created_at == moment + timedelta(seconds=1)
    assert requeued.data == {
        "previous": "submitting",
        "status": "queued",
        "reason": action["status_reason"],
        "resend_in_seconds": 0.75,
    }


def _provider_status_events(session: Session, action_id: uuid.UUID) -> list[AuditEvent]:
    return list(
        session.scalars(
            select(AuditEvent)
            .where(AuditEvent.action_id == action_id, AuditEvent.kind == "action.provider_status")
            .order_by(AuditEvent.seq)
        )
    )


def test_an_answered_send_is_on_record_with_its_source_and_time(
    linen: LinenShop,
    approver: Staff,
    account: Account,
    ctx: ExecutionContext,
    session: Session,
) -> None:
    action_id = uuid.UUID(approve(approver, case_json(approver, linen.case_id)["proposals"][0]))
    moment = utcnow()

    assert execute_action(_pinned(ctx, moment), action_id) == "succeeded"

    [refund] = refunds_of_action(account, str(action_id))
    [attempt] = action_json(approver, str(action_id))["attempts"]
    assert (attempt["purpose"], attempt["outcome"]) == ("submit", "answered")
    assert (attempt["provider_ref"], attempt["provider_status"]) == (refund["id"], "succeeded")
    assert attempt["finished_at"] is not None
    [event] = _provider_status_events(session, action_id)
    assert (event.data["source"], event.created_at) == ("submit", moment)


def test_a_refresh_records_the_providers_word_with_its_source_and_time(
    linen: LinenShop,
    approver: Staff,
    account: Account,
    sandbox: StripeSandbox,
    ctx: ExecutionContext,
    session: Session,
) -> None:
    action_id = _unknown_action("drop_after_commit", sandbox, account, ctx, approver, linen)
    moment = utcnow()

    assert refresh_action(_pinned(ctx, moment), action_id) == "succeeded"

    [event] = _provider_status_events(session, action_id)
    assert (event.data["source"], event.created_at) == ("refresh", moment)


def test_a_resend_that_does_not_go_out_leaves_the_action_unclear_and_looks_again_soon(
    linen: LinenShop,
    approver: Staff,
    account: Account,
    sandbox: StripeSandbox,
    ctx: ExecutionContext,
    settings: Settings,
    session: Session,
) -> None:
    action_id = _unknown_action("drop_before_commit", sandbox, account, ctx, approver, linen)
    moment = utcnow()

    # The look-up finds nothing, so the same request goes again, and is refused.
    refused = _pinned(writes_refused(ctx, settings), moment, jitter=0.5)
    assert reconcile_action(refused, action_id) == "unknown"

    action = action_json(approver, str(action_id))
    assert [(a["purpose"], a["outcome"]) for a in action["attempts"]] == [
        ("submit", "unknown"),
        ("find", "absent"),
        ("resubmit", "not_sent"),
    ]
    assert action["attempts"][-1]["detail"] == f"NotSent: {action['status_reason']}"
    # The third attempt: 0.5 s doubled twice, times (0.5 + 0.5 x jitter).
    assert _action(session, action_id).next_check_at == moment + timedelta(seconds=1.5)
    assert _last_event(session, action_id, "action.unknown").created_at == moment
    assert refunds_of_action(account, str(action_id)) == []


# ------------------------------------------------------------------ a 429 from Stripe


def _stripes_wait(delay: float) -> bool:
    """Most of an hour (the header is whole seconds, counted from the other write)."""
    return WRITE_WINDOW_SECONDS - 60 <= delay <= WRITE_WINDOW_SECONDS


def test_a_throttled_send_is_on_record_as_throttled_and_waits_as_long_as_stripe_asks(
    linen: LinenShop,
    approver: Staff,
    account: Account,
    ctx: ExecutionContext,
    session: Session,
    sandbox: StripeSandbox,
) -> None:
    action_id = uuid.UUID(approve(approver, case_json(approver, linen.case_id)["proposals"][0]))
    scheduled: list[float] = []
    moment = utcnow()
    throttled = replace(_pinned(ctx, moment), resend_later=lambda _, delay: scheduled.append(delay))

    with writes_used_up(sandbox, account):
        assert execute_action(throttled, action_id) == "queued"

    [delay] = scheduled
    assert _stripes_wait(delay), f"resend in {delay} s, not after Stripe's Retry-After"
    due = moment + timedelta(seconds=delay)
    assert _action(session, action_id).next_check_at == due
    [attempt] = action_json(approver, str(action_id))["attempts"]
    assert (attempt["purpose"], attempt["outcome"]) == ("submit", "throttled")
    assert refunds_of_action(account, str(action_id)) == []

    # The queue starts the resend two seconds early (its clock, or its rounding): nothing
    # is sent, and the action asks to run again when it is due.
    session.rollback()
    scheduled.clear()
    early = replace(throttled, clock=lambda: due - timedelta(seconds=2))
    assert execute_action(early, action_id) == "queued"
    assert scheduled == [2.0]
    assert len(action_json(approver, str(action_id))["attempts"]) == 1
    assert refunds_of_action(account, str(action_id)) == []


def test_a_throttled_resend_leaves_the_action_unclear_until_stripe_allows_another_write(
    linen: LinenShop,
    approver: Staff,
    account: Account,
    sandbox: StripeSandbox,
    ctx: ExecutionContext,
    session: Session,
) -> None:
    action_id = _unknown_action("drop_before_commit", sandbox, account, ctx, approver, linen)
    moment = utcnow()
    with writes_used_up(sandbox, account):
        # The look-up finds nothing, so the same request goes again, and gets a 429.
        assert reconcile_action(_pinned(ctx, moment), action_id) == "unknown"

    attempts = action_json(approver, str(action_id))["attempts"]
    assert [(a["purpose"], a["outcome"]) for a in attempts] == [
        ("submit", "unknown"),
        ("find", "absent"),
        ("resubmit", "throttled"),
    ]
    next_check_at = _action(session, action_id).next_check_at
    assert next_check_at is not None
    waited = (next_check_at - moment).total_seconds()
    assert _stripes_wait(waited), f"looked again after {waited} s, not after Retry-After"
    assert refunds_of_action(account, str(action_id)) == []


# ------------------------------------------------------------------ two actions side by side


def test_two_refunds_of_one_case_each_keep_their_own_attempts(
    linen: LinenShop,
    proposer: Staff,
    approver: Staff,
    account: Account,
    ctx: ExecutionContext,
) -> None:
    first, second = (
        approve(approver, propose_refund(proposer, linen.case_id, linen.payment_intent_id, amount))
        for amount in (3000, 2000)
    )

    for action_id in (first, second):
        assert execute_action(ctx, uuid.UUID(action_id)) == "succeeded"

    for action_id, amount in ((first, 3000), (second, 2000)):
        [refund] = refunds_of_action(account, action_id)
        assert refund["amount"] == amount
        [attempt] = action_json(approver, action_id)["attempts"]
        assert (attempt["number"], attempt["provider_ref"]) == (1, refund["id"])


def test_failed_look_ups_are_counted_per_action_and_only_the_latest_ones(
    linen: LinenShop,
    proposer: Staff,
    approver: Staff,
    account: Account,
    sandbox: StripeSandbox,
    ctx: ExecutionContext,
    settings: Settings,
    session: Session,
) -> None:
    sandbox.pause_webhooks()
    first, second = (
        uuid.UUID(
            approve(
                approver, propose_refund(proposer, linen.case_id, linen.payment_intent_id, amount)
            )
        )
        for amount in (3000, 2000)
    )
    for action_id in (first, second):
        sandbox.arm_fault(
            "drop_before_commit", method="POST", path="/v1/refunds", account=account.id
        )
        assert execute_action(ctx, action_id) == "unknown"
    failing = replace(
        unreachable(ctx, settings), settings=replace(settings, lookup_failures_attention=2)
    )
    # The second: two failed look-ups in a row call a person.
    for _ in range(2):
        assert reconcile_action(failing, second) == "unknown"
    assert _action(session, second).escalated_at is not None

    # The first: a look-up that found nothing (then a resend, unclear again), then one
    # that failed: one failure of its own, whatever the second's were.
    sandbox.arm_fault("drop_before_commit", method="POST", path="/v1/refunds", account=account.id)
    assert reconcile_action(ctx, first) == "unknown"
    assert reconcile_action(failing, first) == "unknown"
    assert [
        (a["purpose"], a["outcome"]) for a in action_json(approver, str(first))["attempts"]
    ] == [("submit", "unknown"), ("find", "absent"), ("resubmit", "unknown"), ("find", "error")]
    assert _action(session, first).escalated_at is None, "only one failure in a row so far"

    # Its second failure in a row calls a person.
    assert reconcile_action(failing, first) == "unknown"
    assert _action(session, first).escalated_at is not None


# ------------------------------------------------------------------ refusals at the provider


def test_a_refund_stripe_refuses_at_the_send_is_rejected_on_the_record(
    linen: LinenShop,
    approver: Staff,
    account: Account,
    sandbox: StripeSandbox,
    ctx: ExecutionContext,
    session: Session,
) -> None:
    """Our checks pass; while our $48 is held inside Stripe, the merchant refunds $60 in
    the dashboard, so Stripe refuses ours: it did nothing, and the action says so."""
    action_id = uuid.UUID(approve(approver, case_json(approver, linen.case_id)["proposals"][0]))
    hold = sandbox.arm_fault("hold", method="POST", path="/v1/refunds", account=account.id)
    moment = utcnow()

    outcome = _executed_around_a_hold(
        sandbox,
        _pinned(ctx, moment),
        action_id,
        hold,
        lambda: direct_refund(account, linen.payment_intent_id, 6000),
    )

    assert outcome == "rejected"
    action = action_json(approver, str(action_id))
    assert [(a["purpose"], a["outcome"]) for a in action["attempts"]] == [("submit", "rejected")]
    assert "greater than unrefunded amount" in action["status_reason"]
    rejected = _last_event(session, action_id, "action.rejected")
    assert rejected.created_at == moment
    # The action says what Stripe said; the event says what it means, with Stripe's words.
    assert rejected.data["reason"] == (
        f"the provider refused the action: {action['status_reason']}"
    )
    assert refunds_of_action(account, str(action_id)) == []


def test_an_answer_whose_attempt_row_is_gone_is_not_recorded_and_is_looked_up_later(
    linen: LinenShop,
    approver: Staff,
    account: Account,
    sandbox: StripeSandbox,
    ctx: ExecutionContext,
    queue: Queue,
    session: Session,
) -> None:
    """The attempt row the send was marked with disappears before the answer comes back:
    the job fails rather than record an answer with no attempt to show for it, and the
    refund Stripe made is found by the look-up that follows, once."""
    action_id = uuid.UUID(approve(approver, case_json(approver, linen.case_id)["proposals"][0]))
    hold = sandbox.arm_fault("hold", method="POST", path="/v1/refunds", account=account.id)

    def lose_the_attempt() -> None:
        session.execute(delete(ActionAttempt).where(ActionAttempt.action_id == action_id))
        session.commit()

    with pytest.raises(RuntimeError, match=f"action {action_id} has no attempt 1 to end"):
        _executed_around_a_hold(sandbox, ctx, action_id, hold, lose_the_attempt)

    assert _action(session, action_id).status == "submitting"
    [refund] = refunds_of_action(account, str(action_id))
    later = utcnow() + timedelta(seconds=ctx.settings.stuck_submission_seconds + 1)
    assert sweep(_pinned(ctx, later), queue)["marked_unknown"] == [str(action_id)]
    assert reconcile_action(_pinned(ctx, later), action_id) == "succeeded"
    assert _action(session, action_id).provider_ref == refund["id"]
    assert refunds_of_action(account, str(action_id)) == [refund]


def test_a_key_stripe_saw_with_other_parameters_goes_to_a_person(
    linen: LinenShop,
    approver: Staff,
    account: Account,
    ctx: ExecutionContext,
    session: Session,
) -> None:
    action_id = uuid.UUID(approve(approver, case_json(approver, linen.case_id)["proposals"][0]))
    key = action_json(approver, str(action_id))["idempotency_key"]
    # Another request already used the action's key, with other parameters.
    account.stripe.v1.customers.create(
        params={"email": "someone@example.com"}, options={"idempotency_key": key}
    )
    moment = utcnow()

    assert execute_action(_pinned(ctx, moment), action_id) == "needs_decision"

    action = action_json(approver, str(action_id))
    assert [(a["purpose"], a["outcome"]) for a in action["attempts"]] == [("submit", "rejected")]
    # The action says what Stripe said; the event says what it means.
    assert "idempotency" in action["status_reason"].lower()
    assert not action["status_reason"].startswith("the action could not be sent again")
    decided = _last_event(session, action_id, "action.needs_decision")
    assert decided.created_at == moment
    assert decided.data["reason"] == (
        f"the action could not be sent again: {action['status_reason']}"
    )
    assert refunds_of_action(account, str(action_id)) == []


# ------------------------------------------------------------------ the send, on the record


def test_a_send_is_on_record_with_its_attempt_key_and_time(
    linen: LinenShop,
    approver: Staff,
    ctx: ExecutionContext,
    session: Session,
) -> None:
    action_id = uuid.UUID(approve(approver, case_json(approver, linen.case_id)["proposals"][0]))
    moment = utcnow()

    assert execute_action(_pinned(ctx, moment), action_id) == "succeeded"

    action = action_json(approver, str(action_id))
    [attempt] = action["attempts"]
    assert (attempt["number"], attempt["started_at"]) == (1, moment.isoformat())
    submitted = _last_event(session, action_id, "action.submit")
    assert submitted.created_at == moment
    assert submitted.data == {
        "previous": "queued",
        "status": "submitting",
        "attempt": 1,
        "idempotency_key": action["idempotency_key"],
    }


def test_a_refund_the_fresh_checks_refuse_is_halted_with_their_reasons(
    linen: LinenShop,
    approver: Staff,
    account: Account,
    ctx: ExecutionContext,
    session: Session,
) -> None:
    action_id = uuid.UUID(approve(approver, case_json(approver, linen.case_id)["proposals"][0]))
    # After the approval, the merchant refunds $60 in Stripe's dashboard: $36 is left.
    direct_refund(account, linen.payment_intent_id, 6000)
    moment = utcnow()

    assert execute_action(_pinned(ctx, moment), action_id) == "halted"

    reason = action_json(approver, str(action_id))["status_reason"]
    assert reason.startswith("checks at execution: Refund of $48.00 exceeds what is left")
    halted = _last_event(session, action_id, "action.halted")
    assert (halted.created_at, halted.data["reason"]) == (moment, reason)
    assert refunds_of_action(account, str(action_id)) == []


def test_a_throttled_fresh_read_sends_nothing_and_waits_as_long_as_stripe_asks(
    linen: LinenShop,
    approver: Staff,
    account: Account,
    sandbox: StripeSandbox,
    ctx: ExecutionContext,
    session: Session,
) -> None:
    action_id = uuid.UUID(approve(approver, case_json(approver, linen.case_id)["proposals"][0]))
    scheduled: list[tuple[uuid.UUID, float]] = []
    moment = utcnow()
    throttled = replace(
        _pinned(ctx, moment), resend_later=lambda action, delay: scheduled.append((action, delay))
    )
    # One read an hour for the account, used up by someone else's read just now.
    sandbox.set_rate_limits(
        RateLimits(test_read=1, test_write=None, per_seconds=WRITE_WINDOW_SECONDS),
        account=account.id,
    )
    try:
        account.stripe.v1.customers.list()
        assert execute_action(throttled, action_id) == "queued"
    finally:
        sandbox.set_rate_limits(None, account=account.id)

    [(again, delay)] = scheduled
    assert again == action_id
    assert _stripes_wait(delay), f"tried again after {delay} s, not after Retry-After"
    action = _action(session, action_id)
    assert action.next_check_at == moment + timedelta(seconds=delay)
    assert action_json(approver, str(action_id))["attempts"] == []  # nothing was sent
    assert refunds_of_action(account, str(action_id)) == []


def test_a_held_resend_goes_out_at_its_moment_and_not_before(
    linen: LinenShop,
    approver: Staff,
    account: Account,
    ctx: ExecutionContext,
    settings: Settings,
    session: Session,
) -> None:
    action_id = uuid.UUID(approve(approver, case_json(approver, linen.case_id)["proposals"][0]))
    moment = utcnow()
    assert execute_action(_pinned(writes_refused(ctx, settings), moment), action_id) == "queued"
    due = _action(session, action_id).next_check_at
    assert due is not None

    early = due - timedelta(microseconds=1)
    assert execute_action(_pinned(ctx, early), action_id) == "queued"
    assert refunds_of_action(account, str(action_id)) == []
    assert execute_action(_pinned(ctx, due), action_id) == "succeeded"
    assert len(refunds_of_action(account, str(action_id))) == 1


# ------------------------------------------------------------------ stopped before any call

_STOPS = {
    # stop: (first send's status, reason); a resend after an unclear send always goes to
    # a person, with the reason alone.
    "uninstalled": ("cannot_run", "the shop has uninstalled Caseward"),
    "kill_switch": ("halted", "the shop's kill switch is on"),
    "protection_mode": ("halted", "the shop is in protection mode (read-only)"),
    "approval_expired": (
        "expired",
        "the approval expired before the action was executed; nothing was sent, and the "
        "proposal awaits approval again",
    ),
    "edited": ("halted", "the proposal or the shop's policy changed after approval"),
}


def _stop_it(session: Session, linen: LinenShop, action_id: uuid.UUID, stop: str) -> None:
    shop = session.get(Shop, linen.shop_id)
    action = session.get(Action, action_id)
    assert shop is not None and action is not None
    if stop == "uninstalled":
        shop.uninstalled_at = utcnow()
    elif stop == "kill_switch":
        shop.kill_switch = True
    elif stop == "protection_mode":
        shop.writes_enabled = False
    elif stop == "approval_expired":
        action.approval_expires_at = utcnow() - timedelta(seconds=1)
    else:
        proposal = session.get(Proposal, action.proposal_id)
        assert proposal is not None
        proposal.amount = 4700  # what was reviewed is no longer what would be sent
    session.commit()


@pytest.mark.parametrize("stop", list(_STOPS))
def test_a_first_send_stopped_before_any_call_says_why(
    stop: str,
    linen: LinenShop,
    approver: Staff,
    account: Account,
    ctx: ExecutionContext,
    session: Session,
) -> None:
    action_id = uuid.UUID(approve(approver, case_json(approver, linen.case_id)["proposals"][0]))
    _stop_it(session, linen, action_id, stop)
    moment = utcnow()
    status, reason = _STOPS[stop]

    assert execute_action(_pinned(ctx, moment), action_id) == status

    action = _stopped_and_nothing_refunded(
        approver,
        session,
        account,
        action_id,
        event=f"action.{status}",
        moment=moment,
        reason=reason,
    )
    assert action["attempts"] == []
    if stop == "approval_expired":  # back for approval, at the moment the worker saw it
        reopened = session.scalars(
            select(AuditEvent).where(
                AuditEvent.case_id == linen.case_id, AuditEvent.kind == "proposal.reopened"
            )
        ).one()
        assert reopened.created_at == moment


@pytest.mark.parametrize("stop", list(_STOPS))
def test_a_resend_stopped_before_any_call_goes_to_a_person(
    stop: str,
    linen: LinenShop,
    approver: Staff,
    account: Account,
    sandbox: StripeSandbox,
    ctx: ExecutionContext,
    session: Session,
) -> None:
    action_id = _unknown_action("drop_before_commit", sandbox, account, ctx, approver, linen)
    _stop_it(session, linen, action_id, stop)
    moment = utcnow()
    reason = _STOPS[stop][1].split(";")[0]

    # The look-up finds nothing; the resend is stopped: the first send may still land.
    assert reconcile_action(_pinned(ctx, moment), action_id) == "needs_decision"

    action = _stopped_and_nothing_refunded(
        approver,
        session,
        account,
        action_id,
        event="action.needs_decision",
        moment=moment,
        reason=reason,
    )
    assert [a["purpose"] for a in action["attempts"]] == ["submit", "find"]


def test_the_send_is_checked_under_the_shops_own_policy_as_approved(
    linen: LinenShop,
    approver: Staff,
    owner: Staff,
    account: Account,
    ctx: ExecutionContext,
    session: Session,
) -> None:
    """A shop whose policy is past its first version: the worker re-checks the approved
    digest under that shop's policy, not anyone else's, and sends."""
    rules = owner.get("/api/shop").get_json()["policy"]
    rules.pop("version", None)
    changed = owner.put("/api/shop/policy", {"rules": {**rules, "max_percent_off": 40}})
    assert changed.status_code == 200, changed.get_json()
    proposal = case_json(approver, linen.case_id)["proposals"][0]
    # The same refund, checked again under the new version (what a person then reviews).
    same = {
        "kind": proposal["kind"],
        "target": proposal["target"],
        "amount": proposal["amount"]["amount"],
        "currency": proposal["amount"]["currency"],
        "params": proposal["params"],
    }
    revised = approver.put(f"/api/proposals/{proposal['id']}", same)
    assert revised.status_code == 200, revised.get_json()
    proposal = revised.get_json()["proposal"]
    assert proposal["policy_version"] == 2
    action_id = uuid.UUID(approve(approver, proposal))

    assert execute_action(ctx, action_id) == "succeeded"
    assert len(refunds_of_action(account, str(action_id))) == 1


def test_an_approval_is_good_up_to_its_last_moment(
    linen: LinenShop,
    approver: Staff,
    account: Account,
    ctx: ExecutionContext,
    session: Session,
) -> None:
    action_id = uuid.UUID(approve(approver, case_json(approver, linen.case_id)["proposals"][0]))
    last_moment = _action(session, action_id).approval_expires_at

    assert execute_action(_pinned(ctx, last_moment), action_id) == "succeeded"
    assert len(refunds_of_action(account, str(action_id))) == 1


def test_a_resend_the_fresh_checks_refuse_goes_to_a_person(
    linen: LinenShop,
    approver: Staff,
    account: Account,
    sandbox: StripeSandbox,
    ctx: ExecutionContext,
    session: Session,
) -> None:
    action_id = _unknown_action("drop_before_commit", sandbox, account, ctx, approver, linen)
    # Meanwhile the merchant refunds $60 in Stripe's dashboard: $36 is left.
    direct_refund(account, linen.payment_intent_id, 6000)
    moment = utcnow()

    # The look-up finds nothing; the checks before the resend refuse it. The first send
    # may still land, so a person decides: the action is not halted as "never sent".
    assert reconcile_action(_pinned(ctx, moment), action_id) == "needs_decision"

    action = action_json(approver, str(action_id))
    assert action["status_reason"].startswith("checks at execution: Refund of $48.00 exceeds")
    assert [a["purpose"] for a in action["attempts"]] == ["submit", "find"]
    assert _last_event(session, action_id, "action.needs_decision").created_at == moment


# ------------------------------------------------------------------ adapter cannot be built


def _adapters_failing_from_call(ctx: ExecutionContext, failing_call: int) -> ExecutionContext:
    """The shop's real adapters, until the ``failing_call``-th is asked for: by then the
    shop's Stripe connection is gone (removed between a look-up and a resend)."""
    calls = [0]

    def adapters(
        session: Session, shop_id: uuid.UUID, provider: str, *, connection: Connection | None = None
    ) -> ProviderAdapter:
        calls[0] += 1
        if calls[0] >= failing_call:
            raise Forbidden("the Stripe connection was removed", code="not_connected")
        return ctx.adapters(session, shop_id, provider, connection=connection)

    return replace(ctx, adapters=adapters)


def test_a_first_send_whose_adapter_cannot_be_built_cannot_run_and_says_why(
    linen: LinenShop,
    approver: Staff,
    account: Account,
    ctx: ExecutionContext,
    session: Session,
) -> None:
    action_id = uuid.UUID(approve(approver, case_json(approver, linen.case_id)["proposals"][0]))
    moment = utcnow()

    assert execute_action(_pinned(_adapters_failing_from_call(ctx, 1), moment), action_id) == (
        "cannot_run"
    )

    reason = "the action cannot run: the Stripe connection was removed"
    action = _stopped_and_nothing_refunded(
        approver,
        session,
        account,
        action_id,
        event="action.cannot_run",
        moment=moment,
        reason=reason,
    )
    assert action["attempts"] == []


def test_a_key_stripe_no_longer_knows_stops_the_first_send_in_front_of_a_person(
    linen: LinenShop,
    approver: Staff,
    account: Account,
    sandbox: StripeSandbox,
    ctx: ExecutionContext,
    settings: Settings,
    session: Session,
) -> None:
    """The shop's key was revoked at Stripe after the approval: the fresh read is refused
    (401), and the action ends ``cannot_run`` saying so, instead of failing its job at
    every sweep; nothing is sent."""
    action_id = uuid.UUID(approve(approver, case_json(approver, linen.case_id)["proposals"][0]))
    key = _shops_key(session, settings, linen)
    sandbox.revoke_key(key)
    moment = utcnow()

    assert execute_action(_pinned(ctx, moment), action_id) == "cannot_run"

    action = action_json(approver, str(action_id))
    assert action["status_reason"].startswith(
        "the action cannot run: Stripe no longer accepts the key rk_test_"
    )
    assert "connect Stripe again" in action["status_reason"]
    assert key[12:] not in action["status_reason"]
    assert action["attempts"] == []
    assert refunds_of_action(account, str(action_id)) == []


def test_a_key_revoked_between_the_read_and_the_send_stops_the_action_unsent(
    linen: LinenShop,
    approver: Staff,
    account: Account,
    sandbox: StripeSandbox,
    ctx: ExecutionContext,
    settings: Settings,
    session: Session,
) -> None:
    """The merchant rolls the shop's key at Stripe while our checks read the payment: the
    refund is refused (401) before Stripe does anything with it, so the action ends
    ``cannot_run`` in front of a person, saying it was not sent, not ``rejected`` and not
    queued again to fail the same way."""
    action_id = uuid.UUID(approve(approver, case_json(approver, linen.case_id)["proposals"][0]))
    key = _shops_key(session, settings, linen)
    hold = sandbox.arm_fault("hold", method="GET", path="/v1/payment_intents/*", account=account.id)

    outcome = _executed_around_a_hold(
        sandbox, ctx, action_id, hold, lambda: sandbox.revoke_key(key)
    )

    assert outcome == "cannot_run"
    action = action_json(approver, str(action_id))
    assert [(a["purpose"], a["outcome"]) for a in action["attempts"]] == [("submit", "rejected")]
    assert "no longer accepts the key rk_" in action["status_reason"]
    assert key[12:] not in action["status_reason"]
    stopped = _last_event(session, action_id, "action.cannot_run")
    assert stopped.data["reason"].startswith("the action was not sent: Stripe no longer accepts")
    assert "connect Stripe again" in stopped.data["reason"]
    assert refunds_of_action(account, str(action_id)) == []


def test_a_resend_whose_adapter_cannot_be_built_goes_to_a_person(
    linen: LinenShop,
    approver: Staff,
    account: Account,
    sandbox: StripeSandbox,
    ctx: ExecutionContext,
    session: Session,
) -> None:
    action_id = _unknown_action("drop_before_commit", sandbox, account, ctx, approver, linen)
    moment = utcnow()

    # The look-up finds nothing; by the resend the connection is gone. The first send may
    # still land, so this is a person's decision, not "cannot run".
    assert reconcile_action(_pinned(_adapters_failing_from_call(ctx, 2), moment), action_id) == (
        "needs_decision"
    )

    reason = "the action cannot run: the Stripe connection was removed"
    action = _stopped_and_nothing_refunded(
        approver,
        session,
        account,
        action_id,
        event="action.needs_decision",
        moment=moment,
        reason=reason,
    )
    assert [a["purpose"] for a in action["attempts"]] == ["submit", "find"]


# ------------------------------------------------------------------ errors during the send


class _SendingThrough:
    """The shop's real adapter, its one send made by ``send`` (given the real adapter)."""

    name = "stripe"

    def __init__(
        self,
        real: ProviderAdapter,
        send: Callable[[ProviderAdapter, ActionRequest], ProviderAnswer],
    ) -> None:
        self._real, self._send = real, send

    def facts(self, kind: ActionKind, target: str) -> TargetFacts:
        return self._real.facts(kind, target)

    def submit(self, request: ActionRequest) -> ProviderAnswer:
        return self._send(self._real, request)

    def find(self, request: ActionRequest) -> ProviderAnswer | None:
        return self._real.find(request)


def _sending_through(
    ctx: ExecutionContext, send: Callable[[ProviderAdapter, ActionRequest], ProviderAnswer]
) -> ExecutionContext:
    def adapters(
        session: Session, shop_id: uuid.UUID, provider: str, *, connection: Connection | None = None
    ) -> ProviderAdapter:
        real = ctx.adapters(session, shop_id, provider, connection=connection)
        return _SendingThrough(real, send)

    return replace(ctx, adapters=adapters)


def test_a_request_the_adapter_will_not_build_cannot_run_and_says_why(
    linen: LinenShop,
    approver: Staff,
    account: Account,
    ctx: ExecutionContext,
    session: Session,
) -> None:
    """Stripe's adapter refuses a refund of nothing before sending it: nothing left, and
    the same request would be refused again, so the action ends in front of a person."""
    action_id = uuid.UUID(approve(approver, case_json(approver, linen.case_id)["proposals"][0]))
    moment = utcnow()

    def of_nothing(real: ProviderAdapter, request: ActionRequest) -> ProviderAnswer:
        return real.submit(replace(request, amount=0))

    assert execute_action(_pinned(_sending_through(ctx, of_nothing), moment), action_id) == (
        "cannot_run"
    )

    action = action_json(approver, str(action_id))
    assert action["status_reason"] == "a refund needs a positive amount, not 0"
    stopped = _last_event(session, action_id, "action.cannot_run")
    assert (stopped.created_at, stopped.data["reason"]) == (
        moment,
        "the action was not sent: a refund needs a positive amount, not 0",
    )
    assert refunds_of_action(account, str(action_id)) == []
    assert [(a["purpose"], a["outcome"]) for a in action["attempts"]] == [("submit", "rejected")]


def test_a_value_error_during_a_send_fails_the_job_and_the_refund_is_found_later(
    linen: LinenShop,
    approver: Staff,
    account: Account,
    ctx: ExecutionContext,
    queue: Queue,
    session: Session,
) -> None:
    """A ``ValueError`` from a bug once the refund went out is no "nothing was sent": the
    job fails, the action stays sent, and the sweeper's look-up finds the refund, once."""
    action_id = uuid.UUID(approve(approver, case_json(approver, linen.case_id)["proposals"][0]))

    def then_a_bug(real: ProviderAdapter, request: ActionRequest) -> ProviderAnswer:
        real.submit(request)
        raise ValueError("a bug reading the answer")

    with pytest.raises(ValueError, match="a bug reading the answer"):
        execute_action(_sending_through(ctx, then_a_bug), action_id)

    assert _action(session, action_id).status == "submitting"
    [refund] = refunds_of_action(account, str(action_id))
    later = utcnow() + timedelta(seconds=ctx.settings.stuck_submission_seconds + 1)
    assert sweep(_pinned(ctx, later), queue)["marked_unknown"] == [str(action_id)]
    assert reconcile_action(_pinned(ctx, later), action_id) == "succeeded"
    assert _action(session, action_id).provider_ref == refund["id"]
    assert refunds_of_action(account, str(action_id)) == [refund]


def _stopped_and_nothing_refunded(
    approver: Staff,
    session: Session,
    account: Account,
    action_id: uuid.UUID,
    *,
    event: str,
    moment: datetime,
    reason: str,
) -> dict[str, Any]:
    """The action as the API shows it, once shown to have stopped for ``reason`` (its
    status reason, and its ``event`` recorded at ``moment`` with that reason) with no
    refund at Stripe."""
    action: dict[str, Any] = action_json(approver, str(action_id))
    assert action["status_reason"] == reason
    stopped = _last_event(session, action_id, event)
    assert (stopped.created_at, stopped.data["reason"]) == (moment, reason)
    assert refunds_of_action(account, str(action_id)) == []
    return action
