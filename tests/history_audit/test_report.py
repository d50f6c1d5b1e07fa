"""The audit's report in the embedded admin, and its exports.

The linen shop has a Stripe and a Shopify check done (their findings computed from
planted records under a $200.00 two-person threshold) and a newer Stripe check halfway
through its window; another shop has findings of its own, which the linen shop never sees.
Pages are opened as Shopify frames them and the exports fetched as the page's script does,
with the person's session token.
"""

from __future__ import annotations

import csv
import io
import json
import sys
from collections import Counter, defaultdict
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import date, timedelta
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from audit_findings_support import T0, Planted, a_scan, keep, tags
from empty_tables import empty_tables
from flask import Flask
from flask.testing import FlaskClient
from own_database import own_database
from sent_statements import statements_sent

from app import create_app
from app.db import Database
from app.guard import PolicyRules
from app.history_audit.findings import Rule, compute_findings
from app.history_audit.models import ScanStatus
from app.money import Money
from app.settings import Settings
from app.shops.models import Shop
from app.web.api.openapi import OPENAPI

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "shopify_app"))
from admin_pages_support import APPROVER, OWNER, VIEWER, a_shop, api, open_page, text_of
from shopify_app_support import APP_SECRET, CLIENT_ID, ENCRYPTION_KEY

POLICY = PolicyRules(two_person_threshold={"usd": 20000})
NOW = T0 + timedelta(days=90)
HOUR, DAY = timedelta(hours=1), timedelta(days=1)
WEEK_1, WEEK_2, WEEK_3 = date(2026, 3, 2), date(2026, 3, 9), date(2026, 3, 16)
# The week each of the linen shop's records falls in (T0 is a Monday).
WEEKS = {
    **dict.fromkeys(("re_dup1", "re_dup2", "gid-refund-1"), WEEK_1),
    **dict.fromkeys(("re_big", "re_disputed", "re_eur"), WEEK_2),
    **dict.fromkeys(("promo_60", "re_formula"), WEEK_3),
}

# (provider, rule, records, money at risk, currency): every finding of the linen shop.
LINEN = {
    ("stripe", Rule.DUPLICATE, ("re_dup1", "re_dup2"), 5000, "usd"),
    ("stripe", Rule.UNGUARDED, ("re_dup1",), 5000, "usd"),
    ("stripe", Rule.UNGUARDED, ("re_dup2",), 5000, "usd"),
    ("stripe", Rule.ABOVE_THRESHOLD, ("re_big",), 5000, "usd"),
    ("stripe", Rule.UNGUARDED, ("re_big",), 25000, "usd"),
    ("stripe", Rule.DISPUTED_REFUND, ("re_disputed",), 2500, "usd"),
    ("stripe", Rule.UNGUARDED, ("re_disputed",), 2500, "usd"),
    ("stripe", Rule.UNGUARDED, ("re_eur",), 1000, "eur"),
    ("stripe", Rule.LARGE_DISCOUNT, ("promo_60",), 0, "usd"),
    ("stripe", Rule.UNGUARDED, ("promo_60",), 0, "usd"),
    ("stripe", Rule.UNGUARDED, ("re_formula",), 100, "usd"),
    ("shopify", Rule.UNGUARDED, ("gid-refund-1",), 3000, "usd"),
}


@dataclass(frozen=True)
class Shops:
    app: Flask
    linen: Shop
    other: Shop
    small: Shop
    large: Shop


@pytest.fixture(scope="module")
def shops(
    tmp_path_factory: pytest.TempPathFactory, migrated_database_url: str, redis_url: str
) -> Iterator[Shops]:
    folder = tmp_path_factory.mktemp("report")
    database = own_database(migrated_database_url, folder)
    settings = Settings(
        instance_path=folder / "instance",
        database_url=database,
        redis_url=redis_url,
        secret_key="test-secret-key",
        testing=True,
        gorgias_api_base="http://127.0.0.1:9",
        shopify_api_key=CLIENT_ID,
        shopify_api_secret=APP_SECRET,
        encryption_keys=(ENCRYPTION_KEY,),
    ).completed()
    app = create_app(settings)
    state = Database.state(app)
    with state.session_factory() as session:
        linen = a_shop(session, settings, "linen")
        _linen_history(session, linen)
        other = a_shop(session, settings, "other")
        other_scan = a_scan(session, other)
        keep(session, other_scan, [Planted("re_theirs", "refund", T0, 700, customer="cus_a")])
        compute_findings(session, other_scan, POLICY, NOW)
        small, large = a_shop(session, settings, "small"), a_shop(session, settings, "large")
        for shop, count in ((small, 2), (large, 1000)):
            scan = a_scan(session, shop)
            keep(
                session,
                scan,
                [
                    Planted(f"re_{n}", "refund", T0 + n * HOUR, 100 + n, customer=f"cus_{n}")
                    for n in range(count)
                ],
            )
            compute_findings(session, scan, POLICY, NOW)
        session.commit()
        session.expunge_all()
    yield Shops(app, linen, other, small, large)
    empty_tables(state.engine)
    state.engine.dispose()


def _linen_history(session: Any, linen: Shop) -> None:
    stripe = a_scan(session, linen)
    keep(
        session,
        stripe,
        [
            Planted("re_dup1", "refund", T0, 5000, customer="cus_a", payment="pi_dup"),
            Planted("re_dup2", "refund", T0 + HOUR, 5000, customer="cus_a", payment="pi_dup"),
            Planted("re_big", "refund", T0 + 8 * DAY, 25000, customer="cus_b", payment="pi_big"),
            Planted(
                "re_disputed",
                "refund",
                T0 + 8 * DAY,
                2500,
                customer="cus_c",
                payment="pi_disputed",
                payment_disputed=True,
            ),
            Planted("re_eur", "refund", T0 + 8 * DAY, 1000, currency="eur", customer="cus_d"),
            Planted("promo_60", "discount", T0 + 15 * DAY, percent_off=60, currency=None),
            # A customer id a spreadsheet would run as a formula.
            Planted("re_formula", "refund", T0 + 15 * DAY, 100, customer="=HYPERLINK(1)"),
        ],
    )
    compute_findings(session, stripe, POLICY, NOW)
    shopify = a_scan(session, linen, "shopify")
    keep(
        session,
        shopify,
        [Planted("gid-refund-1", "refund", T0 + 2 * DAY, 3000, customer="cus_a")],
    )
    compute_findings(session, shopify, POLICY, NOW)
    # A newer Stripe check halfway through its window: the report stays the done one.
    running = a_scan(session, linen, status=ScanStatus.RUNNING, created_at=NOW + DAY)
    running.started_at = NOW + DAY
    running.requests = 4
    running.streams = {
        "refunds": {
            "cursor": "page-4",
            "done": False,
            "records": 120,
            "pages": 3,
            "oldest": (NOW + DAY - 45 * DAY).isoformat(),
            "newest": (NOW + DAY).isoformat(),
            "order": "newest_first",
            "seconds": 300.0,
        },
        "customer_credits": {
            "cursor": None,
            "done": True,
            "records": 10,
            "pages": 1,
            "oldest": None,
            "newest": None,
            "order": None,
            "seconds": 5.0,
        },
    }


@pytest.fixture
def client(shops: Shops) -> FlaskClient:
    return shops.app.test_client()


def _findings_rows(page: str) -> list[tuple[str, Rule, tuple[str, ...], int, str]]:
    return [
        (
            row.attrs["data-provider"],
            Rule(row.attrs["data-rule"]),
            tuple(row.attrs["data-records"].split(" ")),
            int(row.attrs["data-amount"]),
            row.attrs["data-currency"],
        )
        for row in tags(page, "tr")
        if "data-records" in row.attrs
    ]


@pytest.mark.parametrize("user", [OWNER, APPROVER, VIEWER])
def test_every_member_reads_the_report(client: FlaskClient, shops: Shops, user: str) -> None:
    page = text_of(open_page(client, shops.linen, user, "/app/history"))

    assert set(_findings_rows(page)) == LINEN
    assert "History check" in page and 'aria-current="page">History check' in page
    assert "Refund re_big of $250.00 is $50.00 above the draft policy's two-person" in page
    counted = {tag.attrs["data-figure"]: tag for tag in tags(page, "strong")}
    assert set(counted) == {"findings", "money-usd", "money-eur", "records"}
    assert ">12</strong> findings" in page
    # Only an owner may start a check again; the API would refuse anyone else anyway.
    assert bool(tags(page, "form", **{"class": "switch"})) is (user == OWNER)


def test_a_running_check_shows_how_far_it_has_read(client: FlaskClient, shops: Shops) -> None:
    page = text_of(open_page(client, shops.linen, VIEWER, "/app/history"))

    stripe = tags(page, "div", data_provider="stripe")[0]
    assert stripe.attrs["data-status"] == "running"
    # Refunds are read back to half the window, credits to its start: three quarters.
    (bar,) = tags(page, "progress")
    assert bar.attrs["value"] == "75" and bar.attrs["max"] == "100"
    assert "130 records read · 4 pages · 4 requests · about 5 minutes left" in page
    assert "The report below is still the check finished" in page
    assert tags(page, "div", data_provider="shopify")[0].attrs["data-status"] == "done"


def test_a_shop_without_a_check_says_so(
    client: FlaskClient, shops: Shops, session_shop: Shop
) -> None:
    page = text_of(open_page(client, session_shop, OWNER, "/app/history"))

    assert "No history check has run yet" in page
    assert not tags(page, "table", id="findings-table")


@pytest.fixture
def session_shop(shops: Shops) -> Iterator[Shop]:
    """A shop installed with nothing read yet."""
    settings = shops.app.config["CASEWARD_SETTINGS"]
    with Database.state(shops.app).session_factory() as session:
        shop = a_shop(session, settings, "empty")
        session.expunge(shop)
    yield shop


@pytest.mark.parametrize(
    ("query", "kept"),
    [
        ({"rule": "duplicate"}, lambda f: f[1] is Rule.DUPLICATE),
        ({"provider": "shopify"}, lambda f: f[0] == "shopify"),
        ({"week": "2026-03-09"}, lambda f: f[2][0] in ("re_big", "re_disputed", "re_eur")),
        (
            {"customer": "cus_a"},
            lambda f: f[2][0] in ("re_dup1", "re_dup2", "gid-refund-1"),
        ),
        (
            {"rule": "unguarded", "customer": "cus_a", "provider": "stripe"},
            lambda f: f[1] is Rule.UNGUARDED and f[2][0] in ("re_dup1", "re_dup2"),
        ),
    ],
)
def test_filters_keep_what_they_say_and_every_link_keeps_them(
    client: FlaskClient, shops: Shops, query: dict[str, str], kept: Any
) -> None:
    page = text_of(open_page(client, shops.linen, VIEWER, "/app/history", **query))

    expected = {finding for finding in LINEN if kept(finding)}
    assert expected and set(_findings_rows(page)) == expected
    for button in tags(page, "button", **{"class": "export"}):
        assert all(f"{name}={value}" in button.attrs["data-url"] for name, value in query.items())
    # The form sends Shopify's query along with the filter.
    form = tags(page, "form", **{"class": "filters"})[0]
    hidden = {t.attrs["name"] for t in tags(page, "input", type="hidden")}
    assert form.attrs["method"] == "get" and {"shop", "host", "embedded"} <= hidden


def test_pages_of_findings_link_on_with_the_filter(client: FlaskClient, shops: Shops) -> None:
    first = text_of(
        open_page(client, shops.linen, VIEWER, "/app/history", rule="unguarded", limit="4")
    )
    older = [a.attrs["href"] for a in tags(first, "a") if "page=2" in a.attrs.get("href", "")]
    assert older and "rule=unguarded" in older[0] and "limit=4" in older[0]
    assert "Page 1 of 2" in first

    second = text_of(
        open_page(
            client, shops.linen, VIEWER, "/app/history", rule="unguarded", limit="4", page="2"
        )
    )
    seen = _findings_rows(first) + _findings_rows(second)
    assert len(seen) == 8 and {f for f in LINEN if f[1] is Rule.UNGUARDED} == set(seen)


@pytest.mark.parametrize(
    ("query", "field"),
    [
        ({"week": "2026-03-10"}, "week"),  # a Tuesday
        ({"week": "03/09/2026"}, "week"),
        ({"rule": "everything"}, "rule"),
        ({"provider": "paypal"}, "provider"),
        ({"page": "0"}, "page"),
        ({"limit": "1001"}, "limit"),
    ],
)
def test_a_filter_that_is_not_one_is_refused(
    client: FlaskClient, shops: Shops, query: dict[str, str], field: str
) -> None:
    answer = open_page(client, shops.linen, VIEWER, "/app/history", **query)

    assert answer.status_code == 400
    assert answer.get_json()["error"]["field"] == field


def _chart_numbers(page: str) -> dict[str, dict[tuple[str, str], int]]:
    """currency → (week, rule) → minor units, as the bars draw them and as the table says."""
    drawn: dict[str, dict[tuple[str, str], int]] = defaultdict(dict)
    for bar in tags(page, "rect"):
        if "data-amount" in bar.attrs:
            key = (bar.inside("data-week") or "", bar.attrs["data-rule"])
            drawn[bar.inside("data-currency") or ""][key] = int(bar.attrs["data-amount"])
    return drawn


def _table_numbers(page: str) -> dict[str, dict[tuple[str, str], int]]:
    said: dict[str, dict[tuple[str, str], int]] = defaultdict(dict)
    for cell in tags(page, "td"):
        amount = cell.attrs.get("data-amount")
        if amount is not None and cell.inside("data-week") and int(amount):
            key = (cell.inside("data-week") or "", cell.attrs["data-rule"])
            said[cell.inside("data-currency") or ""][key] = int(amount)
    return said


def test_the_charts_numbers_are_the_tables_and_the_findings(
    client: FlaskClient, shops: Shops
) -> None:
    page = text_of(open_page(client, shops.linen, VIEWER, "/app/history"))

    sums: dict[str, Counter[tuple[str, str]]] = defaultdict(Counter)
    for _, rule, records, amount, currency in LINEN:
        if amount:
            sums[currency][(WEEKS[records[-1]].isoformat(), rule.value)] += amount
    assert _chart_numbers(page) == {currency: dict(sums[currency]) for currency in sums}
    assert _table_numbers(page) == _chart_numbers(page)
    # Each chart says what it shows, to a screen reader too.
    titles = [t.attrs["id"] for t in tags(page, "title") if "id" in t.attrs]
    assert titles == ["chart-eur-title", "chart-usd-title"]
    assert "Money at risk in USD by week, stacked by rule" in page
    # Every week from the first finding to the last has its bar, those without money too.
    usd_weeks = [
        g.attrs["data-week"] for g in tags(page, "g") if g.inside("data-currency") == "usd"
    ]
    assert usd_weeks == [WEEK_1.isoformat(), WEEK_2.isoformat(), WEEK_3.isoformat()]


def _export(client: FlaskClient, shop: Shop, file_format: str, **query: str) -> Any:
    url = "/api/shop/history-audit/findings?" + "&".join(
        f"{name}={value}" for name, value in {"format": file_format, **query}.items()
    )
    answer = api(client, shop, VIEWER, "GET", url, None)
    # Read to its end now: a streamed answer holds its request open until then.
    body = answer.get_data(as_text=True)
    assert answer.status_code == 200, body
    return answer


def test_the_exports_parse_and_carry_the_same_findings(client: FlaskClient, shops: Shops) -> None:
    as_csv = _export(client, shops.linen, "csv")
    as_json = _export(client, shops.linen, "json")

    assert as_csv.mimetype == "text/csv" and as_json.mimetype == "application/json"
    # A streamed export gives its database connection back when it has been sent.
    assert Database.state(shops.app).engine.pool.checkedout() == 0
    assert as_csv.headers["Content-Disposition"] == (
        f'attachment; filename="caseward-history-{shops.linen.domain}.csv"'
    )
    rows = list(csv.DictReader(io.StringIO(as_csv.get_data(as_text=True))))
    findings = json.loads(as_json.get_data(as_text=True))["findings"]
    from_csv = {
        (
            row["provider"],
            Rule(row["rule"]),
            tuple(row["records"].split(" ")),
            Money.parse(row["money_at_risk"], row["currency"]).amount,
            row["currency"].lower(),
        )
        for row in rows
    }
    from_json = {
        (f["provider"], Rule(f["rule"]), tuple(f["records"]), f["money_at_risk"], f["currency"])
        for f in findings
    }
    assert from_csv == from_json == LINEN
    operation = OPENAPI["paths"]["/api/shop/history-audit/findings"]["get"]
    schema = operation["responses"]["200"]["content"]["application/json"]["schema"]
    jsonschema.validate({"findings": findings}, schema)
    assert len(rows) == len(findings) == len(LINEN)
    assert [row["reason"] for row in rows] == [f["reason"] for f in findings]
    assert [row["occurred_at"] for row in rows] == [f["occurred_at"] for f in findings]
    big = next(row for row in rows if row["records"] == "re_big" and row["rule"] == "unguarded")
    assert (big["money_at_risk"], big["currency"]) == ("250.00", "USD")
    # A spreadsheet reads the customer as text, not as a formula to run.
    assert next(row for row in rows if row["records"] == "re_formula")["customer"] == (
        "'=HYPERLINK(1)"
    )


def test_an_export_keeps_the_pages_filter(client: FlaskClient, shops: Shops) -> None:
    findings = json.loads(
        _export(client, shops.linen, "json", rule="unguarded", week="2026-03-02").get_data()
    )["findings"]

    assert {tuple(f["records"]) for f in findings} == {
        ("re_dup1",),
        ("re_dup2",),
        ("gid-refund-1",),
    }


def test_another_shops_findings_never_appear(client: FlaskClient, shops: Shops) -> None:
    ours = text_of(open_page(client, shops.linen, OWNER, "/app/history"))
    theirs = text_of(open_page(client, shops.other, OWNER, "/app/history"))
    exported = _export(client, shops.other, "csv").get_data(as_text=True)

    assert "re_theirs" not in ours
    assert {f[2] for f in _findings_rows(theirs)} == {("re_theirs",)}
    assert "re_theirs" in exported and "re_dup1" not in exported


def test_a_thousand_findings_render_in_one_request_with_as_many_queries_as_two(
    client: FlaskClient, shops: Shops
) -> None:
    engine = Database.state(shops.app).engine

    def queries(shop: Shop) -> tuple[list[str], str]:
        with statements_sent(engine) as sent:
            page = text_of(open_page(client, shop, VIEWER, "/app/history", limit="1000"))
        return [s.statement for s in sent], page

    few, small = queries(shops.small)
    many, large = queries(shops.large)

    assert len(_findings_rows(small)) == 2
    assert len(_findings_rows(large)) == 1000
    assert len(many) == len(few), many
