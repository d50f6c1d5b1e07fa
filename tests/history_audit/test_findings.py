"""The audit's rules over a shop's past money actions: every planted problem is found with
its records and money, and none of the clean look-alikes planted next to each is flagged.

One history is planted once for the module (the rules read only stored records) under a
draft policy of a $200.00 two-person threshold, a 72-hour duplicate window, at most 50%
off and a per-customer cap of $300.00 in any 30 days. Next to each problem stands a record
that differs by as little as the rule allows: the same amount just outside the window, a
refund just under and one exactly at the threshold, a discount at exactly the maximum, a
customer at exactly the cap, a record carrying Caseward's own action id.
"""

from __future__ import annotations

import tracemalloc
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

import pytest
from audit_findings_support import (
    T0,
    Planted,
    a_scan,
    a_shop,
    an_action,
    keep,
    module_engine,
)
from sqlalchemy import Engine, func, select

from app.db import make_session_factory
from app.guard import CapRule, PolicyRules
from app.history_audit.findings import BATCH, Rule, compute_findings, records_key
from app.history_audit.models import HistoryFinding, HistoryScan
from app.history_audit.report import report_summary
from app.money import Money
from app.words import Sentence

POLICY = PolicyRules(
    two_person_threshold={"usd": 20000},
    duplicate_window=timedelta(hours=72),
    max_percent_off=50,
    per_customer_cap=CapRule(Money(30000, "usd"), timedelta(days=30)),
)
NOW = T0 + timedelta(days=90)
HOUR, DAY = timedelta(hours=1), timedelta(days=1)


def _history(ours: str, foreign: str) -> list[Planted]:
    """Shop A's history: each problem, then its clean look-alikes."""

    def refund(id_: str, payment: str, amount: int, at: timedelta, **more: Any) -> Planted:
        fields: dict[str, Any] = {"customer": f"cus_{payment}", "caseward_action_id": ours}
        fields.update(more)
        return Planted(id_, "refund", T0 + at, amount, payment=payment, **fields)

    def credit(id_: str, customer: str, at: timedelta) -> Planted:
        return Planted(
            id_, "customer_credit", T0 + at, 1000, customer=customer, caseward_action_id=ours
        )

    def discount(id_: str, **terms: Any) -> Planted:
        return Planted(id_, "discount", T0 + HOUR, caseward_action_id=ours, **terms)

    return [
        # Duplicates: the same refund twice within 72 hours, a credit three times.
        refund("re_dup1", "pi_dup", 5000, 0 * HOUR),
        refund("re_dup2", "pi_dup", 5000, 71 * HOUR),
        refund("re_dup_less", "pi_dup", 4000, 1 * HOUR),
        refund("re_far1", "pi_far", 5000, 0 * HOUR),
        refund("re_far2", "pi_far", 5000, 72 * HOUR + timedelta(seconds=1)),
        refund("re_failed", "pi_retry", 3000, 0 * HOUR, status="failed"),
        refund("re_retry", "pi_retry", 3000, 1 * HOUR),
        credit("cbtxn_1", "cus_credit", 0 * HOUR),
        credit("cbtxn_2", "cus_credit", 24 * HOUR),
        credit("cbtxn_3", "cus_credit", 48 * HOUR),
        credit("cbtxn_far1", "cus_credit_far", 0 * HOUR),
        credit("cbtxn_far2", "cus_credit_far", 100 * HOUR),
        # A refund on a disputed payment.
        refund("re_disputed", "pi_disputed", 2500, 5 * HOUR, payment_disputed=True),
        refund("re_undisputed", "pi_undisputed", 2500, 5 * HOUR),
        # Above the two-person threshold of $200.00.
        refund("re_big", "pi_big", 25000, 10 * HOUR),
        refund("re_under", "pi_under", 19999, 10 * HOUR),
        refund("re_at", "pi_at", 20000, 10 * HOUR),
        refund("re_eur", "pi_eur", 25000, 10 * HOUR, currency="eur"),
        # Discounts: 60% and $250.00 off; 50% and $200.00 off are within the policy.
        discount("promo_60", percent_off=60, currency=None, detail={"code": "SIXTY"}),
        discount("promo_50", percent_off=50, currency=None),
        discount("promo_250", amount=25000),
        discount("promo_200", amount=20000),
        # The per-customer cap of $300.00 in any 30 days.
        refund("re_cap1", "pi_cap1", 15000, 0 * DAY, customer="cus_cap"),
        refund("re_cap2", "pi_cap2", 15000, 10 * DAY, customer="cus_cap"),
        refund("re_cap3", "pi_cap3", 100, 20 * DAY, customer="cus_cap"),
        refund("re_more1", "pi_more1", 20000, 0 * DAY, customer="cus_more"),
        refund("re_more2", "pi_more2", 20000, 1 * DAY, customer="cus_more"),
        refund("re_more3", "pi_more3", 5000, 2 * DAY, customer="cus_more"),
        refund("re_atcap1", "pi_atcap1", 15000, 0 * DAY, customer="cus_atcap"),
        refund("re_atcap2", "pi_atcap2", 15000, 10 * DAY, customer="cus_atcap"),
        refund("re_slide1", "pi_slide1", 20000, 0 * DAY, customer="cus_slide"),
        refund(
            "re_slide2", "pi_slide2", 15000, 30 * DAY + timedelta(seconds=1), customer="cus_slide"
        ),
        # Nothing in Caseward stands behind these.
        refund("re_outside", "pi_outside", 1200, 3 * HOUR, caseward_action_id=None),
        Planted(
            "sub_outside", "subscription_cancel", T0 + 4 * HOUR, currency=None, customer="cus_sub"
        ),
        refund("re_foreign", "pi_foreign", 700, 3 * HOUR, caseward_action_id=foreign),
        refund("re_garbage", "pi_garbage", 800, 3 * HOUR, caseward_action_id="not-an-action-id"),
        refund(
            "re_failed_outside",
            "pi_failed",
            900,
            3 * HOUR,
            status="failed",
            caseward_action_id=None,
        ),
        Planted(
            "sub_ours",
            "subscription_cancel",
            T0 + 4 * HOUR,
            currency=None,
            customer="cus_sub",
            caseward_action_id=ours,
        ),
    ]


# (rule, records, money at risk in minor units, currency)
EXPECTED = {
    (Rule.DUPLICATE, ("re_dup1", "re_dup2"), 5000, "usd"),
    (Rule.DUPLICATE, ("cbtxn_1", "cbtxn_2", "cbtxn_3"), 2000, "usd"),
    (Rule.DISPUTED_REFUND, ("re_disputed",), 2500, "usd"),
    (Rule.ABOVE_THRESHOLD, ("re_big",), 5000, "usd"),
    (Rule.LARGE_DISCOUNT, ("promo_60",), 0, "usd"),
    (Rule.LARGE_DISCOUNT, ("promo_250",), 25000, "usd"),
    (Rule.OVER_CUSTOMER_CAP, ("re_cap1", "re_cap2", "re_cap3"), 100, "usd"),
    (Rule.OVER_CUSTOMER_CAP, ("re_more1", "re_more2"), 10000, "usd"),
    (Rule.OVER_CUSTOMER_CAP, ("re_more1", "re_more2", "re_more3"), 5000, "usd"),
    (Rule.UNGUARDED, ("re_outside",), 1200, "usd"),
    (Rule.UNGUARDED, ("sub_outside",), 0, "usd"),
    (Rule.UNGUARDED, ("re_foreign",), 700, "usd"),
    (Rule.UNGUARDED, ("re_garbage",), 800, "usd"),
    # Tried outside Caseward, but it moved nothing.
    (Rule.UNGUARDED, ("re_failed_outside",), 0, "usd"),
}


@dataclass(frozen=True)
class History:
    engine: Engine
    scan: HistoryScan
    other_scan: HistoryScan
    same_shop_other_scan: HistoryScan
    other_ids: frozenset[str]
    found: int


@pytest.fixture(scope="module")
def planted(
    tmp_path_factory: pytest.TempPathFactory, migrated_database_url: str
) -> Iterator[History]:
    for engine in module_engine(tmp_path_factory.mktemp("findings"), migrated_database_url):
        with make_session_factory(engine)() as session:
            linen, other = a_shop(session, "linen"), a_shop(session, "other")
            ours, foreign = an_action(session, linen), an_action(session, other)
            scan = a_scan(session, linen)
            keep(session, scan, _history(str(ours.id), str(foreign.id)))
            # Records that would change shop A's findings if another scan's leaked in.
            same_shop_other_scan = a_scan(session, linen, "shopify")
            keep(
                session,
                same_shop_other_scan,
                [Planted("gid-refund-1", "refund", T0 + HOUR, 5000, payment="pi_dup")],
            )
            other_scan = a_scan(session, other)
            other_records = [
                Planted("re_b_far", "refund", T0 + 36 * HOUR, 5000, payment="pi_far"),
                Planted("re_b_cap", "refund", T0 + 11 * DAY, 100, customer="cus_atcap"),
                Planted("re_b_dup1", "refund", T0, 900, payment="pi_b"),
                Planted("re_b_dup2", "refund", T0 + HOUR, 900, payment="pi_b"),
            ]
            keep(session, other_scan, other_records)
            found = compute_findings(session, scan, POLICY, NOW)
            compute_findings(session, other_scan, POLICY, NOW)
            session.commit()
        yield History(
            engine,
            scan,
            other_scan,
            same_shop_other_scan,
            frozenset(record.id for record in other_records),
            found,
        )


def _findings(engine: Engine, scan: HistoryScan) -> list[HistoryFinding]:
    with make_session_factory(engine)() as session:
        return list(
            session.scalars(select(HistoryFinding).where(HistoryFinding.scan_id == scan.id))
        )


def _summary(
    findings: list[HistoryFinding],
) -> set[tuple[Rule, tuple[str, ...], int, str | None]]:
    return {(Rule(f.rule), tuple(f.records), f.money_at_risk, f.currency) for f in findings}


def test_every_planted_problem_is_found_with_its_records_and_money_and_nothing_clean_is(
    planted: History,
) -> None:
    findings = _findings(planted.engine, planted.scan)

    assert _summary(findings) == EXPECTED
    assert planted.found == len(EXPECTED)
    by_records = {tuple(f.records): f for f in findings}
    # When: the newest record's time; whose: the records' customer.
    assert by_records[("re_dup1", "re_dup2")].occurred_at == T0 + 71 * HOUR
    assert by_records[("cbtxn_1", "cbtxn_2", "cbtxn_3")].customer == "cus_credit"
    assert by_records[("re_cap1", "re_cap2", "re_cap3")].customer == "cus_cap"
    assert by_records[("re_cap1", "re_cap2", "re_cap3")].occurred_at == T0 + 20 * DAY
    for finding in findings:
        assert finding.records_key == records_key(finding.records)


def test_each_reason_says_what_the_check_saw(planted: History) -> None:
    reasons = {
        tuple(f.records): str(Sentence.from_dict(f.reason))
        for f in _findings(planted.engine, planted.scan)
    }

    assert reasons[("re_dup1", "re_dup2")] == (
        "2 refunds of $50.00 on payment pi_dup, each within 72 hours of the one before "
        "(re_dup1, re_dup2): all but the first look like duplicates."
    )
    assert "disputed" in reasons[("re_disputed",)]
    assert reasons[("re_big",)] == (
        "Refund re_big of $250.00 is $50.00 above the draft policy's two-person threshold "
        "of $200.00: one person could not have approved it alone."
    )
    assert "SIXTY (promo_60) takes 60% off" in reasons[("promo_60",)]
    assert "maximum of 50% off" in reasons[("promo_60",)]
    assert reasons[("re_cap1", "re_cap2", "re_cap3")] == (
        "The refund re_cap3 of $1.00 brought customer cus_cap to $301.00 within 30 days, "
        "above the draft policy's per-customer cap of $300.00: $1.00 of it went over the cap."
    )
    assert "made outside Caseward" in reasons[("re_outside",)]
    assert "subscription cancellation sub_outside was made outside" in reasons[("sub_outside",)]
    assert "carries Caseward action id" in reasons[("re_foreign",)]
    assert "the provider reports it failed, so no money moved" in reasons[("re_failed_outside",)]


def test_computing_again_keeps_one_finding_each(planted: History) -> None:
    before = {f.id for f in _findings(planted.engine, planted.scan)}

    with make_session_factory(planted.engine)() as session:
        scan = session.get(HistoryScan, planted.scan.id)
        assert scan is not None
        again = compute_findings(session, scan, POLICY, NOW + DAY)
        session.commit()

    assert again == len(EXPECTED)
    assert {f.id for f in _findings(planted.engine, planted.scan)} == before


def test_another_shops_and_another_scans_records_never_appear(planted: History) -> None:
    ours = _findings(planted.engine, planted.scan)
    theirs = _findings(planted.engine, planted.other_scan)

    assert not planted.other_ids & {record for f in ours for record in f.records}
    assert all(f.shop_id == planted.scan.shop_id for f in ours)
    # The other shop's own history has its own duplicate, and its records name no action.
    assert _summary(theirs) == {
        (Rule.DUPLICATE, ("re_b_dup1", "re_b_dup2"), 900, "usd"),
        *(
            (Rule.UNGUARDED, (record,), amount, "usd")
            for record, amount in (
                ("re_b_far", 5000),
                ("re_b_cap", 100),
                ("re_b_dup1", 900),
                ("re_b_dup2", 900),
            )
        ),
    }
    # A scan nobody computed has no findings, whatever another scan of the shop found.
    assert _findings(planted.engine, planted.same_shop_other_scan) == []


def test_memory_does_not_grow_with_the_history(planted: History) -> None:
    """The rules stream the records: five times the history costs no more memory."""

    def peak(records: int) -> int:
        with make_session_factory(planted.engine)() as session:
            shop = a_shop(session, f"long-{records}")
            scan = a_scan(session, shop)
            keep(
                session,
                scan,
                [
                    # Each refund unguarded, every tenth on a disputed payment.
                    Planted(
                        f"re_{n}",
                        "refund",
                        T0 + n * timedelta(minutes=10),
                        1000 + n,
                        customer=f"cus_{n}",
                        payment=f"pi_{n}",
                        payment_disputed=n % 10 == 0,
                    )
                    for n in range(records)
                ],
            )
            session.commit()
            tracemalloc.start()
            try:
                found = compute_findings(session, scan, POLICY, NOW)
                _, highest = tracemalloc.get_traced_memory()
            finally:
                tracemalloc.stop()
            assert found == records + records // 10
            counted = session.scalar(select(func.count()).where(HistoryFinding.scan_id == scan.id))
            assert counted == found
            session.rollback()
        return highest

    # Both longer than a page of reading and writing (``BATCH``), the second five times.
    short, long = peak(2 * BATCH), peak(10 * BATCH)

    assert long < short * 1.25, (short, long)


def test_where_nothing_names_a_currency_a_finding_has_none_and_nothing_at_risk(
    planted: History,
) -> None:
    """A history of percent discounts and subscription changes only, under a policy that
    names no currency: what is found puts no money at risk, in no currency made up."""
    no_money = PolicyRules(max_percent_off=50)
    with make_session_factory(planted.engine)() as session:
        shop = a_shop(session, "percent-only")
        scan = a_scan(session, shop)
        keep(
            session,
            scan,
            [
                Planted("promo_90", "discount", T0, percent_off=90, currency=None),
                Planted("sub_gone", "subscription_cancel", T0 + HOUR, currency=None),
            ],
        )
        found = compute_findings(session, scan, no_money, NOW)
        session.commit()
        summary = report_summary(session, [scan])

    assert found == 3
    assert _summary(_findings(planted.engine, scan)) == {
        (Rule.LARGE_DISCOUNT, ("promo_90",), 0, None),
        (Rule.UNGUARDED, ("promo_90",), 0, None),
        (Rule.UNGUARDED, ("sub_gone",), 0, None),
    }
    assert summary.findings == {Rule.LARGE_DISCOUNT: 1, Rule.UNGUARDED: 2}
    assert summary.money == {}
