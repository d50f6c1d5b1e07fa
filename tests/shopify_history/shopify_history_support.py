"""Helpers for the Shopify history reader's tests: sandbox times, a shop with its reader,
and reading a stream to its end as the scan does (one page at a time, the sandbox's
clock moved on by the pace the reader asks for)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import httpx

from integrations.history import HistoryPage, PastMoneyAction
from integrations.shopify.history import ShopifyHistoryReader
from integrations.shopify.sandbox import ShopifySandbox
from integrations.shopify.sandbox.history import SeededHistory

DAY = 86_400.0
START = 1_767_225_600.0  # 2026-01-01T00:00:00Z, the sandbox's frozen "now"
# The audit's default window: 90 days back from now.
WINDOW_START = START - 90 * DAY
SINCE = datetime.fromtimestamp(WINDOW_START, UTC)


@dataclass
class HistoryShop:
    """A sandbox shop, its offline token and a history reader on it."""

    sandbox: ShopifySandbox
    domain: str
    token: str
    http_client: httpx.Client
    reader: ShopifyHistoryReader

    def fresh_reader(self) -> ShopifyHistoryReader:
        """Another reader on the same shop and token, as the scan's next slice makes."""
        return ShopifyHistoryReader(
            self.domain, self.token, http_client=self.http_client, clock=self.sandbox.now
        )

    def seed(self, history: Mapping[str, Any]) -> SeededHistory:
        return self.sandbox.seed_history(self.domain, history)

    def page(
        self, stream: str, cursor: str | None = None, reader: ShopifyHistoryReader | None = None
    ) -> HistoryPage:
        return (reader or self.reader).read_page(stream, since=SINCE, cursor=cursor)

    def pace(self) -> None:
        """Let the time pass that the scan waits between two pages."""
        self.sandbox.advance_clock(1 / self.reader.requests_per_second)

    def read_all(self, stream: str, cursor: str | None = None) -> list[PastMoneyAction]:
        """Every record of ``stream`` from ``cursor`` on, page by page, paced."""
        records: list[PastMoneyAction] = []
        while True:
            page = self.page(stream, cursor)
            records += page.records
            if page.next_cursor is None:
                return records
            cursor = page.next_cursor
            self.pace()

    def operations(self, name: str) -> int:
        """How many requests of the operation ``name`` the shop received."""
        return sum(1 for o in self.sandbox.received_operations(self.domain) if o.name == name)
