"""Revisions apply and roll back cleanly on the test database."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime

from alembic.autogenerate import compare_metadata
from sqlalchemy import TextClause, Uuid, bindparam, inspect, text

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


def test_commands_taken_before_their_table_move_into_it_as_done(
    database_url: str, migrated_database_url: str
) -> None:
    """A Gorgias command claimed as a kept provider event before ``helpdesk_commands``
    existed moves there done (what came of it then stands, never acted on again),
    and moves back on a downgrade."""
    engine = make_engine(database_url)
    shop_id = uuid.uuid4()
    kept = "SELECT event_id, type, payload->>'agent' FROM provider_events WHERE shop_id = :shop"
    try:
        downgrade(database_url, "0032_helpdesk_prepare_on_arrival")
        with engine.begin() as connection:
            connection.execute(
                _by_shop(
                    "INSERT INTO shops (id, domain, name, writes_enabled, kill_switch, created_at) "
                    "VALUES (:shop, 'moved.myshopify.com', 'Moved', false, false, :at)"
                ),
                {"shop": shop_id, "at": datetime.now(UTC)},
            )
            connection.execute(
                _by_shop(
                    "INSERT INTO provider_events (shop_id, provider, event_id, type, object_id,"
                    " created, payload, received_at) VALUES (:shop, 'gorgias', 'command:77',"
                    " 'command:approve', '77', :at, :payload, :at)"
                ),
                {
                    "shop": shop_id,
                    "at": datetime.now(UTC),
                    "payload": '{"command": "approve", "agent": "sam@x.example"}',
                },
            )

        upgrade(database_url)
        with engine.connect() as connection:
            moved = connection.execute(
                _by_shop(
                    "SELECT note_id, command, agent_email, done_at IS NOT NULL"
                    " FROM helpdesk_commands WHERE shop_id = :shop"
                ),
                {"shop": shop_id},
            ).all()
            assert moved == [(77, "approve", "sam@x.example", True)]
            assert connection.execute(_by_shop(kept), {"shop": shop_id}).all() == []

        downgrade(database_url, "0032_helpdesk_prepare_on_arrival")
        with engine.connect() as connection:
            assert connection.execute(_by_shop(kept), {"shop": shop_id}).all() == [
                ("command:77", "command:approve", "sam@x.example")
            ]
    finally:
        upgrade(database_url)
        with engine.begin() as connection:
            for table, column in (
                ("helpdesk_commands", "shop_id"),
                ("provider_events", "shop_id"),
                ("shops", "id"),
            ):
                connection.execute(
                    _by_shop(f"DELETE FROM {table} WHERE {column} = :shop"), {"shop": shop_id}
                )
        engine.dispose()


def _by_shop(statement: str) -> TextClause:
    """``statement`` with its ``:shop`` typed as a UUID, as SQLite stores one."""
    return text(statement).bindparams(bindparam("shop", type_=Uuid()))
