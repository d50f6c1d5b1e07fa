"""On SQLite (the demo, and the tests without DATABASE_URL), writers that decide by what
they read run one after another, as PostgreSQL's row locks make them: a read ``FOR
UPDATE``, or a savepoint, outside a transaction begins one holding the write lock
(:func:`app.db._sqlite_locked_read`). Each test makes its own SQLite file, whatever
database the run is on."""

from __future__ import annotations

import sqlite3
import threading
import uuid
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import pytest
from flask import Flask
from sqlalchemy import select
from sqlalchemy.orm import Session, sessionmaker

from app import audit, create_app
from app.actors import WORKER
from app.db import Database
from app.migrations import upgrade
from app.settings import Settings
from app.shops.models import Shop


@pytest.fixture
def sqlite_app(settings: Settings, tmp_path: Path) -> Iterator[Flask]:
    url = f"sqlite:///{tmp_path / 'writers.db'}"
    upgrade(url)
    application = create_app(replace(settings, database_url=url))
    yield application
    Database.state(application).engine.dispose()


@pytest.fixture
def sessions(sqlite_app: Flask) -> sessionmaker[Session]:
    return Database.state(sqlite_app).session_factory


@pytest.fixture
def shop_id(sessions: sessionmaker[Session]) -> uuid.UUID:
    with sessions() as session:
        shop = Shop(domain="writers.myshopify.com", name="Writers")
        session.add(shop)
        session.commit()
        return shop.id


def _another_writer_gets_in(sqlite_app: Flask) -> bool:
    """Whether another connection can take the write lock at once, then lets it go."""
    path = Database.state(sqlite_app).engine.url.database
    assert path is not None
    with sqlite3.connect(path, timeout=0, isolation_level=None) as other:
        try:
            other.execute("BEGIN IMMEDIATE")
        except sqlite3.OperationalError as error:
            assert "locked" in str(error)
            return False
        other.execute("ROLLBACK")
        return True


def test_a_locked_read_holds_the_write_lock_until_its_transaction_ends(
    sqlite_app: Flask, sessions: sessionmaker[Session], shop_id: uuid.UUID
) -> None:
    with sessions() as session:
        session.execute(select(Shop).where(Shop.id == shop_id)).one()
        assert _another_writer_gets_in(sqlite_app), "a plain read takes no lock"

        session.execute(select(Shop).where(Shop.id == shop_id).with_for_update()).one()
        assert not _another_writer_gets_in(sqlite_app), "the locked read let a writer in"
        session.commit()
    assert _another_writer_gets_in(sqlite_app)


def test_a_savepoint_holds_the_write_lock_until_its_transaction_ends(
    sqlite_app: Flask, sessions: sessionmaker[Session], shop_id: uuid.UUID
) -> None:
    with sessions() as session:
        with session.begin_nested():
            session.execute(select(Shop).where(Shop.id == shop_id)).one()
            assert not _another_writer_gets_in(sqlite_app)
        session.rollback()
    assert _another_writer_gets_in(sqlite_app)


def test_calls_appending_to_one_audit_chain_at_once_all_land_in_one_unbroken_chain(
    sessions: sessionmaker[Session], shop_id: uuid.UUID
) -> None:
    """As an MCP tool call does: read inside a savepoint, record, commit; four at a time.
    Before, two reading the same head wrote the same place in the chain (refused as a
    duplicate), or one's write after its read was refused as "database is locked"."""
    failures: list[BaseException] = []

    def calls(writer: int) -> None:
        try:
            for call in range(10):
                with sessions() as session:
                    with session.begin_nested():
                        session.execute(select(Shop).where(Shop.id == shop_id)).one()
                    audit.record(
                        session,
                        shop_id=shop_id,
                        kind="agent.tool_called",
                        actor=WORKER,
                        data={"writer": writer, "call": call},
                    )
                    session.commit()
        except BaseException as error:  # handed to the test's thread, which fails with it
            failures.append(error)

    threads = [threading.Thread(target=calls, args=(writer,)) for writer in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    assert failures == []
    with sessions() as session:
        report = audit.verify_chain(session, shop_id)
    assert report.intact
    assert report.events == 40
