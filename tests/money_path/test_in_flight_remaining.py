"""Refunds in flight count against what is left to refund, end to end.

Two refunds on one $96 payment are proposed together ($60 and $50: each fits alone, not
both) and approved. The first is still in flight when the worker checks the second:
queued and not yet sent, or sent and unclear (the request was lost before Stripe
committed it). Stripe
shows nothing for it, so only the count of our in-flight actions can stop the second,
which is halted before any request. Whatever happens after, no more than was captured
is ever asked of Stripe, as the sandbox's record of the requests it received shows.

In-process executor calls (the worker's own functions) against the sandbox over HTTP.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator

import pytest
from fault_support import (
    action_json,
    approve,
    assert_money_invariants,
    propose_refund,
    refunds_of_action,
    reset_sandbox_switches,
)
from money_path_harness import Account, Staff

from app.demo import LinenShop
from app.execution.executor import ExecutionContext, execute_action, reconcile_action
from integrations.stripe.sandbox import StripeSandbox

CAPTURED = 9600
FIRST, SECOND = 6000, 5000


@pytest.fixture(autouse=True)
def _clean_sandbox(sandbox: StripeSandbox) -> Iterator[None]:
    reset_sandbox_switches(sandbox)
    sandbox.pause_webhooks()  # only our own calls tell the actions what happened
    yield
    reset_sandbox_switches(sandbox)


def _asked_of_stripe(
    sandbox: StripeSandbox, account: Account, amounts: dict[str, int]
) -> dict[str, int]:
    """The amount of each action whose refund request reached Stripe (resends once)."""
    keys = {f"caseward-action-{action_id}": action_id for action_id in amounts}
    sent = {
        keys[r.idempotency_key]
        for r in sandbox.received_requests(account.id)
        if (r.method, r.path) == ("POST", "/v1/refunds") and r.idempotency_key in keys
    }
    return {action_id: amounts[action_id] for action_id in sent}


@pytest.mark.parametrize("first_is", ["queued", "unknown"])
def test_a_refund_is_halted_while_another_on_the_payment_is_in_flight(
    first_is: str,
    linen: LinenShop,
    proposer: Staff,
    approver: Staff,
    account: Account,
    sandbox: StripeSandbox,
    ctx: ExecutionContext,
) -> None:
    # Both proposed before either is approved: each fits what is left on its own.
    proposals = [
        propose_refund(proposer, linen.case_id, linen.payment_intent_id, amount)
        for amount in (FIRST, SECOND)
    ]
    assert [p["status"] for p in proposals] == ["awaiting_approval"] * 2
    first = approve(approver, proposals[0])
    if first_is == "unknown":
        sandbox.arm_fault(
            "drop_before_commit", method="POST", path="/v1/refunds", account=account.id
        )
        assert execute_action(ctx, uuid.UUID(first)) == "unknown"
    # Approving does not check again: the worker's check right before sending is the one.
    second = approve(approver, proposals[1])
    assert refunds_of_action(account, first) == []  # Stripe shows nothing for the first

    status = execute_action(ctx, uuid.UUID(second))

    halted = action_json(approver, second)
    assert status == "halted", (
        "a refund above what is left once the in-flight refund is counted must be halted, "
        f"not {status}: {halted['status_reason']}"
    )
    assert "exceeds what is left to refund" in halted["status_reason"]
    assert "$60.00 in flight" in halted["status_reason"]
    assert second not in _asked_of_stripe(sandbox, account, {first: FIRST, second: SECOND})

    # The first goes through; the payment never had more asked of it than was captured.
    if first_is == "unknown":
        assert reconcile_action(ctx, uuid.UUID(first)) == "succeeded"
    else:
        assert execute_action(ctx, uuid.UUID(first)) == "succeeded"
    asked = _asked_of_stripe(sandbox, account, {first: FIRST, second: SECOND})
    assert sum(asked.values()) <= CAPTURED, f"refunds above the capture reached Stripe: {asked}"
    refunds = assert_money_invariants(account, ctx.session_factory, linen.shop_id)
    assert [(r["amount"], r["metadata"]["caseward_action_id"]) for r in refunds] == [(FIRST, first)]
