"""The demo's seeder on a first start and on restarts: it seeds once, registers the
Stripe webhook endpoint only after the shop is committed, and on a restart tells what
has become of the refund instead of asking again for an approval already given."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time
import uuid
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
import stripe
from flask import Flask
from sqlalchemy import func, select
from sqlalchemy.orm import Session, sessionmaker

from app.actors import Surface, staff
from app.approvals.service import approve_proposal
from app.cases.proposals import Proposal
from app.clock import utcnow
from app.connections.models import Connection
from app.crypto import secret_box
from app.db import Database
from app.demo import APPROVER, SHOP_DOMAIN, DemoCase, open_demo, ready_message
from app.execution.models import Action
from app.execution.queueing import enqueue_execution
from app.jobs.connection import connect_redis
from app.jobs.queueing import queue_named
from app.settings import Settings
from app.shops.models import Shop
from integrations.stripe.sandbox import StripeSandbox

if TYPE_CHECKING:  # only the fixture's type: "conftest" is whichever folder's was loaded last
    from conftest import Account

REPO = Path(__file__).resolve().parents[2]


def _start(app: Flask, settings: Settings, account: Account, web_url: str) -> DemoCase:
    with Database.state(app).session_factory() as session:
        return open_demo(
            session,
            settings=settings,
            box=secret_box(settings),
            secret_key=account.secret_key,
            restricted_key=account.restricted_key,
            web=web_url,
        )


def _approve(factory: sessionmaker[Session], settings: Settings) -> Action:
    with factory() as session:
        shop = session.scalars(select(Shop).where(Shop.domain == SHOP_DOMAIN)).one()
        proposal = session.scalars(select(Proposal).where(Proposal.shop_id == shop.id)).one()
        result = approve_proposal(
            session,
            shop=shop,
            proposal_id=proposal.id,
            actor=staff(APPROVER, Surface.STAFF_API),
            digest=proposal.digest,
            settings=settings,
            now=utcnow(),
        )
        session.commit()
        assert result.action is not None
        return result.action


def _run_worker_until_recorded(
    settings: Settings, factory: sessionmaker[Session], action_id: uuid.UUID
) -> None:
    """A real ``rq worker`` process in burst mode, until the action's outcome is recorded and
    no job is mid-run. The wait is for the work, not for the process's exit: a webhook's
    refresh may be queued after a burst worker found the queue empty and quit."""
    env = {
        **os.environ,
        "DATABASE_URL": settings.database_url,
        "REDIS_URL": settings.redis_url,
        "STRIPE_API_BASE": settings.stripe_api_base,
        "CASEWARD_ENCRYPTION_KEYS": ",".join(settings.encryption_keys),
        "CASEWARD_INSTANCE_PATH": str(settings.instance_path),
    }
    rq = str(Path(sys.executable).parent / "rq")
    command = [rq, "worker", "--burst", "-w", "app.background.CasewardWorker"]
    queue = queue_named(connect_redis(settings), settings.queue_name)
    log = settings.instance_path / "worker.log"
    with log.open("w") as output:
        worker = subprocess.Popen(
            [*command, "--url", settings.redis_url, "--path", str(REPO), settings.queue_name],
            env=env,
            cwd=REPO,
            stdout=output,
            stderr=subprocess.STDOUT,
        )
        try:
            deadline = time.monotonic() + 60
            while _unsettled(factory, action_id) or queue.started_job_registry.count:
                if worker.poll() not in (None, 0) or time.monotonic() > deadline:
                    pytest.fail("the worker did not finish the queue:\n" + log.read_text())
                time.sleep(0.1)
        finally:
            worker.terminate()
            worker.wait(timeout=10)


def _unsettled(factory: sessionmaker[Session], action_id: uuid.UUID) -> bool:
    with factory() as session:
        return session.get_one(Action, action_id).status in ("queued", "submitting")


def test_a_restart_tells_what_became_of_the_refund(
    app: Flask, settings: Settings, account: Account, web_url: str
) -> None:
    factory = Database.state(app).session_factory

    first = ready_message(_start(app, settings, account, web_url), web_url, "TOKEN")

    assert first.startswith("\nCaseward demo is ready.\n")
    assert "  The $48.00 refund is awaiting approval.\n" in first
    assert "press 'Approve $48.00'" in first

    # Restarted before anyone approved: still awaiting, and nothing seeded twice.
    again = ready_message(_start(app, settings, account, web_url), web_url, "TOKEN")
    assert again.startswith("\nCaseward demo is running again.\n")
    assert "  The $48.00 refund is awaiting approval.\n" in again
    assert "press 'Approve $48.00'" in again

    action = _approve(factory, settings)
    queued = ready_message(_start(app, settings, account, web_url), web_url, "TOKEN")
    assert "The $48.00 refund was approved by sam.approver and is queued for the worker" in queued
    assert "Approve" not in queued

    enqueue_execution(queue_named(connect_redis(settings), settings.queue_name), action.id)
    _run_worker_until_recorded(settings, factory, action.id)
    done = ready_message(_start(app, settings, account, web_url), web_url, "TOKEN")

    with factory() as session:
        refund_id = session.get_one(Action, action.id).provider_ref
        shops = session.scalar(select(func.count()).where(Shop.domain == SHOP_DOMAIN))
    assert refund_id is not None and re.fullmatch(r"re_\w+", refund_id)
    assert (
        f"  The $48.00 refund was approved by sam.approver and succeeded at Stripe as "
        f"{refund_id}.\n"
    ) in done
    assert "Approve" not in done
    assert shops == 1


def test_the_webhook_endpoint_is_registered_only_after_the_shop_is_committed(
    app: Flask, settings: Settings, account: Account, web_url: str, sandbox: StripeSandbox
) -> None:
    _start(app, settings, account, web_url)
    with Database.state(app).session_factory() as session:
        connection = session.scalars(select(Connection)).one()
        payment_intent = session.scalars(select(Proposal.target)).one()
    assert connection.encrypted_webhook_secret is not None
    # Something happens at Stripe after the start: its events reach the shop.
    stripe.StripeClient(
        account.secret_key, base_addresses={"api": settings.stripe_api_base}
    ).v1.refunds.create(params={"payment_intent": payment_intent, "amount": 100})
    assert sandbox.wait_for_webhooks(timeout=30)

    ours = [
        attempt
        for attempt in sandbox.webhook_attempts()
        if str(connection.id) in attempt.get("url", "")
    ]
    assert ours, "the refund's events were delivered"
    assert {attempt.get("status") for attempt in ours} == {200}, ours
