"""A money action reaches only the case's customer: the customer comes from the case,
never from the proposal, and every missing link blocks."""

from __future__ import annotations

from guard_builders import CUSTOMER, check, customer, failed_names, payment, propose, usd

from app.guard import CheckName
from integrations.provider import ActionKind, SubscriptionFacts

SUB = "sub_linen"


def test_a_payment_of_another_customer_is_blocked_even_when_the_proposal_names_them() -> None:
    # The proposal tries to widen the case to the payment's owner: it may not.
    verdict = check(
        propose(amount=usd(4800), customer_ref="cus_bob"), payment(customer_id="cus_bob")
    )

    result = verdict.check(CheckName.CUSTOMER_MATCHES)
    assert not result.passed
    assert result.reason == (
        "The proposal names customer cus_bob, but the case is about customer cus_ada; a "
        "proposal cannot reach beyond the case's customer."
    )
    assert verdict.outcome == "blocked"


def test_a_proposal_naming_the_cases_customer_narrows_and_passes() -> None:
    verdict = check(propose(amount=usd(4800), customer_ref=CUSTOMER), payment())

    assert verdict.check(CheckName.CUSTOMER_MATCHES).passed
    assert verdict.outcome != "blocked"


def test_a_proposal_naming_no_customer_is_bound_to_the_cases() -> None:
    other = check(propose(amount=usd(4800), customer_ref=None), payment(customer_id="cus_bob"))
    own = check(propose(amount=usd(4800), customer_ref=None), payment())

    assert other.check(CheckName.CUSTOMER_MATCHES).reason == (
        "Payment pi_linen belongs to customer cus_bob, not to the case's customer cus_ada."
    )
    assert own.check(CheckName.CUSTOMER_MATCHES).passed


def test_a_case_whose_customer_has_no_provider_identity_moves_no_money() -> None:
    verdict = check(propose(amount=usd(4800), customer_ref=None, case_customer=None), payment())

    assert verdict.check(CheckName.CUSTOMER_MATCHES).reason == (
        "The case's customer has no Stripe customer linked, so nothing ties Payment pi_linen "
        "to them; link the customer's Stripe account to the case first."
    )
    assert verdict.outcome == "blocked"


def test_a_payment_with_no_owner_on_record_is_blocked() -> None:
    verdict = check(propose(amount=usd(4800)), payment(customer_id=None))

    assert verdict.check(CheckName.CUSTOMER_MATCHES).reason == (
        "Payment pi_linen has no customer on record at Stripe, so it cannot be shown to belong "
        "to the case's customer cus_ada."
    )


def test_a_credit_to_another_customer_than_the_cases_is_blocked() -> None:
    verdict = check(
        propose(ActionKind.CUSTOMER_CREDIT, usd(1000), target="cus_bob", customer_ref="cus_bob"),
        customer(id="cus_bob"),
    )

    assert "customer_matches" in failed_names(verdict)


def test_a_subscription_of_another_customer_names_both_customers() -> None:
    verdict = check(
        propose(
            ActionKind.SUBSCRIPTION_CANCEL,
            None,
            target=SUB,
            customer_ref=None,
            params={"at_period_end": True},
        ),
        SubscriptionFacts(id=SUB, exists=True, status="active", customer_id="cus_bob"),
    )

    assert verdict.check(CheckName.CUSTOMER_MATCHES).reason == (
        f"Subscription {SUB} belongs to customer cus_bob, not to the case's customer cus_ada."
    )
