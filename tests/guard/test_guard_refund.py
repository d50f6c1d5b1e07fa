"""Refund checks, starting from the linen shop: a $96 order of two $48 aprons."""

from __future__ import annotations

from datetime import timedelta

import pytest
from guard_builders import (
    NOW,
    PAYMENT,
    aprons,
    check,
    failed_names,
    in_flight,
    past,
    payment,
    propose,
    provider_refund,
    usd,
)

from app.guard import CheckName, InFlightStatus, Outcome, PolicyRules, Verdict
from app.money import Money
from integrations.provider import ProviderStatus

# ---------------------------------------------------------------- the seed story


def test_agreed_48_dollar_refund_for_one_apron_passes() -> None:
    verdict = check(propose(amount=usd(4800), lines=[("apron-1", 4800)]), payment(), order=aprons())

    assert verdict.outcome is Outcome.NEEDS_APPROVAL
    assert verdict.failed == ()
    assert verdict.approvals_required == 1
    remaining = verdict.check(CheckName.REFUNDABLE_REMAINING)
    assert remaining.reason == (
        "Refund of $48.00 fits in what is left to refund "
        "($96.00 of $96.00 captured: $0.00 refunded, $0.00 in flight)."
    )
    assert dict(remaining.facts) == {
        "currency": "usd",
        "captured": 9600,
        "refunded": 0,
        "in_flight": 0,
        "remaining": 9600,
        "requested": 4800,
        "in_flight_actions": [],
        "ours_at_provider": [],
    }
    assert verdict.check(CheckName.LINE_ITEMS).reason == (
        "Each line fits in what is left for it: Linen apron (line apron-1) $48.00 of $48.00 left."
    )


def _after_first_refund(apron: str) -> Verdict:
    """Caseward refunded apron-1 at Stripe an hour ago (the store does not know); ask again."""
    return check(
        propose(amount=usd(4800), lines=[(apron, 4800)]),
        payment(refunds=[provider_refund("re_1", 4800, action_id="act_1")]),
        history=[past("act_1", usd(4800), ago=timedelta(hours=1), lines=[("apron-1", 4800)])],
        order=aprons(),
    )


def test_second_48_dollar_refund_of_the_same_apron_is_a_duplicate_and_over_the_line() -> None:
    verdict = _after_first_refund("apron-1")

    assert verdict.outcome is Outcome.BLOCKED
    assert failed_names(verdict) == ["not_duplicate", "line_items"]
    assert verdict.reasons == (
        "A refund of $48.00 on payment pi_linen already exists within the last 72 hours "
        "(Stripe refund re_1, succeeded); the same amount again looks like a duplicate.",
        "Refund of $48.00 for Linen apron (line apron-1) exceeds what is left for that line "
        "($0.00 of $48.00 paid: $48.00 refunded, $0.00 in flight).",
    )
    # The payment as a whole still has $48 left: the line is what is exhausted.
    assert verdict.check(CheckName.REFUNDABLE_REMAINING).passed


def test_second_48_dollar_refund_of_the_other_apron_is_only_a_duplicate() -> None:
    assert failed_names(_after_first_refund("apron-2")) == ["not_duplicate"]


def test_refund_of_a_fully_refunded_payment_names_captured_refunded_and_in_flight() -> None:
    refunds = [
        provider_refund("re_1", 4800, ago=timedelta(days=5)),
        provider_refund("re_2", 4800, ago=timedelta(days=4)),
    ]
    verdict = check(propose(amount=usd(4800)), payment(refunds=refunds))

    assert failed_names(verdict) == ["refundable_remaining"]
    assert verdict.reasons == (
        "Refund of $48.00 exceeds what is left to refund "
        "($0.00 of $96.00 captured: $96.00 refunded, $0.00 in flight).",
    )


# ---------------------------------------------------------------- what is left


def test_partial_refunds_add_up_and_failed_ones_give_the_money_back() -> None:
    refunds = [
        provider_refund("re_1", 3000, ago=timedelta(days=5)),
        provider_refund("re_2", 2000, status=ProviderStatus.PENDING, ago=timedelta(days=4)),
        provider_refund("re_3", 4600, status=ProviderStatus.FAILED, ago=timedelta(days=4)),
        provider_refund("re_4", 1000, status=ProviderStatus.CANCELED, ago=timedelta(days=4)),
    ]
    facts = payment(refunds=refunds)

    assert check(propose(amount=usd(4600)), facts).outcome is Outcome.NEEDS_APPROVAL
    over = check(propose(amount=usd(4601)), facts)
    assert over.reasons == (
        "Refund of $46.01 exceeds what is left to refund "
        "($46.00 of $96.00 captured: $50.00 refunded, $0.00 in flight).",
    )


def test_our_in_flight_refunds_on_the_payment_count_against_what_is_left() -> None:
    ours = [
        in_flight("act_2", usd(3000), status=InFlightStatus.SUBMITTED),
        in_flight("act_3", usd(1000), status=InFlightStatus.UNKNOWN),
        in_flight("act_4", usd(9600), target="pi_other"),  # another payment
    ]

    passes = check(propose(amount=usd(5600)), payment(), in_flight=ours)
    blocked = check(propose(amount=usd(5700)), payment(), in_flight=ours)

    assert passes.outcome is Outcome.NEEDS_APPROVAL
    assert blocked.reasons == (
        "Refund of $57.00 exceeds what is left to refund "
        "($56.00 of $96.00 captured: $0.00 refunded, $40.00 in flight).",
    )
    assert blocked.check(CheckName.REFUNDABLE_REMAINING).facts["in_flight_actions"] == [
        "act_2",
        "act_3",
    ]


def test_an_in_flight_action_already_at_the_provider_is_counted_once() -> None:
    """Submitted, and Stripe already lists its refund: the provider's record is the one counted."""
    facts = payment(
        refunds=[provider_refund("re_2", 5000, action_id="act_2", ago=timedelta(days=4))]
    )
    ours = [in_flight("act_2", usd(5000), status=InFlightStatus.SUBMITTED)]

    verdict = check(propose(amount=usd(4600)), facts, in_flight=ours)

    assert verdict.outcome is Outcome.NEEDS_APPROVAL
    assert verdict.check(CheckName.REFUNDABLE_REMAINING).reason == (
        "Refund of $46.00 fits in what is left to refund "
        "($46.00 of $96.00 captured: $50.00 refunded, $0.00 in flight)."
    )


def test_an_unrelated_provider_refund_of_the_same_size_still_adds_to_ours_in_flight() -> None:
    facts = payment(refunds=[provider_refund("re_x", 5000, action_id="someone_else")])
    ours = [in_flight("act_2", usd(5000), status=InFlightStatus.SUBMITTED)]

    verdict = check(propose(amount=usd(4600)), facts, in_flight=ours)

    assert "refundable_remaining" in failed_names(verdict)


def test_an_in_flight_action_whose_provider_refund_failed_counts_for_nothing() -> None:
    facts = payment(
        refunds=[provider_refund("re_2", 9600, action_id="act_2", status=ProviderStatus.FAILED)]
    )
    ours = [in_flight("act_2", usd(9600), status=InFlightStatus.UNKNOWN)]

    verdict = check(propose(amount=usd(9600)), facts, in_flight=ours)

    assert verdict.outcome is Outcome.NEEDS_APPROVAL


def test_the_worker_recheck_leaves_the_action_itself_out_of_in_flight() -> None:
    ours = [in_flight("act_7", usd(9600), status=InFlightStatus.QUEUED)]

    verdict = check(propose(amount=usd(9600), proposal_id="act_7"), payment(), in_flight=ours)

    assert verdict.outcome is Outcome.NEEDS_APPROVAL
    assert verdict.check(CheckName.NOT_ALREADY_AT_PROVIDER).passed


def test_the_worker_recheck_blocks_an_action_whose_write_already_landed() -> None:
    facts = payment(refunds=[provider_refund("re_7", 4800, action_id="act_7")])

    verdict = check(propose(amount=usd(4800), proposal_id="act_7"), facts)

    assert verdict.check(CheckName.NOT_ALREADY_AT_PROVIDER).reason == (
        "This action already reached Stripe: refund re_7 carries its id act_7. "
        "Look up its result instead of sending it again."
    )


def test_an_in_flight_refund_without_an_amount_leaves_nothing() -> None:
    verdict = check(propose(amount=usd(100)), payment(), in_flight=[in_flight("act_2", None)])

    assert "refundable_remaining" in failed_names(verdict)


# ---------------------------------------------------------------- the payment


def test_missing_payment_is_blocked_without_noise_from_checks_that_need_it() -> None:
    verdict = check(propose(amount=usd(4800)), payment(exists=False))

    assert failed_names(verdict) == ["target_exists"]
    assert verdict.reasons == ("Payment pi_linen was not found at Stripe.",)
    assert CheckName.REFUNDABLE_REMAINING not in {c.name for c in verdict.checks}


def test_facts_about_another_payment_are_refused() -> None:
    verdict = check(propose(amount=usd(4800)), payment(id="pi_other"))

    assert verdict.reasons == (
        "The facts read from Stripe are for pi_other, not for pi_linen, "
        "the payment this refund targets.",
    )


def test_uncaptured_payment_is_blocked() -> None:
    verdict = check(propose(amount=usd(4800)), payment(captured=0))

    assert verdict.check(CheckName.CAPTURED).reason == (
        "Payment pi_linen has captured nothing yet, so there is nothing to refund."
    )


def test_disputed_payment_is_blocked() -> None:
    verdict = check(propose(amount=usd(4800)), payment(disputed=True))

    assert failed_names(verdict) == ["not_disputed"]
    assert verdict.reasons == (
        "Payment pi_linen is disputed; a refund has to wait until the dispute is closed.",
    )


def test_currency_mismatch_is_blocked_and_amounts_are_not_compared_across_currencies() -> None:
    verdict = check(propose(amount=Money(4800, "eur")), payment())

    assert failed_names(verdict) == ["currency_matches"]
    assert verdict.reasons == ("The refund is in EUR but payment pi_linen is in USD.",)
    assert CheckName.REFUNDABLE_REMAINING not in {c.name for c in verdict.checks}


def test_payment_of_another_customer_is_blocked() -> None:
    verdict = check(propose(amount=usd(4800)), payment(customer_id="cus_bob"))

    assert verdict.reasons == (
        "Payment pi_linen belongs to customer cus_bob, not to the case's customer cus_ada.",
    )


def test_zero_and_missing_amounts_are_blocked() -> None:
    zero = check(propose(amount=usd(0)), payment())
    missing = check(propose(amount=None), payment())

    assert zero.reasons == ("A refund must be more than zero; the proposal says $0.00.",)
    assert missing.reasons == ("A refund needs an amount: how much, in the payment's currency.",)


def test_yen_amounts_have_no_decimals_in_reasons() -> None:
    facts = payment(5000, currency="jpy", refunds=[provider_refund("re_1", 4500, currency="jpy")])

    verdict = check(propose(amount=Money(600, "jpy")), facts)

    assert verdict.reasons == (
        "Refund of ¥600 exceeds what is left to refund "
        "(¥500 of ¥5,000 captured: ¥4,500 refunded, ¥0 in flight).",
    )


def test_dinar_amounts_have_three_decimals_in_reasons() -> None:
    facts = payment(12500, currency="kwd", refunds=[provider_refund("re_1", 10000, currency="kwd")])

    verdict = check(propose(amount=Money(2501, "kwd")), facts)

    assert verdict.reasons == (
        "Refund of KWD2.501 exceeds what is left to refund "
        "(KWD2.500 of KWD12.500 captured: KWD10.000 refunded, KWD0.000 in flight).",
    )


# ---------------------------------------------------------------- duplicates


def test_a_same_amount_refund_from_any_origin_within_the_window_is_a_duplicate() -> None:
    facts = payment(refunds=[provider_refund("re_dash", 1500, status=ProviderStatus.PENDING)])

    verdict = check(propose(amount=usd(1500)), facts)

    assert failed_names(verdict) == ["not_duplicate"]
    assert verdict.check(CheckName.NOT_DUPLICATE).facts["matches"] == [
        "Stripe refund re_dash, pending"
    ]


def test_a_same_amount_refund_outside_the_window_or_failed_is_not_a_duplicate() -> None:
    facts = payment(
        refunds=[
            provider_refund("re_old", 1500, ago=timedelta(hours=73)),
            provider_refund("re_failed", 1500, status=ProviderStatus.FAILED),
        ]
    )

    verdict = check(propose(amount=usd(1500)), facts)

    assert verdict.check(CheckName.NOT_DUPLICATE).reason == (
        "No refund of $15.00 on payment pi_linen in the last 72 hours."
    )


def test_our_in_flight_and_past_refunds_of_the_same_amount_are_duplicates() -> None:
    verdict = check(
        propose(amount=usd(1500)),
        payment(),
        in_flight=[in_flight("act_2", usd(1500))],
        history=[
            past("act_1", usd(1500), ago=timedelta(hours=10)),
            past("act_0", usd(1500), status=ProviderStatus.FAILED),
            past("act_9", usd(1500), ago=timedelta(days=5)),
        ],
    )

    assert verdict.check(CheckName.NOT_DUPLICATE).facts["matches"] == [
        "Caseward action act_2, queued",
        "Caseward action act_1, succeeded",
    ]


def test_the_duplicate_window_comes_from_the_policy() -> None:
    facts = payment(refunds=[provider_refund("re_1", 1500, ago=timedelta(hours=30))])
    policy = PolicyRules(duplicate_window=timedelta(hours=24))

    verdict = check(propose(amount=usd(1500)), facts, policy=policy)

    assert verdict.check(CheckName.NOT_DUPLICATE).passed


# ---------------------------------------------------------------- line items


def test_line_refunds_need_the_order() -> None:
    verdict = check(propose(amount=usd(4800), lines=[("apron-1", 4800)]), payment())

    assert verdict.reasons == (
        "Refunds split by line need the store order, and none was found for payment pi_linen.",
    )


def test_lines_must_exist_appear_once_and_add_up_to_the_refund() -> None:
    verdict = check(
        propose(amount=usd(4800), lines=[("apron-1", 1000), ("apron-1", 1000), ("scarf", 500)]),
        payment(),
        order=aprons(),
    )

    assert verdict.reasons == (
        "Line apron-1 appears twice in the proposal. Line scarf is not on order #1001. "
        "The line amounts add up to $25.00 but the refund is $48.00.",
    )


def test_a_line_in_flight_counts_against_that_line() -> None:
    verdict = check(
        propose(amount=usd(4800), lines=[("apron-1", 4800)]),
        payment(),
        order=aprons(),
        in_flight=[in_flight("act_2", usd(2000), lines=[("apron-1", 2000)])],
    )

    assert "Refund of $48.00 for Linen apron (line apron-1) exceeds what is left for that " in (
        verdict.check(CheckName.LINE_ITEMS).reason
    )
    assert verdict.check(CheckName.LINE_ITEMS).reason.endswith(
        "($28.00 of $48.00 paid: $0.00 refunded, $20.00 in flight)."
    )


def test_the_stores_line_refunds_and_ours_are_not_added_together() -> None:
    """The store already shows our $20 refund of apron-1: $28 is left, not $8."""
    facts = payment(
        refunds=[provider_refund("re_1", 2000, action_id="act_1", ago=timedelta(days=4))]
    )
    history = [past("act_1", usd(2000), ago=timedelta(days=4), lines=[("apron-1", 2000)])]

    fits = check(
        propose(amount=usd(2800), lines=[("apron-1", 2800)]),
        facts,
        order=aprons(refunded=(2000, 0)),
        history=history,
    )

    assert fits.outcome is Outcome.NEEDS_APPROVAL


def test_a_line_refund_in_another_currency_than_the_order_is_blocked() -> None:
    verdict = check(
        propose(amount=usd(4800), lines=[("apron-1", 4800)]),
        payment(),
        order=aprons(currency="eur"),
    )

    assert verdict.check(CheckName.LINE_ITEMS).reason == (
        "Order #1001 is in EUR but the refund is in USD."
    )


def test_an_order_paid_with_another_payment_is_blocked() -> None:
    verdict = check(propose(amount=usd(4800)), payment(), order=aprons(payment_id="pi_other"))

    assert verdict.reasons == (
        "Order #1001 was paid with pi_other, not with pi_linen, the payment this refund targets.",
    )


# ---------------------------------------------------------------- refund window


def test_refund_window_counts_from_delivery() -> None:
    policy = PolicyRules(refund_window_days=30)

    open_ = check(propose(amount=usd(4800)), payment(), order=aprons(), policy=policy)
    closed = check(
        propose(amount=usd(4800)),
        payment(),
        order=aprons(delivered_ago=timedelta(days=31)),
        policy=policy,
    )

    assert open_.check(CheckName.REFUND_WINDOW).reason == (
        "Order #1001 was delivered on 2026-03-07; the 30-day refund window is open until "
        "2026-04-06."
    )
    assert closed.reasons == (
        "Order #1001 was delivered on 2026-02-07; the 30-day refund window closed on 2026-03-09.",
    )


def test_refund_window_falls_back_to_fulfilment_and_waits_for_it() -> None:
    policy = PolicyRules(refund_window_days=3)
    fulfilled = aprons(delivered_ago=None, fulfilled_ago=timedelta(days=4))
    unfulfilled = aprons(delivered_ago=None, fulfilled_ago=None)

    late = check(propose(amount=usd(4800)), payment(), order=fulfilled, policy=policy)
    early = check(propose(amount=usd(4800)), payment(), order=unfulfilled, policy=policy)

    assert late.reasons == (
        "Order #1001 was fulfilled on 2026-03-06; the 3-day refund window closed on 2026-03-09.",
    )
    assert early.check(CheckName.REFUND_WINDOW).reason == (
        "Order #1001 has not been fulfilled yet, so the 3-day refund window has not started."
    )


@pytest.mark.parametrize(("days", "within"), [(30, "30 days"), (1, "1 day")])
def test_refund_window_without_the_order_is_blocked(days: int, within: str) -> None:
    policy = PolicyRules(refund_window_days=days)
    verdict = check(propose(amount=usd(4800)), payment(), policy=policy)

    assert verdict.reasons == (
        f"The shop's policy allows refunds within {within} of delivery, and no store order was "
        f"found for payment {PAYMENT} to tell when it was delivered.",
    )


def test_refund_window_closes_exactly_at_the_end() -> None:
    policy = PolicyRules(refund_window_days=3)
    order = aprons(delivered_ago=timedelta(days=3))

    at_end = check(propose(amount=usd(4800)), payment(), order=order, policy=policy)
    after = check(
        propose(amount=usd(4800)),
        payment(),
        order=order,
        policy=policy,
        now=NOW + timedelta(seconds=1),
    )

    assert at_end.check(CheckName.REFUND_WINDOW).passed
    assert not after.check(CheckName.REFUND_WINDOW).passed
