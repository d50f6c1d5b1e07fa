"""A provider report older than what we already recorded is ignored, and on the record.

Reports about a refund arrive in any order: a submit's answer, look-ups, refreshes after
webhooks. A refund can fail days after it succeeded, never succeed after failing: once
"failed" is recorded, a "succeeded" that arrives later is old news. It changes nothing
(status, provider reference, failure reason, the case) and is audited as
``action.stale_report_ignored``.

Real action rows (approved through the staff API), PostgreSQL (or SQLite), and the Stripe
sandbox over HTTP, whose card ``pm_card_refundFail`` fails its refunds an hour later.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from dataclasses import dataclass, replace
from typing import Any

import pytest
from fault_support import (
    action_json,
    add_order,
    approve,
    case_json,
    paid_payment,
    propose_refund,
    refunds_of_action,
    reset_sandbox_switches,
)
from money_path_harness import Account, Staff
from sqlalchemy import select
from sqlalchemy.orm import Session

from app.audit import AuditEvent
from app.clock import utcnow
from app.connections.models import Connection
from app.demo import APPROVER, LinenShop
from app.execution.executor import ExecutionContext, execute_action, refresh_action
from app.execution.models import Action
from app.execution.status import apply_provider_answer
from app.settings import Settings
from integrations.provider import (
    ActionKind,
    ActionRequest,
    ProviderAdapter,
    ProviderAnswer,
    ProviderStatus,
    TargetFacts,
)
from integrations.stripe.sandbox import StripeSandbox

S = ProviderStatus
REFUND_FAILS_AFTER = 3601  # sandbox seconds: the session sandbox fails card refunds at 3600


@pytest.fixture(autouse=True)
def _clean_sandbox(sandbox: StripeSandbox) -> Iterator[None]:
    reset_sandbox_switches(sandbox)
    sandbox.pause_webhooks()  # only the reports each test makes reach the action
    yield
    reset_sandbox_switches(sandbox)


def _events(session: Session, action_id: uuid.UUID, kind: str) -> list[dict[str, Any]]:
    session.expire_all()
    return [
        dict(event.data)
        for event in session.scalars(
            select(AuditEvent)
            .where(AuditEvent.action_id == action_id, AuditEvent.kind == kind)
            .order_by(AuditEvent.seq)
        )
    ]


def _queued_action(approver: Staff, linen: LinenShop) -> uuid.UUID:
    proposal = case_json(approver, linen.case_id)["proposals"][0]
    return uuid.UUID(approve(approver, proposal))


def _report(session: Session, action_id: uuid.UUID, status: ProviderStatus, *, source: str) -> bool:
    action = session.get(Action, action_id)
    assert action is not None
    answer = ProviderAnswer(
        "re_reported",
        status,
        {},
        failure_reason="expired_or_canceled_card" if status == S.FAILED else None,
    )
    changed = apply_provider_answer(session, action, answer, source=source, now=utcnow())
    session.commit()
    return changed


# Recorded first, then the older report that arrives after it.
STALE = [
    (S.FAILED, S.SUCCEEDED),
    (S.FAILED, S.PENDING),
    (S.FAILED, S.REQUIRES_ACTION),
    (S.CANCELED, S.SUCCEEDED),
    (S.CANCELED, S.PENDING),
    (S.SUCCEEDED, S.PENDING),
    (S.SUCCEEDED, S.REQUIRES_ACTION),
]


@pytest.mark.parametrize(("recorded", "older"), STALE, ids=[f"{a}-then-{b}" for a, b in STALE])
def test_an_older_report_after_a_newer_one_is_ignored_and_audited(
    recorded: ProviderStatus,
    older: ProviderStatus,
    linen: LinenShop,
    approver: Staff,
    session: Session,
) -> None:
    action_id = _queued_action(approver, linen)
    assert _report(session, action_id, recorded, source="submit")
    before = action_json(approver, str(action_id))
    case_before = case_json(approver, linen.case_id)

    changed = _report(session, action_id, older, source="refresh")

    after = action_json(approver, str(action_id))
    assert (changed, after["status"]) == (False, recorded.value), (
        f"a stale {older} report must not overwrite the {recorded} already recorded"
    )
    keep = ("status", "provider_ref", "failure_reason", "status_reason")
    assert {k: after[k] for k in keep} == {k: before[k] for k in keep}
    case_after = case_json(approver, linen.case_id)
    assert (case_after["status"], case_after["owner"]) == (
        case_before["status"],
        case_before["owner"],
    )
    assert _events(session, action_id, "action.stale_report_ignored") == [
        {"source": "refresh", "reported": older.value, "kept": recorded.value}
    ]
    reported = [e["status"] for e in _events(session, action_id, "action.provider_status")]
    assert reported == [recorded.value]


def test_a_failure_after_success_is_news_not_a_stale_report(
    linen: LinenShop, approver: Staff, session: Session
) -> None:
    """The other direction, for contrast: a refund may fail days after it succeeded."""
    action_id = _queued_action(approver, linen)
    assert _report(session, action_id, S.SUCCEEDED, source="submit")

    assert _report(session, action_id, S.FAILED, source="refresh")

    assert action_json(approver, str(action_id))["status"] == "failed"
    assert _events(session, action_id, "action.stale_report_ignored") == []
    case = case_json(approver, linen.case_id)
    assert (case["status"], case["owner"]) == ("needs_attention", APPROVER)


# ------------------------------------------------------------------ through the sandbox


@dataclass
class _AnswerHeardLate:
    """Stripe's real answer to the submit ("succeeded"), heard only after the refund has
    failed at Stripe and a refresh (what a webhook triggers) recorded that: the answer
    is the oldest report by the time it is recorded. The real adapter underneath."""

    adapter: ProviderAdapter
    meanwhile: Any
    name: str = "stripe"

    def facts(self, kind: ActionKind, target: str) -> TargetFacts:
        return self.adapter.facts(kind, target)

    def submit(self, request: ActionRequest) -> ProviderAnswer:
        answer = self.adapter.submit(request)
        self.meanwhile(request)
        return answer

    def find(self, request: ActionRequest) -> ProviderAnswer | None:
        return self.adapter.find(request)


def test_a_submit_answer_heard_after_the_refund_failed_is_ignored_and_audited(
    linen: LinenShop,
    proposer: Staff,
    approver: Staff,
    account: Account,
    sandbox: StripeSandbox,
    settings: Settings,
    ctx: ExecutionContext,
    session: Session,
) -> None:
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
    action_id = approve(
        approver, propose_refund(proposer, linen.case_id, payment.payment_intent_id, 3000)
    )
    heard: list[str] = []

    def refund_fails_and_a_refresh_records_it(request: ActionRequest) -> None:
        sandbox.advance_clock(REFUND_FAILS_AFTER)
        heard.append(refresh_action(ctx, uuid.UUID(request.action_id)))

    def adapters(
        s: Session, shop_id: uuid.UUID, provider: str, *, connection: Connection | None = None
    ) -> ProviderAdapter:
        return _AnswerHeardLate(
            ctx.adapters(s, shop_id, provider, connection=connection),
            refund_fails_and_a_refresh_records_it,
        )

    status = execute_action(replace(ctx, adapters=adapters), uuid.UUID(action_id))

    assert heard == ["failed"]
    [refund] = refunds_of_action(account, action_id)
    assert refund["status"] == "failed"
    action = action_json(approver, action_id)
    assert (status, action["status"]) == ("failed", "failed"), (
        "the submit's 'succeeded', older than the failure recorded, must be ignored"
    )
    assert (action["provider_ref"], action["failure_reason"]) == (
        refund["id"],
        "expired_or_canceled_card",
    )
    # The attempt keeps what the answer said; the action keeps the newer news.
    assert [(a["outcome"], a["provider_status"]) for a in action["attempts"]] == [
        ("answered", "succeeded")
    ]
    events = approver.get(f"/api/cases/{linen.case_id}/audit").get_json()["events"]
    ours = [e for e in events if e["action_id"] == action_id]
    assert [e["data"]["status"] for e in ours if e["kind"] == "action.provider_status"] == [
        "failed"
    ]
    ignored = [e["data"] for e in ours if e["kind"] == "action.stale_report_ignored"]
    assert ignored == [{"source": "submit", "reported": "succeeded", "kept": "failed"}]
    case = case_json(approver, linen.case_id)
    assert (case["status"], case["owner"]) == ("needs_attention", APPROVER)
