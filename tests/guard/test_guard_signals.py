"""Abuse signals: checks that ask a person to decide and never block. Each is raised at its
threshold and not a step before, names its facts, keeps a proposal the policy would approve
itself in front of a person, and waits, saying so, while the shop has too little history
for the signals that read its past."""

from __future__ import annotations

from dataclasses import replace
from datetime import timedelta
from typing import Any

import pytest
from guard_builders import CUSTOMER, NOW, WRITABLE, aprons, check, customer, payment, propose, usd

from app.guard import (
    CheckResult,
    CustomerRecord,
    Outcome,
    PolicyError,
    PolicyRules,
    SignalRules,
    Verdict,
    evaluate,
)
from app.guard.verdict import CheckName
from app.words import WORDS
from integrations.provider import ActionKind, OrderFacts, Shipment

# A shop with history enough for every signal, and a customer with nothing against them.
SEEN = CustomerRecord(
    shop_actions=30,
    orders=4,
    first_order_at=NOW - timedelta(days=400),
    spend={"usd": 40_000},
)
# The policy approves a refund of up to $100.00 itself.
CEILING = {"usd": 10_000}


def signals(**rules: Any) -> PolicyRules:
    return PolicyRules(auto_approve_ceiling=CEILING, signals=SignalRules(**rules))


def checked(
    record: CustomerRecord,
    *,
    policy: PolicyRules | None = None,
    amount: int = 4800,
    order: OrderFacts | None = None,
) -> Verdict:
    return evaluate(
        propose(amount=usd(amount)),
        payment(),
        policy=policy or signals(),
        switches=WRITABLE,
        in_flight=(),
        history=(),
        order=order or aprons(),
        record=record,
        now=NOW,
    )


def signal(verdict: Verdict, name: str) -> CheckResult:
    result = verdict.check(name)
    assert result.escalates
    return result


def raised(verdict: Verdict) -> list[str]:
    return [str(check.name) for check in verdict.signals]


# ---------------------------------------------------------------- what a signal does


def test_a_raised_signal_keeps_a_refund_the_policy_would_approve_in_front_of_one_person() -> None:
    verdict = checked(replace(SEEN, claims=3))

    assert raised(verdict) == ["repeat_claims"]
    assert verdict.outcome is Outcome.NEEDS_APPROVAL
    assert verdict.approvals_required == 1
    assert verdict.failed == () and verdict.reasons == ()
    assert verdict.approval_reason == (
        "One person must approve: 1 signal asks for a person's judgement, whatever the "
        "auto-approve ceiling."
    )


def test_without_a_signal_the_same_refund_is_approved_by_the_policy() -> None:
    verdict = checked(replace(SEEN, claims=2))

    assert raised(verdict) == []
    assert verdict.outcome is Outcome.ALLOWED_BY_POLICY


def test_a_signal_never_blocks_and_a_failing_check_still_does() -> None:
    record = replace(SEEN, claims=5, says_not_received=True)
    blocked = checked(record, amount=9601)  # more than the payment captured

    assert blocked.outcome is Outcome.BLOCKED
    assert [check.name for check in blocked.failed] == ["refundable_remaining"]
    assert raised(blocked) == ["repeat_claims", "delivered_but_not_received"]
    assert blocked.approval_reason == (
        f"Nobody can approve this while 1 of {len(blocked.checks)} checks fail."
    )


def test_signals_ask_for_a_second_person_only_above_the_two_person_threshold() -> None:
    policy = replace(signals(), two_person_threshold={"usd": 4000})

    above = checked(replace(SEEN, claims=3), policy=policy, amount=4800)
    below = checked(replace(SEEN, claims=3), policy=policy, amount=4000)

    assert (above.approvals_required, below.approvals_required) == (2, 1)
    assert above.approval_reason == (
        "Two people must approve: $48.00 is above the two-person threshold of $40.00. "
        "1 signal asks for a person's judgement, whatever the auto-approve ceiling."
    )


def test_several_signals_are_counted_in_the_reason() -> None:
    verdict = checked(replace(SEEN, claims=3, sharing_email=("c-2",)))

    assert raised(verdict) == ["repeat_claims", "shared_email"]
    assert verdict.approval_reason.startswith(
        "One person must approve: 2 signals ask for a person's judgement"
    )


def test_no_signal_runs_without_the_customer_record_or_on_a_discount() -> None:
    without = check(propose(amount=usd(4800)), payment(), order=aprons())
    discount = evaluate(
        propose(
            ActionKind.DISCOUNT,
            usd(2000),
            target=CUSTOMER,
            params={"amount_off": 2000, "duration": "once"},
        ),
        customer(),
        policy=signals(),
        switches=WRITABLE,
        in_flight=(),
        history=(),
        record=replace(SEEN, claims=9),
        now=NOW,
    )

    for verdict in (without, discount):
        assert not [check for check in verdict.checks if check.escalates]


def test_a_credit_meets_the_signals_that_need_no_order() -> None:
    verdict = evaluate(
        propose(ActionKind.CUSTOMER_CREDIT, usd(2000), target=CUSTOMER),
        customer(),
        policy=signals(),
        switches=WRITABLE,
        in_flight=(),
        history=(),
        record=replace(SEEN, claims=3, says_not_received=True),
        now=NOW,
    )

    names = [check.name for check in verdict.checks if check.escalates]
    assert names == ["repeat_claims", "shared_email"]
    assert raised(verdict) == ["repeat_claims"]


def test_a_stored_signal_reads_back_as_a_signal_and_older_checks_as_they_were() -> None:
    verdict = checked(replace(SEEN, claims=3))
    stored = verdict.to_dict()

    again = Verdict.from_dict(stored)

    assert again == verdict
    assert [check.name for check in again.signals] == ["repeat_claims"]
    by_name = {check["name"]: check for check in stored["checks"]}
    assert by_name["repeat_claims"]["escalates"] is True
    assert "escalates" not in by_name["captured"]


# ---------------------------------------------------------------- repeat claims


@pytest.mark.parametrize(("claims", "raised_now"), [(2, False), (3, True)])
def test_repeat_claims_are_raised_from_the_count_the_policy_sets(
    claims: int, raised_now: bool
) -> None:
    result = signal(checked(replace(SEEN, claims=claims)), "repeat_claims")

    assert result.passed is not raised_now
    assert result.facts["claims"] == claims and result.facts["repeat_claims"] == 3


def test_repeat_claims_say_the_count_and_the_share_of_what_was_spent() -> None:
    record = replace(SEEN, claims=3, refunded={"usd": 12_000}, spend={"usd": 19_200})

    result = signal(checked(record), "repeat_claims")

    assert result.reason == (
        "This customer already had 3 refunds or credits in the last 90 days; from 3, a person "
        "decides. Refunds and credits to this customer in the last 90 days come to $120.00, 63% "
        "of the $192.00 they spent; above 50%, a person decides."
    )
    assert dict(result.facts) == {
        "claims": 3,
        "refunded": 12_000,
        "spend": 19_200,
        "percent": 63,
        "currency": "usd",
        "window_days": 90,
        "repeat_claims": 3,
        "repeat_claims_percent": 50,
    }


@pytest.mark.parametrize(("refunded", "raised_now"), [(9_600, False), (9_601, True)])
def test_repeat_claims_are_raised_above_the_share_not_at_it(
    refunded: int, raised_now: bool
) -> None:
    record = replace(SEEN, claims=1, refunded={"usd": refunded}, spend={"usd": 19_200})

    result = signal(checked(record), "repeat_claims")

    assert result.passed is not raised_now
    assert result.facts["percent"] == (50 if refunded == 9_600 else 51)


def test_the_share_is_of_what_was_spent_in_the_refunds_currency() -> None:
    record = replace(SEEN, claims=1, refunded={"eur": 50_000}, spend={"usd": 1_000})

    result = signal(checked(record), "repeat_claims")

    assert result.passed
    assert result.reason == (
        "This customer had 1 refund or credit in the last 90 days, $0.00 of the $10.00 they spent."
    )


def test_repeat_claims_by_share_alone_when_the_count_is_off() -> None:
    policy = signals(repeat_claims=None)
    record = replace(SEEN, claims=8, refunded={"usd": 100}, spend={"usd": 40_000})

    assert signal(checked(record, policy=policy), "repeat_claims").passed


# ---------------------------------------------------------------- the order at hand


@pytest.mark.parametrize(("days", "raised_now"), [(60, False), (61, True)])
def test_a_claim_long_after_delivery_is_raised_past_the_days_the_policy_sets(
    days: int, raised_now: bool
) -> None:
    result = signal(checked(SEEN, order=aprons(delivered_ago=timedelta(days=days))), "old_delivery")

    assert result.passed is not raised_now
    assert result.facts["days_since_delivery"] == days
    if raised_now:
        assert result.reason == (
            "Order #1001 was delivered on 2026-01-08, more than 60 days before this claim."
        )


def test_no_delivery_on_record_is_no_old_delivery() -> None:
    verdict = checked(SEEN, order=aprons(delivered_ago=None))

    with pytest.raises(KeyError):
        verdict.check("old_delivery")


def test_never_arrived_on_a_shipment_marked_delivered_is_raised_with_its_facts() -> None:
    result = signal(checked(replace(SEEN, says_not_received=True)), "delivered_but_not_received")

    assert not result.passed
    assert result.reason == (
        "The customer says an order never arrived, but the shipment of order #1001 was marked "
        "delivered on 2026-03-07."
    )
    assert dict(result.facts) == {
        "order": "#1001",
        "says_not_received": True,
        "delivered_at": "2026-03-07T12:00:00+00:00",
    }


def test_a_carriers_delivered_shipment_counts_where_the_order_says_nothing() -> None:
    order = replace(
        aprons(delivered_ago=None),
        shipments=(
            Shipment("delivered", "UPS", delivered_at=NOW - timedelta(days=2)),
            Shipment("in_transit", "UPS"),
        ),
    )

    verdict = checked(replace(SEEN, says_not_received=True), order=order)

    assert raised(verdict) == ["delivered_but_not_received"]


@pytest.mark.parametrize(
    ("says", "delivered_ago"), [(False, timedelta(days=3)), (True, None)], ids=["quiet", "transit"]
)
def test_never_arrived_is_not_raised_unless_both_the_words_and_the_delivery_are_there(
    says: bool, delivered_ago: timedelta | None
) -> None:
    verdict = checked(
        replace(SEEN, says_not_received=says), order=aprons(delivered_ago=delivered_ago)
    )

    assert signal(verdict, "delivered_but_not_received").passed


# ---------------------------------------------------------------- new customers


NEW_OVER_50 = {"new_customer_amount": {"usd": 5000}}


@pytest.mark.parametrize(("amount", "raised_now"), [(5000, False), (5001, True)])
def test_a_new_customer_asking_above_the_amount_is_raised(amount: int, raised_now: bool) -> None:
    record = replace(SEEN, orders=1, first_order_at=NOW - timedelta(days=3))

    result = signal(
        checked(record, policy=signals(**NEW_OVER_50), amount=amount), "new_customer_high_value"
    )

    assert result.passed is not raised_now
    if raised_now:
        assert result.reason == (
            "This customer has 1 order on record, and asks for $50.01: above $50.00, a new "
            "customer's claim goes to a person."
        )


@pytest.mark.parametrize(("age", "raised_now"), [(29, True), (30, False)])
def test_a_customer_is_new_while_their_first_order_is_younger_than_the_days(
    age: int, raised_now: bool
) -> None:
    record = replace(SEEN, orders=3, first_order_at=NOW - timedelta(days=age))

    result = signal(
        checked(record, policy=signals(**NEW_OVER_50), amount=6000), "new_customer_high_value"
    )

    assert result.passed is not raised_now
    assert result.facts["orders"] == 3


def test_no_amount_for_the_currency_is_no_new_customer_signal() -> None:
    record = replace(SEEN, orders=1)

    verdict = checked(record, policy=signals(new_customer_amount={"eur": 100}), amount=6000)

    assert "new_customer_high_value" not in [check.name for check in verdict.checks]


# ---------------------------------------------------------------- shared email


def test_another_customer_refunded_under_the_same_email_is_raised_by_default() -> None:
    result = signal(checked(replace(SEEN, sharing_email=("c-2",))), "shared_email")

    assert not result.passed
    assert result.reason == (
        "1 other customer refunded in the last 90 days uses this customer's email address."
    )
    assert result.facts["other_customers"] == ["c-2"]


def test_shared_email_counts_up_to_the_policys_number() -> None:
    policy = signals(shared_email_customers=2)

    one = signal(checked(replace(SEEN, sharing_email=("c-2",)), policy=policy), "shared_email")
    two = signal(
        checked(replace(SEEN, sharing_email=("c-2", "c-3")), policy=policy), "shared_email"
    )

    assert one.passed and not two.passed


# ---------------------------------------------------------------- little history, off


def test_with_little_history_the_signals_reading_the_past_wait_and_say_so() -> None:
    record = replace(
        SEEN, shop_actions=29, claims=9, sharing_email=("c-2",), says_not_received=True
    )

    verdict = checked(record, order=aprons(delivered_ago=timedelta(days=90)))

    waiting = signal(verdict, "repeat_claims")
    assert waiting.passed and signal(verdict, "shared_email").passed
    assert waiting.reason == (
        "Not enough history yet: the provider has reported 29 of the shop's actions in the "
        "last 90 days, and this signal starts at 30."
    )
    assert dict(waiting.facts) == {"shop_actions": 29, "history_needed": 30, "window_days": 90}
    # The order at hand needs no past.
    assert raised(verdict) == ["old_delivery", "delivered_but_not_received"]


def test_an_owner_may_start_the_signals_at_once() -> None:
    record = replace(SEEN, shop_actions=0, claims=3)

    verdict = checked(record, policy=signals(history_needed=0))

    assert raised(verdict) == ["repeat_claims"]


def test_a_signal_turned_off_runs_no_check() -> None:
    policy = signals(
        repeat_claims=None,
        repeat_claims_percent=None,
        old_delivery_days=None,
        delivered_but_not_received=False,
        shared_email_customers=None,
    )

    verdict = checked(replace(SEEN, claims=9, says_not_received=True), policy=policy)

    assert [check for check in verdict.checks if check.escalates] == []
    assert verdict.outcome is Outcome.ALLOWED_BY_POLICY


# ---------------------------------------------------------------- the policy


def test_the_signals_are_stored_with_the_policy_and_read_back() -> None:
    policy = PolicyRules(
        signals=SignalRules(
            history_needed=0,
            repeat_claims=None,
            new_customer_amount={"USD": 15_000},
            new_customer_days=None,
        )
    )

    stored = policy.to_dict()

    assert stored["signals"] == {
        "history_needed": 0,
        "repeat_claims": None,
        "repeat_claims_percent": 50,
        "old_delivery_days": 60,
        "delivered_but_not_received": True,
        "new_customer_amount": {"usd": 15_000},
        "new_customer_days": None,
        "shared_email_customers": 1,
    }
    assert PolicyRules.from_dict(stored) == policy


def test_a_policy_stored_before_the_signals_reads_with_the_defaults() -> None:
    stored = PolicyRules(max_percent_off=30).to_dict()
    del stored["signals"]

    assert PolicyRules.from_dict(stored).signals == SignalRules()


@pytest.mark.parametrize(
    ("signals_set", "field"),
    [
        ({"repeat_claims": 0}, "signals.repeat_claims"),
        ({"repeat_claims_percent": 101}, "signals.repeat_claims_percent"),
        ({"history_needed": -1}, "signals.history_needed"),
        ({"old_delivery_days": 367}, "signals.old_delivery_days"),
        ({"delivered_but_not_received": "yes"}, "signals.delivered_but_not_received"),
        ({"new_customer_amount": {"usd": -1}}, "signals.new_customer_amount.usd"),
        ({"new_customer_amount": []}, "signals.new_customer_amount"),
        ({"shared_email": 2}, "signals.shared_email"),
    ],
)
def test_a_signal_setting_that_cannot_be_used_is_refused_by_name(
    signals_set: dict[str, Any], field: str
) -> None:
    with pytest.raises(PolicyError) as refused:
        PolicyRules.from_dict({"signals": signals_set})

    assert refused.value.field == field


def test_every_signal_has_a_name_in_words() -> None:
    names = {
        CheckName.REPEAT_CLAIMS,
        CheckName.OLD_DELIVERY,
        CheckName.DELIVERED_BUT_NOT_RECEIVED,
        CheckName.NEW_CUSTOMER_HIGH_VALUE,
        CheckName.SHARED_EMAIL,
    }
    assert names <= set(WORDS["check"])


def test_money_in_a_signal_is_minor_units_beside_its_currency() -> None:
    record = replace(SEEN, orders=1)

    result = signal(
        checked(record, policy=signals(new_customer_amount={"usd": 100}), amount=4800),
        "new_customer_high_value",
    )

    assert (result.facts["amount"], result.facts["threshold"], result.facts["currency"]) == (
        4800,
        100,
        "usd",
    )
