"""Helpers for the tests of Stripe's history reader: reading whole streams, seeding.

The module name is unique on purpose: test folders have no ``__init__.py``, so helper
modules are imported by bare name and must not collide with other folders' helpers.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from integrations.history import PastMoneyAction
from integrations.stripe.history import StripeHistoryReader

START = 1_750_000_000  # the sandbox's frozen "now" for these tests
DAY = 86400
WINDOW_START = START - 90 * DAY
SINCE = datetime.fromtimestamp(WINDOW_START, UTC)

# Read access to exactly what the reader asks for, and nothing else.
READ_ONLY = {
    "refunds": "read",
    "charges": "read",
    "customers": "read",
    "coupons": "read",
    "promotion_codes": "read",
    "subscriptions": "read",
    "events": "read",
}


@dataclass
class StreamRead:
    """A stream read to its end: every page's records, and the cursor each page was read at."""

    pages: list[tuple[PastMoneyAction, ...]]
    cursors: list[str | None]

    @property
    def records(self) -> list[PastMoneyAction]:
        return [record for page in self.pages for record in page]

    @property
    def ids(self) -> list[str]:
        return [record.id for record in self.records]

    def by_id(self) -> dict[str, PastMoneyAction]:
        return {record.id: record for record in self.records}


def read_stream(
    reader: StripeHistoryReader,
    stream: str,
    *,
    since: datetime = SINCE,
    cursor: str | None = None,
) -> StreamRead:
    """Every page of ``stream`` from ``cursor`` on."""
    read = StreamRead([], [])
    while True:
        page = reader.read_page(stream, since=since, cursor=cursor)
        read.pages.append(page.records)
        read.cursors.append(cursor)
        if page.next_cursor is None:
            return read
        cursor = page.next_cursor


def ids_of(seeded: Any, kind: str | None = None) -> list[str]:
    """The ids of the seeded records (of one kind)."""
    return [r["id"] for r in seeded["records"] if kind is None or r["kind"] == kind]


def at(days_ago: float, seconds: int = 0) -> int:
    """A time ``days_ago`` days before the sandbox's now."""
    return int(START - days_ago * DAY) + seconds


def record(kind: str, created: int, **fields: Any) -> dict[str, Any]:
    return {"kind": kind, "created": created, **fields}


def metadata(action_id: str) -> Mapping[str, str]:
    return {"caseward_action_id": action_id}
