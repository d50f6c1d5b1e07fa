"""Database wiring: one engine per process, one session per request or job.

Domain code receives a :class:`sqlalchemy.orm.Session` as an explicit argument;
only the web layer reaches for the request-scoped session below.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from datetime import UTC, datetime
from time import monotonic
from typing import Any, cast

from flask import Flask, current_app, g
from sqlalchemy import (
    Connection,
    DateTime,
    Dialect,
    Engine,
    MetaData,
    Row,
    Table,
    bindparam,
    create_engine,
    event,
)
from sqlalchemy.dialects.postgresql import Insert as pg_insert_type
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.dialects.sqlite import Insert as sqlite_insert_type
from sqlalchemy.dialects.sqlite import insert as sqlite_insert
from sqlalchemy.engine.interfaces import ExecutionContext
from sqlalchemy.exc import DisconnectionError
from sqlalchemy.orm import DeclarativeBase, Session, sessionmaker
from sqlalchemy.sql.dml import ReturningInsert
from sqlalchemy.sql.elements import BindParameter
from sqlalchemy.types import TypeDecorator

# Stable constraint names keep Alembic migrations identical on SQLite and PostgreSQL.
NAMING_CONVENTION = {
    "ix": "ix_%(column_0_label)s",
    "uq": "uq_%(table_name)s_%(column_0_name)s",
    "ck": "ck_%(table_name)s_%(constraint_name)s",
    "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
    "pk": "pk_%(table_name)s",
}


class UTCDateTime(TypeDecorator[datetime]):
    """A timestamp that is always timezone-aware UTC in Python.

    PostgreSQL keeps the zone; SQLite does not, and would hand back naive values
    that cannot be compared with aware ones.
    """

    impl = DateTime(timezone=True)
    cache_ok = True

    def process_bind_param(self, value: datetime | None, dialect: Dialect) -> datetime | None:
        if value is not None and value.tzinfo is None:
            raise ValueError("Caseward stores only timezone-aware datetimes")
        return value.astimezone(UTC) if value is not None else None

    def process_result_value(self, value: datetime | None, dialect: Dialect) -> datetime | None:
        if value is None:
            return None
        return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)


class Base(DeclarativeBase):
    metadata = MetaData(naming_convention=NAMING_CONVENTION)


def locked_row(session: Session, model: type[Base], **values: Any) -> Row[Any]:
    """The row of ``model`` with these values' primary key, created if missing, and
    row-locked until the transaction ends: how writers serialise on one thing. Returns its
    columns as they stand once locked (a writer before may have made or moved it), not an
    object of the session.

    One round trip: ``INSERT ... ON CONFLICT DO UPDATE ... RETURNING`` locks the row it
    returns (SQLite has no row locks and serialises every writer anyway). A Core statement
    on the model's table: the ORM's insert of an object took most of the call (0.61
    against 0.21 ms for the worker's lock on an action's money, measured).
    """
    dialect = session.get_bind().dialect.name
    upsert = _upsert(model, tuple(sorted(values)), dialect)
    return session.execute(upsert, values).one()


# Each statement below is built on its first use (when the mappers know every column's
# type) and kept: the worker locks the money of every action and every webhook keeps its
# event, and building the statement took a fifth of the lock (0.9 against 1.1 ms, measured).
@functools.cache
def _upsert(model: type[Base], names: tuple[str, ...], dialect: str) -> ReturningInsert[Any]:
    """``INSERT ... ON CONFLICT (primary key) DO UPDATE ... RETURNING`` into ``model``'s
    table for the columns ``names``, each a bind parameter of its column's type."""
    table = cast(Table, model.__table__)
    insert = _insert_of(dialect)(table).values(_binds(table, names))
    key = [column.name for column in table.primary_key]
    return insert.on_conflict_do_update(
        index_elements=key, set_={key[0]: insert.excluded[key[0]]}
    ).returning(*table.c)


def insert_unless_present(
    session: Session, model: type[Base], unique: list[str]
) -> pg_insert_type | sqlite_insert_type:
    """``INSERT INTO model ... ON CONFLICT (unique) DO NOTHING`` in the session's database's
    dialect: a row already there (another delivery, a page read twice) is left as it is, in
    one statement, without a savepoint to roll back to. Add ``values`` and, to learn which
    rows went in, ``returning``."""
    insert = _insert_of(session.get_bind().dialect.name)
    return insert(model).on_conflict_do_nothing(index_elements=unique)


def insert_one_unless_present(
    session: Session, model: type[Base], unique: tuple[str, ...], values: dict[str, Any]
) -> bool:
    """One row of ``values`` into ``model``'s table unless a row with the same ``unique``
    columns is there: False when it was there. As
    :func:`insert_unless_present`, with the statement built once for these columns (a
    Core insert on the table, the values bound as parameters) rather than at every call,
    for a path that keeps a row at every request."""
    dialect = session.get_bind().dialect.name
    insert = _keep(model, tuple(sorted(values)), unique, dialect)
    return session.execute(insert, values).first() is not None


@functools.cache
def _keep(
    model: type[Base], names: tuple[str, ...], unique: tuple[str, ...], dialect: str
) -> ReturningInsert[Any]:
    table = cast(Table, model.__table__)
    return (
        _insert_of(dialect)(table)
        .values(_binds(table, names))
        .on_conflict_do_nothing(index_elements=list(unique))
        .returning(*table.primary_key.columns)
    )


def _binds(table: Table, names: tuple[str, ...]) -> dict[str, BindParameter[Any]]:
    """A bind parameter of each named column's type, named as the column."""
    return {name: bindparam(name, type_=table.c[name].type) for name in names}


def _insert_of(dialect: str) -> Callable[[Any], pg_insert_type | sqlite_insert_type]:
    """The dialect's ``insert``, which has ``ON CONFLICT``: PostgreSQL's, else SQLite's."""
    return pg_insert if dialect == "postgresql" else sqlite_insert


def make_engine(database_url: str, **options: Any) -> Engine:
    """Create an engine with the settings every Caseward process wants."""
    if database_url.startswith("sqlite"):
        engine = create_engine(
            database_url, connect_args={"check_same_thread": False, "timeout": 30}, **options
        )
        event.listen(engine, "connect", _sqlite_pragmas)
        event.listen(engine, "before_cursor_execute", _sqlite_locked_read)
        return engine
    engine = create_engine(database_url, **options)
    _ping_when_idle(engine)
    return engine


# A pooled connection checked in this recently is handed out without asking the server
# whether it is alive (HikariCP's "alive bypass window", with its default): a worker's two
# transactions around one provider call, and a busy web process, skip a round trip each.
# One idle for longer is pinged first, so a connection the database dropped while idle (a
# restart, a failover, an idle timeout) is replaced before anyone uses it. Within the
# window a dropped connection fails its first statement instead, as any connection that
# drops mid-transaction does: the request or job fails whole and is run again.
ALIVE_WITHOUT_PING_SECONDS = 0.5
_CHECKED_IN_AT = "caseward.checked_in_at"


def _ping_when_idle(engine: Engine) -> None:
    """SQLAlchemy's ``pool_pre_ping``, skipped for a connection used within the window."""
    dialect = engine.dialect

    def checkout(dbapi_connection: Any, record: Any, _proxy: Any) -> None:
        # The pool clears ``record.info`` when it replaces the connection.
        checked_in_at = record.info.get(_CHECKED_IN_AT)
        if checked_in_at is not None and monotonic() - checked_in_at < ALIVE_WITHOUT_PING_SECONDS:
            return
        try:
            dialect.do_ping(dbapi_connection)
        except dialect.loaded_dbapi.Error as exc:
            # The pool discards this connection and hands out a new one.
            raise DisconnectionError(str(exc)) from exc

    def checkin(_dbapi_connection: Any, record: Any) -> None:
        record.info[_CHECKED_IN_AT] = monotonic()

    event.listen(engine, "checkout", checkout)
    event.listen(engine, "checkin", checkin)


def _sqlite_pragmas(dbapi_connection: Any, _record: Any) -> None:
    cursor = dbapi_connection.cursor()
    cursor.execute("PRAGMA foreign_keys=ON")
    cursor.execute("PRAGMA journal_mode=WAL")
    cursor.close()


def _sqlite_locked_read(
    _connection: Connection,
    cursor: Any,
    statement: str,
    _parameters: Any,
    context: ExecutionContext | None,
    _executemany: bool,
) -> None:
    """A read ``FOR UPDATE``, or a savepoint, outside a transaction begins one holding
    SQLite's write lock (``BEGIN IMMEDIATE``), as a row lock is taken on PostgreSQL.

    SQLite has no row locks (the clause is dropped), and Python's sqlite3 begins a
    transaction only at the first write. A read that decides a write (the audit chain's
    head, an action's status) would otherwise see the database of its own moment, and
    another process could commit between it and the write. A savepoint outside a
    transaction begins a deferred one, whose first write after a read fails at once
    ("database is locked") whenever another process writes at the same time. Taken as
    the transaction begins, the lock is waited for, and everything read from then on is
    what the writer before committed. A transaction that has written holds the lock
    already. (SQLAlchemy keeps a statement's lock request on ``_for_update_arg``; there
    is no public reader of it.)"""
    if cursor.connection.in_transaction:
        return
    compiled = context.compiled if context is not None else None
    locking = getattr(getattr(compiled, "statement", None), "_for_update_arg", None) is not None
    if locking or statement.startswith("SAVEPOINT"):
        cursor.execute("BEGIN IMMEDIATE")


def make_session_factory(engine: Engine) -> sessionmaker[Session]:
    """Sessions on ``engine``. Every table is mapped once the process has loaded
    :mod:`app.areas` (the app factory, the background processes and the commands do): a
    table named only by a foreign key must still be known."""
    return sessionmaker(bind=engine, expire_on_commit=False)


class Database:
    """Flask extension holding the engine and handing out request-scoped sessions."""

    def init_app(self, app: Flask) -> None:
        engine = make_engine(app.config["CASEWARD_SETTINGS"].database_url)
        app.extensions["caseward.db"] = DatabaseState(engine, make_session_factory(engine))
        app.teardown_appcontext(_close_request_session)

    @staticmethod
    def state(app: Flask) -> DatabaseState:
        state: DatabaseState = app.extensions["caseward.db"]
        return state


class DatabaseState:
    def __init__(self, engine: Engine, session_factory: sessionmaker[Session]) -> None:
        self.engine = engine
        self.session_factory = session_factory


def request_session() -> Session:
    """The session of the current app context, opened on first use."""
    if "db_session" not in g:
        g.db_session = Database.state(current_app).session_factory()
    session: Session = g.db_session
    return session


def _close_request_session(_exc: BaseException | None) -> None:
    session: Session | None = g.pop("db_session", None)
    if session is not None:
        session.close()


db = Database()
