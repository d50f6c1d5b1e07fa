"""The executor in this process against the receiving server: refusals that are neither
the merchant saying no to the action nor an unclear outcome.

A 401 (the endpoint no longer accepts Caseward's signature: its secret was rotated away)
is a connection a person must mend. On a first send nothing left Caseward's hands that
could land, so the action cannot run; on a resend the first send may still land, so a
person decides. Both say the endpoint's words. Run in-process, these are the tests mutation
testing can see (``[tool.mutmut]`` in pyproject.toml).
"""

from __future__ import annotations

import uuid
from typing import Any

from fault_support import action_json, approve
from merchant_support import MerchantShop, Receiver, Staff

from app.execution.executor import ExecutionContext, execute_action, reconcile_action

APRON = 4800


def _approved_refund(proposer: Staff, approver: Staff, shop: MerchantShop) -> uuid.UUID:
    proposed = proposer.post(
        f"/api/cases/{shop.case_id}/proposals",
        {
            "provider": "merchant",
            "kind": "refund",
            "target": shop.payment,
            "amount": APRON,
            "currency": "usd",
            "params": {"reason": "requested_by_customer"},
        },
    )
    assert proposed.status_code == 201, proposed.get_json()
    return uuid.UUID(approve(approver, proposed.get_json()["proposal"]))


def _last_event(staff: Staff, shop: MerchantShop, kind: str) -> dict[str, Any]:
    events = staff.get(f"/api/cases/{shop.case_id}/audit").get_json()["events"]
    return [event for event in events if event["kind"] == kind][-1]


def test_a_first_send_whose_signature_the_endpoint_refuses_cannot_run_and_says_why(
    shop: MerchantShop,
    proposer: Staff,
    approver: Staff,
    receiver: Receiver,
    ctx: ExecutionContext,
) -> None:
    action_id = _approved_refund(proposer, approver, shop)
    receiver.refuse_next(401, "signature_refused", path="/actions")

    assert execute_action(ctx, action_id) == "cannot_run"

    action = action_json(approver, str(action_id))
    assert [(a["purpose"], a["outcome"]) for a in action["attempts"]] == [("submit", "rejected")]
    assert "signature_refused" in action["status_reason"]
    stopped = _last_event(approver, shop, "action.cannot_run")
    assert stopped["data"]["reason"] == f"the action was not sent: {action['status_reason']}"
    assert receiver.effects() == []


def test_a_resend_whose_signature_the_endpoint_refuses_goes_to_a_person(
    shop: MerchantShop,
    proposer: Staff,
    approver: Staff,
    receiver: Receiver,
    ctx: ExecutionContext,
) -> None:
    action_id = _approved_refund(proposer, approver, shop)
    receiver.arm(path="/actions", kind="error_500_before_commit")
    assert execute_action(ctx, action_id) == "unknown"
    receiver.refuse_next(401, "signature_refused", path="/actions")

    # The look-up finds nothing, the resend is refused: the first send may still land.
    assert reconcile_action(ctx, action_id) == "needs_decision"

    action = action_json(approver, str(action_id))
    assert [(a["purpose"], a["outcome"]) for a in action["attempts"]] == [
        ("submit", "unknown"),
        ("find", "absent"),
        ("resubmit", "rejected"),
    ]
    decided = _last_event(approver, shop, "action.needs_decision")
    assert decided["data"]["reason"] == (
        f"the action could not be sent again: {action['status_reason']}"
    )
    assert receiver.effects() == []
