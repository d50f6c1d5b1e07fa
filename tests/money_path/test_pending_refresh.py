"""A pending refund's status moves on even when no webhook ever arrives."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace

import pytest
from fault_support import approve, case_json, reset_sandbox_switches
from money_path_harness import Account, Staff, WorkerProcess, wait_for
from rq import Queue

from app.background import sweep
from app.demo import LinenShop
from app.execution.executor import ExecutionContext
from integrations.stripe.sandbox import StripeSandbox


@pytest.fixture
def quiet_sandbox(sandbox: StripeSandbox, account: Account) -> Iterator[StripeSandbox]:
    sandbox.pause_webhooks()
    sandbox.set_refund_mode(account.id, "pending_processing", settle_after=60)
    yield sandbox
    sandbox.set_refund_mode(account.id, None)
    reset_sandbox_switches(sandbox)


def test_the_sweeper_asks_stripe_again_about_a_pending_refund(
    linen: LinenShop,
    approver: Staff,
    account: Account,
    quiet_sandbox: StripeSandbox,
    ctx: ExecutionContext,
    queue: Queue,
    worker: WorkerProcess,
) -> None:
    action_id = approve(approver, case_json(approver, linen.case_id)["proposals"][0])
    pending = wait_for(
        lambda: (
            (a := approver.get(f"/api/actions/{action_id}").get_json())["status"] == "pending" and a
        ),
        what="the refund to be pending at Stripe",
    )
    refund = account.stripe.v1.refunds.retrieve(pending["provider_ref"])
    assert (refund.status, refund.pending_reason) == ("pending", "processing")

    quiet_sandbox.advance_clock(61)
    assert account.stripe.v1.refunds.retrieve(refund.id).status == "succeeded"
    assert approver.get(f"/api/actions/{action_id}").get_json()["status"] == "pending"

    eager = replace(ctx, settings=replace(ctx.settings, pending_refresh_seconds=0.0))
    report = sweep(eager, queue)

    assert report["refreshing"] == [action_id]
    wait_for(
        lambda: approver.get(f"/api/actions/{action_id}").get_json()["status"] == "succeeded",
        what="the refreshed status",
    )
    assert sweep(eager, queue)["refreshing"] == []
