"""Caseward: guarded, exactly-once money actions for Shopify + Stripe support.

``create_app`` is the only way to build the web application; workers and
commands build what they need from :class:`app.settings.Settings` directly.
"""

from __future__ import annotations

import secrets
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from app.crypto import read_or_create_secret, secret_box
from app.settings import Settings

if TYPE_CHECKING:
    from flask import Flask


def create_app(config: Settings | Mapping[str, Any] | None = None) -> Flask:
    """Build the app from ``config``: a :class:`Settings`, or overrides of the environment."""
    # Imported here, as in Flask's own tutorial: a worker or a command imports ``app.*``
    # without loading the web app, its SDKs and their seconds of start-up.
    from flask import Flask

    # Every table mapped, every receiver of the executor's signals connected.
    from app import (
        areas,  # noqa: F401
        audit,
        money,
    )
    from app.cli import register_commands
    from app.connections.adapters import connection_adapters
    from app.db import db
    from app.jobs.connection import redis_ext
    from app.web import helpdesk, limits, mcp_mount, proxy, register_blueprints
    from app.web.api import bp as api_bp
    from app.web.auth import StoredStaffTokens
    from app.web.errors import register_error_handlers
    from app.web.security import init_security
    from app.web.shopify_admin import ShopifySessionTokens, init_shopify
    from app.web.shopify_webhooks import bp as shopify_webhooks_bp
    from app.web.webhooks import bp as webhooks_bp

    if isinstance(config, Settings):
        settings = config.completed()
    else:
        settings = Settings.from_env(**dict(config or {}))
    settings.require_production_secrets()

    app = Flask(__name__, instance_path=str(settings.instance_path.resolve()))
    settings.instance_path.mkdir(parents=True, exist_ok=True)
    app.config.update(
        CASEWARD_SETTINGS=settings,
        SECRET_KEY=settings.secret_key or _instance_secret(settings),
        TESTING=settings.testing,
        JSON_SORT_KEYS=False,
    )

    app.json.ensure_ascii = False  # type: ignore[attr-defined]  # names and symbols as written
    app.add_template_global(money.display, "money")
    db.init_app(app)
    redis_ext.init_app(app)
    # Read the encryption key once; every request decrypts with the same box.
    box = secret_box(settings)
    app.extensions["caseward.secret_box"] = box
    app.extensions["caseward.audit_keys"] = audit_keys = audit.audit_key_ring(settings)
    audit.bind_key_ring(db.state(app).session_factory, audit_keys)
    app.extensions["caseward.adapters"] = connection_adapters(settings, box)
    init_shopify(app, settings)
    app.extensions["caseward.authenticators"] = [StoredStaffTokens(), ShopifySessionTokens()]

    register_blueprints(app)
    register_error_handlers(app)
    # The storefront proxy is signed by Shopify, helpdesk calls carry the shop's secret
    # header, and neither carries a cookie: no CSRF to forge.
    init_security(
        app,
        settings,
        exempt=[api_bp, webhooks_bp, shopify_webhooks_bp, proxy.bp, helpdesk.bp],
    )
    proxy.init_app(app)
    limits.init_app(app)
    # Agents' MCP endpoint at /mcp, served by the same processes as every page.
    mcp_mount.mount(app, settings)
    register_commands(app)
    return app


def _instance_secret(settings: Settings) -> str:
    """A per-installation secret for the embedded default, kept beside the SQLite file."""
    return read_or_create_secret(
        settings.instance_path / "secret_key", lambda: secrets.token_urlsafe(48)
    )
