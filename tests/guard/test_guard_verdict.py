"""Checks every proposal passes (switches, policy, identity, caps), and the outcome."""

from __future__ import annotations

import json
from datetime import datetime, timedelta

import pytest
from guard_builders import (
    CUSTOMER,
    aprons,
    check,
    customer,
    failed_names,
    in_flight,
    past,
    payment,
    propose,
    provider_refund,
    usd,
)

from app.guard import (
    CapRule,
    CheckName,
    IdentityLevel,
    Outcome,
    PolicyRules,
    ShopSwitches,
    Verdict,
    evaluate,
)
from app.money import Money
from integrations.provider import ActionKind, ProviderStatus

# ---------------------------------------------------------------- switches


def test_a_new_shop_is_read_only() -> None:
    verdict = check(propose(amount=usd(4800)), payment(), switches=ShopSwitches())

    assert failed_names(verdict) == ["writes_enabled"]
    assert verdict.reasons == (
        "The shop is read-only (protection mode): a signed-in person must turn writes on in "
        "Settings before Caseward changes anything at the provider.",
    )


def test_the_kill_switch_blocks_everything() -> None:
    switches = ShopSwitches(writes_enabled=True, kill_switch=True)

    verdict = check(propose(amount=usd(4800)), payment(), switches=switches)

    assert verdict.reasons == (
        "The kill switch is on: Caseward sends no money actions until someone turns it off in "
        "Settings.",
    )


# ---------------------------------------------------------------- policy and identity


def test_a_kind_the_policy_does_not_list_is_denied() -> None:
    policy = PolicyRules(enabled_kinds=frozenset({ActionKind.CUSTOMER_CREDIT}))

    verdict = check(propose(amount=usd(4800)), payment(), policy=policy)

    assert verdict.reasons == ("The shop's policy does not allow refunds.",)


@pytest.mark.parametrize(
    ("level", "passed"),
    [
        (IdentityLevel.NONE, False),
        (IdentityLevel.CLAIM, False),
        (IdentityLevel.MEDIUM, True),
        (IdentityLevel.STRONG, True),
    ],
)
def test_refunds_need_medium_identity_by_default(level: IdentityLevel, passed: bool) -> None:
    verdict = check(propose(amount=usd(4800), identity=level), payment())

    assert verdict.check(CheckName.IDENTITY).passed is passed


def test_identity_reasons_say_what_the_levels_mean() -> None:
    claim = check(propose(amount=usd(4800), identity=IdentityLevel.CLAIM), payment())
    policy = PolicyRules(min_identity={ActionKind.REFUND: IdentityLevel.STRONG})
    medium = check(
        propose(amount=usd(4800), identity=IdentityLevel.MEDIUM), payment(), policy=policy
    )

    assert claim.reasons == (
        "The customer's identity is only claim (an order number typed into chat); refunds need "
        "at least medium (the helpdesk sender's email matches the order's email).",
    )
    assert medium.reasons == (
        "The customer's identity is only medium (the helpdesk sender's email matches the order's "
        "email); refunds need at least strong (a logged-in storefront customer or a one-time "
        "code sent to the order's email).",
    )


def test_reasons_are_checked_against_the_policys_list() -> None:
    policy = PolicyRules(allowed_reasons=frozenset({"damaged", "not_received"}))

    def verdict(**params: object) -> Verdict:
        return check(propose(amount=usd(4800), params=params), payment(), policy=policy)

    assert verdict(reason="damaged").outcome is Outcome.NEEDS_APPROVAL
    assert verdict(reason="goodwill").reasons == (
        "The reason 'goodwill' is not one the shop's policy accepts (damaged, not_received).",
    )
    assert verdict().reasons == (
        "The proposal gives no reason; the shop's policy accepts: damaged, not_received.",
    )
    assert verdict(reason=7).reasons == ("The reason must be text, not 7.",)


def test_settings_nobody_checks_and_lines_on_other_kinds_are_refused() -> None:
    refund = check(propose(amount=usd(4800), params={"refund_application_fee": True}), payment())
    credit = check(
        propose(ActionKind.CUSTOMER_CREDIT, usd(100), target=CUSTOMER, lines=[("apron-1", 100)]),
        customer(),
    )

    assert refund.reasons == (
        "The proposal carries settings Caseward does not use for refunds: refund_application_fee.",
    )
    assert credit.reasons == ("Only refunds are split by order line, not customer credits.",)


# ---------------------------------------------------------------- caps


MONTH = timedelta(days=30)


def test_per_customer_cap_counts_past_in_flight_and_this_one() -> None:
    policy = PolicyRules(per_customer_cap=CapRule(usd(10_000), MONTH))
    history = [
        past("act_1", usd(3000), target="pi_a", ago=timedelta(days=10)),
        past(
            "act_2",
            usd(2000),
            kind=ActionKind.CUSTOMER_CREDIT,
            target=CUSTOMER,
            ago=timedelta(days=1),
        ),
        past("act_3", usd(9000), target="pi_b", ago=timedelta(days=31)),  # before the period
        past("act_4", usd(9000), target="pi_c", status=ProviderStatus.FAILED),  # moved nothing
        past("act_5", usd(9000), target="pi_d", customer_ref="cus_bob"),  # someone else
    ]
    ours = [in_flight("act_6", usd(1000), target="pi_e")]

    fits = check(
        propose(amount=usd(4000)), payment(), policy=policy, history=history, in_flight=ours
    )
    over = check(
        propose(amount=usd(4001)), payment(), policy=policy, history=history, in_flight=ours
    )

    assert fits.check(CheckName.CUSTOMER_CAP).reason == (
        "This $40.00 brings customer cus_ada to $100.00 of the per-customer cap of $100.00 over "
        "the last 30 days ($50.00 done, $10.00 in flight)."
    )
    assert over.reasons == (
        "This $40.01 would bring customer cus_ada to $100.01 in the last 30 days, above the "
        "per-customer cap of $100.00 ($50.00 done, $10.00 in flight).",
    )


def test_per_shop_cap_counts_every_customer() -> None:
    policy = PolicyRules(per_shop_cap=CapRule(usd(10_000), timedelta(days=1)))
    history = [past("act_5", usd(9000), target="pi_d", customer_ref="cus_bob")]

    verdict = check(propose(amount=usd(1001)), payment(), policy=policy, history=history)

    assert verdict.reasons == (
        "This $10.01 would bring the shop to $100.01 in the last 24 hours, above the per-shop "
        "cap of $100.00 ($90.00 done, $0.00 in flight).",
    )


def test_caps_in_another_currency_or_without_a_customer_fail_closed() -> None:
    policy = PolicyRules(per_customer_cap=CapRule(usd(10_000), MONTH))

    euros = check(propose(amount=Money(100, "eur")), payment(currency="eur"), policy=policy)
    guest = check(
        propose(amount=usd(100), customer_ref=None, case_customer=None),
        payment(customer_id=None),
        policy=policy,
    )

    assert euros.reasons == (
        "The per-customer cap is set in USD; a EUR amount cannot be measured against it.",
    )
    assert guest.check(CheckName.CUSTOMER_CAP).reason == (
        "The per-customer cap cannot be applied: the case has no customer at Stripe."
    )
    assert not guest.check(CheckName.CUSTOMER_MATCHES).passed


def test_the_cases_customer_stands_in_when_the_proposal_names_none() -> None:
    policy = PolicyRules(per_customer_cap=CapRule(usd(10_000), MONTH))

    verdict = check(propose(amount=usd(100), customer_ref=None), payment(), policy=policy)

    assert verdict.check(CheckName.CUSTOMER_CAP).facts["customer"] == CUSTOMER


# ---------------------------------------------------------------- outcome


def test_by_default_every_action_needs_one_person() -> None:
    verdict = check(propose(amount=usd(1)), payment())

    assert verdict.outcome is Outcome.NEEDS_APPROVAL
    assert verdict.approvals_required == 1
    assert verdict.approval_reason == (
        "One person must approve: the shop's policy sets no auto-approve ceiling for USD."
    )


def test_the_auto_approve_ceiling_covers_amounts_up_to_it_in_its_currency() -> None:
    policy = PolicyRules(auto_approve_ceiling={"usd": 2500})

    at = check(propose(amount=usd(2500)), payment(), policy=policy)
    above = check(propose(amount=usd(2501)), payment(), policy=policy)
    yen = check(propose(amount=Money(100, "jpy")), payment(5000, currency="jpy"), policy=policy)

    assert (at.outcome, at.approvals_required) == (Outcome.ALLOWED_BY_POLICY, 0)
    assert at.approval_reason == (
        "Allowed by the shop's policy: $25.00 is within the auto-approve ceiling of $25.00."
    )
    assert (above.outcome, above.approvals_required) == (Outcome.NEEDS_APPROVAL, 1)
    assert above.approval_reason == (
        "One person must approve: $25.01 is above the auto-approve ceiling of $25.00."
    )
    assert yen.outcome is Outcome.NEEDS_APPROVAL


def test_two_people_above_the_threshold_even_under_the_ceiling() -> None:
    policy = PolicyRules(auto_approve_ceiling={"usd": 9600}, two_person_threshold={"usd": 5000})

    at = check(propose(amount=usd(5000)), payment(), policy=policy)
    above = check(propose(amount=usd(5001)), payment(), policy=policy)

    assert at.outcome is Outcome.ALLOWED_BY_POLICY
    assert (above.outcome, above.approvals_required) == (Outcome.NEEDS_APPROVAL, 2)
    assert above.approval_reason == (
        "Two people must approve: $50.01 is above the two-person threshold of $50.00."
    )


def test_a_blocked_verdict_still_says_how_many_people_it_would_need() -> None:
    policy = PolicyRules(auto_approve_ceiling={"usd": 9600}, two_person_threshold={"usd": 5000})

    small = check(propose(amount=usd(100)), payment(disputed=True), policy=policy)
    large = check(propose(amount=usd(6000)), payment(disputed=True), policy=policy)

    assert (small.outcome, small.approvals_required) == (Outcome.BLOCKED, 1)
    assert (large.outcome, large.approvals_required) == (Outcome.BLOCKED, 2)


def test_the_verdict_lists_every_failing_check() -> None:
    policy = PolicyRules(
        version=4,
        refund_window_days=30,
        allowed_reasons=frozenset({"damaged"}),
        per_shop_cap=CapRule(usd(5000), MONTH),
    )
    facts = payment(disputed=True, refunds=[provider_refund("re_1", 4800)])

    verdict = check(
        propose(amount=usd(6000), identity=IdentityLevel.CLAIM, params={"reason": "goodwill"}),
        facts,
        policy=policy,
        switches=ShopSwitches(kill_switch=True),
        order=aprons(delivered_ago=timedelta(days=45)),
    )

    assert verdict.outcome is Outcome.BLOCKED
    assert verdict.policy_version == 4
    assert failed_names(verdict) == [
        "writes_enabled",
        "kill_switch",
        "identity",
        "reason_allowed",
        "refund_window",
        "not_disputed",
        "refundable_remaining",
        "shop_cap",
    ]
    assert len(verdict.reasons) == 8
    assert verdict.approval_reason == "Nobody can approve this while 8 of 18 checks fail."


def test_every_check_names_its_facts_and_the_verdict_round_trips_through_json() -> None:
    verdict = check(
        propose(amount=usd(4800), lines=[("apron-1", 4800)], proposal_id="act_1"),
        payment(refunds=[provider_refund("re_0", 100)]),
        policy=PolicyRules(refund_window_days=30),
        order=aprons(),
    )

    stored = json.loads(json.dumps(verdict.to_dict()))

    assert all(check["facts"] for check in stored["checks"])
    assert Verdict.from_dict(stored) == verdict
    assert stored["outcome"] == "needs_approval"


def test_facts_of_the_wrong_kind_and_naive_time_are_caller_bugs() -> None:
    with pytest.raises(TypeError, match="PaymentFacts"):
        check(propose(amount=usd(4800)), customer())
    with pytest.raises(ValueError, match="timezone-aware"):
        evaluate(
            propose(amount=usd(4800)),
            payment(),
            policy=PolicyRules(),
            switches=ShopSwitches(),
            in_flight=(),
            history=(),
            now=datetime(2026, 3, 10),
        )


def test_a_proposal_cannot_change_after_it_is_made() -> None:
    params = {"items": [["price_a", 1]]}
    proposal = propose(ActionKind.SUBSCRIPTION_CHANGE, None, target="sub_1", params=params)
    params["items"].append(["price_b", 1])

    assert proposal.params["items"] == (("price_a", 1),)
    with pytest.raises(TypeError):
        proposal.params["reason"] = "x"  # type: ignore[index]
