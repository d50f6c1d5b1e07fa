"""The owner is told what needs them: an outcome still unclear past its attention time, a
refund that failed after the customer was told, each once, by email and to the shop's
Slack channel, signed; a post Slack answers with a 429 or a 500 goes again and arrives
once, and a longer outage is tried again later without emailing twice. What is posted
holds the case's link and the amount, never the customer's name or email.

The worker's own functions in-process, the Stripe sandbox and the Slack sandbox over HTTP.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Iterator
from dataclasses import replace
from datetime import timedelta

import pytest
from fault_support import (
    add_order,
    approve,
    case_json,
    paid_payment,
    propose_refund,
    reset_sandbox_switches,
)
from money_path_harness import Account, Staff
from rq import Queue
from sqlalchemy import select

from app.alerts.jobs import AlertContext, alert_context, deliver_alert
from app.alerts.models import Alert, AlertKind
from app.alerts.service import (
    _brake_tripped,
    _refund_failed_after_told,
    _unclear_too_long,
)
from app.background import sweep
from app.demo import OWNER, SHOP_DOMAIN, LinenShop
from app.execution.events import brake_tripped, refund_failed_after_told, unclear_too_long
from app.execution.executor import ExecutionContext, execute_action, refresh_action
from app.jobs.context import WorkerContext
from app.settings import Settings
from integrations.mail import Outbox
from integrations.slack import SlackUnavailable, verify
from integrations.slack.sandbox import SlackSandbox
from integrations.stripe.sandbox import StripeSandbox

HOOK = "https://hooks.slack.com/services/TLINEN/BALERTS/linen-and-loom"
OWNER_EMAIL = f"{OWNER}@{SHOP_DOMAIN}"
# What the seeded case knows of its customer, which no alert may carry.
CUSTOMER = ("maya@example.com", "Maya", "Lin", "torn")
REFUND_FAILS_AFTER = 3601


@pytest.fixture(scope="module")
def slack() -> Iterator[SlackSandbox]:
    box = SlackSandbox()
    box.start()
    yield box
    box.stop()


@pytest.fixture
def settings(settings: Settings, slack: SlackSandbox) -> Settings:
    # An unclear outcome needs a person at the first sweep after it.
    return replace(settings, slack_api_base=slack.url or "", unknown_attention_seconds=0.0)


@pytest.fixture(autouse=True)
def _clean(sandbox: StripeSandbox, slack: SlackSandbox) -> Iterator[None]:
    reset_sandbox_switches(sandbox)
    sandbox.pause_webhooks()
    slack.reset()
    slack.clear_received_requests()
    yield
    reset_sandbox_switches(sandbox)
    slack.reset()


@pytest.fixture
def alerts(ctx: ExecutionContext) -> AlertContext:
    """What the worker delivers alerts with; Slack's pauses between posts not waited out."""
    delivering = alert_context(WorkerContext(ctx.session_factory, ctx.settings, ctx.clock))
    return replace(delivering, slack=replace(delivering.slack, sleep=lambda seconds: None))


@pytest.fixture
def signing_secret(owner: Staff) -> str:
    answer = owner.put("/api/shop/alerts", {"slack_webhook_url": HOOK})
    assert answer.status_code == 200, answer.get_json()
    body = answer.get_json()
    assert body["slack"] == {"hint": "hooks.slack.com/…loom"}
    assert body["slack_kinds"] == [kind.value for kind in AlertKind]
    secret: str = body["signing_secret"]
    return secret


def _alerts(ctx: ExecutionContext) -> list[Alert]:
    with ctx.session_factory() as session:
        return list(session.scalars(select(Alert).order_by(Alert.created_at)))


def _mail(settings: Settings) -> list[str]:
    return [
        f"{message['Subject']}\n{message.get_content()}"
        for message in Outbox(settings.mail_outbox_path, "").messages(to=OWNER_EMAIL)
    ]


def _left_unclear(
    linen: LinenShop,
    approver: Staff,
    account: Account,
    sandbox: StripeSandbox,
    ctx: ExecutionContext,
    queue: Queue,
) -> Alert:
    """The seeded $48.00 refund sent and lost on the way, and left unclear past its time."""
    action_id = approve(approver, case_json(approver, linen.case_id)["proposals"][0])
    sandbox.arm_fault("drop_before_commit", method="POST", path="/v1/refunds", account=account.id)
    assert execute_action(ctx, uuid.UUID(action_id)) == "unknown"
    report = sweep(ctx, queue)
    assert report["escalated"] == [action_id]
    [alert] = _alerts(ctx)
    assert report["alerting"] == [str(alert.id)]
    return alert


def test_an_outcome_unclear_past_its_attention_time_tells_the_owner_once_by_email_and_slack(
    linen: LinenShop,
    approver: Staff,
    account: Account,
    sandbox: StripeSandbox,
    slack: SlackSandbox,
    settings: Settings,
    ctx: ExecutionContext,
    queue: Queue,
    alerts: AlertContext,
    signing_secret: str,
) -> None:
    alert = _left_unclear(linen, approver, account, sandbox, ctx, queue)
    assert sweep(ctx, queue)["escalated"] == []  # once per action
    assert [a.kind for a in _alerts(ctx)] == [AlertKind.UNCLEAR_TOO_LONG]
    assert (alert.amount, alert.currency, alert.case_id) == (4800, "usd", linen.case_id)

    assert deliver_alert(alerts, alert.id) == "delivered"

    link = f"https://admin.shopify.com/store/linen-and-loom/apps/caseward/app/cases/{linen.case_id}"
    [email] = _mail(settings)
    assert email.startswith("Caseward: a payment provider's answer is still unclear\n")
    assert link in email and "$48.00" in email
    [post] = slack.posts()
    assert post.path == "/services/TLINEN/BALERTS/linen-and-loom"
    assert post.text == f"A provider's answer is still unclear. Case: {link} ($48.00)"
    assert verify(signing_secret, post.headers, post.body, now=time.time())
    assert not verify("cwss_another-shops-secret", post.headers, post.body, now=time.time())
    for private in CUSTOMER:
        assert private not in post.body.decode(), private
    [delivered] = _alerts(ctx)
    assert delivered.delivered_at is not None
    # Delivered: nothing is sent again, by a job or by the sweep.
    assert deliver_alert(alerts, alert.id) == "nothing owed"
    assert sweep(ctx, queue)["alerting"] == []
    assert (len(_mail(settings)), len(slack.posts())) == (1, 1)


@pytest.mark.parametrize("answer", [500, 429])
def test_a_slack_post_refused_for_a_moment_is_posted_again_and_arrives_once(
    answer: int,
    linen: LinenShop,
    approver: Staff,
    account: Account,
    sandbox: StripeSandbox,
    slack: SlackSandbox,
    ctx: ExecutionContext,
    queue: Queue,
    alerts: AlertContext,
    signing_secret: str,
) -> None:
    alert = _left_unclear(linen, approver, account, sandbox, ctx, queue)
    waits: list[float] = []
    patient = replace(alerts, slack=replace(alerts.slack, sleep=waits.append))
    slack.refuse(answer, count=1, retry_after=2 if answer == 429 else None)

    assert deliver_alert(patient, alert.id) == "delivered"

    assert [r.status for r in slack.received_requests()] == [answer, 200]
    assert len(slack.posts()) == 1
    assert waits == ([2.0] if answer == 429 else [0.5])


def test_a_longer_slack_outage_is_tried_again_later_and_the_email_is_not_sent_twice(
    linen: LinenShop,
    approver: Staff,
    account: Account,
    sandbox: StripeSandbox,
    slack: SlackSandbox,
    settings: Settings,
    ctx: ExecutionContext,
    queue: Queue,
    alerts: AlertContext,
    signing_secret: str,
) -> None:
    alert = _left_unclear(linen, approver, account, sandbox, ctx, queue)
    slack.refuse(500, count=3)

    with pytest.raises(SlackUnavailable):
        deliver_alert(alerts, alert.id)

    [failed] = _alerts(ctx)
    assert failed.emailed_at is not None and failed.posted_at is None
    assert failed.last_error == "SlackUnavailable: Slack answered 500 (internal_error)"
    assert failed.next_attempt_at > ctx.clock()
    assert sweep(ctx, queue)["alerting"] == []  # not before its next attempt is due
    later = replace(alerts, clock=lambda: ctx.clock() + timedelta(minutes=2))
    assert sweep(replace(ctx, clock=later.clock), queue)["alerting"] == [str(alert.id)]

    assert deliver_alert(later, alert.id) == "delivered"

    assert (len(_mail(settings)), len(slack.posts())) == (1, 1)


def test_a_refund_that_fails_after_the_customer_was_told_tells_the_owner_once(
    linen: LinenShop,
    proposer: Staff,
    approver: Staff,
    account: Account,
    sandbox: StripeSandbox,
    slack: SlackSandbox,
    settings: Settings,
    ctx: ExecutionContext,
    alerts: AlertContext,
) -> None:
    # The card's refunds succeed, then fail an hour later.
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
    assert execute_action(ctx, uuid.UUID(action_id)) == "succeeded"
    assert _alerts(ctx) == []
    sandbox.advance_clock(REFUND_FAILS_AFTER)

    assert refresh_action(ctx, uuid.UUID(action_id)) == "failed"
    assert refresh_action(ctx, uuid.UUID(action_id)) == "failed"

    [alert] = _alerts(ctx)
    assert (alert.kind, alert.amount, str(alert.action_id)) == (
        AlertKind.REFUND_FAILED_AFTER_TOLD,
        3000,
        action_id,
    )
    assert not alert.slack_owed  # no Slack set up: email only
    assert deliver_alert(alerts, alert.id) == "delivered"
    [email] = _mail(settings)
    assert email.startswith("Caseward: a refund failed after the customer was told\n")
    assert "$30.00" in email
    assert slack.posts() == []


def test_slack_is_an_owners_setting_and_only_slacks_webhook_addresses(
    linen: LinenShop, owner: Staff, approver: Staff
) -> None:
    assert approver.put("/api/shop/alerts", {"slack_webhook_url": HOOK}).status_code == 403
    for wrong in (
        "http://hooks.slack.com/services/T1/B1/x",
        "https://hooks.slack.com.example.com/services/T1/B1/x",
        "https://user:pw@hooks.slack.com/services/T1/B1/x",
        "https://hooks.slack.com/other/T1/B1/x",
        "https://127.0.0.1/services/T1/B1/x",
    ):
        refused = owner.put("/api/shop/alerts", {"slack_webhook_url": wrong})
        assert refused.status_code == 400, wrong
        assert refused.get_json()["error"]["field"] == "slack_webhook_url"
    assert owner.put("/api/shop/alerts", {"slack_webhook_url": HOOK}).status_code == 200
    # Kinds alone: the address and its secret stay.
    kinds = owner.put("/api/shop/alerts", {"slack_kinds": ["brake_tripped"]}).get_json()
    assert kinds == {
        "slack": {"hint": "hooks.slack.com/…loom"},
        "slack_kinds": ["brake_tripped"],
        "signing_secret": None,
    }
    assert approver.get("/api/shop/alerts").get_json()["slack"] == {"hint": "hooks.slack.com/…loom"}
    removed = owner.put("/api/shop/alerts", {"slack_webhook_url": None}).get_json()
    assert removed["slack"] is None


def test_each_signal_has_the_alerts_receiver() -> None:
    assert list(brake_tripped.receivers_for(object())) == [_brake_tripped]
    assert list(unclear_too_long.receivers_for(object())) == [_unclear_too_long]
    assert list(refund_failed_after_told.receivers_for(object())) == [_refund_failed_after_told]
