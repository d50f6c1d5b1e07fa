"""The seed article's cases, end to end through the API, a worker process and the sandbox."""

from __future__ import annotations

from typing import Any

from money_path_harness import Account, Staff, WorkerProcess, wait_for

from app.demo import APRON_LINE, LinenShop


def _case(staff: Staff, linen: LinenShop) -> dict[str, Any]:
    response = staff.get(f"/api/cases/{linen.case_id}")
    assert response.status_code == 200, response.get_json()
    return response.get_json()


def _refunds(account: Account, payment_intent: str) -> list[Any]:
    return list(account.stripe.v1.refunds.list(params={"payment_intent": payment_intent}).data)


def test_approved_48_dollar_refund_becomes_exactly_one_48_dollar_refund(
    linen: LinenShop, approver: Staff, account: Account, worker: WorkerProcess
) -> None:
    proposal = _case(approver, linen)["proposals"][0]
    assert proposal["status"] == "awaiting_approval"
    assert proposal["amount"] == {"amount": 4800, "currency": "usd", "display": "$48.00"}
    assert all(check["passed"] for check in proposal["verdict"]["checks"])

    response = approver.post(
        f"/api/proposals/{proposal['id']}/approve", {"digest": proposal["digest"]}
    )
    assert response.status_code == 200, response.get_json()
    action_id = response.get_json()["action"]["id"]

    action = wait_for(
        lambda: (
            (a := approver.get(f"/api/actions/{action_id}").get_json())["status"] == "succeeded"
            and a
        ),
        what="the refund to succeed",
    )
    refunds = _refunds(account, linen.payment_intent_id)
    assert [(r.amount, r.currency, r.status) for r in refunds] == [(4800, "usd", "succeeded")]
    assert action["provider_ref"] == refunds[0].id
    assert refunds[0].metadata["caseward_action_id"] == action_id
    assert [a["purpose"] for a in action["attempts"]] == ["submit"]
    assert action["attempts"][0]["idempotency_key"] == action["idempotency_key"]
    case = _case(approver, linen)
    assert case["status"] == "resolved"
    kinds = [
        e["kind"] for e in approver.get(f"/api/cases/{linen.case_id}/audit").get_json()["events"]
    ]
    assert kinds[-4:] == [
        "proposal.approved",
        "action.queued",
        "action.submit",
        "action.provider_status",
    ]


def test_an_already_handled_request_is_blocked_as_a_duplicate(
    linen: LinenShop, approver: Staff, proposer: Staff, account: Account, worker: WorkerProcess
) -> None:
    proposal = _case(approver, linen)["proposals"][0]
    approved = approver.post(
        f"/api/proposals/{proposal['id']}/approve", {"digest": proposal["digest"]}
    )
    action_id = approved.get_json()["action"]["id"]
    wait_for(
        lambda: approver.get(f"/api/actions/{action_id}").get_json()["status"] == "succeeded",
        what="the first refund",
    )

    again = proposer.post(
        f"/api/cases/{linen.case_id}/proposals",
        {
            "kind": "refund",
            "target": linen.payment_intent_id,
            "amount": 4800,
            "currency": "usd",
            "line_items": [{"line_id": APRON_LINE, "amount": 4800}],
        },
    )

    assert again.status_code == 201
    second = again.get_json()["proposal"]
    assert second["status"] == "blocked"
    failing = {c["name"]: c["reason"] for c in second["verdict"]["checks"] if not c["passed"]}
    assert any("duplicate" in name for name in failing), failing
    assert len(_refunds(account, linen.payment_intent_id)) == 1
