"""Subscription cancel and change: state, explicit timing, and that a change changes something."""

from __future__ import annotations

from datetime import timedelta

from guard_builders import CUSTOMER, NOW, check, failed_names, propose, usd

from app.guard import CheckName, Outcome, PolicyRules, Verdict
from app.money import Money
from integrations.provider import ActionKind, SubscriptionFacts, SubscriptionItem

CANCEL = ActionKind.SUBSCRIPTION_CANCEL
CHANGE = ActionKind.SUBSCRIPTION_CHANGE
SUB = "sub_linen_club"


def subscription(
    status: str = "active", *, cancel_at_period_end: bool = False, exists: bool = True
) -> SubscriptionFacts:
    return SubscriptionFacts(
        id=SUB,
        exists=exists,
        status=status,
        customer_id=CUSTOMER,
        currency="usd",
        cancel_at_period_end=cancel_at_period_end,
        current_period_end=NOW + timedelta(days=21),
        items=(SubscriptionItem("si_1", "price_monthly", 1),),
    )


def cancel(facts: SubscriptionFacts, amount: Money | None = None, **params: object) -> Verdict:
    return check(propose(CANCEL, amount, target=SUB, params=params), facts)


def change(facts: SubscriptionFacts, **params: object) -> Verdict:
    return check(propose(CHANGE, None, target=SUB, params=params), facts)


# ---------------------------------------------------------------- cancel


def test_cancel_at_period_end_passes_and_names_the_date() -> None:
    verdict = cancel(subscription(), at_period_end=True)

    assert verdict.outcome is Outcome.NEEDS_APPROVAL
    assert verdict.check(CheckName.CANCEL_TIMING).reason == (
        "Subscription sub_linen_club will cancel at the end of the period (2026-03-31)."
    )


def test_cancel_now_says_it_is_final() -> None:
    verdict = cancel(subscription(cancel_at_period_end=True), at_period_end=False)

    assert verdict.outcome is Outcome.NEEDS_APPROVAL
    assert verdict.check(CheckName.CANCEL_TIMING).reason == (
        "Subscription sub_linen_club will be canceled now; this is immediate and final."
    )


def test_cancel_timing_must_be_explicit() -> None:
    missing = cancel(subscription())
    vague = cancel(subscription(), at_period_end="yes")

    assert missing.reasons == (
        "Say whether to cancel now or at the end of the period (at_period_end true or false); "
        "cancelling now is immediate and final.",
    )
    assert vague.reasons == (
        "Say whether to cancel now or at the end of the period (at_period_end true or false) "
        "(the proposal says 'yes'); cancelling now is immediate and final.",
    )


def test_cancelling_at_period_end_twice_changes_nothing() -> None:
    verdict = cancel(subscription(cancel_at_period_end=True), at_period_end=True)

    assert verdict.reasons == (
        "Subscription sub_linen_club is already set to cancel at the end of the period "
        "(2026-03-31); there is nothing to change.",
    )


def test_an_ended_or_missing_subscription_cannot_be_canceled() -> None:
    canceled = cancel(subscription("canceled"), at_period_end=False)
    missing = cancel(subscription(exists=False), at_period_end=False)

    assert canceled.reasons == ("Subscription sub_linen_club has already ended (canceled).",)
    assert missing.reasons == ("Subscription sub_linen_club was not found at Stripe.",)


def test_a_subscription_action_carries_no_amount_and_is_never_auto_approved() -> None:
    with_amount = cancel(subscription(), usd(500), at_period_end=True)
    policy = PolicyRules(auto_approve_ceiling={"usd": 100_000})
    without = check(
        propose(CANCEL, None, target=SUB, params={"at_period_end": True}),
        subscription(),
        policy=policy,
    )

    assert with_amount.reasons == (
        "A subscription cancellation carries no amount; remove $5.00 from the proposal.",
    )
    assert without.outcome is Outcome.NEEDS_APPROVAL
    assert without.approval_reason == (
        "One person must approve: a subscription cancellation is never approved automatically."
    )


# ---------------------------------------------------------------- change


def test_a_change_of_items_passes_and_says_what_changes() -> None:
    verdict = change(subscription("trialing"), items=[("price_yearly", 1)])

    assert verdict.outcome is Outcome.NEEDS_APPROVAL
    assert verdict.check(CheckName.CHANGE_DIFFERS).reason == (
        "The change differs from subscription sub_linen_club as it is: "
        "items price_monthly x 1 → price_yearly x 1."
    )


def test_a_change_to_the_current_state_is_blocked() -> None:
    same_items = change(subscription(), items=[("price_monthly", 1)])
    same_toggle = change(subscription(), cancel_at_period_end=False)

    assert same_items.reasons == (
        "The change matches subscription sub_linen_club as it is (items price_monthly x 1); "
        "there is nothing to change.",
    )
    assert same_toggle.reasons == (
        "The change matches subscription sub_linen_club as it is (cancel_at_period_end false); "
        "there is nothing to change.",
    )


def test_the_toggle_can_be_changed() -> None:
    verdict = change(subscription(cancel_at_period_end=True), cancel_at_period_end=False)

    assert verdict.check(CheckName.CHANGE_DIFFERS).facts["changes"] == [
        "cancel_at_period_end true → false"
    ]


def test_only_active_or_trialing_subscriptions_change() -> None:
    verdict = change(subscription("past_due"), items=[("price_yearly", 1)])

    assert verdict.reasons == (
        "Subscription sub_linen_club is past_due; only active or trialing subscriptions can be "
        "changed.",
    )


def test_a_change_must_say_what_and_say_it_well() -> None:
    nothing = change(subscription())
    zero = change(subscription(), items=[("price_yearly", 0)])
    twice = change(subscription(), items=[("price_yearly", 1), ("price_yearly", 2)])
    vague = change(subscription(), cancel_at_period_end="soon")

    assert nothing.reasons == (
        "Say what to change: items (price and quantity) or cancel_at_period_end.",
    )
    assert zero.reasons == (
        "items must be a list of (price_id, quantity) pairs with a quantity of at least 1.",
    )
    assert twice.reasons == ("Price price_yearly appears twice in items.",)
    assert vague.reasons == ("cancel_at_period_end must be true or false, not 'soon'.",)
    assert "change_differs" not in {c.name for c in zero.checks}


def test_a_subscription_of_another_customer_is_blocked() -> None:
    proposal = propose(
        CHANGE, None, target=SUB, customer_ref="cus_bob", params={"items": [("p", 1)]}
    )

    verdict = check(proposal, subscription())

    assert failed_names(verdict) == ["customer_matches"]
