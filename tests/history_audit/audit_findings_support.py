"""A shop's past money actions stored in a scan directly, as a completed scan keeps them,
so the audit's rules and report are tested on records chosen one by one.

``module_engine`` gives a test module its own database (a copy of the migrated SQLite
file, or the run's PostgreSQL database, emptied when the module is done): the records are
planted once and every test of the module reads them.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

from empty_tables import empty_tables
from own_database import own_database
from sqlalchemy import Engine, insert
from sqlalchemy.orm import Session
from stored_actions import a_case_with_proposal

from app.db import make_engine
from app.execution.models import Action
from app.history_audit.models import HistoryRecord, HistoryScan, ScanStatus
from app.shops.models import Shop

# A Monday, so weeks in the report start on round dates.
T0 = datetime(2026, 3, 2, 12, 0, tzinfo=UTC)


def module_engine(folder: Path, migrated_database_url: str) -> Iterator[Engine]:
    database = own_database(migrated_database_url, folder)
    engine = make_engine(database)
    yield engine
    empty_tables(engine)
    engine.dispose()


def a_shop(session: Session, name: str) -> Shop:
    shop = Shop(domain=f"{name}-{uuid.uuid4().hex[:8]}.myshopify.com", name=name)
    session.add(shop)
    session.flush()
    return shop


def a_scan(
    session: Session,
    shop: Shop,
    provider: str = "stripe",
    *,
    status: str = ScanStatus.DONE,
    created_at: datetime = T0 + timedelta(days=90),
) -> HistoryScan:
    scan = HistoryScan(
        shop_id=shop.id,
        provider=provider,
        status=status,
        window_days=90,
        since=created_at - timedelta(days=90),
        streams={},
        requests=0,
        requested_by="system:caseward",
        created_at=created_at,
    )
    session.add(scan)
    session.flush()
    return scan


def an_action(session: Session, shop: Shop) -> Action:
    """One of Caseward's own actions in ``shop``, with the case and proposal behind it."""
    case, proposal = a_case_with_proposal(session, shop, subject="A refund Caseward made")
    action_id = uuid.uuid4()
    action = Action(
        id=action_id,
        shop_id=shop.id,
        case_id=case.id,
        proposal_id=proposal.id,
        proposal_revision=1,
        digest=proposal.digest,
        kind="refund",
        provider="stripe",
        target="pi_ours",
        amount=1000,
        currency="usd",
        idempotency_key=f"caseward-action-{action_id}",
        status="succeeded",
        approval_expires_at=T0,
    )
    session.add(action)
    session.flush()
    return action


@dataclass(frozen=True)
class Planted:
    """A record to keep in a scan; only what the rules read."""

    id: str
    kind: str
    created: datetime
    amount: int | None = None
    currency: str | None = "usd"
    customer: str | None = None
    payment: str | None = None
    payment_disputed: bool = False
    percent_off: int | None = None
    status: str | None = "succeeded"
    caseward_action_id: str | None = None
    detail: dict[str, str] | None = None


def keep(session: Session, scan: HistoryScan, records: list[Planted]) -> None:
    """Insert ``records`` into ``scan`` as the scan keeps a page: one statement."""
    rows: list[dict[str, Any]] = [
        {
            "id": uuid.uuid4(),
            "scan_id": scan.id,
            "shop_id": scan.shop_id,
            "provider": scan.provider,
            "kind": record.kind,
            "record_id": record.id,
            "created": record.created,
            "customer": record.customer,
            "amount": record.amount,
            "currency": record.currency,
            "percent_off": record.percent_off,
            "payment": record.payment,
            "payment_amount": record.amount,
            "payment_disputed": record.payment_disputed,
            "status": record.status,
            "caseward_action_id": record.caseward_action_id,
            "detail": record.detail or {},
        }
        for record in records
    ]
    session.execute(insert(HistoryRecord), rows)


@dataclass(frozen=True)
class Tag:
    """An element of a page: its attributes, and those of the elements around it."""

    name: str
    attrs: dict[str, str]
    around: tuple[dict[str, str], ...]

    def inside(self, attribute: str) -> str | None:
        """``attribute`` of the nearest element around this one that has it."""
        return next(
            (attrs[attribute] for attrs in reversed(self.around) if attribute in attrs), None
        )


_VOID = frozenset(
    {"area", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "wbr"}
)


class _Tags(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.found: list[Tag] = []
        self._open: list[tuple[str, dict[str, str]]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        values = {name: value or "" for name, value in attrs}
        self.found.append(Tag(tag, values, tuple(attrs for _, attrs in self._open)))
        if tag not in _VOID:
            self._open.append((tag, values))

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        values = {name: value or "" for name, value in attrs}
        self.found.append(Tag(tag, values, tuple(attrs for _, attrs in self._open)))

    def handle_endtag(self, tag: str) -> None:
        for place in range(len(self._open) - 1, -1, -1):
            if self._open[place][0] == tag:
                del self._open[place:]
                return


def tags(page: str, name: str, **wanted: str) -> list[Tag]:
    """The ``name`` elements of ``page`` whose attributes include ``wanted`` (``data_rule``
    stands for ``data-rule``)."""
    parser = _Tags()
    parser.feed(page)
    wanted_attrs = {key.replace("_", "-"): value for key, value in wanted.items()}
    return [
        tag
        for tag in parser.found
        if tag.name == name and all(tag.attrs.get(k) == v for k, v in wanted_attrs.items())
    ]
