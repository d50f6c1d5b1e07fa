"""The staff JSON API under ``/api``; described by ``/api/openapi.json``."""

from app.web.api import audit_export as _audit_routes  # noqa: F401  (registers /api/audit/export)
from app.web.api import privacy as _privacy_routes  # noqa: F401  (registers /api/privacy)
from app.web.api import staff as _staff_routes  # noqa: F401  (registers /api/staff, /api/tokens)
from app.web.api.routes import bp

__all__ = ["bp"]
