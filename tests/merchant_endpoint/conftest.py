"""The merchant's own endpoint as a provider, against real services: PostgreSQL (or
SQLite), Redis, the receiving server as its own process, an RQ worker process.

The expensive processes are started once per module: the receiver (reset before each
test) and, for the money path, one worker. So the settings are the module's too: one
database (on SQLite, a copy of the migrated file kept for the module; each test's shop
has a domain of its own) and queues of the module's own.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from flask import Flask
from flask.testing import FlaskClient
from merchant_support import (
    PROVIDER_TIMEOUT,
    MerchantShop,
    Receiver,
    Staff,
    WorkerProcess,
    seed_merchant_shop,
)
from money_path_harness import execution_context
from own_database import own_database
from rq import Queue
from sqlalchemy.orm import Session

from app.crypto import SecretBox, secret_box
from app.demo import APPROVER, OWNER, PROPOSER
from app.execution.executor import ExecutionContext
from app.jobs.connection import connect_redis
from app.jobs.queueing import queue_named
from app.settings import Settings

ENCRYPTION_KEY = SecretBox.generate_key()


@pytest.fixture(scope="module")
def module_settings(
    tmp_path_factory: pytest.TempPathFactory, migrated_database_url: str, redis_url: str
) -> Settings:
    instance = tmp_path_factory.mktemp("merchant-instance")
    database = own_database(migrated_database_url, instance)
    queue = f"caseward-test-{uuid.uuid4().hex[:8]}"
    return Settings(
        instance_path=instance,
        database_url=database,
        redis_url=redis_url,
        secret_key="test-secret-key",
        testing=True,
        gorgias_api_base="http://127.0.0.1:9",
        encryption_keys=(ENCRYPTION_KEY,),
        queue_name=queue,
        background_queue_name=f"{queue}-background",
        reconcile_delay_seconds=0.3,
        reconcile_max_delay_seconds=2.0,
        provider_timeout_seconds=PROVIDER_TIMEOUT,
    ).completed()


@pytest.fixture
def settings(module_settings: Settings) -> Settings:
    return module_settings


@pytest.fixture(scope="module")
def receiver(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Receiver]:
    started = Receiver(Path(tmp_path_factory.mktemp("merchant-receiver")))
    yield started
    started.stop()


@pytest.fixture(autouse=True)
def _fresh_receiver(request: pytest.FixtureRequest) -> None:
    """Each test meets a receiver with no records, secrets, faults or requests."""
    if "receiver" in request.fixturenames:
        receiver: Receiver = request.getfixturevalue("receiver")
        if receiver.exited_with() is not None:
            receiver.restart()
        receiver.reset()


@pytest.fixture(scope="module")
def worker(module_settings: Settings, redis_url: str) -> Iterator[WorkerProcess]:
    started = WorkerProcess(module_settings, redis_url)
    yield started
    started.stop()


@pytest.fixture
def shop(app: Flask, session: Session, settings: Settings, receiver: Receiver) -> MerchantShop:
    return seed_merchant_shop(session, receiver=receiver, box=secret_box(settings))


@pytest.fixture
def staff(client: FlaskClient, app: Flask, shop: MerchantShop) -> Callable[[str], Staff]:
    return lambda user_id: Staff(client, app, shop.domain, user_id)


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
def ctx(app: Flask, settings: Settings) -> ExecutionContext:
    return execution_context(app, settings)


@pytest.fixture
def queue(settings: Settings) -> Queue:
    return queue_named(connect_redis(settings), settings.queue_name)
