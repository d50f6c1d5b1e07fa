"""An edit of the amount alone, through the staff API, voids what was approved.

The amount is what an approver looked at hardest; the proposal here has no line items,
so changing the amount changes nothing else a person reviews. After such an edit the
approval already given no longer counts, an approval of the old digest is refused as
stale, and an action queued from the old amount is halted before anything is sent.

Real PostgreSQL (or SQLite), Redis, the Stripe sandbox over HTTP; the worker's own
function runs the action in-process.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from typing import Any

import pytest
from fault_support import action_json, reset_sandbox_switches
from money_path_harness import Account, Staff

from app.demo import APPROVER, LinenShop
from app.execution.executor import ExecutionContext, execute_action
from integrations.stripe.sandbox import StripeSandbox


@pytest.fixture(autouse=True)
def _clean_sandbox(sandbox: StripeSandbox) -> Iterator[None]:
    reset_sandbox_switches(sandbox)
    yield
    reset_sandbox_switches(sandbox)


def _ok(response: Any, status: int = 200) -> Any:
    assert response.status_code == status, response.get_json()
    return response.get_json()


def _draft(linen: LinenShop, amount: int) -> dict[str, Any]:
    return {
        "kind": "refund",
        "target": linen.payment_intent_id,
        "amount": amount,
        "currency": "usd",
        "params": {"reason": "requested_by_customer"},
        "reason": "One apron arrived torn.",
    }


def _propose(proposer: Staff, linen: LinenShop, amount: int) -> dict[str, Any]:
    body = _ok(proposer.post(f"/api/cases/{linen.case_id}/proposals", _draft(linen, amount)), 201)
    proposal: dict[str, Any] = body["proposal"]
    assert proposal["status"] == "awaiting_approval", proposal
    return proposal


def _edit_amount(proposer: Staff, linen: LinenShop, proposal: dict[str, Any], amount: int) -> Any:
    """The same draft as proposed, with only the amount changed."""
    edited = _ok(proposer.put(f"/api/proposals/{proposal['id']}", _draft(linen, amount)))
    return edited["proposal"]


def _approve(staff: Staff, proposal: dict[str, Any], digest: str) -> Any:
    return staff.post(f"/api/proposals/{proposal['id']}/approve", {"digest": digest})


def _approvals(staff: Staff, linen: LinenShop, proposal_id: str) -> list[dict[str, Any]]:
    case = _ok(staff.get(f"/api/cases/{linen.case_id}"))
    [proposal] = [p for p in case["proposals"] if p["id"] == proposal_id]
    approvals: list[dict[str, Any]] = proposal["approvals"]
    return approvals


def _assert_stale(response: Any) -> None:
    assert response.status_code == 409, (
        "an approval of the digest reviewed before the amount changed must be refused, "
        f"not answered {response.status_code}: {response.get_json()}"
    )
    assert response.get_json()["error"]["code"] == "stale_digest"


def test_an_edit_of_the_amount_alone_voids_the_approval_already_given(
    linen: LinenShop, owner: Staff, approver: Staff, proposer: Staff
) -> None:
    _ok(owner.put("/api/shop/policy", {"rules": {"two_person_threshold": {"usd": 4000}}}))
    reviewed = _propose(proposer, linen, 4800)
    assert reviewed["approvals_required"] == 2
    assert _ok(_approve(approver, reviewed, reviewed["digest"]))["action"] is None

    edited = _edit_amount(proposer, linen, reviewed, 4700)

    assert edited["digest"] != reviewed["digest"], "the amount is part of what was reviewed"
    [voided] = _approvals(owner, linen, reviewed["id"])
    assert (voided["approver"], voided["void_reason"]) == (APPROVER, "the proposal was edited")
    _assert_stale(_approve(owner, reviewed, reviewed["digest"]))
    # The earlier approval does not count: one fresh approval is still one of two.
    after_owner = _ok(_approve(owner, edited, edited["digest"]))
    assert after_owner["action"] is None, "the approval of the old amount still counted"
    assert after_owner["proposal"]["status"] == "awaiting_approval"
    action = _ok(_approve(approver, edited, edited["digest"]))["action"]
    assert action["amount"]["amount"] == 4700


def test_an_edit_of_the_amount_alone_halts_the_queued_action_before_any_send(
    linen: LinenShop,
    approver: Staff,
    proposer: Staff,
    account: Account,
    sandbox: StripeSandbox,
    ctx: ExecutionContext,
) -> None:
    already = len(sandbox.received_requests(account.id))  # the shop's seeding
    reviewed = _propose(proposer, linen, 4800)
    queued = _ok(_approve(approver, reviewed, reviewed["digest"]))["action"]
    assert queued["status"] == "queued"

    edited = _edit_amount(proposer, linen, reviewed, 4700)

    assert edited["digest"] != reviewed["digest"], "the amount is part of what was reviewed"
    assert action_json(approver, queued["id"])["status"] == "halted"
    assert execute_action(ctx, uuid.UUID(queued["id"])) == "halted"
    since = sandbox.received_requests(account.id)[already:]
    assert [(r.path, r.idempotency_key) for r in since if r.method == "POST"] == []
    _assert_stale(_approve(approver, reviewed, reviewed["digest"]))
    assert list(account.stripe.v1.refunds.list().data) == []
