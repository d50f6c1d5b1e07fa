"""The money path end to end: PostgreSQL (or SQLite), Redis, RQ worker processes,
the Stripe sandbox over HTTP, and the web app served for real webhooks."""

from __future__ import annotations

from collections.abc import Callable, Iterator

import pytest
import stripe
from flask import Flask
from flask.testing import FlaskClient
from money_path_harness import Account, Staff, WorkerProcess, execution_context
from rq import Queue
from sandbox_settings import with_sandbox
from sqlalchemy.orm import Session

from app.crypto import SecretBox, secret_box
from app.demo import APPROVER, OWNER, PROPOSER, LinenShop, seed_linen_shop
from app.execution.executor import ExecutionContext
from app.jobs.connection import connect_redis
from app.jobs.queueing import queue_named
from app.settings import Settings
from integrations.anthropic.sandbox import AnthropicSandbox, Clock
from integrations.stripe.sandbox import DEMO_PERMISSIONS, StripeSandbox

ENCRYPTION_KEY = SecretBox.generate_key()


@pytest.fixture
def settings(settings: Settings, sandbox: StripeSandbox) -> Settings:
    return with_sandbox(
        settings,
        sandbox,
        encryption_keys=(ENCRYPTION_KEY,),
        reconcile_delay_seconds=0.3,
        reconcile_max_delay_seconds=2.0,
        stuck_submission_seconds=1.0,
        provider_timeout_seconds=2.0,
    )


@pytest.fixture
def ctx(app: Flask, settings: Settings) -> ExecutionContext:
    return execution_context(app, settings)


@pytest.fixture
def queue(settings: Settings) -> Queue:
    return queue_named(connect_redis(settings), settings.queue_name)


@pytest.fixture
def account(sandbox: StripeSandbox, settings: Settings) -> Account:
    keys = sandbox.create_account(restricted_keys=[{"permissions": DEMO_PERMISSIONS}])
    client = stripe.StripeClient(
        keys.secret_key, base_addresses={"api": settings.stripe_api_base}, max_network_retries=0
    )
    return Account(keys.id, keys.secret_key, keys.restricted_keys[0].key, client)


@pytest.fixture
def linen(
    app: Flask, settings: Settings, account: Account, session: Session, web_url: str
) -> LinenShop:
    seeded = seed_linen_shop(
        session,
        settings=settings,
        box=secret_box(settings),
        secret_key=account.secret_key,
        restricted_key=account.restricted_key,
        webhook_base_url=web_url,
    )
    session.commit()
    return seeded


@pytest.fixture
def staff(client: FlaskClient, app: Flask) -> Callable[[str], Staff]:
    from app.demo import SHOP_DOMAIN  # noqa: PLC0415

    return lambda user_id: Staff(client, app, SHOP_DOMAIN, user_id)


@pytest.fixture
def owner(staff: Callable[[str], Staff]) -> Staff:
    return staff(OWNER)


@pytest.fixture
def approver(staff: Callable[[str], Staff]) -> Staff:
    return staff(APPROVER)


@pytest.fixture
def proposer(staff: Callable[[str], Staff]) -> Staff:
    return staff(PROPOSER)


@pytest.fixture
def start_worker(settings: Settings, redis_url: str) -> Iterator[Callable[[], WorkerProcess]]:
    workers: list[WorkerProcess] = []

    def start() -> WorkerProcess:
        worker = WorkerProcess(settings, redis_url)
        workers.append(worker)
        return worker

    yield start
    # The test has its answers: killed rather than stopped, since RQ's warm shutdown waits
    # out its scheduler's and its pub/sub thread's sleeps (about 2 s), and the queues and
    # their scheduler locks were the test's own. Tests that stop a worker call stop().
    for worker in workers:
        worker.kill()


@pytest.fixture
def worker(start_worker: Callable[[], WorkerProcess]) -> WorkerProcess:
    return start_worker()


@pytest.fixture(scope="module")
def served_claude() -> Iterator[AnthropicSandbox]:
    """The Anthropic sandbox on a port of its own, for the module's tests (each resets it)."""
    box = AnthropicSandbox(clock=Clock(start=1_700_000_000.0))
    box.start()
    yield box
    box.stop()
