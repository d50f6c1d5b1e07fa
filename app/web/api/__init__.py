"""The staff JSON API under ``/api``; described by ``/api/openapi.json``."""

from app.web.api.routes import bp

__all__ = ["bp"]
