"""Pooled connections: one the database dropped while idle is replaced before anyone uses
it, and one used a moment ago is handed out without a round trip to ask."""

from __future__ import annotations

import time
from collections.abc import Iterator

import pytest
from sqlalchemy import Engine, func, select, text

from app import db


@pytest.fixture
def engine(database_url: str) -> Iterator[Engine]:
    if not database_url.startswith("postgresql"):
        pytest.skip("SQLite has no server to drop a connection")
    engine = db.make_engine(database_url, pool_size=1, max_overflow=0)
    yield engine
    engine.dispose()


def _backend(engine: Engine) -> int:
    with engine.connect() as connection:
        return int(connection.execute(select(func.pg_backend_pid())).scalar_one())


def _drop(engine: Engine, backend: int) -> None:
    """The server ends that connection, as a restart or an idle timeout would."""
    with engine.dialect.loaded_dbapi.connect(
        engine.url.set(drivername="postgresql").render_as_string(hide_password=False),
        autocommit=True,
    ) as admin:
        admin.execute("SELECT pg_terminate_backend(%s)", (backend,))


def test_a_connection_dropped_while_idle_is_replaced_before_use(
    engine: Engine, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(db, "ALIVE_WITHOUT_PING_SECONDS", 0.05)
    dropped = _backend(engine)
    _drop(engine, dropped)
    time.sleep(0.1)

    assert _backend(engine) != dropped  # no error: the pool found it dead and reconnected


def test_a_connection_used_a_moment_ago_is_not_pinged_again(
    engine: Engine, monkeypatch: pytest.MonkeyPatch
) -> None:
    pings: list[object] = []
    ping = engine.dialect.do_ping
    monkeypatch.setattr(engine.dialect, "do_ping", lambda c: pings.append(c) or ping(c))
    monkeypatch.setattr(db, "ALIVE_WITHOUT_PING_SECONDS", 0.3)

    first = _backend(engine)  # a new connection is asked once
    for _ in range(3):
        with engine.connect() as connection:
            connection.execute(text("SELECT 1"))
    assert len(pings) == 1
    time.sleep(0.4)
    assert _backend(engine) == first
    assert len(pings) == 2  # idle past the window: asked again, and still alive
