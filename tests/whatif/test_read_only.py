"""The what-if reads through a session the database keeps from writing: a write tried in it
fails there, on PostgreSQL and on the demo's SQLite alike, and the connection it used
writes again once it is back in the pool."""

from __future__ import annotations

from pathlib import Path

import pytest
from flask import Flask
from sqlalchemy import Engine, select, update
from sqlalchemy.exc import DBAPIError
from sqlalchemy.orm import Session

from app.db import Database, make_engine
from app.migrations import upgrade
from app.shops.models import Shop
from app.whatif.read_only import read_only

# What PostgreSQL and SQLite say when a read-only transaction is asked to write.
REFUSED = r"read-only transaction|readonly database"


def _a_shop(engine: Engine, domain: str) -> None:
    with Session(engine) as session:
        session.add(Shop(domain=domain, name="Linen"))
        session.commit()


def _writes_are_refused(engine: Engine) -> None:
    _a_shop(engine, "linen.myshopify.com")
    with read_only(engine) as reading:
        assert reading.scalars(select(Shop.name)).all() == ["Linen"]
        with pytest.raises(DBAPIError, match=REFUSED):
            reading.execute(update(Shop).values(name="Changed"))
    with read_only(engine) as reading:
        reading.add(Shop(domain="other.myshopify.com", name="Other"))
        with pytest.raises(DBAPIError, match=REFUSED):
            reading.flush()
    # Nothing was written, and the pool's connections write as before.
    _a_shop(engine, "later.myshopify.com")
    with Session(engine) as session:
        assert sorted(session.scalars(select(Shop.name))) == ["Linen", "Linen"]


def test_a_write_in_the_what_ifs_session_fails_on_postgresql(app: Flask) -> None:
    engine = Database.state(app).engine
    if engine.dialect.name != "postgresql":
        pytest.skip("DATABASE_URL names no PostgreSQL database")

    _writes_are_refused(engine)


def test_a_write_in_the_what_ifs_session_fails_on_sqlite(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'demo.db'}"
    upgrade(url)
    engine = make_engine(url, pool_size=1)
    try:
        _writes_are_refused(engine)
    finally:
        engine.dispose()
