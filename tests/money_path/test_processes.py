"""The money path run as the processes production runs, end to end.

Real ``rq worker`` processes (``WorkerProcess``), the sweeper's own loop
(``python -m app.background sweeper``) and the worker's entry point
(``python -m app.background worker``), configured only through the environment, against
PostgreSQL or SQLite, Redis and the Stripe sandbox over HTTP (steered through its control
endpoints). Each test waits for what it asserts with a deadline, never a fixed pause:

* a refund Stripe refuses ends ``rejected``, and one whose key Stripe saw with other
  parameters ends ``needs_decision``, each with the case in front of the approver;
* a job that raised (the provider read answered 500) is enqueued again by the sweeper
  process and completes;
* a shop policy's auto-approve ceiling lets a small refund through with no person, the
  audit trail naming the policy version as its approver;
* the sweeper's loop re-enqueues an approved action whose job vanished from Redis, and
  the worker's entry point executes it;
* workers told to stop (SIGTERM) leave in seconds.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable, Iterator
from typing import Any

import pytest
import requests
from fault_support import (
    action_json,
    approve,
    assert_money_invariants,
    case_json,
    direct_refund,
    refunds_of_action,
    reset_sandbox_switches,
    wait_for_status,
)
from money_path_harness import Account, ServiceProcess, Staff, WorkerProcess, wait_for
from rq import Queue, Worker
from rq.job import JobStatus

from app.demo import APPROVER, LinenShop
from app.execution.executor import ExecutionContext
from app.settings import Settings
from integrations.stripe.sandbox import StripeSandbox

# Every status an action can stop in once a worker is done with it.
SETTLED = ("halted", "succeeded", "rejected", "failed", "unknown", "needs_decision", "cannot_run")


@pytest.fixture(autouse=True)
def _clean_sandbox(sandbox: StripeSandbox) -> Iterator[None]:
    reset_sandbox_switches(sandbox)
    yield
    reset_sandbox_switches(sandbox)


@pytest.fixture
def start_service(
    settings: Settings, redis_url: str, ctx: ExecutionContext
) -> Iterator[Callable[..., ServiceProcess]]:
    """Start ``python -m <module>`` with only the environment production gives it (the
    test's own queue in ``CASEWARD_QUEUE``); every one is stopped at the end."""
    started: list[ServiceProcess] = []

    def start(module: str, *args: str, **env: str) -> ServiceProcess:
        service = ServiceProcess(
            [sys.executable, "-m", module, *args],
            {
                **os.environ,
                "DATABASE_URL": settings.database_url,
                "REDIS_URL": redis_url,
                "STRIPE_API_BASE": settings.stripe_api_base,
                "CASEWARD_ENCRYPTION_KEYS": ",".join(settings.encryption_keys),
                "CASEWARD_INSTANCE_PATH": str(settings.instance_path),
                "CASEWARD_QUEUE": settings.queue_name,
                "CASEWARD_BACKGROUND_QUEUE": settings.background_queue_name,
                **env,
            },
        )
        started.append(service)
        return service

    yield start
    for service in started:
        service.stop()


def _sweeper(start_service: Callable[..., ServiceProcess]) -> ServiceProcess:
    return start_service("app.background", "sweeper", CASEWARD_SWEEP_INTERVAL="0.2")


def _control(
    settings: Settings,
    sandbox: StripeSandbox,
    verb: str,
    path: str,
    body: dict[str, Any] | None = None,
) -> Any:
    """A call to the sandbox's control endpoints over HTTP, as a separate process is steered."""
    response = requests.request(
        verb,
        f"{settings.stripe_api_base}{path}",
        json=body,
        headers={"Authorization": f"Bearer {sandbox.control_token}"},
        timeout=10,
    )
    assert response.status_code == 200, response.text
    return response.json()


def _seeded_refund(approver: Staff, linen: LinenShop) -> str:
    """Approve the seed's $48 refund; returns the action's id."""
    return approve(approver, case_json(approver, linen.case_id)["proposals"][0])


def _in_front_of_the_approver(approver: Staff, linen: LinenShop) -> None:
    case = case_json(approver, linen.case_id)
    assert case["status"] == "needs_attention", case["status"]
    assert case["owner"] == APPROVER


# ---------------------------------------------------------------- provider refusals


def test_a_refund_stripe_refuses_ends_rejected_in_front_of_the_approver(
    linen: LinenShop,
    approver: Staff,
    account: Account,
    sandbox: StripeSandbox,
    settings: Settings,
    ctx: ExecutionContext,
    start_worker: Callable[[], WorkerProcess],
) -> None:
    ours = {"kind": "hold", "method": "POST", "path": "/v1/refunds", "account": account.id}
    hold = _control(settings, sandbox, "POST", "/_sandbox/faults", ours)
    action_id = _seeded_refund(approver, linen)
    start_worker()

    def held() -> bool:
        holds = _control(settings, sandbox, "GET", "/_sandbox/holds")
        return any(h["id"] == hold["id"] and h["waiting"] == 1 for h in holds)

    wait_for(held, what="our $48 refund held inside Stripe")
    # Our checks passed; before Stripe commits ours, the merchant refunds $60 in the
    # dashboard: $36 is left, less than the $48 on its way.
    direct_refund(account, linen.payment_intent_id, 6000)
    _control(settings, sandbox, "POST", "/_sandbox/holds/release", {"id": hold["id"]})

    ended = wait_for_status(approver, action_id, SETTLED)
    assert ended["status"] == "rejected", (ended["status"], ended["status_reason"])
    assert "greater than unrefunded amount" in ended["status_reason"]
    assert [(a["purpose"], a["outcome"]) for a in ended["attempts"]] == [("submit", "rejected")]
    _in_front_of_the_approver(approver, linen)
    assert refunds_of_action(account, action_id) == []
    refunds = assert_money_invariants(account, ctx.session_factory, linen.shop_id)
    assert [r["amount"] for r in refunds] == [6000]


def test_a_key_stripe_saw_with_other_parameters_ends_needs_decision(
    linen: LinenShop,
    approver: Staff,
    account: Account,
    ctx: ExecutionContext,
    start_worker: Callable[[], WorkerProcess],
) -> None:
    action_id = _seeded_refund(approver, linen)
    key = action_json(approver, action_id)["idempotency_key"]
    # Another request already used the action's key, with other parameters: Stripe
    # refuses our refund under it, and whether that other request moved money is for a
    # person to find out.
    account.stripe.v1.customers.create(
        params={"email": "someone@example.com"}, options={"idempotency_key": key}
    )
    start_worker()

    ended = wait_for_status(approver, action_id, SETTLED)
    assert ended["status"] == "needs_decision", (ended["status"], ended["status_reason"])
    assert "idempotency key" in ended["status_reason"]
    assert [(a["purpose"], a["outcome"]) for a in ended["attempts"]] == [("submit", "rejected")]
    _in_front_of_the_approver(approver, linen)
    assert refunds_of_action(account, action_id) == []
    assert_money_invariants(account, ctx.session_factory, linen.shop_id)


# ---------------------------------------------------------------- the sweeper and the worker


def test_a_job_that_raised_is_enqueued_again_by_the_sweeper_process_and_completes(
    linen: LinenShop,
    approver: Staff,
    account: Account,
    sandbox: StripeSandbox,
    ctx: ExecutionContext,
    queue: Queue,
    start_worker: Callable[[], WorkerProcess],
    start_service: Callable[..., ServiceProcess],
) -> None:
    # The worker's fresh read of the payment is answered 500, once: its job raises.
    sandbox.arm_fault(
        "error_500_before_commit", method="GET", path="/v1/payment_intents/*", account=account.id
    )
    action_id = _seeded_refund(approver, linen)
    start_worker()

    def job_failed() -> bool:
        job = queue.fetch_job(action_id)
        return job is not None and job.get_status(refresh=True) == JobStatus.FAILED

    wait_for(job_failed, what="the job to fail on the provider's 500")
    still = action_json(approver, action_id)
    assert (still["status"], still["attempts"]) == ("queued", []), "nothing may have been sent"

    sweeper = _sweeper(start_service)
    done = wait_for_status(approver, action_id, SETTLED)

    assert done["status"] == "succeeded", (done["status"], done["status_reason"])
    assert sweeper.said("requeued=[", action_id)
    assert [(a["purpose"], a["outcome"]) for a in done["attempts"]] == [("submit", "answered")]
    reads = [
        r.status
        for r in sandbox.received_requests(account.id)
        if r.method == "GET" and r.path == f"/v1/payment_intents/{linen.payment_intent_id}"
    ]
    assert 500 in reads and reads[-1] == 200, reads
    assert len(refunds_of_action(account, action_id)) == 1
    assert_money_invariants(account, ctx.session_factory, linen.shop_id)


def test_the_sweeper_loop_requeues_a_vanished_job_for_the_worker_entry_point(
    linen: LinenShop,
    approver: Staff,
    account: Account,
    settings: Settings,
    ctx: ExecutionContext,
    queue: Queue,
    start_service: Callable[..., ServiceProcess],
) -> None:
    action_id = _seeded_refund(approver, linen)
    job = queue.fetch_job(action_id)
    assert job is not None
    job.delete()  # Redis lost it
    assert queue.count == 0

    start_service("app.background", "worker")

    def idle_worker() -> Worker | None:
        return next((w for w in Worker.all(queue=queue) if w.get_state() == "idle"), None)

    worker = wait_for(idle_worker, what="the entry point's worker to be up and idle")
    # Money first: the entry point serves the money queue before the background queue.
    assert worker.queue_names() == [settings.queue_name, settings.background_queue_name]
    assert action_json(approver, action_id)["status"] == "queued"

    sweeper = _sweeper(start_service)
    done = wait_for_status(approver, action_id, SETTLED)

    assert done["status"] == "succeeded", (done["status"], done["status_reason"])
    assert sweeper.said("requeued=[", action_id)
    finished = queue.fetch_job(action_id)
    assert finished is not None and finished.worker_name == worker.name
    assert len(refunds_of_action(account, action_id)) == 1
    assert_money_invariants(account, ctx.session_factory, linen.shop_id)


# ---------------------------------------------------------------- policy auto-approve


def test_a_shop_policy_auto_approves_a_small_refund_audited_as_its_version(
    linen: LinenShop,
    owner: Staff,
    proposer: Staff,
    account: Account,
    ctx: ExecutionContext,
    start_worker: Callable[[], WorkerProcess],
) -> None:
    saved = owner.put("/api/shop/policy", {"rules": {"auto_approve_ceiling": {"usd": 2000}}})
    assert saved.status_code == 200, saved.get_json()
    policy_approver = f"system:policy:v{saved.get_json()['policy']['version']}"
    start_worker()

    response = proposer.post(
        f"/api/cases/{linen.case_id}/proposals",
        {"kind": "refund", "target": linen.payment_intent_id, "amount": 1500, "currency": "usd"},
    )
    assert response.status_code == 201, response.get_json()
    body = response.get_json()
    assert body["proposal"]["verdict"]["outcome"] == "allowed_by_policy"
    assert body["action"] is not None, "the policy should have approved the $15 refund"
    action_id = str(body["action"]["id"])
    assert body["action"]["approved_by"] == [policy_approver]

    done = wait_for_status(proposer, action_id, SETTLED)
    assert done["status"] == "succeeded", (done["status"], done["status_reason"])
    assert [r["amount"] for r in refunds_of_action(account, action_id)] == [1500]

    audit = proposer.get(f"/api/cases/{linen.case_id}/audit").get_json()["events"]
    queued = [e for e in audit if e["kind"] == "action.queued" and e["action_id"] == action_id]
    assert [(e["actor"], e["data"]["approved_by"]) for e in queued] == [
        (policy_approver, [policy_approver])
    ]
    assert [e for e in audit if e["kind"] == "proposal.approved"] == [], "no person approved"
    assert_money_invariants(account, ctx.session_factory, linen.shop_id)


# ---------------------------------------------------------------- stopping


def test_stopped_workers_exit_in_seconds_not_a_minute(
    queue: Queue, start_worker: Callable[[], WorkerProcess]
) -> None:
    """A deploy or a scale-down SIGTERMs its workers: each leaves in RQ's warm shutdown
    (a second or two), not after a minute in its pub/sub thread. Three at once, since the
    minute came from a race that a single worker lost only about half the time."""
    workers = []
    for _ in range(3):
        # One at a time: three loading the app at once would starve the tests beside this
        # one of the CPU for seconds.
        worker = start_worker()
        workers.append(worker)
        # RQ installs its signal handlers after it lists the worker, before its first
        # maintenance (it cleans the registries then): a SIGTERM earlier just kills.
        wait_for(lambda w=worker: w.said("cleaning registries"), what="a worker past start-up")
    assert Worker.count(queue=queue) == 3
    for worker in workers:
        worker.process.terminate()  # the worker alone: its scheduler is its to stop
    for worker in workers:
        try:
            worker.process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            pytest.fail("a worker still ran 15 s after SIGTERM:\n" + "".join(worker.output))
    assert [worker.process.returncode for worker in workers] == [0, 0, 0]
