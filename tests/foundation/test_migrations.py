"""Revisions apply and roll back cleanly on the test database."""

from __future__ import annotations

import sqlite3
import uuid
from contextlib import closing
from datetime import UTC, datetime
from pathlib import Path

import pytest
from alembic.autogenerate import compare_metadata
from sqlalchemy import Connection, TextClause, Uuid, bindparam, inspect, text

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


# Batch mode reflects the tables the rebuilt one points at; SQLAlchemy cannot reflect the
# customers' expression index, which the rebuild leaves alone.
_REFLECTION = pytest.mark.filterwarnings("ignore:Skipped unsupported reflection")


@_REFLECTION
def test_a_table_sqlite_rebuilds_keeps_the_rows_pointing_at_it(tmp_path: Path) -> None:
    """SQLite alters a table by copying it and dropping the old one: rolling back 0031
    rebuilds ``proposals``, and the approvals pointing at a proposal must not stop it, nor
    be left pointing nowhere."""
    path = _sqlite_with_an_approved_proposal(tmp_path)
    downgrade(f"sqlite:///{path}", "0030_brakes_and_alerts")
    with closing(sqlite3.connect(path)) as connection:
        pointing = "SELECT count(*) FROM approvals JOIN proposals ON proposals.id = proposal_id"
        assert connection.execute(pointing).fetchone() == (1,)


@_REFLECTION
def test_a_migration_on_sqlite_refuses_to_end_with_rows_pointing_nowhere(
    tmp_path: Path,
) -> None:
    """With SQLite's own enforcement off while tables are rebuilt, the check afterwards is
    what stops a migration that would leave an approval of a proposal that is gone."""
    path = _sqlite_with_an_approved_proposal(tmp_path)
    with closing(sqlite3.connect(path)) as raw, raw:  # a careless hand
        raw.execute("PRAGMA foreign_keys=OFF")
        raw.execute("DELETE FROM proposals")
    with pytest.raises(RuntimeError, match="rows pointing nowhere"):
        downgrade(f"sqlite:///{path}", "0030_brakes_and_alerts")


def _sqlite_with_an_approved_proposal(folder: Path) -> Path:
    """A migrated SQLite file in ``folder`` holding one proposal and its approval."""
    path = folder / "caseward.db"
    upgrade(f"sqlite:///{path}")
    engine = make_engine(f"sqlite:///{path}")
    try:
        with engine.begin() as connection:
            _proposal_with_its_approval(connection)
    finally:
        engine.dispose()
    return path


def _proposal_with_its_approval(connection: Connection) -> None:
    """A shop's case, a proposal and one approval of it, as rows of the current tables."""
    tables = Base.metadata.tables
    now = datetime.now(UTC)
    shop_id, case_id, proposal_id = uuid.uuid4(), uuid.uuid4(), uuid.uuid4()
    connection.execute(
        tables["shops"].insert().values(id=shop_id, domain="rebuilt.myshopify.com", name="R")
    )
    connection.execute(
        tables["cases"].insert().values(id=case_id, shop_id=shop_id, subject="A torn sheet")
    )
    connection.execute(
        tables["proposals"]
        .insert()
        .values(
            id=proposal_id,
            shop_id=shop_id,
            case_id=case_id,
            kind="refund",
            provider="stripe",
            target="pi_1",
            proposed_by="staff:1",
            status="awaiting_approval",
            verdict={"allowed": True, "reasons": []},
            policy_version=1,
            digest="d" * 64,
        )
    )
    connection.execute(
        tables["approvals"]
        .insert()
        .values(
            shop_id=shop_id,
            proposal_id=proposal_id,
            digest="d" * 64,
            approver="staff:1",
            expires_at=now,
        )
    )
