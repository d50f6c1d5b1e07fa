"""Which rows a lookup reads, by PostgreSQL's own account (``EXPLAIN ANALYZE``).

A lookup that finds its rows by index reads about what it returns; one that does not
reads every row of the shop, or of the table, and filters them, which a test with a
few rows never notices and a shop of 50,000 orders feels on every request. Tests here
run the real code against a shop seeded with thousands of rows, catch the reads it
sends (:func:`sent_statements.statements_sent`), have PostgreSQL run each again under
``EXPLAIN ANALYZE`` and look at the plan's scans of a table (:func:`scans_of`), in both
plans it may run with: the one made for the parameters at hand, and the one a connection
runs once it has prepared the statement (:func:`prepared_scans_of`), which may be a generic
plan made for any parameters: psycopg prepares every statement a connection repeats, so
the hot reads run on that one."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest
from psycopg import sql
from sent_statements import Sent
from sqlalchemy import text
from sqlalchemy.orm import Session


@dataclass(frozen=True)
class Scan:
    """One scan of a table in a plan: how, how many rows it returned, how many it read
    and threw away (filter and recheck), and the index condition it used, if any."""

    node_type: str
    relation: str
    returned: int
    discarded: int
    index_condition: str

    @property
    def by_index(self) -> bool:
        return self.node_type in ("Index Scan", "Index Only Scan", "Bitmap Heap Scan")


def skip_unless_postgresql(database: str) -> None:
    """Skip the calling test on any other database: the plans read here are PostgreSQL's."""
    if not database.startswith("postgresql"):
        pytest.skip("the plan read here is PostgreSQL's")


def analyzed(session: Session) -> None:
    """Fresh statistics for the planner, as autovacuum keeps them in a live database."""
    session.commit()
    session.execute(text("ANALYZE"))
    session.commit()


def scans_of(session: Session, read: Sent, table: str) -> list[Scan]:
    """The scans of ``table`` in the plan PostgreSQL makes for ``read`` and its
    parameters, run for real."""
    explained = session.connection().exec_driver_sql(
        f"EXPLAIN (ANALYZE, FORMAT JSON) {read.statement}", read.parameters
    )
    scans = _scans(explained.scalar_one(), table)
    session.rollback()
    return scans


def prepared_scans_of(session: Session, read: Sent, table: str) -> list[Scan]:
    """The scans of ``table`` in the plan a connection runs for ``read`` once it has run it
    often: psycopg prepares a statement a connection repeats, and after five runs of a
    prepared statement PostgreSQL chooses between a generic plan, made once for any
    parameters, and one for the parameters at hand, by their estimated costs. Here ``read``
    is prepared and run five times, then run for real under ``EXPLAIN ANALYZE``, with its
    own parameters each time."""
    names: list[str] = []

    def numbered(found: re.Match[str]) -> str:
        if found.group(1) not in names:
            names.append(found.group(1))
        return f"${names.index(found.group(1)) + 1}"

    statement = _PLACEHOLDER.sub(numbered, read.statement).replace("%%", "%")
    connection = session.connection()
    # A prepared statement outlives the transaction: it is deallocated whatever happens.
    connection.exec_driver_sql(f"PREPARE {_PROBE} AS {statement}")
    try:
        # EXECUTE's arguments are written in as literals, typed as the prepared statement's
        # parameters: EXPLAIN takes no bound parameters of its own.
        types = connection.exec_driver_sql(
            "SELECT parameter_types::text[] FROM pg_prepared_statements WHERE name = %(name)s",
            {"name": _PROBE},
        ).scalar_one()
        arguments = sql.SQL(", ").join(
            sql.SQL("{}::{}").format(sql.Literal(read.parameters[name]), sql.SQL(kind))
            for name, kind in zip(names, types, strict=True)
        )
        # A statement without parameters is run by name alone: ``EXECUTE name()`` is an error.
        template = "EXECUTE {}({})" if names else "EXECUTE {}"
        execute = sql.SQL(template).format(sql.Identifier(_PROBE), arguments)
        run = execute.as_string(connection.connection.driver_connection)
        for _ in range(_RUNS_BEFORE_THE_CHOICE):
            connection.exec_driver_sql(run).all()
        explained = connection.exec_driver_sql(f"EXPLAIN (ANALYZE, FORMAT JSON) {run}")
        scans = _scans(explained.scalar_one(), table)
    finally:
        session.rollback()
        session.connection().exec_driver_sql(f"DEALLOCATE {_PROBE}")
        session.rollback()
    return scans


# PostgreSQL plans a prepared statement's first five runs for their parameters, and only
# then weighs the generic plan (``plancache.c``, ``choose_custom_plan``).
_RUNS_BEFORE_THE_CHOICE = 5
# psycopg's named placeholders, as SQLAlchemy writes them; the probe's statement name.
_PLACEHOLDER = re.compile(r"%\((\w+)\)s")
_PROBE = "caseward_prepared_probe"


def _scans(plan: Any, table: str) -> list[Scan]:
    root = (json.loads(plan) if isinstance(plan, str) else plan)[0]["Plan"]
    return [
        Scan(
            node_type=node["Node Type"],
            relation=node["Relation Name"],
            # PostgreSQL counts a scan's rows per loop (a scan inside a nested loop runs
            # once for each row outside it).
            returned=int(node.get("Actual Rows", 0)) * int(node.get("Actual Loops", 1)),
            discarded=(
                int(node.get("Rows Removed by Filter", 0))
                + int(node.get("Rows Removed by Index Recheck", 0))
            )
            * int(node.get("Actual Loops", 1)),
            index_condition=str(node.get("Index Cond", node.get("Recheck Cond", ""))),
        )
        for node in _nodes(root)
        if node.get("Relation Name") == table
    ]


def assert_read_by_index(
    session: Session,
    read: Sent,
    table: str,
    *,
    rows: int,
    beyond: int = 0,
    discarded: int = 0,
    by: str | None = None,
) -> None:
    """PostgreSQL reads ``table`` for ``read`` by index (one whose condition names ``by``,
    when given), in the plan made for its parameters and in the one a connection runs once
    it has prepared it alike: ``rows`` rows, or up to ``beyond`` more, throwing at most
    ``discarded`` away."""
    for plan, scans in (
        ("for its parameters", scans_of(session, read, table)),
        ("prepared", prepared_scans_of(session, read, table)),
    ):
        assert scans, f"{table} is not read by {read.statement}"
        assert all(scan.by_index for scan in scans), (plan, scans)
        assert by is None or all(by in scan.index_condition for scan in scans), (plan, scans)
        assert rows <= sum(scan.returned for scan in scans) <= rows + beyond, (plan, scans)
        assert sum(scan.discarded for scan in scans) <= discarded, (plan, scans)


def reads_of_table(sent: list[Sent], table: str) -> list[Sent]:
    """The reads among ``sent`` that name ``table`` in their ``FROM`` or ``JOIN``."""
    return [
        read
        for read in sent
        if read.statement.lstrip().upper().startswith(("SELECT", "WITH"))
        and (f"FROM {table}" in read.statement or f"JOIN {table}" in read.statement)
    ]


def _nodes(node: dict[str, Any]) -> Iterator[dict[str, Any]]:
    yield node
    for child in node.get("Plans", ()):
        yield from _nodes(child)
