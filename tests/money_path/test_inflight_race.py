"""The in-flight race, made deterministic: only our count of refunds in flight stops it.

Two refunds on one $96 payment, $60 and $50, each fitting on its own, are proposed and
approved one after the other. A worker process takes the first and sends it; the Stripe
sandbox holds that request before committing it, so the worker's call is inside Stripe,
our action says ``submitting``, and Stripe shows no refund at all. Meanwhile a second
worker process executes the second refund. Stripe's facts say $96 is left, so only the
$60 we have in flight can tell the worker that $50 no longer fits: it must halt the
second, naming the in-flight amount, before any request. Then the first is released and
succeeds. At Stripe: one refund, the first, and never more than was captured.

Row locks (``SELECT ... FOR UPDATE``) serialise the workers' checks; SQLite has none, so
this runs on PostgreSQL only.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import replace

import pytest
from fault_support import (
    ACTION_ID_KEY,
    action_json,
    all_refunds,
    approve,
    assert_money_invariants,
    propose_refund,
    reset_sandbox_switches,
    wait_for_status,
)
from money_path_harness import Account, Staff, WorkerProcess, wait_for

from app.demo import LinenShop
from app.execution.executor import ExecutionContext
from app.settings import Settings
from integrations.stripe.sandbox import StripeSandbox

CAPTURED = 9600
FIRST, SECOND = 6000, 5000
# Every status an action can stop in once a worker is done with it.
SETTLED = ("halted", "succeeded", "rejected", "failed", "unknown", "needs_decision", "cannot_run")


@pytest.fixture(autouse=True)
def _clean_sandbox(sandbox: StripeSandbox) -> Iterator[None]:
    reset_sandbox_switches(sandbox)
    yield
    reset_sandbox_switches(sandbox)  # releases a hold a failed test left behind


@pytest.fixture
def patient_worker(settings: Settings, redis_url: str) -> Iterator[Callable[[], WorkerProcess]]:
    """Worker processes whose provider calls wait 30 s: longer than any hold here."""
    workers: list[WorkerProcess] = []

    def start() -> WorkerProcess:
        worker = WorkerProcess(replace(settings, provider_timeout_seconds=30.0), redis_url)
        workers.append(worker)
        return worker

    yield start
    for worker in workers:
        worker.stop()


def _waiting_at(sandbox: StripeSandbox, hold_id: str) -> int:
    return next(h.waiting for h in sandbox.holds() if h.id == hold_id)


def test_a_refund_held_inside_stripe_stops_a_second_one_through_the_in_flight_count(
    linen: LinenShop,
    proposer: Staff,
    approver: Staff,
    account: Account,
    sandbox: StripeSandbox,
    settings: Settings,
    ctx: ExecutionContext,
    patient_worker: Callable[[], WorkerProcess],
) -> None:
    if settings.database_url.startswith("sqlite"):
        pytest.skip(
            "two workers checking one payment at once are serialised by row locks "
            "(SELECT ... FOR UPDATE), which SQLite does not have: PostgreSQL only"
        )
    # Both proposed before either is approved: each fits what is left on its own.
    proposals = [
        propose_refund(proposer, linen.case_id, linen.payment_intent_id, amount)
        for amount in (FIRST, SECOND)
    ]
    assert [p["status"] for p in proposals] == ["awaiting_approval"] * 2
    hold = sandbox.arm_fault("hold", method="POST", path="/v1/refunds", account=account.id)
    first = approve(approver, proposals[0])
    patient_worker()

    wait_for(lambda: _waiting_at(sandbox, hold.id) == 1, what="the first refund held at Stripe")
    assert action_json(approver, first)["status"] == "submitting"
    assert all_refunds(account) == [], "Stripe must show nothing of the held refund yet"

    second = approve(approver, proposals[1])
    patient_worker()  # the first worker is busy waiting on Stripe
    ended = wait_for_status(approver, second, SETTLED)

    assert ended["status"] == "halted", (
        "with $60 in flight and Stripe showing nothing, only the in-flight count can stop "
        f"the $50 refund; it ended {ended['status']}: {ended['status_reason']}"
    )
    assert ended["status_reason"].startswith("checks at execution:")
    assert "exceeds what is left to refund" in ended["status_reason"]
    assert "$60.00 in flight" in ended["status_reason"]
    assert ended["attempts"] == []
    # The first was inside Stripe the whole time.
    assert _waiting_at(sandbox, hold.id) == 1
    assert action_json(approver, first)["status"] == "submitting"

    sandbox.release_hold(hold.id)
    done = wait_for_status(approver, first, SETTLED)

    assert done["status"] == "succeeded", (done["status"], done["status_reason"])
    refunds = assert_money_invariants(account, ctx.session_factory, linen.shop_id)
    assert [(r["amount"], r["metadata"][ACTION_ID_KEY]) for r in refunds] == [(FIRST, first)]
    assert done["provider_ref"] == refunds[0]["id"]
    refund_requests = [
        r.idempotency_key
        for r in sandbox.received_requests(account.id)
        if (r.method, r.path) == ("POST", "/v1/refunds")
    ]
    assert refund_requests == [done["idempotency_key"]], "the second refund reached Stripe"
    charge = account.stripe.v1.charges.retrieve(refunds[0]["charge"])
    assert charge.amount_refunded == FIRST <= CAPTURED == charge.amount_captured
