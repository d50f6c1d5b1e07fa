"""Which rows a lookup reads, by PostgreSQL's own account (``EXPLAIN ANALYZE``).

A lookup that finds its rows by index reads about what it returns; one that does not
reads every row of the shop, or of the table, and filters them, which a test with a
few rows never notices and a shop of 50,000 orders feels on every request. Tests here
run the real code against a shop seeded with thousands of rows, catch the reads it
sends (:func:`sent_statements.statements_sent`), have PostgreSQL run each again under
``EXPLAIN ANALYZE`` and look at the plan's scans of a table (:func:`scans_of`)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest
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
    """The scans of ``table`` in the plan PostgreSQL runs for ``read``, run for real."""
    explained = session.connection().exec_driver_sql(
        f"EXPLAIN (ANALYZE, FORMAT JSON) {read.statement}", read.parameters
    )
    plan = explained.scalar_one()
    root = (json.loads(plan) if isinstance(plan, str) else plan)[0]["Plan"]
    session.rollback()
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
    when given): ``rows`` rows, or up to ``beyond`` more, throwing at most ``discarded``
    away."""
    scans = scans_of(session, read, table)
    assert scans, f"{table} is not read by {read.statement}"
    assert all(scan.by_index for scan in scans), scans
    assert by is None or all(by in scan.index_condition for scan in scans), scans
    assert rows <= sum(scan.returned for scan in scans) <= rows + beyond, scans
    assert sum(scan.discarded for scan in scans) <= discarded, scans


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
