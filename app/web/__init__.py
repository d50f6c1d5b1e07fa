"""HTTP surface: one blueprint per area, all thin over the domain."""

from __future__ import annotations

from flask import Flask

from app.web import (  # noqa: F401  (routes on the admin's blueprint)
    admin_history,
    admin_pages,
    admin_settings,
)
from app.web.api import bp as api_bp
from app.web.health import bp as health_bp
from app.web.helpdesk import bp as helpdesk_bp
from app.web.operator import bp as operator_bp
from app.web.proxy import bp as proxy_bp
from app.web.shopify_admin import bp as shopify_admin_bp
from app.web.shopify_webhooks import bp as shopify_webhooks_bp
from app.web.webhooks import bp as webhooks_bp


def register_blueprints(app: Flask) -> None:
    app.register_blueprint(health_bp)
    app.register_blueprint(api_bp)
    app.register_blueprint(webhooks_bp)
    app.register_blueprint(operator_bp)
    app.register_blueprint(shopify_admin_bp)
    app.register_blueprint(shopify_webhooks_bp)
    app.register_blueprint(proxy_bp)
    app.register_blueprint(helpdesk_bp)
