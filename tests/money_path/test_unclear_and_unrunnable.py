"""Every unclear outcome ends in front of a person, and work that cannot run says so.

* A request that never reached Stripe (a refused connection) is queued again at once
  with the same key, without the reconciliation delay; one refund results.
* A job whose connection is gone ends ``cannot_run`` with the case owned by a person,
  and the sweeper stops queueing it.
* An action unclear for longer than ``unknown_attention_seconds``, or whose look-ups
  keep failing, puts its case in ``needs_attention`` with a named owner, once.
* Attempts a crash cut off are closed as ``interrupted``.
* An approval that expired unsent can be given again: a new action with a new key.

In-process executor calls (the worker's own functions) against the Stripe sandbox
over HTTP, with the clock moved by hand instead of waiting.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from dataclasses import replace
from datetime import datetime, timedelta

import pytest
from fault_support import (
    action_json,
    approve,
    case_json,
    refunds_of_action,
    reset_sandbox_switches,
)
from money_path_harness import Account, Staff, unreachable, writes_refused
from rq import Queue
from sent_statements import statements_sent
from sqlalchemy import select
from sqlalchemy.orm import Session

from app.background import sweep
from app.clock import utcnow
from app.connections.models import Connection
from app.demo import APPROVER, LinenShop
from app.execution.executor import ExecutionContext, execute_action, reconcile_action
from app.execution.models import Action, ActionAttempt
from app.settings import Settings
from app.shops.models import Shop
from integrations.stripe.sandbox import DEMO_PERMISSIONS, StripeSandbox


@pytest.fixture(autouse=True)
def _clean_sandbox(sandbox: StripeSandbox) -> Iterator[None]:
    reset_sandbox_switches(sandbox)
    yield
    reset_sandbox_switches(sandbox)


def _at(ctx: ExecutionContext, moment: datetime) -> ExecutionContext:
    return replace(ctx, clock=lambda: moment)


def _approved(approver: Staff, linen: LinenShop) -> uuid.UUID:
    proposal = case_json(approver, linen.case_id)["proposals"][0]
    return uuid.UUID(approve(approver, proposal))


def _unknown_action(
    sandbox: StripeSandbox,
    account: Account,
    ctx: ExecutionContext,
    approver: Staff,
    linen: LinenShop,
) -> uuid.UUID:
    """An approved refund whose answer was lost before Stripe committed it."""
    sandbox.pause_webhooks()
    sandbox.arm_fault("drop_before_commit", method="POST", path="/v1/refunds", account=account.id)
    action_id = _approved(approver, linen)
    assert execute_action(ctx, action_id) == "unknown"
    return action_id


def test_a_refused_connection_is_resent_at_once_with_the_same_key(
    linen: LinenShop,
    approver: Staff,
    account: Account,
    ctx: ExecutionContext,
    settings: Settings,
) -> None:
    action_id = _approved(approver, linen)
    scheduled: list[tuple[uuid.UUID, float]] = []
    refused = replace(
        writes_refused(ctx, settings),
        resend_later=lambda a, delay: scheduled.append((a, delay)),
    )

    assert execute_action(refused, action_id) == "queued"

    action = action_json(approver, str(action_id))
    assert [(a["purpose"], a["outcome"]) for a in action["attempts"]] == [("submit", "not_sent")]
    # Put back on the queue for a prompt resend, not left for the 30 s reconciliation.
    [(again, delay)] = scheduled
    assert again == action_id
    assert delay <= 1.0 < Settings().reconcile_delay_seconds

    later = utcnow() + timedelta(seconds=delay + 0.01)
    assert execute_action(_at(ctx, later), action_id) == "succeeded"
    [refund] = refunds_of_action(account, str(action_id))
    assert refund["amount"] == 4800
    keys = {a["idempotency_key"] for a in action_json(approver, str(action_id))["attempts"]}
    assert keys == {f"caseward-action-{action_id}"}


def test_a_resend_held_for_later_is_not_sent_early(
    linen: LinenShop, approver: Staff, account: Account, ctx: ExecutionContext, settings: Settings
) -> None:
    action_id = _approved(approver, linen)
    refused = replace(writes_refused(ctx, settings), resend_later=lambda a, delay: None)
    execute_action(refused, action_id)

    # A duplicate job running before the pause is over does nothing.
    assert execute_action(_at(ctx, utcnow() - timedelta(seconds=1)), action_id) == "queued"
    assert refunds_of_action(account, str(action_id)) == []


def test_an_action_whose_connection_is_gone_cannot_run_and_is_not_queued_again(
    linen: LinenShop, approver: Staff, ctx: ExecutionContext, queue: Queue, session: Session
) -> None:
    action_id = _approved(approver, linen)
    session.delete(session.get(Connection, linen.connection_id))
    session.commit()

    assert execute_action(ctx, action_id) == "cannot_run"

    action = action_json(approver, str(action_id))
    assert "no stripe connection" in action["status_reason"]
    case = case_json(approver, linen.case_id)
    assert (case["status"], case["owner"]) == ("needs_attention", APPROVER)
    queue.empty()
    assert str(action_id) not in sweep(ctx, queue)["requeued"]


def test_a_key_connected_again_after_the_approval_is_the_one_the_refund_goes_out_with(
    linen: LinenShop,
    approver: Staff,
    owner: Staff,
    account: Account,
    sandbox: StripeSandbox,
    ctx: ExecutionContext,
) -> None:
    """The merchant rolls the key at Stripe and saves the new one while the refund waits
    on the queue: the job sends with the new key (the old one is refused, so a send with
    it would end ``cannot_run``), once."""
    action_id = _approved(approver, linen)
    rolled = sandbox.add_restricted_key(account.id, DEMO_PERMISSIONS).key
    sandbox.revoke_key(account.restricted_key)
    saved = owner.put("/api/shop/connections/stripe", {"api_key": rolled, "livemode": False})
    assert saved.status_code == 200, saved.get_json()

    assert execute_action(ctx, action_id) == "succeeded"

    assert len(refunds_of_action(account, str(action_id))) == 1


def test_the_job_reads_the_shops_connection_with_the_locked_action(
    linen: LinenShop, approver: Staff, ctx: ExecutionContext
) -> None:
    """One statement reads the action, what its checks need and the connection the
    adapter is built from; the adapter factory reads none of its own. (The web app
    serving the sandbox's webhooks shares the engine: only this thread's statements
    count.)"""
    action_id = _approved(approver, linen)
    engine = ctx.session_factory.kw["bind"]
    with statements_sent(engine, this_thread_only=True) as sent:
        assert execute_action(ctx, action_id) == "succeeded"

    statements = [s.statement for s in sent]
    reading = [s for s in statements if "FROM connections" in s or "JOIN connections" in s]
    assert len(reading) == 1, reading
    assert "FROM actions" in reading[0]
    # The action's row lock (SQLite has none: it serialises every writer instead).
    assert ("FOR UPDATE" in reading[0]) == (engine.dialect.name == "postgresql")


def test_the_adapter_factory_refuses_a_connection_that_is_not_the_shops(
    linen: LinenShop, ctx: ExecutionContext, session: Session
) -> None:
    """Whoever hands the factory a connection read elsewhere, another shop's key (or the
    shop's key to another provider) never speaks for this shop."""
    own = session.get_one(Connection, linen.connection_id)
    others = Connection(
        id=uuid.uuid4(),
        shop_id=uuid.uuid4(),
        provider="stripe",
        livemode=False,
        encrypted_secret=own.encrypted_secret,
        key_hint=own.key_hint,
    )
    merchants = Connection(
        id=uuid.uuid4(),
        shop_id=linen.shop_id,
        provider="merchant",
        livemode=False,
        encrypted_secret=own.encrypted_secret,
        key_hint=own.key_hint,
    )
    for connection in (others, merchants):
        with pytest.raises(ValueError, match="is not the shop's stripe connection"):
            ctx.adapters(session, linen.shop_id, "stripe", connection=connection)
    assert ctx.adapters(session, linen.shop_id, "stripe", connection=own) is not None


def test_an_action_of_a_shop_that_uninstalled_cannot_run(
    linen: LinenShop, approver: Staff, account: Account, ctx: ExecutionContext, session: Session
) -> None:
    action_id = _approved(approver, linen)
    shop = session.get(Shop, linen.shop_id)
    assert shop is not None
    shop.uninstalled_at = utcnow()
    session.commit()

    assert execute_action(ctx, action_id) == "cannot_run"

    assert action_json(approver, str(action_id))["status_reason"] == (
        "the shop has uninstalled Caseward"
    )
    assert refunds_of_action(account, str(action_id)) == []


def test_an_action_unclear_too_long_goes_to_a_person_once(
    linen: LinenShop,
    approver: Staff,
    account: Account,
    sandbox: StripeSandbox,
    ctx: ExecutionContext,
    queue: Queue,
    settings: Settings,
) -> None:
    action_id = _unknown_action(sandbox, account, ctx, approver, linen)
    soon = utcnow() + timedelta(seconds=settings.unknown_attention_seconds - 60)
    overdue = utcnow() + timedelta(seconds=settings.unknown_attention_seconds + 60)

    assert sweep(_at(ctx, soon), queue)["escalated"] == []
    assert sweep(_at(ctx, overdue), queue)["escalated"] == [str(action_id)]
    assert sweep(_at(ctx, overdue + timedelta(minutes=5)), queue)["escalated"] == []

    case = case_json(approver, linen.case_id)
    assert (case["status"], case["owner"]) == ("needs_attention", APPROVER)
    assert action_json(approver, str(action_id))["status"] == "unknown"  # look-ups go on


def test_look_ups_that_keep_failing_go_to_a_person(
    linen: LinenShop,
    approver: Staff,
    account: Account,
    sandbox: StripeSandbox,
    ctx: ExecutionContext,
    settings: Settings,
    session: Session,
) -> None:
    action_id = _unknown_action(sandbox, account, ctx, approver, linen)
    failing = replace(
        unreachable(ctx, settings),
        settings=replace(settings, lookup_failures_attention=2),
    )

    assert reconcile_action(failing, action_id) == "unknown"
    assert case_json(approver, linen.case_id)["status"] != "needs_attention"
    assert reconcile_action(failing, action_id) == "unknown"

    case = case_json(approver, linen.case_id)
    assert (case["status"], case["owner"]) == ("needs_attention", APPROVER)
    assert session.get(Action, action_id).escalated_at is not None  # type: ignore[union-attr]


def test_the_sweeper_closes_attempts_a_crash_cut_off(
    linen: LinenShop,
    approver: Staff,
    account: Account,
    sandbox: StripeSandbox,
    ctx: ExecutionContext,
    queue: Queue,
    session: Session,
) -> None:
    action_id = _unknown_action(sandbox, account, ctx, approver, linen)
    # A look-up that started and never finished: its worker died mid-call.
    action = session.get(Action, action_id)
    assert action is not None
    action.attempts_made = 2
    session.add(
        ActionAttempt(
            action_id=action_id,
            number=2,
            purpose="find",
            idempotency_key=f"caseward-action-{action_id}",
            started_at=utcnow() - timedelta(minutes=10),
        )
    )
    session.commit()

    report = sweep(ctx, queue)

    assert report["interrupted"] == [f"{action_id}#2"]
    outcomes = session.scalars(
        select(ActionAttempt.outcome)
        .where(ActionAttempt.action_id == action_id)
        .order_by(ActionAttempt.number)
        .execution_options(populate_existing=True)
    ).all()
    assert outcomes == ["unknown", "interrupted"]


def test_an_approval_that_expired_unsent_can_be_given_again(
    linen: LinenShop, approver: Staff, account: Account, ctx: ExecutionContext, settings: Settings
) -> None:
    first = _approved(approver, linen)
    after_expiry = utcnow() + timedelta(seconds=settings.approval_ttl_seconds + 1)

    assert execute_action(_at(ctx, after_expiry), first) == "expired"

    proposal = case_json(approver, linen.case_id)["proposals"][0]
    assert (proposal["status"], proposal["revision"]) == ("awaiting_approval", 2)
    second = uuid.UUID(approve(approver, proposal))
    assert second != first
    assert execute_action(ctx, second) == "succeeded"
    assert refunds_of_action(account, str(first)) == []
    [refund] = refunds_of_action(account, str(second))
    assert refund["metadata"]["caseward_action_id"] == str(second)
    keys = {action_json(approver, str(a))["idempotency_key"] for a in (first, second)}
    assert keys == {f"caseward-action-{first}", f"caseward-action-{second}"}


def test_look_ups_are_spread_by_jitter_so_they_do_not_run_in_step(
    linen: LinenShop,
    approver: Staff,
    account: Account,
    sandbox: StripeSandbox,
    ctx: ExecutionContext,
    settings: Settings,
    session: Session,
) -> None:
    action_id = _unknown_action(sandbox, account, ctx, approver, linen)
    moment = utcnow()
    waits = []
    for jitter in (0.0, 0.999):
        failing = replace(_at(unreachable(ctx, settings), moment), jitter=lambda j=jitter: j)
        reconcile_action(failing, action_id)
        session.expire_all()
        action = session.get(Action, action_id)
        assert action is not None and action.next_check_at is not None
        waits.append((action.next_check_at - moment).total_seconds())

    # The doubling backoff after one and two look-ups, each cut by up to half at random.
    first, second = (
        min(settings.reconcile_delay_seconds * 2**n, settings.reconcile_max_delay_seconds)
        for n in (1, 2)
    )
    assert waits[0] == pytest.approx(first * 0.5)
    assert waits[1] == pytest.approx(second * 0.9995)
