"""The shop's ceiling for one action of a kind: no single refund, credit or amount-off
discount above it, in the currency it is set in. At the ceiling passes, a minor unit over
blocks, as a failing cap does; where no ceiling is set for the kind and currency, no check
runs at all."""

from __future__ import annotations

from guard_builders import CUSTOMER, check, customer, failed_names, payment, propose, usd

from app.guard import Outcome, PolicyRules
from app.money import Money
from integrations.provider import ActionKind

CEILING = "within_kind_ceiling"
REFUNDS_TO_50 = PolicyRules(kind_ceilings={ActionKind.REFUND: {"usd": 5000}})
AMOUNT_OFF = {"amount_off": 2500, "duration": "once"}


def test_a_refund_at_the_ceiling_passes_and_says_so() -> None:
    verdict = check(propose(amount=usd(5000)), payment(), policy=REFUNDS_TO_50)

    ceiling = verdict.check(CEILING)
    assert ceiling.passed and verdict.outcome is Outcome.NEEDS_APPROVAL
    assert ceiling.reason == (
        "This refund of $50.00 is within the shop's ceiling of $50.00 for one refund."
    )
    assert dict(ceiling.facts) == {"amount": 5000, "ceiling": 5000, "currency": "usd"}


def test_a_refund_one_cent_above_the_ceiling_is_blocked() -> None:
    verdict = check(propose(amount=usd(5001)), payment(), policy=REFUNDS_TO_50)

    assert verdict.outcome is Outcome.BLOCKED
    assert failed_names(verdict) == [CEILING]
    assert verdict.reasons == (
        "This refund of $50.01 is above the shop's ceiling of $50.00 for one refund.",
    )
    assert verdict.check(CEILING).facts["amount"] == 5001


def test_a_yen_ceiling_is_whole_yen() -> None:
    policy = PolicyRules(kind_ceilings={ActionKind.REFUND: {"jpy": 5000}})
    facts = payment(9600, currency="jpy")

    at = check(propose(amount=Money(5000, "jpy")), facts, policy=policy)
    over = check(propose(amount=Money(5001, "jpy")), facts, policy=policy)

    assert at.check(CEILING).passed and at.outcome is Outcome.NEEDS_APPROVAL
    assert failed_names(over) == [CEILING]
    assert over.reasons == (
        "This refund of ¥5,001 is above the shop's ceiling of ¥5,000 for one refund.",
    )


def test_no_check_runs_where_no_ceiling_is_set_for_the_kind_and_currency() -> None:
    refund = propose(amount=usd(9600))
    unset = [
        PolicyRules(),
        PolicyRules(kind_ceilings={ActionKind.REFUND: {"eur": 100}}),
        PolicyRules(kind_ceilings={ActionKind.CUSTOMER_CREDIT: {"usd": 100}}),
    ]

    for policy in unset:
        verdict = check(refund, payment(), policy=policy)
        assert CEILING not in [result.name for result in verdict.checks]
        assert verdict.outcome is Outcome.NEEDS_APPROVAL


def test_a_customer_credit_above_its_ceiling_is_blocked() -> None:
    policy = PolicyRules(kind_ceilings={ActionKind.CUSTOMER_CREDIT: {"usd": 2000}})
    credit = propose(ActionKind.CUSTOMER_CREDIT, usd(2500), target=CUSTOMER)

    verdict = check(credit, customer(), policy=policy)

    assert failed_names(verdict) == [CEILING]
    assert verdict.reasons == (
        "This customer credit of $25.00 is above the shop's ceiling of $20.00 for one "
        "customer credit.",
    )


def test_a_discount_is_held_to_the_ceiling_by_its_amount_off_and_a_percent_one_by_its_percent() -> (
    None
):
    policy = PolicyRules(kind_ceilings={ActionKind.DISCOUNT: {"usd": 2000}})
    amount_off = propose(ActionKind.DISCOUNT, usd(2500), target=CUSTOMER, params=AMOUNT_OFF)
    percent = propose(
        ActionKind.DISCOUNT,
        usd(2500),
        target=CUSTOMER,
        params={"percent_off": 20, "duration": "once"},
    )

    assert failed_names(check(amount_off, customer(), policy=policy)) == [CEILING]
    by_percent = check(percent, customer(), policy=policy)
    assert by_percent.outcome is Outcome.NEEDS_APPROVAL
    assert CEILING not in [result.name for result in by_percent.checks]
