"""Revisions apply and roll back cleanly on the test database."""

from __future__ import annotations

from sqlalchemy import inspect

from app.db import make_engine
from app.migrations import downgrade, head_revision, upgrade


def test_migrations_round_trip(database_url: str, migrated_database_url: str) -> None:
    engine = make_engine(database_url)
    try:
        downgrade(database_url, "base")
        assert "shops" not in inspect(engine).get_table_names()

        upgrade(database_url)
        assert "shops" in inspect(engine).get_table_names()
        unique = inspect(engine).get_unique_constraints("shops")
        assert [c["column_names"] for c in unique] == [["domain"]]
    finally:
        upgrade(database_url)
        engine.dispose()
    assert head_revision() == "0002_money_path_tables"
