"""Customer credits and discounts: the customer, its balance currency, the terms, duplicates."""

from __future__ import annotations

from datetime import timedelta

from guard_builders import (
    CUSTOMER,
    NOW,
    check,
    customer,
    failed_names,
    in_flight,
    past,
    propose,
    usd,
)

from app.guard import CheckName, Outcome, PolicyRules, Verdict
from app.money import Money
from integrations.provider import (
    ACTION_ID_METADATA_KEY,
    ActionKind,
    CustomerFacts,
    ProviderCredit,
    ProviderDiscount,
)

CREDIT = ActionKind.CUSTOMER_CREDIT
DISCOUNT = ActionKind.DISCOUNT


def credit(amount: Money | None, facts: CustomerFacts | None = None, **kwargs: object) -> Verdict:
    proposal = propose(CREDIT, amount, target=CUSTOMER)
    return check(proposal, facts or customer(), **kwargs)  # type: ignore[arg-type]


def provider_credit(id: str, amount: int, *, ago: timedelta = timedelta(hours=1)) -> ProviderCredit:
    return ProviderCredit(id, amount, "usd", NOW - ago)


# ---------------------------------------------------------------- credits


def test_a_credit_to_a_live_customer_in_its_balance_currency_passes() -> None:
    verdict = credit(usd(1000))

    assert verdict.outcome is Outcome.NEEDS_APPROVAL
    assert verdict.check(CheckName.CURRENCY_MATCHES).reason == (
        "The customer credit and customer cus_ada's balance are both in USD."
    )


def test_a_credit_to_a_missing_or_deleted_customer_is_blocked() -> None:
    assert credit(usd(1000), customer(exists=False)).reasons == (
        "Customer cus_ada was not found at Stripe.",
    )
    assert credit(usd(1000), customer(deleted=True)).reasons == (
        "Customer cus_ada is deleted at Stripe.",
    )


def test_a_credit_in_another_currency_than_the_balance_is_blocked() -> None:
    verdict = credit(Money(1000, "eur"))

    assert verdict.reasons == (
        "The customer credit is in EUR but customer cus_ada's balance is in USD.",
    )


def test_a_first_credit_sets_the_balance_currency() -> None:
    verdict = credit(Money(1000, "eur"), customer(balance_currency=None))

    assert verdict.outcome is Outcome.NEEDS_APPROVAL
    assert verdict.check(CheckName.CURRENCY_MATCHES).reason == (
        "Customer cus_ada has no balance currency yet; this credit sets it to EUR."
    )


def test_a_credit_needs_a_positive_amount() -> None:
    assert credit(None).reasons == (
        "A customer credit needs an amount: how much, in the customer's balance currency.",
    )
    assert credit(usd(-500)).reasons == (
        "A customer credit must be more than zero; the proposal says -$5.00.",
    )


def test_a_same_amount_credit_at_the_provider_within_the_window_is_a_duplicate() -> None:
    facts = customer(credits=[provider_credit("cbtxn_1", -1000), provider_credit("cbtxn_2", 1000)])

    verdict = credit(usd(1000), facts)

    assert verdict.reasons == (
        "A customer credit of $10.00 to customer cus_ada already exists within the last 72 hours "
        "(Stripe balance transaction cbtxn_1); the same amount again looks like a duplicate.",
    )


def test_a_debit_or_an_old_credit_is_not_a_duplicate() -> None:
    facts = customer(
        credits=[
            provider_credit("cbtxn_debit", 1000),
            provider_credit("cbtxn_old", -1000, ago=timedelta(days=4)),
        ]
    )

    assert credit(usd(1000), facts).outcome is Outcome.NEEDS_APPROVAL


def test_our_in_flight_and_past_credits_of_the_same_amount_are_duplicates() -> None:
    verdict = credit(
        usd(1000),
        in_flight=[in_flight("act_2", usd(1000), kind=CREDIT, target=CUSTOMER)],
        history=[past("act_1", usd(1000), kind=CREDIT, target=CUSTOMER)],
    )

    assert verdict.check(CheckName.NOT_DUPLICATE).facts["matches"] == [
        "Caseward action act_2, queued",
        "Caseward action act_1, succeeded",
    ]


def test_a_credit_naming_another_customer_than_its_target_is_blocked() -> None:
    proposal = propose(CREDIT, usd(1000), target=CUSTOMER, customer_ref="cus_bob")

    verdict = check(proposal, customer())

    assert verdict.reasons == (
        "The proposal names customer cus_bob, but the case is about customer cus_ada; a "
        "proposal cannot reach beyond the case's customer.",
    )


def test_a_credit_already_at_the_provider_is_not_sent_again() -> None:
    facts = customer(
        credits=[ProviderCredit("cbtxn_7", -1000, "usd", NOW, {ACTION_ID_METADATA_KEY: "act_7"})]
    )
    proposal = propose(CREDIT, usd(1000), target=CUSTOMER, proposal_id="act_7")

    verdict = check(proposal, facts)

    # The provider's record is the duplicate; our action is not listed a second time.
    assert verdict.check(CheckName.NOT_DUPLICATE).facts["matches"] == [
        "Stripe balance transaction cbtxn_7"
    ]
    assert not verdict.check(CheckName.NOT_ALREADY_AT_PROVIDER).passed


# ---------------------------------------------------------------- discounts


def discount(amount: Money | None, facts: CustomerFacts | None = None, **params: object) -> Verdict:
    proposal = propose(DISCOUNT, amount, target=CUSTOMER, params=params)
    return check(proposal, facts or customer())


def provider_discount(
    id: str, *, percent_off: int | None = None, amount_off: int | None = None
) -> ProviderDiscount:
    currency = None if amount_off is None else "usd"
    return ProviderDiscount(
        id, f"coupon_{id}", f"CODE{id}", percent_off, amount_off, currency, NOW - timedelta(hours=2)
    )


def test_a_percent_discount_with_its_value_at_risk_passes() -> None:
    verdict = discount(usd(3000), percent_off=20, duration="once")

    assert verdict.outcome is Outcome.NEEDS_APPROVAL
    assert verdict.check(CheckName.DISCOUNT_TERMS).reason == (
        "20% off, once, taking off at most $30.00."
    )


def test_an_amount_off_discount_passes() -> None:
    verdict = discount(usd(1000), amount_off=1000, duration="repeating", duration_in_months=3)

    assert verdict.outcome is Outcome.NEEDS_APPROVAL
    assert verdict.check(CheckName.DISCOUNT_TERMS).reason == "$10.00 off, for 3 months."


def test_a_discount_repeating_for_one_month_says_so_in_the_singular() -> None:
    verdict = discount(usd(1000), amount_off=1000, duration="repeating", duration_in_months=1)

    assert verdict.check(CheckName.DISCOUNT_TERMS).reason == "$10.00 off, for 1 month."


def test_a_percent_discount_must_state_its_value_at_risk() -> None:
    verdict = discount(None, percent_off=20, duration="once")

    assert verdict.reasons == (
        "A discount needs an amount: the amount off, or for a percent discount the most it "
        "can take off.",
    )


def test_a_percent_above_the_shops_maximum_is_blocked() -> None:
    verdict = discount(usd(3000), percent_off=60, duration="once")

    assert verdict.reasons == ("A 60% discount is above the shop's maximum of 50% off.",)
    allowed = check(
        propose(
            DISCOUNT, usd(3000), target=CUSTOMER, params={"percent_off": 60, "duration": "once"}
        ),
        customer(),
        policy=PolicyRules(max_percent_off=80),
    )
    assert allowed.outcome is Outcome.NEEDS_APPROVAL


def test_discount_terms_list_every_problem() -> None:
    verdict = discount(usd(3000), percent_off=150, amount_off=True)

    assert verdict.reasons == (
        "Give either percent_off or amount_off, exactly one of them. "
        "percent_off must be a whole number from 1 to 100, not 150. "
        "amount_off must be a positive whole number of minor units, not True. "
        "Say how long the discount lasts: duration once, repeating or forever.",
    )


def test_amount_off_must_match_the_amount_and_repeating_needs_months() -> None:
    verdict = discount(usd(1000), amount_off=999, duration="repeating")

    assert verdict.reasons == (
        "amount_off (999) does not match the amount $10.00 (1000 in minor units). "
        "A repeating discount needs duration_in_months of at least 1.",
    )


def test_a_discount_for_a_missing_customer_is_blocked() -> None:
    verdict = discount(usd(1000), customer(exists=False), amount_off=1000, duration="once")

    assert failed_names(verdict) == ["target_exists"]


def test_a_same_percent_discount_at_the_provider_is_a_duplicate() -> None:
    facts = customer(discounts=[provider_discount("promo_1", percent_off=20)])

    verdict = discount(usd(3000), facts, percent_off=20, duration="once")

    assert verdict.reasons == (
        "A discount of 20% off (at most $30.00) for customer cus_ada already exists within the "
        "last 72 hours (Stripe promotion code CODEpromo_1 (promo_1)); the same amount again "
        "looks like a duplicate.",
    )
    other = discount(usd(3000), facts, percent_off=25, duration="once")
    assert other.outcome is Outcome.NEEDS_APPROVAL


def test_a_same_amount_off_discount_at_the_provider_or_ours_is_a_duplicate() -> None:
    facts = customer(discounts=[provider_discount("promo_1", amount_off=1000)])

    at_provider = discount(usd(1000), facts, amount_off=1000, duration="once")
    ours = check(
        propose(
            DISCOUNT, usd(1000), target=CUSTOMER, params={"amount_off": 1000, "duration": "once"}
        ),
        customer(),
        in_flight=[in_flight("act_2", usd(1000), kind=DISCOUNT, target=CUSTOMER)],
    )

    assert failed_names(at_provider) == ["not_duplicate"]
    assert failed_names(ours) == ["not_duplicate"]
