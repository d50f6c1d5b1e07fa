"""The money path through the merchant's own endpoint, as production runs it (Caseward
issue 11, point 6): staff propose and approve through the staff API, a real RQ worker
process sends, the sweeper's reconciliation settles what is unclear, and the receiving
server in its own process is the merchant.

One approved refund, one effect at the receiver, whatever happens on the way: an answer
slower than the worker waits after the receiver committed, a 500 after the commit, a 500
before it (then resent with the same key), the receiver crashing right after its commit
and restarting before the look-up. Each time the receiver's own records say it: one
effect, and every request for the action carried the action's one idempotency key.
"""

from __future__ import annotations

import uuid
from typing import Any

import pytest
from fault_support import approve, case_json, sweeping, wait_for_status
from flask import Flask
from flask.testing import FlaskClient
from merchant_support import (
    PROVIDER_TIMEOUT,
    MerchantShop,
    Receiver,
    Staff,
    WorkerProcess,
    seed_merchant_shop,
    wait_for,
)
from rq import Queue
from sqlalchemy.orm import Session

from app.crypto import secret_box
from app.demo import PROPOSER
from app.execution.executor import ExecutionContext
from app.settings import Settings
from integrations.provider import (
    ACTION_ID_METADATA_KEY,
    ActionKind,
    CredentialsRefused,
    PaymentFacts,
)

APRON = 4800


def _propose(
    staff: Staff, shop: MerchantShop, kind: str, target: str, amount: int
) -> dict[str, Any]:
    answer = staff.post(
        f"/api/cases/{shop.case_id}/proposals",
        {
            "provider": "merchant",
            "kind": kind,
            "target": target,
            "amount": amount,
            "currency": "usd",
            "params": {"reason": "requested_by_customer"},
        },
    )
    assert answer.status_code == 201, answer.get_json()
    proposal: dict[str, Any] = answer.get_json()["proposal"]
    return proposal


def _one_effect_under_one_key(receiver: Receiver, action: dict[str, Any]) -> dict[str, Any]:
    """The receiver's own word: one effect for the action, and every request about it
    carried its key (each send in the header and the body, each look-up in the body)."""
    key = action["idempotency_key"]
    effects = [
        e for e in receiver.effects() if e["metadata"].get(ACTION_ID_METADATA_KEY) == action["id"]
    ]
    assert len(effects) == 1, effects
    assert effects[0]["idempotency_key"] == key
    asked = [r for r in receiver.received() if r["path"] != "/facts"]
    assert asked, "no request about the action reached the receiver"
    for request in asked:
        assert request["verified"] is True
        assert request["body_key"] == key, request
        if request["path"] == "/actions":
            assert request["idempotency_key"] == key, request
    return effects[0]


def _attempts(action: dict[str, Any]) -> list[tuple[str, str | None]]:
    return [(a["purpose"], a["outcome"]) for a in action["attempts"]]


def test_an_approved_refund_and_credit_are_done_once_at_the_merchant(
    shop: MerchantShop,
    proposer: Staff,
    approver: Staff,
    receiver: Receiver,
    worker: WorkerProcess,
) -> None:
    refund = _propose(proposer, shop, "refund", shop.payment, APRON)
    assert refund["provider"] == "merchant" and refund["money_ref"] == shop.payment
    refund_id = approve(approver, refund)
    done = wait_for_status(approver, refund_id, ["succeeded"])

    effect = _one_effect_under_one_key(receiver, done)
    assert (effect["kind"], effect["target"], effect["amount"]) == ("refund", shop.payment, APRON)
    assert done["provider_ref"] == effect["id"]
    assert _attempts(done) == [("submit", "answered")]
    assert case_json(approver, shop.case_id)["status"] == "resolved"

    credit_id = approve(approver, _propose(proposer, shop, "customer_credit", shop.customer, 500))
    credited = wait_for_status(approver, credit_id, ["succeeded"])
    [given] = [e for e in receiver.effects() if e["kind"] == "customer_credit"]
    assert (given["target"], given["amount"], given["id"]) == (
        shop.customer,
        500,
        credited["provider_ref"],
    )
    assert given["idempotency_key"] == credited["idempotency_key"]


@pytest.mark.parametrize(
    ("fault", "settled_by"),
    [
        # The receiver committed, then answered later than the worker waits.
        (
            {"kind": "delay", "ms": int(PROVIDER_TIMEOUT * 3000), "when": "after"},
            [("submit", "unknown"), ("find", "found")],
        ),
        ({"kind": "error_500_after_commit"}, [("submit", "unknown"), ("find", "found")]),
        # Nothing was done: the look-up finds nothing and the same request goes again.
        (
            {"kind": "error_500_before_commit"},
            [("submit", "unknown"), ("find", "absent"), ("resubmit", "answered")],
        ),
    ],
    ids=["timeout-after-commit", "500-after-commit", "500-before-commit"],
)
def test_an_unclear_send_ends_in_exactly_one_refund(
    shop: MerchantShop,
    proposer: Staff,
    approver: Staff,
    receiver: Receiver,
    worker: WorkerProcess,
    ctx: ExecutionContext,
    queue: Queue,
    fault: dict[str, Any],
    settled_by: list[tuple[str, str]],
) -> None:
    receiver.arm(path="/actions", **fault)
    action_id = approve(approver, _propose(proposer, shop, "refund", shop.payment, APRON))

    unclear = wait_for_status(approver, action_id, ["unknown"])
    assert _attempts(unclear) == [("submit", "unknown")]
    settled = wait_for_status(approver, action_id, ["succeeded"], tick=sweeping(ctx, queue))

    assert _attempts(settled) == settled_by
    effect = _one_effect_under_one_key(receiver, settled)
    assert settled["provider_ref"] == effect["id"]
    sends = [r for r in receiver.received() if r["path"] == "/actions"]
    assert len(sends) == len([p for p, _ in settled_by if p != "find"])


def test_a_receiver_that_crashed_after_its_commit_is_looked_up_after_its_restart(
    shop: MerchantShop,
    proposer: Staff,
    approver: Staff,
    receiver: Receiver,
    worker: WorkerProcess,
    ctx: ExecutionContext,
    queue: Queue,
) -> None:
    receiver.exit_after_commit()
    action_id = approve(approver, _propose(proposer, shop, "refund", shop.payment, APRON))

    wait_for_status(approver, action_id, ["unknown"])
    wait_for(receiver.crashed, what="the receiver to have exited after its commit")
    receiver.restart()
    settled = wait_for_status(approver, action_id, ["succeeded"], tick=sweeping(ctx, queue))

    assert _attempts(settled)[0] == ("submit", "unknown")
    assert _attempts(settled)[-1] == ("find", "found")
    assert "resubmit" not in [purpose for purpose, _ in _attempts(settled)]
    effect = _one_effect_under_one_key(receiver, settled)
    assert settled["provider_ref"] == effect["id"]
    # The send it crashed on is in its records, never answered.
    [send] = [r for r in receiver.received() if r["path"] == "/actions"]
    assert send["status"] is None


def _refused_for_the_customer(proposal: dict[str, Any]) -> bool:
    failed = [c["name"] for c in proposal["verdict"]["checks"] if not c["passed"]]
    return proposal["verdict"]["outcome"] == "blocked" and "customer_matches" in failed


def test_money_goes_only_to_the_cases_customer_at_the_merchant(
    shop: MerchantShop,
    proposer: Staff,
    receiver: Receiver,
    session: Session,
    settings: Settings,
    client: FlaskClient,
    app: Flask,
) -> None:
    stranger = f"pay_{uuid.uuid4().hex[:8]}"
    receiver.seed_customer("cust_stranger")
    receiver.seed_payment(stranger, "cust_stranger")

    assert _refused_for_the_customer(_propose(proposer, shop, "refund", stranger, APRON))

    # A customer Caseward knows no id of at the merchant, and whose email names no single
    # customer there (both shops' customers have it), gets nothing, even their own money.
    unlinked = seed_merchant_shop(
        session, receiver=receiver, box=secret_box(settings), merchant_customer=False
    )
    their_proposer = Staff(client, app, unlinked.domain, PROPOSER)
    own = _propose(their_proposer, unlinked, "refund", unlinked.payment, APRON)
    assert _refused_for_the_customer(own)

    # An id of the merchant's is never taken for another provider's, nor the reverse.
    unnamed = proposer.post(
        f"/api/cases/{shop.case_id}/proposals",
        {"kind": "refund", "target": shop.payment, "amount": APRON, "currency": "usd"},
    )
    assert unnamed.status_code == 400
    assert unnamed.get_json()["error"]["field"] == "target"
    assert receiver.effects() == []


def test_a_rotation_keeps_a_receiver_on_either_secret_working_for_the_grace_period(
    shop: MerchantShop, owner: Staff, receiver: Receiver, ctx: ExecutionContext
) -> None:
    def read() -> PaymentFacts:
        with ctx.session_factory() as session:
            facts = ctx.adapters(session, shop.shop_id, "merchant").facts(
                ActionKind.REFUND, shop.payment
            )
        assert isinstance(facts, PaymentFacts) and facts.exists
        return facts

    new = owner.post("/api/shop/connections/merchant/secret", {}).get_json()["signing_secret"]
    read()  # the receiver still holds only the old secret
    receiver.hold_secrets(new)
    read()

    newest = owner.post("/api/shop/connections/merchant/secret", {"grace_seconds": 0})
    with pytest.raises(CredentialsRefused):
        read()
    receiver.hold_secrets(newest.get_json()["signing_secret"])
    read()
