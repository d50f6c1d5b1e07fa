"""The automatic brakes as a merchant meets them.

A burst of failures at Stripe trips the breaker: the refunds still queued wait, nothing
of them reaches Stripe (not even a read), the trip is on the record and the owner has an
email; once a person resumes, each held refund is sent exactly once. A ceiling on the money
sent per hour, or on the actions sent per day, holds the action that would pass it. Only
an owner or an approver resumes.

Real PostgreSQL, Redis, an ``rq worker`` process (the burst) or the worker's own functions
in-process (the ceilings), and the Stripe sandbox over HTTP, whose record of the requests
it received says what reached it.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterator
from datetime import datetime
from typing import Any

import pytest
from fault_support import (
    action_json,
    approve,
    assert_money_invariants,
    case_audit_json,
    propose_refund,
    refunds_of_action,
    reset_sandbox_switches,
    sweeping,
    wait_for_status,
)
from flask import Flask
from flask.testing import FlaskClient
from money_path_harness import Account, Staff, WorkerProcess, wait_for
from rq import Queue
from sqlalchemy import event, select
from sqlalchemy.orm import Session

from app.audit import AuditEvent
from app.background import sweep
from app.demo import OWNER, SHOP_DOMAIN, LinenShop
from app.execution.brakes import BrakeSettings, locked_brakes
from app.execution.executor import ExecutionContext, execute_action
from app.execution.models import ShopBrakes
from app.settings import Settings
from app.shops.models import StaffMember, StaffRole
from integrations.mail import Outbox
from integrations.stripe.sandbox import StripeSandbox

# Six refunds of the $96.00 payment, $75.00 in all: each fits, whatever else is in flight.
AMOUNTS = (1000, 1100, 1200, 1300, 1400, 1500)
OWNER_EMAIL = f"{OWNER}@{SHOP_DOMAIN}"
SETTINGS = BrakeSettings().to_dict()


@pytest.fixture(autouse=True)
def _clean_sandbox(sandbox: StripeSandbox) -> Iterator[None]:
    reset_sandbox_switches(sandbox)
    sandbox.pause_webhooks()  # only our own calls tell the actions what happened
    yield
    reset_sandbox_switches(sandbox)


def _brakes(staff: Staff) -> dict[str, Any]:
    response = staff.get("/api/shop/brakes")
    assert response.status_code == 200, response.get_json()
    body: dict[str, Any] = response.get_json()
    return body


def _refund_posts(sandbox: StripeSandbox, account: Account, action_id: str) -> int:
    """How many refund requests with this action's key reached Stripe."""
    key = f"caseward-action-{action_id}"
    return sum(
        1
        for r in sandbox.received_requests(account.id)
        if (r.method, r.path, r.idempotency_key) == ("POST", "/v1/refunds", key)
    )


def _job_ended(queue: Queue, action_id: str) -> bool:
    job = queue.fetch_job(action_id)
    return job is not None and job.get_status(refresh=True) == "finished"


def test_a_burst_of_failures_trips_the_breaker_and_each_held_refund_is_sent_once_after_resuming(
    linen: LinenShop,
    proposer: Staff,
    approver: Staff,
    account: Account,
    sandbox: StripeSandbox,
    settings: Settings,
    ctx: ExecutionContext,
    queue: Queue,
    start_worker: Callable[[], WorkerProcess],
) -> None:
    proposals = [
        propose_refund(proposer, linen.case_id, linen.payment_intent_id, amount)
        for amount in AMOUNTS
    ]
    # Stripe answers the first three refund requests with a 500, as in an outage.
    sandbox.arm_fault(
        "error_500_before_commit", method="POST", path="/v1/refunds", account=account.id, count=3
    )
    actions = [approve(approver, proposal) for proposal in proposals]
    failed, held = actions[:3], actions[3:]
    start_worker()

    tripped = wait_for(lambda: _brakes(approver)["tripped"], what="the breaker to trip")
    wait_for(
        lambda: all(_job_ended(queue, action_id) for action_id in actions),
        what="the worker to take every action's job",
    )
    assert tripped["rule"] == "failures_in_a_row"
    assert tripped["reason"] == "3 sends in a row failed or came back unclear"
    assert tripped["action_id"] == failed[-1]
    for action_id in failed:
        assert action_json(approver, action_id)["status"] == "unknown"
    # Held: queued as approved, not one attempt, and nothing of them reached Stripe.
    for action_id in held:
        action = action_json(approver, action_id)
        assert (action["status"], action["attempts"]) == ("queued", [])
        assert _refund_posts(sandbox, account, action_id) == 0
    since = datetime.fromisoformat(tripped["at"]).timestamp()
    assert [r.path for r in sandbox.received_requests(account.id) if r.arrived_at > since] == []
    assert _brakes(approver)["held"] == {"count": 3, "money": {"usd": 1300 + 1400 + 1500}}
    # On the record, and the owner told.
    kinds = [event["kind"] for event in case_audit_json(approver, linen.case_id)]
    assert kinds.count("shop.brake_tripped") == 1
    assert kinds.count("alert.raised") == 1
    [mail] = wait_for(
        lambda: Outbox(settings.mail_outbox_path, "").messages(to=OWNER_EMAIL),
        what="the owner's email",
    )
    assert mail["Subject"] == "Caseward paused sending for Linen & Loom"
    assert "3 sends in a row failed or came back unclear" in mail.get_content()
    # The sweep leaves the held actions alone while the brake holds (look-ups of the
    # unclear ones go on).
    assert not set(held) & set(sweep(ctx, queue)["requeued"])

    # An approver resumes (an owner could too).
    response = approver.post("/api/shop/brakes/resume", {})

    assert response.status_code == 200, response.get_json()
    assert response.get_json()["resumed"] == held
    assert response.get_json()["tripped"] is None
    for action_id in held:
        wait_for_status(approver, action_id, ["succeeded"])
    for action_id in failed:
        wait_for_status(approver, action_id, ["succeeded"], tick=sweeping(ctx, queue))
    for action_id in held:
        assert _refund_posts(sandbox, account, action_id) == 1
    for action_id in actions:
        assert len(refunds_of_action(account, action_id)) == 1
    assert_money_invariants(account, ctx.session_factory, linen.shop_id)
    with ctx.session_factory() as session:
        resumed = session.scalars(
            select(AuditEvent.actor).where(
                AuditEvent.shop_id == linen.shop_id, AuditEvent.kind == "shop.brake_resumed"
            )
        ).all()
    assert resumed == [approver.user_id]
    assert _brakes(approver)["tripped"] is None


def test_money_sent_in_an_hour_above_the_ceiling_holds_the_refund_that_would_pass_it(
    linen: LinenShop,
    proposer: Staff,
    approver: Staff,
    owner: Staff,
    account: Account,
    sandbox: StripeSandbox,
    ctx: ExecutionContext,
) -> None:
    saved = owner.put("/api/shop/brakes", {**SETTINGS, "money_per_hour": {"usd": 2500}})
    assert saved.status_code == 200, saved.get_json()
    first, second = (
        approve(approver, propose_refund(proposer, linen.case_id, linen.payment_intent_id, amount))
        for amount in (1000, 2000)
    )

    assert execute_action(ctx, uuid.UUID(first)) == "succeeded"
    assert execute_action(ctx, uuid.UUID(second)) == "queued"

    state = _brakes(owner)
    assert state["tripped"]["rule"] == "money_per_hour"
    assert state["tripped"]["reason"] == (
        "sending $20.00 would make $30.00 sent in an hour, above the shop's ceiling of $25.00"
    )
    assert state["tripped"]["action_id"] == second
    assert state["held"] == {"count": 1, "money": {"usd": 2000}}
    assert action_json(approver, second)["attempts"] == []
    assert _refund_posts(sandbox, account, second) == 0
    # Its job again, while the brake holds: nothing more.
    assert execute_action(ctx, uuid.UUID(second)) == "queued"
    assert _refund_posts(sandbox, account, second) == 0

    # Resuming does not lift a ceiling: the owner raises it, then resumes.
    raised = owner.put("/api/shop/brakes", {**SETTINGS, "money_per_hour": {"usd": 5000}})
    assert raised.status_code == 200, raised.get_json()
    assert owner.post("/api/shop/brakes/resume", {}).get_json()["resumed"] == [second]
    assert execute_action(ctx, uuid.UUID(second)) == "succeeded"
    assert _refund_posts(sandbox, account, second) == 1
    assert len(refunds_of_action(account, second)) == 1


def test_a_healthy_shops_answers_leave_its_breaker_unlocked_and_a_failure_still_counts(
    linen: LinenShop,
    proposer: Staff,
    approver: Staff,
    account: Account,
    sandbox: StripeSandbox,
    ctx: ExecutionContext,
) -> None:
    window = BrakeSettings().error_window
    with ctx.session_factory() as session, session.begin():
        brakes = locked_brakes(session, linen.shop_id)
        brakes.bad_in_a_row, brakes.recent_sends = 0, "." * window
    answered, unclear = (
        approve(approver, propose_refund(proposer, linen.case_id, linen.payment_intent_id, amount))
        for amount in (1000, 1200)
    )
    sent: list[str] = []

    def keep(_conn: object, _cursor: object, statement: str, *_: object) -> None:
        sent.append(statement)

    engine = ctx.session_factory.kw["bind"]
    event.listen(engine, "before_cursor_execute", keep)
    try:
        assert execute_action(ctx, uuid.UUID(answered)) == "succeeded"
    finally:
        event.remove(engine, "before_cursor_execute", keep)

    # Only the send's own decision locks the brakes (its ceilings and a trip meanwhile).
    touching = [s.split()[0] for s in sent if "shop_brakes" in s and "FROM actions" not in s]
    assert touching == ["SELECT"]
    sandbox.arm_fault("drop_before_commit", method="POST", path="/v1/refunds", account=account.id)
    assert execute_action(ctx, uuid.UUID(unclear)) == "unknown"
    with ctx.session_factory() as session:
        counted = session.get(ShopBrakes, linen.shop_id)
        assert counted is not None
        assert (counted.bad_in_a_row, counted.recent_sends) == (1, "." * (window - 1) + "x")


def test_actions_sent_in_a_day_above_the_ceiling_hold_the_next_one(
    linen: LinenShop,
    proposer: Staff,
    approver: Staff,
    owner: Staff,
    account: Account,
    sandbox: StripeSandbox,
    ctx: ExecutionContext,
) -> None:
    assert owner.put("/api/shop/brakes", {**SETTINGS, "actions_per_day": 1}).status_code == 200
    first, second = (
        approve(approver, propose_refund(proposer, linen.case_id, linen.payment_intent_id, amount))
        for amount in (1000, 1100)
    )

    assert execute_action(ctx, uuid.UUID(first)) == "succeeded"
    assert execute_action(ctx, uuid.UUID(second)) == "queued"

    tripped = _brakes(owner)["tripped"]
    assert tripped["rule"] == "actions_per_day"
    assert tripped["reason"] == (
        "sending this action would make 2 actions sent in a day, above the shop's ceiling of 1"
    )
    assert _refund_posts(sandbox, account, second) == 0
    # A proposal approved while the brake holds queues its action, which waits too.
    third = approve(
        approver, propose_refund(proposer, linen.case_id, linen.payment_intent_id, 1200)
    )
    assert execute_action(ctx, uuid.UUID(third)) == "queued"
    assert _brakes(owner)["held"] == {"count": 2, "money": {"usd": 1100 + 1200}}


def test_only_an_owner_or_an_approver_resumes_and_only_a_tripped_brake(
    linen: LinenShop,
    owner: Staff,
    approver: Staff,
    proposer: Staff,
    client: FlaskClient,
    app: Flask,
    session: Session,
    ctx: ExecutionContext,
) -> None:
    nothing = owner.post("/api/shop/brakes/resume", {})
    assert nothing.status_code == 409
    assert nothing.get_json()["error"]["code"] == "brake_not_tripped"
    assert nothing.get_json()["error"]["message"] == (
        "no brake holds this shop's actions: there is nothing to resume"
    )
    _trip(owner, approver, proposer, linen, ctx)
    session.add(StaffMember(shop_id=linen.shop_id, user_id="vera.viewer", role=StaffRole.VIEWER))
    session.commit()
    viewer = Staff(client, app, SHOP_DOMAIN, "vera.viewer")

    assert viewer.post("/api/shop/brakes/resume", {}).status_code == 403
    assert proposer.post("/api/shop/brakes/resume", {}).status_code == 403
    assert client.post("/api/shop/brakes/resume", json={}).status_code == 401
    assert _brakes(viewer)["tripped"] is not None  # everyone may see it

    assert approver.post("/api/shop/brakes/resume", {}).status_code == 200
    assert _brakes(viewer)["tripped"] is None


def test_only_an_owner_sets_the_brakes_and_each_value_is_checked(
    linen: LinenShop, owner: Staff, approver: Staff
) -> None:
    assert _brakes(approver)["settings"] == {
        "money_per_hour": {},
        "money_per_day": {},
        "actions_per_hour": None,
        "actions_per_day": None,
        "failures_in_a_row": 3,
        "error_percent": 50,
        "error_window": 20,
    }
    assert approver.put("/api/shop/brakes", SETTINGS).status_code == 403
    for field, value in (
        ("error_window", 1),
        ("money_per_day", {"usd": 0}),
        ("money_per_day", {"xyz": 100}),
        ("actions_per_hour", "ten"),
        ("error_percent", 101),
    ):
        refused = owner.put("/api/shop/brakes", {**SETTINGS, field: value})
        assert refused.status_code == 400, (field, value)
        assert refused.get_json()["error"]["field"].startswith(field)
    off = {**SETTINGS, "failures_in_a_row": None, "money_per_day": {"USD": 200000}}
    assert owner.put("/api/shop/brakes", off).get_json()["settings"] == {
        **SETTINGS,
        "failures_in_a_row": None,
        "money_per_day": {"usd": 200000},
    }


def _trip(
    owner: Staff, approver: Staff, proposer: Staff, linen: LinenShop, ctx: ExecutionContext
) -> None:
    """The brake tripped, as a ceiling of one action a day trips it on the second."""
    assert owner.put("/api/shop/brakes", {**SETTINGS, "actions_per_day": 1}).status_code == 200
    for amount in (1000, 1100):
        action_id = approve(
            approver, propose_refund(proposer, linen.case_id, linen.payment_intent_id, amount)
        )
        execute_action(ctx, uuid.UUID(action_id))
    assert _brakes(owner)["tripped"] is not None
