"""The guard at the edges: the last second of a window, the smallest amount, the largest
percent, a term given almost right. Each case says whether money may move and which
checks stop it, because one step either side is where a wrong refund slips through."""

from __future__ import annotations

from collections.abc import Callable
from datetime import timedelta

import pytest
from guard_builders import (
    CUSTOMER,
    NOW,
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
    CheckResult,
    IdentityLevel,
    InFlightAction,
    LineItemRef,
    Outcome,
    PolicyRules,
    ProposedAction,
    Verdict,
)
from app.money import Money
from app.words import Sentence
from integrations.provider import (
    ActionKind,
    ProviderCredit,
    ProviderDiscount,
    ProviderStatus,
    SubscriptionFacts,
    SubscriptionItem,
    TargetFacts,
)

REFUND = ActionKind.REFUND
CREDIT = ActionKind.CUSTOMER_CREDIT
DISCOUNT = ActionKind.DISCOUNT
CHANGE = ActionKind.SUBSCRIPTION_CHANGE
SUB = "sub_linen_club"
WINDOW = timedelta(hours=72)  # the default duplicate window
DAY = timedelta(days=1)


def credit(amount: int, **kwargs: object) -> Verdict:
    return check(propose(CREDIT, usd(amount), target=CUSTOMER), customer(), **kwargs)  # type: ignore[arg-type]


def credit_at_provider(amount: int, ago: timedelta) -> Verdict:
    earlier = ProviderCredit("txn_1", -amount, "usd", NOW - ago)
    return check(propose(CREDIT, usd(amount), target=CUSTOMER), customer(credits=[earlier]))


def discount(amount: int = 500, *, customer_facts: object = None, **params: object) -> Verdict:
    terms = params or {"amount_off": amount, "duration": "once"}
    return check(
        propose(DISCOUNT, usd(amount), target=CUSTOMER, params=terms),
        customer_facts or customer(),  # type: ignore[arg-type]
    )


def discount_at_provider(ago: timedelta) -> Verdict:
    earlier = ProviderDiscount("promo_1", "co_1", "TAKE5", None, 500, "usd", NOW - ago)
    return discount(customer_facts=customer(discounts=[earlier]))


def percent(value: object, maximum: int = 50, **extra: object) -> Verdict:
    return check(
        propose(
            DISCOUNT,
            usd(1000),
            target=CUSTOMER,
            params={"percent_off": value, "duration": "once", **extra},
        ),
        customer(),
        policy=PolicyRules(max_percent_off=maximum),
    )


def change(items: object) -> Verdict:
    subscription = SubscriptionFacts(
        id=SUB,
        exists=True,
        status="active",
        customer_id=CUSTOMER,
        currency="usd",
        items=(SubscriptionItem("si_1", "price_monthly", 1),),
    )
    return check(propose(CHANGE, None, target=SUB, params={"items": items}), subscription)


def customer_cap(history_customer_ref: str | None, kind: ActionKind = CREDIT) -> Verdict:
    """A $60 credit under a $100 weekly per-customer cap, after an earlier $50 action."""
    earlier = past(
        "act_1", usd(5000), kind=kind, target=CUSTOMER, customer_ref=history_customer_ref
    )
    return credit(
        6000,
        policy=PolicyRules(per_customer_cap=CapRule(usd(10000), timedelta(days=7))),
        history=[earlier],
    )


# (case, verdict, failing checks; empty means nothing stops it)
EDGES: list[tuple[str, Callable[[], Verdict], list[str]]] = [
    # Credits: the smallest amount and the first second of the duplicate window.
    ("a one-cent credit is checked in full", lambda: credit(1), []),
    ("a credit matching one made exactly a window ago", lambda: credit_at_provider(700, WINDOW),
     ["not_duplicate"]),
    ("a credit matching one made just before the window", lambda: credit_at_provider(
        700, WINDOW + timedelta(seconds=1)), []),
    # Discounts: the same, and each term at its limit.
    ("a discount matching one made exactly a window ago", lambda: discount_at_provider(WINDOW),
     ["not_duplicate"]),
    ("a discount matching one made just before the window", lambda: discount_at_provider(
        WINDOW + timedelta(seconds=1)), []),
    ("a one-cent amount-off discount", lambda: discount(1), []),
    ("a zero amount-off discount", lambda: discount(0), ["amount", "discount_terms"]),
    ("1% off", lambda: percent(1), []),
    ("100% off when the shop allows 100%", lambda: percent(100, maximum=100), []),
    ("101% off when the shop allows 100%", lambda: percent(101, maximum=100), ["discount_terms"]),
    ("0% off", lambda: percent(0), ["discount_terms"]),
    ("exactly the shop's maximum percent", lambda: percent(50), []),
    ("one more than the shop's maximum percent", lambda: percent(51), ["discount_terms"]),
    ("a percent given as true", lambda: percent(True), ["discount_terms"]),
    ("repeating for one month", lambda: percent(10, duration="repeating", duration_in_months=1),
     []),
    ("repeating for zero months", lambda: percent(10, duration="repeating", duration_in_months=0),
     ["discount_terms"]),
    # Subscription items: each way a pair can be malformed.
    ("no items at all", lambda: change([]), ["change_terms"]),
    ("an item with an empty price", lambda: change([("", 1)]), ["change_terms"]),
    ("an item whose price is not text", lambda: change([(5, 1)]), ["change_terms"]),
    ("an item whose quantity is true", lambda: change([("price_yearly", True)]),
     ["change_terms"]),
    ("an item that is not a pair", lambda: change(["price_yearly"]), ["change_terms"]),
    ("one valid new item", lambda: change([("price_yearly", 1)]), []),
    # Caps: a credit names its customer by its target when it names no customer.
    ("a past credit naming no customer counts against its target's cap",
     lambda: customer_cap(None), ["customer_cap"]),
    ("a past credit naming the customer counts against the cap", lambda: customer_cap(CUSTOMER),
     ["customer_cap"]),
    ("a past credit to another customer does not", lambda: customer_cap("cus_bob"), []),
]  # fmt: skip


@pytest.mark.parametrize(("case", "verdict", "failing"), EDGES, ids=[e[0] for e in EDGES])
def test_at_the_edge(case: str, verdict: Callable[[], Verdict], failing: list[str]) -> None:
    result = verdict()

    assert failed_names(result) == failing, case
    assert (result.outcome is Outcome.BLOCKED) == bool(failing)


def _names(verdict: Verdict) -> list[str]:
    return [str(result.name) for result in verdict.checks]


def test_a_credit_reads_the_balance_only_for_a_live_customer_and_an_amount() -> None:
    base = ["writes_enabled", "kill_switch", "kind_enabled", "identity", "reason_allowed"]
    base += ["proposal_shape", "amount", "target_exists", "customer_matches"]
    caps = ["customer_cap", "shop_cap"]
    money = ["currency_matches", "not_duplicate"]
    elsewhere = propose(CREDIT, usd(100), target="cus_bob", customer_ref=None)

    assert _names(credit(0)) == base + caps
    assert _names(credit(1)) == base + money + caps
    assert _names(check(elsewhere, customer(id="cus_bob"))) == base + money + caps
    assert _names(check(elsewhere, customer(id="cus_bob", exists=False))) == base + caps


def test_a_discount_looks_for_duplicates_only_for_a_live_customer_and_sound_terms() -> None:
    base = ["writes_enabled", "kill_switch", "kind_enabled", "identity", "reason_allowed"]
    base += ["proposal_shape", "amount", "target_exists", "customer_matches", "discount_terms"]
    caps = ["customer_cap", "shop_cap"]
    other_customer = propose(
        DISCOUNT,
        usd(500),
        target="cus_bob",
        customer_ref=None,
        params={"amount_off": 500, "duration": "once"},
    )

    assert _names(discount(1)) == [*base, "not_duplicate", *caps]
    assert _names(discount(0)) == base + caps
    assert _names(discount(0, percent_off=10, duration="once")) == base + caps
    assert _names(discount(customer_facts=customer(exists=False))) == base + caps
    assert _names(check(other_customer, customer(id="cus_bob"))) == [*base, "not_duplicate", *caps]


def test_a_percent_discount_at_the_provider_is_a_duplicate_only_at_the_same_percent() -> None:
    twenty = ProviderDiscount("promo_20", "co_20", "TWENTY", 20, None, None, NOW - DAY)

    verdicts = {
        value: check(
            propose(DISCOUNT, usd(1000), target=CUSTOMER,
                    params={"percent_off": value, "duration": "once"}),
            customer(discounts=[twenty]),
        )
        for value in (20, 25)
    }  # fmt: skip

    assert failed_names(verdicts[20]) == ["not_duplicate"]
    assert failed_names(verdicts[25]) == []


def test_an_amount_off_at_the_provider_is_a_duplicate_only_in_the_same_currency() -> None:
    in_euros = ProviderDiscount("promo_e", "co_e", "EURO5", None, 500, "EUR", NOW - DAY)
    in_dollars = ProviderDiscount("promo_d", "co_d", "USD5", None, 500, "USD", NOW - DAY)

    assert failed_names(discount(customer_facts=customer(discounts=[in_euros]))) == []
    assert failed_names(discount(customer_facts=customer(discounts=[in_dollars]))) == [
        "not_duplicate"
    ]


def test_a_check_that_did_not_run_is_named_when_asked_for() -> None:
    verdict = credit(100)

    with pytest.raises(KeyError, match="line_items"):
        verdict.check(CheckName.LINE_ITEMS)


# ---------------------------------------------------------------- refunds and money totals


def refund(amount: int, **kwargs: object) -> Verdict:
    return check(propose(REFUND, usd(amount)), payment(), **kwargs)  # type: ignore[arg-type]


REFUND_EDGES: list[tuple[str, Callable[[], Verdict], list[str]]] = [
    ("refund of exactly what is left", lambda: check(
        propose(REFUND, usd(5600)), payment(refunds=[provider_refund("re_1", 3000)]),
        in_flight=[in_flight("act_1", usd(1000))]), []),
    ("refund of one cent more than is left", lambda: check(
        propose(REFUND, usd(5601)), payment(refunds=[provider_refund("re_1", 3000)]),
        in_flight=[in_flight("act_1", usd(1000))]), ["refundable_remaining"]),
    ("refund of exactly what is left on a line", lambda: check(
        propose(REFUND, usd(3800), lines=[("apron-1", 3800)]), payment(),
        order=aprons(refunded=(1000, 0))), []),
    ("refund of one cent more than is left on a line", lambda: check(
        propose(REFUND, usd(3801), lines=[("apron-1", 3801)]), payment(),
        order=aprons(refunded=(1000, 0))), ["line_items"]),
    ("a provider refund of the same amount made exactly a window ago", lambda: check(
        propose(REFUND, usd(1000)), payment(refunds=[provider_refund("re_1", 1000, ago=WINDOW)])),
     ["not_duplicate"]),
    ("a provider refund of the same amount made just before the window", lambda: check(
        propose(REFUND, usd(1000)),
        payment(refunds=[provider_refund("re_1", 1000, ago=WINDOW + timedelta(seconds=1))])), []),
    ("our refund of the same amount made exactly a window ago", lambda: refund(
        1000, history=[past("act_1", usd(1000), ago=WINDOW)]), ["not_duplicate"]),
    ("our refund of the same amount made just before the window", lambda: refund(
        1000, history=[past("act_1", usd(1000), ago=WINDOW + timedelta(seconds=1))]), []),
    ("a one-cent refund", lambda: refund(1), []),
    ("a refund bringing the customer exactly to the cap", lambda: refund(
        4000, policy=PolicyRules(per_customer_cap=CapRule(usd(10000), DAY)),
        history=[past("act_1", usd(5000), target="pi_a", ago=DAY)],
        in_flight=[in_flight("act_2", usd(1000), target="pi_b")]), []),
    ("a refund bringing the customer one cent over the cap", lambda: refund(
        4001, policy=PolicyRules(per_customer_cap=CapRule(usd(10000), DAY)),
        history=[past("act_1", usd(5000), target="pi_a", ago=DAY)],
        in_flight=[in_flight("act_2", usd(1000), target="pi_b")]), ["customer_cap"]),
    ("a refund after one just outside the cap period", lambda: refund(
        4001, policy=PolicyRules(per_shop_cap=CapRule(usd(10000), DAY)),
        history=[past("act_1", usd(5000), target="pi_a", ago=DAY + timedelta(seconds=1))],
        in_flight=[in_flight("act_2", usd(1000), target="pi_b")]), []),
    ("a refund after one exactly at the start of the cap period", lambda: refund(
        4001, policy=PolicyRules(per_shop_cap=CapRule(usd(10000), DAY)),
        history=[past("act_1", usd(5000), target="pi_a", ago=DAY)],
        in_flight=[in_flight("act_2", usd(1000), target="pi_b")]), ["shop_cap"]),
    ("a refund the day the refund window closes", lambda: refund(
        1000, policy=PolicyRules(refund_window_days=3), order=aprons()), []),
    ("a refund a second after the refund window closed", lambda: refund(
        1000, policy=PolicyRules(refund_window_days=3),
        order=aprons(delivered_ago=timedelta(days=3, seconds=1))), ["refund_window"]),
]  # fmt: skip


@pytest.mark.parametrize(
    ("case", "verdict", "failing"), REFUND_EDGES, ids=[e[0] for e in REFUND_EDGES]
)
def test_a_refund_at_the_edge(
    case: str, verdict: Callable[[], Verdict], failing: list[str]
) -> None:
    assert failed_names(verdict()) == failing, case


@pytest.mark.parametrize(
    ("amount", "outcome", "approvals"),
    [
        (2000, Outcome.ALLOWED_BY_POLICY, 0),  # exactly the ceiling
        (2001, Outcome.NEEDS_APPROVAL, 1),
        (5000, Outcome.NEEDS_APPROVAL, 1),  # exactly the two-person threshold
        (5001, Outcome.NEEDS_APPROVAL, 2),
    ],
)
def test_who_must_approve_at_the_ceiling_and_the_threshold(
    amount: int, outcome: Outcome, approvals: int
) -> None:
    policy = PolicyRules(auto_approve_ceiling={"usd": 2000}, two_person_threshold={"usd": 5000})

    verdict = refund(amount, policy=policy)

    assert (verdict.outcome, verdict.approvals_required) == (outcome, approvals)


def test_a_threshold_in_another_currency_asks_one_person() -> None:
    policy = PolicyRules(two_person_threshold={"eur": 100})

    verdict = check(propose(REFUND, Money(5000, "usd")), payment(), policy=policy)

    assert verdict.approvals_required == 1


# ---------------------------------------------------------------- what counts against a line


def line_refund(amount: int, **kwargs: object) -> Verdict:
    """Refund ``amount`` of the first apron ($48.00 paid)."""
    kwargs.setdefault("order", aprons())
    return check(propose(REFUND, usd(amount), lines=[("apron-1", amount)]), payment(), **kwargs)  # type: ignore[arg-type]


FAILED = ProviderStatus.FAILED
APRON_1 = [("apron-1", 4800)]

LINE_EDGES: list[tuple[str, Callable[[], Verdict], list[str]]] = [
    ("a one-cent line", lambda: line_refund(1), []),
    ("our past refund of the line on another payment does not count", lambda: line_refund(
        4800, history=[past("act_1", usd(4800), target="pi_other", lines=APRON_1, ago=DAY * 5)]),
     []),
    ("our past refund that failed does not count", lambda: line_refund(
        4800, history=[past("act_1", usd(4800), status=FAILED, lines=APRON_1, ago=DAY * 5)]), []),
    ("our past refund the provider shows as failed does not count", lambda: check(
        propose(REFUND, usd(4800), lines=APRON_1),
        payment(refunds=[provider_refund("re_1", 4800, status=FAILED, action_id="act_1")]),
        history=[past("act_1", usd(4800), lines=APRON_1, ago=DAY * 5)], order=aprons()), []),
    ("our in-flight refund of the line on another payment does not count", lambda: line_refund(
        4800, in_flight=[in_flight("act_1", usd(4800), target="pi_other", lines=APRON_1)]), []),
    ("our in-flight refund the store already counts is counted once", lambda: check(
        propose(REFUND, usd(2800), lines=[("apron-1", 2800)]),
        payment(refunds=[provider_refund("re_1", 2000, action_id="act_1", ago=DAY * 5)]),
        in_flight=[in_flight("act_1", usd(2000), lines=[("apron-1", 2000)])],
        order=aprons(refunded=(2000, 0))), []),
    ("one cent more than that", lambda: check(
        propose(REFUND, usd(2801), lines=[("apron-1", 2801)]),
        payment(refunds=[provider_refund("re_1", 2000, action_id="act_1", ago=DAY * 5)]),
        in_flight=[in_flight("act_1", usd(2000), lines=[("apron-1", 2000)])],
        order=aprons(refunded=(2000, 0))), ["line_items"]),
    ("a payment that captured one cent", lambda: check(
        propose(REFUND, usd(1)), payment(captured=1)), []),
]  # fmt: skip


@pytest.mark.parametrize(("case", "verdict", "failing"), LINE_EDGES, ids=[e[0] for e in LINE_EDGES])
def test_what_counts_against_a_line(
    case: str, verdict: Callable[[], Verdict], failing: list[str]
) -> None:
    assert failed_names(verdict()) == failing, case


# ---------------------------------------------------------------- what counts against a cap


def capped_credit(*, flying: list[InFlightAction]) -> Verdict:
    """A $60 credit under a $100 per-customer cap, with some of our actions in flight."""
    return credit(
        6000,
        policy=PolicyRules(per_customer_cap=CapRule(usd(10000), DAY)),
        in_flight=flying,
    )


CAP_EDGES: list[tuple[str, list[InFlightAction], list[str]]] = [
    ("an in-flight credit naming no customer counts for its target",
     [in_flight("act_1", usd(5000), kind=CREDIT, target=CUSTOMER, customer_ref=None)],
     ["customer_cap"]),
    ("an in-flight refund in another currency is not added to dollars",
     [in_flight("act_1", Money(5000, "eur"))], []),
    ("an in-flight refund of another customer in another currency is not either",
     [in_flight("act_1", Money(5000, "eur"), customer_ref="cus_bob")], []),
    ("an in-flight subscription action moves no money",
     [in_flight("act_1", None, kind=ActionKind.SUBSCRIPTION_CANCEL, target=SUB)], []),
    ("an in-flight refund of the customer counts", [in_flight("act_1", usd(5000))],
     ["customer_cap"]),
]  # fmt: skip


@pytest.mark.parametrize(("case", "flying", "failing"), CAP_EDGES, ids=[e[0] for e in CAP_EDGES])
def test_what_counts_against_a_cap(
    case: str, flying: list[InFlightAction], failing: list[str]
) -> None:
    assert failed_names(capped_credit(flying=flying)) == failing, case


@pytest.mark.parametrize(
    ("window", "said"),
    [
        (timedelta(seconds=1), "1 second"),
        (timedelta(seconds=90), "90 seconds"),
        (timedelta(minutes=1), "1 minute"),
        (timedelta(minutes=90), "90 minutes"),
        (timedelta(hours=1), "1 hour"),
        (timedelta(hours=2), "2 hours"),
        (timedelta(days=3), "72 hours"),
        (timedelta(days=4), "4 days"),
        (timedelta(days=30), "30 days"),
    ],
)
def test_the_duplicate_window_is_named_in_words(window: timedelta, said: str) -> None:
    verdict = credit(100, policy=PolicyRules(duplicate_window=window))

    assert verdict.check(CheckName.NOT_DUPLICATE).reason == (
        f"No customer credit of $1.00 to customer cus_ada in the last {said}."
    )


# ---------------------------------------------------------------- caller mistakes


@pytest.mark.parametrize(
    ("kind", "target", "facts", "expected"),
    [
        (REFUND, "pi_linen", customer(), "PaymentFacts"),
        (CREDIT, CUSTOMER, payment(), "CustomerFacts"),
        (DISCOUNT, CUSTOMER, payment(), "CustomerFacts"),
        (ActionKind.SUBSCRIPTION_CANCEL, SUB, customer(), "SubscriptionFacts"),
        (CHANGE, SUB, payment(), "SubscriptionFacts"),
    ],
)
def test_facts_of_the_wrong_kind_are_refused_by_name(
    kind: ActionKind, target: str, facts: TargetFacts, expected: str
) -> None:
    with pytest.raises(TypeError, match=f"a {kind.value} is checked against {expected}, not "):
        check(propose(kind, usd(100), target=target), facts)


def test_a_clock_without_a_timezone_is_refused() -> None:
    with pytest.raises(ValueError, match=r"^now must be timezone-aware$"):
        credit(100, now=NOW.replace(tzinfo=None))


def test_a_checked_proposal_and_its_results_cannot_change_afterwards() -> None:
    lines = [LineItemRef("apron-1", 100)]
    facts: dict[str, object] = {"captured": 9600}
    proposal = ProposedAction(
        kind=REFUND,
        target="pi_linen",
        amount=usd(100),
        identity_level=IdentityLevel.STRONG,
        proposed_by="agent:claude",
        line_items=lines,  # type: ignore[arg-type]  (a list, as JSON gives it)
    )
    result = CheckResult(CheckName.CAPTURED, True, Sentence("Captured."), facts)
    lines.append(LineItemRef("apron-2", 100))
    facts["captured"] = 0

    assert proposal.line_items == (LineItemRef("apron-1", 100),)
    assert result.facts == {"captured": 9600}
    with pytest.raises(TypeError):
        result.facts["captured"] = 0  # type: ignore[index]
