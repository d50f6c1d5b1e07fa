"""Every send of an action carries the action's one idempotency key, as Stripe sees it.

The keys are read from what the Stripe sandbox received, never from our own records:
a bug that made a new key per send would still store the right key in our rows. The
sends covered: the first one; a resend after an unknown outcome (the request was lost
before Stripe committed it); a resend after a refused connection (the first never
arrived); a resend after a 429. And a slow commit: Stripe commits the first request only
after we gave up on it and looked it up, so the resend arrives when the refund exists;
the same key is answered from Stripe's idempotency store (one refund), where a new key
would have made a second refund.

In-process executor calls (the worker's own functions) against the sandbox over HTTP.
"""

from __future__ import annotations

import threading
import uuid
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, replace
from datetime import datetime, timedelta
from typing import Any

import pytest
import requests
import stripe
from fault_support import (
    approve,
    case_json,
    refunds_of_action,
    reset_sandbox_switches,
    writes_used_up,
)
from money_path_harness import Account, Staff, writes_refused

from app.demo import LinenShop
from app.execution.executor import (
    ExecutionContext,
    action_request,
    execute_action,
    reconcile_action,
)
from app.execution.models import Action
from app.settings import Settings
from integrations.stripe.sandbox import ReceivedRequest, StripeSandbox

REFUNDS = "/v1/refunds"


@pytest.fixture(autouse=True)
def _clean_sandbox(sandbox: StripeSandbox) -> Iterator[None]:
    reset_sandbox_switches(sandbox)
    sandbox.pause_webhooks()  # only our own calls tell the action what happened
    yield
    reset_sandbox_switches(sandbox)


# ------------------------------------------------------------------ helpers


def _approved(approver: Staff, linen: LinenShop) -> uuid.UUID:
    proposal = case_json(approver, linen.case_id)["proposals"][0]
    return uuid.UUID(approve(approver, proposal))


def _refund_sends(sandbox: StripeSandbox, account: Account) -> list[ReceivedRequest]:
    """Every refund request the account's keys sent to Stripe, as Stripe received it."""
    return [
        r for r in sandbox.received_requests(account.id) if (r.method, r.path) == ("POST", REFUNDS)
    ]


def _assert_one_key(sends: list[ReceivedRequest], action_id: uuid.UUID, count: int) -> None:
    keys = [send.idempotency_key for send in sends]
    assert keys == [f"caseward-action-{action_id}"] * count, (
        f"every send of an action carries its one key: Stripe received {keys}"
    )


def _at(ctx: ExecutionContext, moment: datetime) -> ExecutionContext:
    return replace(ctx, clock=lambda: moment)


def _next_check_at(ctx: ExecutionContext, action_id: uuid.UUID) -> datetime:
    with ctx.session_factory() as session:
        action = session.get(Action, action_id)
        assert action is not None and action.next_check_at is not None
        return action.next_check_at


# ------------------------------------------------------------------ the sends


@dataclass(frozen=True)
class _Setting:
    ctx: ExecutionContext
    settings: Settings
    sandbox: StripeSandbox
    account: Account


def _first_send(s: _Setting, action_id: uuid.UUID) -> int:
    assert execute_action(s.ctx, action_id) == "succeeded"
    return 1


def _resend_after_unknown(s: _Setting, action_id: uuid.UUID) -> int:
    s.sandbox.arm_fault("drop_before_commit", method="POST", path=REFUNDS, account=s.account.id)
    assert execute_action(s.ctx, action_id) == "unknown"
    assert reconcile_action(s.ctx, action_id) == "succeeded"  # looked up, absent, resent
    [dropped, _] = _refund_sends(s.sandbox, s.account)
    assert dropped.dropped
    return 2


def _resend_after_refused_connection(s: _Setting, action_id: uuid.UUID) -> int:
    assert execute_action(writes_refused(s.ctx, s.settings), action_id) == "queued"
    assert _refund_sends(s.sandbox, s.account) == []  # the first never arrived
    later = _next_check_at(s.ctx, action_id) + timedelta(seconds=1)
    assert execute_action(_at(s.ctx, later), action_id) == "succeeded"
    return 1


def _resend_after_429(s: _Setting, action_id: uuid.UUID) -> int:
    with writes_used_up(s.sandbox, s.account):
        assert execute_action(s.ctx, action_id) == "queued"
        [throttled] = _refund_sends(s.sandbox, s.account)
        assert throttled.status == 429
    later = _next_check_at(s.ctx, action_id) + timedelta(seconds=1)
    assert execute_action(_at(s.ctx, later), action_id) == "succeeded"
    return 2


SENDS: dict[str, Callable[[_Setting, uuid.UUID], int]] = {
    "the first send": _first_send,
    "a resend after an unknown outcome": _resend_after_unknown,
    "a resend after a refused connection": _resend_after_refused_connection,
    "a resend after a 429": _resend_after_429,
}


@pytest.mark.parametrize("sends", list(SENDS))
def test_every_send_of_an_action_carries_its_one_key(
    sends: str,
    linen: LinenShop,
    approver: Staff,
    account: Account,
    sandbox: StripeSandbox,
    ctx: ExecutionContext,
    settings: Settings,
) -> None:
    action_id = _approved(approver, linen)

    count = SENDS[sends](_Setting(ctx, settings, sandbox, account), action_id)

    _assert_one_key(_refund_sends(sandbox, account), action_id, count)
    [refund] = refunds_of_action(account, str(action_id))
    assert refund["amount"] == 4800


# ------------------------------------------------------------------ a slow commit


class _LateCommit:
    """Holds the account's first refund request at the sandbox, before it commits, until
    the next refund request of the account arrives; that one is served only after the
    first has committed. So the first commits after we gave up on it and looked it up,
    right before the resend lands: a slow commit, without waiting on any clock."""

    def __init__(self, sandbox: StripeSandbox, account_id: str) -> None:
        self._sandbox = sandbox
        self._serve = sandbox.engine.handle
        self._account_id = account_id
        self._lock = threading.Lock()
        self._seen = 0
        self.release = threading.Event()
        self._committed = threading.Event()

    def __call__(self, method: str, target: str, headers: Mapping[str, str], body: bytes) -> Any:
        refund = (method.upper(), target.partition("?")[0]) == ("POST", REFUNDS)
        if not refund or self._sandbox.engine.account_of(headers) != self._account_id:
            return self._serve(method, target, headers, body)
        with self._lock:
            self._seen += 1
            first = self._seen == 1
        if first:
            self.release.wait(timeout=60)
            try:
                return self._serve(method, target, headers, body)
            finally:
                self._committed.set()
        self.release.set()
        assert self._committed.wait(timeout=60), "the first request never committed"
        return self._serve(method, target, headers, body)


@pytest.fixture
def late_commit(
    sandbox: StripeSandbox, account: Account, monkeypatch: pytest.MonkeyPatch
) -> Iterator[_LateCommit]:
    hold = _LateCommit(sandbox, account.id)
    monkeypatch.setattr(sandbox.engine, "handle", hold)
    yield hold
    hold.release.set()  # never leave a request held past the test


def test_a_slow_commit_is_answered_from_the_key_store_and_only_that_key_prevents_a_duplicate(
    linen: LinenShop,
    approver: Staff,
    account: Account,
    sandbox: StripeSandbox,
    ctx: ExecutionContext,
    late_commit: _LateCommit,
) -> None:
    action_id = _approved(approver, linen)

    # The first request waits at Stripe uncommitted; our call times out: unknown.
    assert execute_action(ctx, action_id) == "unknown"
    # Looked up (nothing there yet), resent; the first commits just before the resend.
    assert reconcile_action(ctx, action_id) == "succeeded"

    first, resend = _refund_sends(sandbox, account)
    _assert_one_key([first, resend], action_id, 2)
    assert (first.status, first.replayed) == (200, False)  # committed, answer unheard
    assert (resend.status, resend.replayed) == (200, True), (
        "the resend is answered from Stripe's idempotency store, not run again"
    )
    [refund] = refunds_of_action(account, str(action_id))
    assert refund["amount"] == 4800
    with ctx.session_factory() as session:
        action = session.get(Action, action_id)
        assert action is not None
        assert action.provider_ref == refund["id"]
        request = action_request(action)
        adapter = ctx.adapters(session, action.shop_id, action.provider)

    # The same request again, through the real Stripe SDK: with the action's key it is
    # the same refund; with a fresh key (nothing else changed) Stripe makes a second one.
    again = adapter.submit(request)
    assert (again.reference, again.replayed) == (refund["id"], True)
    assert len(refunds_of_action(account, str(action_id))) == 1
    fresh_key = replace(request, idempotency_key=f"caseward-action-{uuid.uuid4()}")
    duplicate = adapter.submit(fresh_key)
    assert duplicate.reference != refund["id"]
    assert len(refunds_of_action(account, str(action_id))) == 2, (
        "a new key would have refunded twice: only the reused key prevents it"
    )


# ------------------------------------------------------------------ the sandbox's record


def test_the_sandbox_records_each_request_with_its_key_dropped_ones_too(
    account: Account, sandbox: StripeSandbox, settings: Settings
) -> None:
    """The record the tests above rely on: what arrived, dropped or answered, by account."""
    sandbox.arm_fault("drop_before_commit", method="POST", path="/v1/customers", account=account.id)
    with pytest.raises(stripe.APIConnectionError):
        account.stripe.v1.customers.create(
            params={"email": "a@example.com"}, options={"idempotency_key": "key-one"}
        )
    account.stripe.v1.customers.create(
        params={"email": "a@example.com"}, options={"idempotency_key": "key-one"}
    )
    account.stripe.v1.customers.create(
        params={"email": "a@example.com"}, options={"idempotency_key": "key-one"}
    )

    posts = [
        (r.method, r.path, r.account, r.idempotency_key, r.status, r.dropped, r.replayed)
        for r in sandbox.received_requests(account.id)
    ]
    assert posts == [
        ("POST", "/v1/customers", account.id, "key-one", None, True, False),
        ("POST", "/v1/customers", account.id, "key-one", 200, False, False),
        ("POST", "/v1/customers", account.id, "key-one", 200, False, True),
    ]
    # The control endpoint lists the same, for a sandbox running as its own process.
    listed = requests.get(
        f"{settings.stripe_api_base}/_sandbox/accounts/{account.id}/requests",
        headers={"Authorization": f"Bearer {sandbox.control_token}"},
        timeout=10,
    )
    assert listed.status_code == 200
    assert [(r["idempotency_key"], r["dropped"], r["replayed"]) for r in listed.json()] == [
        ("key-one", True, False),
        ("key-one", False, False),
        ("key-one", False, True),
    ]
