"""The web app served over HTTP once per module, agents' MCP endpoint at ``/mcp`` inside
it, over the linen shop and its Stripe sandbox. Tables are emptied after each test;
each test's shops have domains of their own, so nothing of one test is another's."""

from __future__ import annotations

import sys
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from empty_tables import empty_tables
from flask import Flask
from mcp_support import RATE_LIMIT
from own_database import own_database
from sandbox_settings import with_sandbox
from sqlalchemy.orm import Session
from threaded_server import serving
from werkzeug.serving import make_server

from app import create_app
from app.crypto import SecretBox, secret_box
from app.db import Database
from app.demo import LinenShop, seed_linen_shop
from app.settings import Settings
from app.web.mcp_mount import MCP_PATH
from integrations.stripe.sandbox import DEMO_PERMISSIONS, StripeSandbox

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "shopify_app"))
from shopify_app_support import APP_SECRET, CLIENT_ID

ENCRYPTION_KEY = SecretBox.generate_key()


@dataclass(frozen=True)
class Served:
    app: Flask
    # The MCP endpoint agents connect to.
    mcp_url: str


@pytest.fixture(scope="module")
def module_settings(
    tmp_path_factory: pytest.TempPathFactory,
    migrated_database_url: str,
    redis_url: str,
    sandbox: StripeSandbox,
) -> Settings:
    """The test settings (``tests/conftest.py``), once for the module, as a Shopify app
    whose agents may make :data:`RATE_LIMIT` tool calls."""
    folder = tmp_path_factory.mktemp("agents")
    database = own_database(migrated_database_url, folder)
    settings = Settings(
        instance_path=folder / "instance",
        database_url=database,
        redis_url=redis_url,
        secret_key="test-secret-key",
        testing=True,
        gorgias_api_base="http://127.0.0.1:9",
        shopify_api_key=CLIENT_ID,
        shopify_api_secret=APP_SECRET,
        agent_rate_limit=RATE_LIMIT,
    ).completed()
    return with_sandbox(settings, sandbox, encryption_keys=(ENCRYPTION_KEY,))


@pytest.fixture(scope="module")
def served(module_settings: Settings) -> Iterator[Served]:
    application = create_app(module_settings)
    server = make_server("127.0.0.1", 0, application, threaded=True)
    with serving(server):
        yield Served(application, f"http://127.0.0.1:{server.server_port}{MCP_PATH}")
    Database.state(application).engine.dispose()


@pytest.fixture
def settings(module_settings: Settings) -> Settings:
    return module_settings


@pytest.fixture
def app(served: Served) -> Iterator[Flask]:
    yield served.app
    empty_tables(Database.state(served.app).engine)


@pytest.fixture
def mcp_url(served: Served) -> str:
    return served.mcp_url


def _seed(session: Session, settings: Settings, sandbox: StripeSandbox, name: str) -> LinenShop:
    keys = sandbox.create_account(restricted_keys=[{"permissions": DEMO_PERMISSIONS}])
    seeded = seed_linen_shop(
        session,
        settings=settings,
        box=secret_box(settings),
        secret_key=keys.secret_key,
        restricted_key=keys.restricted_keys[0].key,
        webhook_base_url=None,
        shop_domain=f"{name}-{uuid.uuid4().hex[:8]}.myshopify.com",
    )
    session.commit()
    return seeded


@pytest.fixture
def linen(session: Session, settings: Settings, sandbox: StripeSandbox) -> LinenShop:
    return _seed(session, settings, sandbox, "linen-and-loom")


@pytest.fixture
def other_shop(session: Session, settings: Settings, sandbox: StripeSandbox) -> LinenShop:
    """A second shop with the same customer email and its own case."""
    return _seed(session, settings, sandbox, "another-linen-shop")
