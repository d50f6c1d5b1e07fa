"""Unknown outcomes (issue 3, point 9): looked up at the provider, settled or resent with
the same key, past the key's lifetime left to a person; and a request that commits at
Stripe only after we gave up on it is still recorded as Stripe reports it.

Real PostgreSQL (or SQLite), Redis, an RQ worker process and the Stripe sandbox over HTTP;
the sandbox's fault injection makes the provider's answer go missing.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterator
from dataclasses import replace
from datetime import datetime, timedelta
from typing import Any

import pytest
from fault_support import (
    action_json,
    approve,
    assert_money_invariants,
    assert_unclear_at_once,
    case_audit_json,
    case_json,
    napkin_subscription,
    refunds_of_action,
    reset_sandbox_switches,
    run_queued_jobs,
    sweeping,
    wait_for_status,
)
from money_path_harness import Account, Staff, WorkerProcess, wait_for
from rq import Queue

from app.background import sweep
from app.clock import utcnow
from app.connections.adapters import connection_adapters
from app.crypto import secret_box
from app.demo import APPROVER, LinenShop
from app.execution.executor import (
    ExecutionContext,
    execute_action,
    reconcile_action,
    refresh_action,
)
from app.execution.models import Action
from app.settings import Settings
from integrations.stripe.sandbox import StripeSandbox


@pytest.fixture(autouse=True)
def _clean_sandbox(sandbox: StripeSandbox) -> Iterator[None]:
    reset_sandbox_switches(sandbox)
    yield
    reset_sandbox_switches(sandbox)


def _arm(sandbox: StripeSandbox, account: Account, kind: str) -> None:
    """The next refund request of this account suffers ``kind``; webhooks are held, so
    only reconciliation (not a refund.created webhook) can tell us what happened."""
    sandbox.pause_webhooks()
    sandbox.arm_fault(kind, method="POST", path="/v1/refunds", account=account.id)


@pytest.mark.parametrize("fault", ["drop_after_commit", "error_500_after_commit"])
def test_a_committed_refund_whose_answer_is_lost_is_found_by_metadata_not_resent(
    fault: str,
    linen: LinenShop,
    approver: Staff,
    account: Account,
    sandbox: StripeSandbox,
    worker: WorkerProcess,
    ctx: ExecutionContext,
    queue: Queue,
) -> None:
    _arm(sandbox, account, fault)
    action_id = approve(approver, case_json(approver, linen.case_id)["proposals"][0])

    unknown = wait_for_status(approver, action_id, ["unknown"])
    assert [(a["purpose"], a["outcome"]) for a in unknown["attempts"]] == [("submit", "unknown")]
    assert unknown["provider_ref"] is None
    # Stripe did commit it: the answer is what went missing.
    at_provider = refunds_of_action(account, action_id)
    assert [(r["amount"], r["status"]) for r in at_provider] == [(4800, "succeeded")]

    settled = wait_for_status(approver, action_id, ["succeeded"], tick=sweeping(ctx, queue))

    assert settled["provider_ref"] == at_provider[0]["id"]
    attempts = [(a["purpose"], a["outcome"]) for a in settled["attempts"]]
    assert attempts == [("submit", "unknown"), ("find", "found")]
    assert {a["idempotency_key"] for a in settled["attempts"]} == {settled["idempotency_key"]}
    assert settled["attempts"][1]["provider_ref"] == at_provider[0]["id"]
    assert case_json(approver, linen.case_id)["status"] == "resolved"
    refunds = assert_money_invariants(account, ctx.session_factory, linen.shop_id)
    assert [r["id"] for r in refunds] == [at_provider[0]["id"]]


def test_a_500_before_commit_is_looked_up_then_resent_with_the_same_key(
    linen: LinenShop,
    approver: Staff,
    account: Account,
    sandbox: StripeSandbox,
    worker: WorkerProcess,
    ctx: ExecutionContext,
    queue: Queue,
) -> None:
    _arm(sandbox, account, "error_500_before_commit")
    action_id = approve(approver, case_json(approver, linen.case_id)["proposals"][0])

    unknown = wait_for_status(approver, action_id, ["unknown"])
    assert [(a["purpose"], a["outcome"]) for a in unknown["attempts"]] == [("submit", "unknown")]
    assert refunds_of_action(account, action_id) == []

    settled = wait_for_status(approver, action_id, ["succeeded"], tick=sweeping(ctx, queue))

    attempts = [(a["purpose"], a["outcome"]) for a in settled["attempts"]]
    assert attempts == [("submit", "unknown"), ("find", "absent"), ("resubmit", "answered")]
    assert {a["idempotency_key"] for a in settled["attempts"]} == {settled["idempotency_key"]}
    at_provider = refunds_of_action(account, action_id)
    assert [(r["amount"], r["status"]) for r in at_provider] == [(4800, "succeeded")]
    assert settled["provider_ref"] == at_provider[0]["id"]
    assert_money_invariants(account, ctx.session_factory, linen.shop_id)


def test_past_the_key_lifetime_an_unseen_action_goes_to_a_person_not_resent(
    linen: LinenShop,
    approver: Staff,
    account: Account,
    sandbox: StripeSandbox,
    ctx: ExecutionContext,
    queue: Queue,
) -> None:
    _arm(sandbox, account, "error_500_before_commit")
    action_id = approve(approver, case_json(approver, linen.case_id)["proposals"][0])
    # The queued job runs here, in-process, as a worker would run it.
    run_queued_jobs(ctx, queue)
    assert approver.get(f"/api/actions/{action_id}").get_json()["status"] == "unknown"
    lifetime = ctx.settings.idempotency_key_lifetime_seconds
    with ctx.session_factory() as session, session.begin():
        action = session.get(Action, uuid.UUID(action_id))
        assert action is not None
        # The first send was longer ago than Stripe keeps keys: a resend could duplicate.
        action.first_sent_at = utcnow() - timedelta(seconds=lifetime + 3600)

    report = wait_for(
        lambda: (r := sweep(ctx, queue))["reconciling"] and r, what="the reconciliation to be due"
    )
    assert report["reconciling"] == [action_id]
    run_queued_jobs(ctx, queue)

    decided = approver.get(f"/api/actions/{action_id}").get_json()
    assert decided["status"] == "needs_decision"
    assert "idempotency key has expired" in decided["status_reason"]
    attempts = [(a["purpose"], a["outcome"]) for a in decided["attempts"]]
    assert attempts == [("submit", "unknown"), ("find", "absent")]
    case = case_json(approver, linen.case_id)
    assert case["status"] == "needs_attention"
    assert case["owner"] == APPROVER
    # Nothing later resends it: neither the sweeper nor another reconciliation.
    again = sweep(ctx, queue)
    assert action_id not in again["requeued"] + again["reconciling"]
    assert reconcile_action(ctx, uuid.UUID(action_id)) == "needs_decision"
    assert execute_action(ctx, uuid.UUID(action_id)) == "needs_decision"
    final = approver.get(f"/api/actions/{action_id}").get_json()
    assert [a["purpose"] for a in final["attempts"]] == ["submit", "find"]
    assert refunds_of_action(account, action_id) == []
    assert_money_invariants(account, ctx.session_factory, linen.shop_id)


def _slow_commit_then_look_up(
    action_id: str,
    account: Account,
    sandbox: StripeSandbox,
    ctx: ExecutionContext,
    between: Callable[[], object] = lambda: None,
) -> dict[str, Any]:
    """The first request is slow to commit: the worker gives up (unknown), the look-up
    reads before the commit and answers after it; then things go quiet."""
    # POST commits 2.2 s after it arrives: the worker (timeout 1.5 s) has given up by then.
    sandbox.arm_fault("delay", method="POST", path="/v1/refunds", account=account.id, ms=2200)
    # The look-up (GET /v1/refunds) reads at once (~1.5 s) but answers 1 s later, after that
    # commit (and still within the worker's timeout).
    sandbox.arm_fault(
        "delay", method="GET", path="/v1/refunds", account=account.id, ms=1000, when="after"
    )
    assert execute_action(ctx, uuid.UUID(action_id)) == "unknown"
    between()
    reconcile_action(ctx, uuid.UUID(action_id))
    landed: list[dict[str, Any]] = wait_for(
        lambda: refunds_of_action(account, action_id), what="the late commit"
    )
    # Quiet again: look-ups and refreshes (what a webhook triggers) may run any number of times.
    for _ in range(3):
        reconcile_action(ctx, uuid.UUID(action_id))
        refresh_action(ctx, uuid.UUID(action_id))
    assert len(landed) == 1
    return landed[0]


def _events_of(approver: Staff, linen: LinenShop, action_id: str) -> list[dict[str, Any]]:
    """The case's audit events about one action, oldest first."""
    return [e for e in case_audit_json(approver, linen.case_id) if e["action_id"] == action_id]


@pytest.fixture
def patient_ctx(ctx: ExecutionContext, settings: Settings) -> ExecutionContext:
    """In-process execution whose provider calls give up after 1.5 s."""
    patient = replace(settings, provider_timeout_seconds=1.5)
    return replace(
        ctx, adapters=connection_adapters(patient, secret_box(patient)), settings=patient
    )


def test_a_send_whose_answer_times_out_is_unclear_at_once_with_its_look_up_set(
    linen: LinenShop,
    approver: Staff,
    account: Account,
    sandbox: StripeSandbox,
    patient_ctx: ExecutionContext,
    ctx: ExecutionContext,
    queue: Queue,
) -> None:
    sandbox.pause_webhooks()
    # Stripe commits the refund, then answers 3 s later: the worker gave up at 1.5 s.
    sandbox.arm_fault(
        "delay", method="POST", path="/v1/refunds", account=account.id, ms=3000, when="after"
    )
    action_id = approve(approver, case_json(approver, linen.case_id)["proposals"][0])

    assert execute_action(patient_ctx, uuid.UUID(action_id)) == "unknown"

    unclear = assert_unclear_at_once(
        ctx.session_factory, uuid.UUID(action_id), patient_ctx.settings
    )
    [attempt] = action_json(approver, action_id)["attempts"]
    assert (attempt["purpose"], attempt["outcome"]) == ("submit", "unknown")
    assert "timed out" in attempt["detail"].lower()
    # The look-up it was given comes due, is queued by the sweep and finds the refund Stripe
    # made; nothing is sent again.
    report = wait_for(
        lambda: (r := sweep(ctx, queue))["reconciling"] and r, what="the look-up to be due"
    )
    assert report["reconciling"] == [action_id]
    assert unclear.next_check_at is not None and utcnow() >= unclear.next_check_at
    run_queued_jobs(ctx, queue)
    settled = action_json(approver, action_id)
    assert settled["status"] == "succeeded"
    assert [(a["purpose"], a["outcome"]) for a in settled["attempts"]] == [
        ("submit", "unknown"),
        ("find", "found"),
    ]
    refunds = assert_money_invariants(account, ctx.session_factory, linen.shop_id)
    assert [r["amount"] for r in refunds] == [4800]


def test_a_late_commit_landing_between_look_up_and_resend_is_recorded_as_the_provider_reports(
    linen: LinenShop,
    approver: Staff,
    account: Account,
    sandbox: StripeSandbox,
    patient_ctx: ExecutionContext,
    queue: Queue,
) -> None:
    sandbox.pause_webhooks()
    action_id = approve(approver, case_json(approver, linen.case_id)["proposals"][0])
    queue.empty()

    landed = _slow_commit_then_look_up(action_id, account, sandbox, patient_ctx)

    action = action_json(approver, action_id)
    attempts = [(a["purpose"], a["outcome"]) for a in action["attempts"]]
    assert (action["status"], action["provider_ref"]) == ("succeeded", landed["id"]), (
        action["status"],
        action["status_reason"],
        attempts,
    )
    assert "resubmit" not in [purpose for purpose, _ in attempts]
    # Recognised as ours by the re-check before the resend, not stopped by a check and
    # settled later by a look-up.
    events = _events_of(approver, linen, action_id)
    assert "action.needs_decision" not in [e["kind"] for e in events]
    reported = [e for e in events if e["kind"] == "action.provider_status"]
    assert reported[0]["data"]["source"] == "re-check"
    assert_money_invariants(account, patient_ctx.session_factory, linen.shop_id)


@pytest.mark.parametrize("stop", ["kill_switch", "approval_expired"])
def test_a_sent_action_stopped_before_its_resend_still_records_a_late_commit(
    stop: str,
    linen: LinenShop,
    approver: Staff,
    account: Account,
    sandbox: StripeSandbox,
    patient_ctx: ExecutionContext,
    queue: Queue,
) -> None:
    """Once a request may have reached Stripe, no stop (kill switch, approval expiry) may
    turn the action into a final "not sent" status that later news cannot change."""
    sandbox.pause_webhooks()
    action_id = approve(approver, case_json(approver, linen.case_id)["proposals"][0])
    queue.empty()

    def stop_it() -> None:
        if stop == "kill_switch":
            response = approver.put("/api/shop/kill-switch", {"engaged": True})
            assert response.status_code == 200, response.get_json()
            return
        with patient_ctx.session_factory() as session, session.begin():
            action = session.get(Action, uuid.UUID(action_id))
            assert action is not None
            action.approval_expires_at = utcnow() - timedelta(seconds=1)

    landed = _slow_commit_then_look_up(action_id, account, sandbox, patient_ctx, stop_it)

    action = action_json(approver, action_id)
    attempts = [(a["purpose"], a["outcome"]) for a in action["attempts"]]
    assert (action["status"], action["provider_ref"]) == ("succeeded", landed["id"]), (
        action["status"],
        action["status_reason"],
        attempts,
    )
    assert_money_invariants(account, patient_ctx.session_factory, linen.shop_id)


@pytest.mark.parametrize("kind", ["customer_credit", "discount", "subscription_change"])
def test_a_late_credit_discount_or_change_is_recognised_before_the_resend(
    kind: str,
    linen: LinenShop,
    proposer: Staff,
    approver: Staff,
    account: Account,
    sandbox: StripeSandbox,
    patient_ctx: ExecutionContext,
    queue: Queue,
) -> None:
    sandbox.pause_webhooks()
    customer = linen.customer_id
    if kind == "customer_credit":
        draft: dict[str, Any] = {
            "kind": kind,
            "target": customer,
            "amount": 1500,
            "currency": "usd",
            "params": {"description": "Sorry about the torn apron"},
        }
        write = look_up = f"/v1/customers/{customer}/balance_transactions"
    elif kind == "discount":
        draft = {
            "kind": kind,
            "target": customer,
            "amount": 960,
            "currency": "usd",
            "params": {"percent_off": 10, "duration": "once"},
        }
        write = look_up = "/v1/promotion_codes"
    else:
        sub_id, _, deluxe = napkin_subscription(account, customer)
        draft = {
            "kind": kind,
            "target": sub_id,
            "params": {"items": [{"price": deluxe, "quantity": 2}]},
        }
        write = look_up = f"/v1/subscriptions/{sub_id}"
    proposed = proposer.post(f"/api/cases/{linen.case_id}/proposals", draft)
    assert proposed.status_code == 201, proposed.get_json()
    action_id = approve(approver, proposed.get_json()["proposal"])
    queue.empty()
    # The write commits 2.2 s after it arrives, when the worker (1.5 s) has given up; the
    # look-up reads at once and answers a second later, after that commit.
    sandbox.arm_fault("delay", method="POST", path=write, account=account.id, ms=2200)
    assert execute_action(patient_ctx, uuid.UUID(action_id)) == "unknown"
    sandbox.arm_fault(
        "delay", method="GET", path=look_up, account=account.id, ms=1000, when="after"
    )

    moment = utcnow()
    reconcile_action(replace(patient_ctx, clock=lambda: moment), uuid.UUID(action_id))

    action = action_json(approver, action_id)
    attempts = [(a["purpose"], a["outcome"]) for a in action["attempts"]]
    assert action["status"] == "succeeded", (action["status_reason"], attempts)
    assert attempts == [("submit", "unknown"), ("find", "absent")]
    events = _events_of(approver, linen, action_id)
    [reported] = [e for e in events if e["kind"] == "action.provider_status"]
    assert reported["data"]["source"] == "re-check"
    assert datetime.fromisoformat(reported["created_at"]) == moment
    assert reported["data"]["provider_ref"] == action["provider_ref"]
    if kind == "customer_credit":
        credits = account.stripe.v1.customers.balance_transactions.list(customer).data
        assert [(c.id, c.amount) for c in credits] == [(action["provider_ref"], -1500)]
    elif kind == "discount":
        codes = account.stripe.v1.promotion_codes.list(params={"customer": customer}).data
        assert [code.id for code in codes] == [action["provider_ref"]]
    else:
        assert action["provider_ref"] == draft["target"]
