"""An MCP server on a free port in this process, over the linen shop and its Stripe sandbox."""

from __future__ import annotations

import socket
import threading
import uuid
from collections.abc import Iterator

import pytest
import uvicorn
from flask import Flask
from mcp_support import McpServerUnderTest
from sandbox_settings import with_sandbox
from sqlalchemy.orm import Session

from app.crypto import SecretBox, secret_box
from app.db import Database
from app.demo import LinenShop, seed_linen_shop
from app.execution.providers import connection_adapters
from app.mcp_server import STREAMABLE_HTTP_PATH, ServerContext, build_server
from app.settings import Settings
from integrations.stripe.sandbox import DEMO_PERMISSIONS, StripeSandbox

ENCRYPTION_KEY = SecretBox.generate_key()


@pytest.fixture
def settings(settings: Settings, sandbox: StripeSandbox) -> Settings:
    return with_sandbox(settings, sandbox, encryption_keys=(ENCRYPTION_KEY,))


def _seed(session: Session, settings: Settings, sandbox: StripeSandbox, domain: str) -> LinenShop:
    keys = sandbox.create_account(restricted_keys=[{"permissions": DEMO_PERMISSIONS}])
    seeded = seed_linen_shop(
        session,
        settings=settings,
        box=secret_box(settings),
        secret_key=keys.secret_key,
        restricted_key=keys.restricted_keys[0].key,
        webhook_base_url=None,
        shop_domain=domain,
    )
    session.commit()
    return seeded


@pytest.fixture
def linen(session: Session, settings: Settings, sandbox: StripeSandbox) -> LinenShop:
    return _seed(session, settings, sandbox, "linen-and-loom.myshopify.com")


@pytest.fixture
def other_shop(session: Session, settings: Settings, sandbox: StripeSandbox) -> LinenShop:
    """A second shop with the same customer email and its own case."""
    return _seed(session, settings, sandbox, "another-linen-shop.myshopify.com")


@pytest.fixture
def mcp_server(app: Flask, settings: Settings) -> Iterator[McpServerUnderTest]:
    enqueued: list[uuid.UUID] = []
    context = ServerContext(
        session_factory=Database.state(app).session_factory,
        adapters=connection_adapters(settings, secret_box(settings)),
        settings=settings,
        enqueue=enqueued.append,
    )
    http_app = build_server(context).streamable_http_app(
        streamable_http_path=STREAMABLE_HTTP_PATH, stateless_http=True, json_response=True
    )
    # Bound and listening before the server thread starts: the first request waits in
    # the backlog instead of racing the start-up.
    listener = socket.create_server(("127.0.0.1", 0))
    port = listener.getsockname()[1]
    server = uvicorn.Server(uvicorn.Config(http_app, log_level="warning", lifespan="on"))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [listener]}, daemon=True)
    thread.start()
    yield McpServerUnderTest(f"http://127.0.0.1:{port}{STREAMABLE_HTTP_PATH}", enqueued)
    server.should_exit = True
    thread.join(timeout=30)
    listener.close()
