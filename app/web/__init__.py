"""HTTP surface: one blueprint per area, all thin over the domain."""

from __future__ import annotations

from flask import Flask

from app.web.health import bp as health_bp


def register_blueprints(app: Flask) -> None:
    app.register_blueprint(health_bp)
