"""Revisions apply and roll back cleanly on the test database."""

from __future__ import annotations

from alembic.autogenerate import compare_metadata
from sqlalchemy import inspect

from app.db import Base, make_engine
from app.migrations import downgrade, upgrade


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


def test_the_revisions_build_exactly_the_models(migrated_database_url: str) -> None:
    """A model change without its revision would show up here, not in production."""
    from alembic.migration import MigrationContext  # noqa: PLC0415

    engine = make_engine(migrated_database_url)
    try:
        with engine.connect() as connection:
            context = MigrationContext.configure(connection, opts={"compare_type": False})
            differences = compare_metadata(context, Base.metadata)
    finally:
        engine.dispose()
    assert differences == []


def test_no_index_is_the_start_of_another(migrated_database_url: str) -> None:
    """An index whose columns lead another index, unique constraint or primary key of its
    table finds nothing the longer one does not, and every insert pays for both."""
    engine = make_engine(migrated_database_url)
    served = []
    try:
        inspector = inspect(engine)
        for table in inspector.get_table_names():
            longer = [c["column_names"] for c in inspector.get_unique_constraints(table)]
            longer.append(inspector.get_pk_constraint(table)["constrained_columns"])
            plain = []
            for index in inspector.get_indexes(table):
                columns = index["column_names"]
                longer.append(columns)
                partial = any(k.endswith("_where") for k in index.get("dialect_options", {}))
                if not index["unique"] and not partial and None not in columns:
                    plain.append((index["name"], columns))
            served += [
                (table, name)
                for name, columns in plain
                if any(other[: len(columns)] == columns and other != columns for other in longer)
            ]
    finally:
        engine.dispose()
    assert served == []
