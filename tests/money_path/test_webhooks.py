"""Stripe webhooks delivered twice and out of order (issue 3, points 8 and 13).

The sandbox signs and POSTs the events to the served app; the app keeps each event id
once and queues a refresh that a worker process runs against the provider. A card
refund that "succeeded" and then failed must end failed, whatever order the events
arrive in, with its case back in front of a named person.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from typing import Any

import pytest
from fault_support import (
    ACTION_ID_KEY,
    add_order,
    approve,
    assert_money_invariants,
    case_json,
    paid_payment,
    propose_refund,
    refunds_of_action,
    reset_sandbox_switches,
    wait_for_status,
)
from money_path_harness import Account, Staff, WorkerProcess, wait_for
from rq import Queue
from sqlalchemy import select

from app.demo import APPROVER, LinenShop
from app.execution.executor import ExecutionContext
from app.execution.models import ProviderEvent
from app.settings import Settings
from integrations.stripe.sandbox import StripeSandbox


@pytest.fixture(autouse=True)
def _clean_sandbox(sandbox: StripeSandbox) -> Iterator[None]:
    reset_sandbox_switches(sandbox)
    yield
    reset_sandbox_switches(sandbox)


def _held_events(sandbox: StripeSandbox, account: Account, refund_id: str) -> dict[str, str]:
    """Held deliveries about ``refund_id``, as event type -> event id (oldest first)."""
    held: dict[str, str] = {}
    for delivery in sandbox.pending_webhooks():
        if delivery["account"] != account.id:
            continue
        event = account.stripe.v1.events.retrieve(delivery["event"]).to_dict()
        if event["data"]["object"]["id"] == refund_id:
            held.setdefault(event["type"], event["id"])
    return held


def _deliver(sandbox: StripeSandbox, event_id: str) -> list[dict[str, Any]]:
    attempts = sandbox.deliver_event(event_id)
    assert attempts, f"no endpoint took {event_id}"
    assert all(a.get("status") == 200 for a in attempts), attempts
    return attempts


def _refreshed(queue: Queue, action_id: str, event_ids: list[str]) -> bool:
    """Every refresh the app queued for these events has run in the worker."""
    for event_id in event_ids:
        job = queue.fetch_job(f"refresh-{action_id}-{event_id}")
        if job is None or job.get_status(refresh=True) != "finished":
            return False
    return True


def test_a_refund_that_fails_later_ends_failed_whatever_the_webhook_order(
    linen: LinenShop,
    approver: Staff,
    proposer: Staff,
    account: Account,
    sandbox: StripeSandbox,
    settings: Settings,
    worker: WorkerProcess,
    ctx: ExecutionContext,
    queue: Queue,
) -> None:
    # A second order of the same customer, paid with the card whose refunds fail later.
    payment = paid_payment(
        account, settings, customer_id=linen.customer_id, payment_method="pm_card_refundFail"
    )
    add_order(
        ctx.session_factory,
        shop_id=linen.shop_id,
        stripe_customer_id=linen.customer_id,
        payment_intent_id=payment.payment_intent_id,
        name="#1002",
    )
    sandbox.pause_webhooks()
    action_id = approve(
        approver, propose_refund(proposer, linen.case_id, payment.payment_intent_id, 3000)
    )
    succeeded = wait_for_status(approver, action_id, ["succeeded"])
    refund_id = succeeded["provider_ref"]
    assert case_json(approver, linen.case_id)["status"] == "resolved"

    # Days later the card refund fails at Stripe (refund.updated + refund.failed, held).
    sandbox.advance_clock(3601)
    assert account.stripe.v1.refunds.retrieve(refund_id).status == "failed"
    held = _held_events(sandbox, account, refund_id)
    assert {"refund.created", "refund.updated", "refund.failed"} <= set(held), held

    # The failure news first, each delivered twice.
    news = [held["refund.failed"], held["refund.updated"]]
    for event_id in news + news:
        _deliver(sandbox, event_id)
    failed = wait_for_status(approver, action_id, ["failed"])
    assert failed["failure_reason"] == "expired_or_canceled_card"
    assert failed["provider_ref"] == refund_id

    # Then the older "succeeded" news (refund.created), twice, and the failure once more.
    stale = [held["refund.created"], held["refund.failed"], held["refund.created"]]
    for event_id in stale:
        _deliver(sandbox, event_id)
    distinct = list(dict.fromkeys(news + stale))
    wait_for(lambda: _refreshed(queue, action_id, distinct), what="the refresh jobs to run")

    still = approver.get(f"/api/actions/{action_id}").get_json()
    assert (still["status"], still["failure_reason"]) == ("failed", "expired_or_canceled_card")
    case = case_json(approver, linen.case_id)
    assert case["status"] == "needs_attention"
    assert case["owner"] == APPROVER

    # The provider's status never went backwards in our record.
    events = approver.get(f"/api/cases/{linen.case_id}/audit").get_json()["events"]
    reported = [
        e["data"]["status"]
        for e in events
        if e["kind"] == "action.provider_status" and e["action_id"] == action_id
    ]
    assert reported == ["succeeded", "failed"]
    with ctx.session_factory() as session:
        stored = Counter(
            session.scalars(
                select(ProviderEvent.event_id).where(ProviderEvent.shop_id == linen.shop_id)
            )
        )
    assert {event_id: stored[event_id] for event_id in distinct} == dict.fromkeys(distinct, 1)
    assert max(stored.values()) == 1

    at_provider = refunds_of_action(account, action_id)
    assert [(r["id"], r["status"]) for r in at_provider] == [(refund_id, "failed")]
    assert at_provider[0]["metadata"][ACTION_ID_KEY] == action_id
    assert_money_invariants(account, ctx.session_factory, linen.shop_id)
