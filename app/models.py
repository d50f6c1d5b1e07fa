"""Imports every model module so ``Base.metadata`` knows all tables (Alembic, tests)."""

from app.shops.models import Shop

__all__ = ["Shop"]
