"""The read-only audit's report: what each provider's current scan read and found.

A shop's report is, per provider, its newest scan that is done (:func:`current_scans`):
a newer scan still reading does not change the report until it completes and supersedes
it. From those scans:

* :func:`report_summary`: records read per provider and kind (one grouped query), and
  findings per rule, money at risk per rule and currency, and per week (Monday to
  Sunday, UTC) per rule and currency, from one pass over the findings streamed in pages;
  what it holds grows with the weeks and rules, never with the findings.
* :func:`findings_page`: the findings a :class:`FindingFilter` keeps (rule, provider,
  week, customer), newest first, one page of them and how many there are (two queries).
* :func:`export_rows` and the exports built on them, :func:`csv_export` and
  :func:`json_export`: every finding the filter keeps, streamed in pages and written as
  they come, one row (or object) per finding. The CSV says money as a decimal string and
  an ISO 4217 code; the JSON in minor units, as the API says money. Both say the reason
  in the reader's words (the ``say`` they are given); a CSV cell never starts a formula.

Every query is limited to the scans given, which the caller read for one shop.
"""

from __future__ import annotations

import csv
import io
import json
import re
import uuid
from collections import defaultdict
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, time, timedelta
from typing import Any

from sqlalchemy import ColumnElement, and_, func, select
from sqlalchemy.orm import Session

from app.errors import InvalidInput
from app.history_audit.findings import BATCH, Rule
from app.history_audit.models import HistoryFinding, HistoryRecord, HistoryScan, ScanStatus
from app.history_audit.scan import PROVIDERS
from app.money import Money
from app.validation import SHORT_TEXT, choice, text
from app.words import Sentence, said

EXPORT_FORMATS = ("csv", "json")
EXPORT_COLUMNS = (
    "provider",
    "rule",
    "reason",
    "occurred_at",
    "records",
    "customer",
    "money_at_risk",
    "currency",
)
# Findings a page shows unless asked for more, and the most it shows.
PAGE_SIZE = 100
PAGE_MAXIMUM = 1000
FILTER_FIELDS = ("rule", "provider", "week", "customer")
_DATE = re.compile(r"\d{4}-\d{2}-\d{2}")
_WEEK = timedelta(days=7)
# A spreadsheet runs a cell that starts with one of these as a formula.
_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")

_F = HistoryFinding


# ---------------------------------------------------------------- which scans


def current_scans(session: Session, shop_id: uuid.UUID) -> list[HistoryScan]:
    """Each provider's newest done scan in the shop, in :data:`PROVIDERS` order."""
    newest = (
        select(
            HistoryScan.id,
            func.row_number()
            .over(partition_by=HistoryScan.provider, order_by=HistoryScan.created_at.desc())
            .label("place"),
        )
        .where(HistoryScan.shop_id == shop_id, HistoryScan.status == ScanStatus.DONE)
        .subquery()
    )
    scans = session.scalars(
        select(HistoryScan).join(newest, HistoryScan.id == newest.c.id).where(newest.c.place == 1)
    ).all()
    return sorted(scans, key=lambda scan: PROVIDERS.index(scan.provider))


# ---------------------------------------------------------------- filters


@dataclass(frozen=True)
class FindingFilter:
    """Which findings to show; ``week`` is the Monday (UTC) the week starts on."""

    rule: Rule | None = None
    provider: str | None = None
    week: date | None = None
    customer: str | None = None

    @classmethod
    def parse(cls, values: Mapping[str, str]) -> FindingFilter:
        """From a query string's values; an empty value is no filter, anything else that
        is not one refuses the field (:class:`~app.errors.InvalidInput`)."""
        given = {name: values[name] for name in FILTER_FIELDS if values.get(name)}
        rule = given.get("rule")
        provider = given.get("provider")
        week = given.get("week")
        return cls(
            rule=Rule(choice(rule, "rule", list(Rule))) if rule else None,
            provider=choice(provider, "provider", PROVIDERS) if provider else None,
            week=_monday(week) if week else None,
            customer=text(given.get("customer"), "customer", max_length=SHORT_TEXT),
        )

    def query(self) -> dict[str, str]:
        """The filter as query values, for links that keep it."""
        values = {
            "rule": self.rule.value if self.rule else None,
            "provider": self.provider,
            "week": self.week.isoformat() if self.week else None,
            "customer": self.customer,
        }
        return {name: value for name, value in values.items() if value}

    def where(self, scans: Iterable[HistoryScan]) -> ColumnElement[bool]:
        scan_ids = [scan.id for scan in scans if self.provider in (None, scan.provider)]
        conditions: list[ColumnElement[bool]] = [_F.scan_id.in_(scan_ids)]
        if self.rule is not None:
            conditions.append(_F.rule == self.rule.value)
        if self.week is not None:
            start = datetime.combine(self.week, time(), tzinfo=UTC)
            conditions += [_F.occurred_at >= start, _F.occurred_at < start + _WEEK]
        if self.customer is not None:
            conditions.append(_F.customer == self.customer)
        return and_(*conditions)


def _monday(value: str) -> date:
    try:
        day = date.fromisoformat(value) if _DATE.fullmatch(value) else None
    except ValueError:
        day = None
    if day is None or day.weekday() != 0:
        raise InvalidInput(
            said("%(field)s is the date a week starts on, a Monday: YYYY-MM-DD", field="week"),
            field="week",
        )
    return day


def week_of(moment: datetime) -> date:
    """The Monday (UTC) of the week ``moment`` falls in."""
    day = moment.astimezone(UTC).date()
    return day - timedelta(days=day.weekday())


# ---------------------------------------------------------------- the summary


@dataclass(frozen=True)
class Summary:
    """The report's figures. Money maps a currency to minor units."""

    # provider → kind → records read
    records: dict[str, dict[str, int]] = field(default_factory=dict)
    findings: dict[Rule, int] = field(default_factory=dict)
    money_by_rule: dict[Rule, dict[str, int]] = field(default_factory=dict)
    money: dict[str, int] = field(default_factory=dict)
    # currency → week (its Monday) → rule → money at risk; weeks in order
    weeks: dict[str, dict[date, dict[Rule, int]]] = field(default_factory=dict)

    @property
    def total_findings(self) -> int:
        return sum(self.findings.values())

    @property
    def total_records(self) -> int:
        return sum(sum(kinds.values()) for kinds in self.records.values())


def report_summary(session: Session, scans: Iterable[HistoryScan]) -> Summary:
    scans = list(scans)
    providers = {scan.id: scan.provider for scan in scans}
    records: dict[str, dict[str, int]] = defaultdict(dict)
    for scan_id, kind, count in session.execute(
        select(HistoryRecord.scan_id, HistoryRecord.kind, func.count())
        .where(HistoryRecord.scan_id.in_(providers))
        .group_by(HistoryRecord.scan_id, HistoryRecord.kind)
        .order_by(HistoryRecord.scan_id, HistoryRecord.kind)
    ):
        records[providers[scan_id]][kind] = count
    findings: dict[Rule, int] = defaultdict(int)
    by_rule: dict[Rule, dict[str, int]] = defaultdict(lambda: defaultdict(int))
    money: dict[str, int] = defaultdict(int)
    weeks: dict[str, dict[date, dict[Rule, int]]] = defaultdict(
        lambda: defaultdict(lambda: defaultdict(int))
    )
    rows = session.execute(
        select(_F.rule, _F.occurred_at, _F.money_at_risk, _F.currency)
        .where(_F.scan_id.in_(providers))
        .execution_options(yield_per=BATCH)
    )
    for stored_rule, occurred_at, at_risk, currency in rows:
        rule = Rule(stored_rule)
        findings[rule] += 1
        if currency is None:
            continue  # nothing at risk, in no currency
        by_rule[rule][currency] += at_risk
        money[currency] += at_risk
        weeks[currency][week_of(occurred_at)][rule] += at_risk
    return Summary(
        records={provider: dict(kinds) for provider, kinds in sorted(records.items())},
        findings={rule: findings[rule] for rule in Rule if rule in findings},
        money_by_rule={
            rule: dict(sorted(by_rule[rule].items())) for rule in Rule if rule in by_rule
        },
        money=dict(sorted(money.items())),
        weeks={
            currency: {week: dict(rules) for week, rules in sorted(per_week.items())}
            for currency, per_week in sorted(weeks.items())
        },
    )


# ---------------------------------------------------------------- the findings


@dataclass(frozen=True)
class FindingRow:
    provider: str
    rule: Rule
    reason: Sentence
    occurred_at: datetime
    records: tuple[str, ...]
    customer: str | None
    money_at_risk: int
    currency: str | None


@dataclass(frozen=True)
class FindingsPage:
    rows: list[FindingRow]
    # How many findings the filter keeps in all, and where this page starts (1-based).
    total: int
    page: int
    per_page: int

    @property
    def pages(self) -> int:
        return max(1, -(-self.total // self.per_page))


_COLUMNS = (
    _F.scan_id,
    _F.rule,
    _F.reason,
    _F.occurred_at,
    _F.records,
    _F.customer,
    _F.money_at_risk,
    _F.currency,
)


def findings_page(
    session: Session,
    scans: Iterable[HistoryScan],
    filters: FindingFilter,
    *,
    page: int = 1,
    per_page: int = PAGE_SIZE,
) -> FindingsPage:
    scans = list(scans)
    where = filters.where(scans)
    total = session.scalar(select(func.count()).select_from(_F).where(where)) or 0
    rows = session.execute(
        select(*_COLUMNS)
        .where(where)
        .order_by(_F.occurred_at.desc(), _F.id)
        .offset((page - 1) * per_page)
        .limit(per_page)
    )
    providers = {scan.id: scan.provider for scan in scans}
    return FindingsPage(
        rows=[_row(providers, row) for row in rows], total=total, page=page, per_page=per_page
    )


def export_rows(
    session: Session, scans: Iterable[HistoryScan], filters: FindingFilter
) -> Iterator[FindingRow]:
    """Every finding ``filters`` keeps, newest first, read a page at a time."""
    scans = list(scans)
    providers = {scan.id: scan.provider for scan in scans}
    rows = session.execute(
        select(*_COLUMNS)
        .where(filters.where(scans))
        .order_by(_F.occurred_at.desc(), _F.id)
        .execution_options(yield_per=BATCH)
    )
    for row in rows:
        yield _row(providers, row)


def _row(providers: Mapping[uuid.UUID, str], row: Any) -> FindingRow:
    scan_id, rule, reason, occurred_at, records, customer, at_risk, currency = row
    return FindingRow(
        provider=providers[scan_id],
        rule=Rule(rule),
        reason=Sentence.from_dict(reason),
        occurred_at=occurred_at,
        records=tuple(records),
        customer=customer,
        money_at_risk=at_risk,
        currency=currency,
    )


# ---------------------------------------------------------------- exports


def csv_export(rows: Iterable[FindingRow], say: Callable[[Sentence], str]) -> Iterator[str]:
    """A header, then one line per finding, each yielded as it is written."""
    out = io.StringIO()
    writer = csv.writer(out)
    writer.writerow(EXPORT_COLUMNS)
    yield _taken(out)
    for row in rows:
        writer.writerow(
            _cell(value)
            for value in (
                row.provider,
                row.rule.value,
                say(row.reason),
                row.occurred_at.isoformat(),
                " ".join(row.records),
                row.customer or "",
                Money(row.money_at_risk, row.currency).decimal_string() if row.currency else "0",
                (row.currency or "").upper(),
            )
        )
        yield _taken(out)


def json_export(rows: Iterable[FindingRow], say: Callable[[Sentence], str]) -> Iterator[str]:
    """``{"findings": [...]}``, one object per finding, money in minor units."""
    yield '{"findings": ['
    separator = ""
    for row in rows:
        finding = {
            "provider": row.provider,
            "rule": row.rule.value,
            "reason": say(row.reason),
            "occurred_at": row.occurred_at.isoformat(),
            "records": list(row.records),
            "customer": row.customer,
            "money_at_risk": row.money_at_risk,
            "currency": row.currency,
        }
        yield separator + json.dumps(finding, ensure_ascii=False)
        separator = ", "
    yield "]}\n"


def _taken(out: io.StringIO) -> str:
    written = out.getvalue()
    out.seek(0)
    out.truncate()
    return written


def _cell(value: str) -> str:
    """A value as a spreadsheet should read it: text, never a formula."""
    return "'" + value if value.startswith(_FORMULA_START) else value
