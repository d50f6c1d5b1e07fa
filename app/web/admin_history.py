"""The embedded admin's history check: what the read-only audit read and what it found.

``/app/history``, the same for every member (every role may read it):

* per provider, its newest scan: its state, and while it reads a ``<progress>`` bar,
  counts and the time left (:func:`app.history_audit.scan.scan_progress`); owners get a
  button to run the check again, sent by ``static/admin_settings.js`` (``form.switch``)
  to ``POST /api/shop/history-audit``, which checks the role again;
* the report of each provider's current (newest done) scan
  (:mod:`app.history_audit.report`): summary figures, a chart of money at risk by week
  and rule drawn on the server as inline SVG (its ``<title>`` says what it shows, and a
  table for screen readers holds the same numbers), the findings a filter keeps (GET
  query values, which every link of the page carries on), a page at a time;
* export buttons fetching ``GET /api/shop/history-audit/findings`` with the session
  token, as the audit log's export does (``button.export``), with the page's filter.

The page reads a fixed number of queries whatever the number of findings: the newest
scan per provider, the current scans, records per kind, one streamed pass over the
findings for the figures and the chart, and one page of findings with its count.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from datetime import date, timedelta
from urllib.parse import parse_qsl, urlsplit

from babel.dates import format_skeleton
from flask import render_template, request

from app.db import request_session
from app.errors import InvalidInput
from app.history_audit.findings import RULE_WORDS, Rule
from app.history_audit.models import HistoryScan, ScanStatus
from app.history_audit.report import (
    PAGE_MAXIMUM,
    PAGE_SIZE,
    FindingFilter,
    FindingsPage,
    Summary,
    current_scans,
    findings_page,
    report_summary,
)
from app.history_audit.scan import PROVIDERS, ScanProgress, newest_scans, scan_progress
from app.shops.models import Shop, StaffMember, StaffRole
from app.validation import integer
from app.web.admin_text import (
    catalogue,
    current_locale,
    in_reader_words,
    money_text,
    reason_text,
)
from app.web.shopify_admin import admin_url, bp, embedded_page
from app.words import N_, said

# What a scan's status is called on the page.
SCAN_WORDS = {
    ScanStatus.QUEUED: N_("waiting to start"),
    ScanStatus.RUNNING: N_("reading the history"),
    ScanStatus.DONE: N_("done"),
    ScanStatus.FAILED: N_("stopped"),
    ScanStatus.SUPERSEDED: N_("replaced by a newer check"),
}
SCAN_TONES = {
    ScanStatus.QUEUED: "info",
    ScanStatus.RUNNING: "info",
    ScanStatus.DONE: "success",
    ScanStatus.FAILED: "critical",
}
# The chart's drawing, in SVG user units.
PLOT_HEIGHT = 160
BAR_WIDTH = 36
BAR_GAP = 16
MARGIN_LEFT = 16
# Room above the highest bar for the line that marks its amount.
MARGIN_TOP = 24
LABEL_HEIGHT = 24


@dataclass(frozen=True)
class ScanView:
    provider: str
    scan: HistoryScan
    progress: ScanProgress
    status: str
    tone: str
    percent: int
    time_left: str | None
    error: str | None


@dataclass(frozen=True)
class Segment:
    """One rule's money in one week: a stacked rectangle of the week's bar."""

    rule: Rule
    amount: int
    y: float
    height: float
    label: str


@dataclass(frozen=True)
class Column:
    week: date
    label: str
    x: float
    total: int
    total_text: str
    segments: list[Segment]


@dataclass(frozen=True)
class Chart:
    """Money at risk in one currency, a bar per week stacked by rule."""

    currency: str
    title: str
    width: float
    height: float
    baseline: float
    columns: list[Column]
    rules: list[Rule]
    highest_text: str
    top: int = MARGIN_TOP
    bar_width: int = BAR_WIDTH


@bp.get("/history")
@embedded_page
def history(shop: Shop, member: StaffMember) -> str:
    filters = FindingFilter.parse(request.args)
    page = _count(request.args.get("page"), "page", default=1, maximum=1_000_000)
    per_page = _count(request.args.get("limit"), "limit", default=PAGE_SIZE, maximum=PAGE_MAXIMUM)
    session = request_session()
    newest = newest_scans(session, shop.id)
    current = current_scans(session, shop.id)
    summary = report_summary(session, current)
    findings = findings_page(session, current, filters, page=page, per_page=per_page)
    return render_template(
        "admin/history.html",
        shop=shop,
        member=member,
        is_owner=member.role in StaffRole.OWNER_ONLY,
        providers=PROVIDERS,
        scans=[_scan_view(scan) for scan in newest],
        current={scan.provider: scan for scan in current},
        summary=summary,
        charts=[_chart(currency, weeks) for currency, weeks in summary.weeks.items()],
        findings=findings,
        reasons=[in_reader_words(row.reason) for row in findings.rows],
        filters=filters,
        filter_query=filters.query(),
        weeks=_weeks(summary),
        rules=list(Rule),
        rule_words=_rule_words(),
        week_text=_week_text,
        page_links=_page_links(findings, filters),
        context_fields=_context_fields(),
    )


def _rule_words() -> dict[Rule, str]:
    """Each rule's name in the page's words."""
    _ = catalogue().gettext
    return {rule: _(words) for rule, words in RULE_WORDS.items()}


def _scan_view(scan: HistoryScan) -> ScanView:
    progress = scan_progress(scan)
    return ScanView(
        provider=scan.provider,
        scan=scan,
        progress=progress,
        status=catalogue().gettext(SCAN_WORDS.get(ScanStatus(scan.status), scan.status)),
        tone=SCAN_TONES.get(ScanStatus(scan.status), "neutral"),
        percent=math.floor(progress.share * 100),
        time_left=_time_left(progress.seconds_left),
        error=reason_text(scan.error_sentence, scan.error),
    )


def _time_left(seconds: float | None) -> str | None:
    translations = catalogue()
    if seconds is None:
        return None
    if seconds < 60:
        return translations.gettext("less than a minute left")
    minutes = math.ceil(seconds / 60)
    return translations.ngettext(
        "about %(num)s minute left", "about %(num)s minutes left", minutes
    ) % {"num": minutes}


def _week_text(week: date) -> str:
    return str(format_skeleton("MMMd", week, locale=current_locale()))


def _weeks(summary: Summary) -> list[date]:
    """Every week with a finding, in any currency: the week filter's choices."""
    return sorted({week for weeks in summary.weeks.values() for week in weeks})


def _chart(currency: str, weeks: dict[date, dict[Rule, int]]) -> Chart:
    """A bar for every week from the first with a finding to the last, stacked bottom up
    in :class:`Rule` order and scaled to the highest week."""
    locale = current_locale()
    highest = max((sum(rules.values()) for rules in weeks.values()), default=0)
    scale = PLOT_HEIGHT / highest if highest else 0.0
    baseline = MARGIN_TOP + PLOT_HEIGHT
    first, last = min(weeks), max(weeks)
    every_week = [first + timedelta(weeks=n) for n in range((last - first).days // 7 + 1)]
    columns = []
    for place, week in enumerate(every_week):
        rules = weeks.get(week, {})
        x = MARGIN_LEFT + place * (BAR_WIDTH + BAR_GAP)
        top = float(baseline)
        segments = []
        for rule in Rule:
            amount = rules.get(rule, 0)
            if not amount:
                continue
            height = amount * scale
            top -= height
            segments.append(
                Segment(
                    rule=rule,
                    amount=amount,
                    y=round(top, 2),
                    height=round(height, 2),
                    label=money_text(amount, currency, locale),
                )
            )
        total = sum(rules.values())
        columns.append(
            Column(
                week=week,
                label=_week_text(week),
                x=x,
                total=total,
                total_text=money_text(total, currency, locale),
                segments=segments,
            )
        )
    title = catalogue().gettext("Money at risk in %(currency)s by week, stacked by rule")
    return Chart(
        currency=currency,
        title=title % {"currency": currency.upper()},
        width=MARGIN_LEFT * 2 + max(len(columns), 1) * (BAR_WIDTH + BAR_GAP),
        height=baseline + LABEL_HEIGHT,
        baseline=baseline,
        columns=columns,
        rules=[rule for rule in Rule if any(rule in rules for rules in weeks.values())],
        highest_text=money_text(highest, currency, locale),
    )


def _page_links(findings: FindingsPage, filters: FindingFilter) -> dict[str, str]:
    query = {**filters.query()}
    if findings.per_page != PAGE_SIZE:
        query["limit"] = str(findings.per_page)
    links = {}
    if findings.page > 1:
        links["newer"] = admin_url("shopify_admin.history", **query, page=findings.page - 1)
    if findings.page < findings.pages:
        links["older"] = admin_url("shopify_admin.history", **query, page=findings.page + 1)
    return links


def _context_fields() -> dict[str, str]:
    """Shopify's query that links carry on (:func:`admin_url`), for the filter form to
    send as hidden fields: a form sent by GET replaces its address's query."""
    return dict(parse_qsl(urlsplit(admin_url("shopify_admin.history")).query))


def _count(value: str | None, field: str, *, default: int, maximum: int) -> int:
    if not value:
        return default
    if not value.isascii() or not value.isdigit() or len(value) > 10:
        raise InvalidInput(said("%(field)s is a whole number", field=field), field=field)
    return integer(int(value), field, minimum=1, maximum=maximum)
