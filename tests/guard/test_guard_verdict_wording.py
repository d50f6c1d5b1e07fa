"""What an approver reads, word for word: every check's name, result, reason and facts.

The verdict is shown to the person who approves a money action and returned by the
API (``verdict.to_dict()``), so its wording and facts are behaviour. Each scenario
below is one situation a support agent meets; ``verdict_wording.json`` holds the
verdict it must produce, reviewed by a person. After a deliberate change of wording,
run this file with ``CASEWARD_REWRITE_VERDICTS=1`` to rewrite the JSON (the run then
fails on purpose), and review the diff like any other change.

The English is said through the message catalogue: each reason is kept as a catalogue
message with its values, which the JSON file leaves out (it holds what a person reads);
the last test checks that those sentences read as the English, in every scenario.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from dataclasses import replace
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from guard_builders import (
    CUSTOMER,
    NOW,
    aprons,
    check,
    customer,
    in_flight,
    past,
    payment,
    propose,
    provider_refund,
    usd,
)

from app.guard import (
    CapRule,
    IdentityLevel,
    InFlightStatus,
    PolicyRules,
    ShopSwitches,
    Verdict,
)
from app.money import Money
from app.words import Sentence
from integrations.provider import (
    ACTION_ID_METADATA_KEY,
    ActionKind,
    ProviderCredit,
    ProviderDiscount,
    ProviderStatus,
    SubscriptionFacts,
    SubscriptionItem,
)

GOLDEN = Path(__file__).with_name("verdict_wording.json")
REFUND = ActionKind.REFUND
CREDIT = ActionKind.CUSTOMER_CREDIT
DISCOUNT = ActionKind.DISCOUNT
CANCEL = ActionKind.SUBSCRIPTION_CANCEL
CHANGE = ActionKind.SUBSCRIPTION_CHANGE
SUB = "sub_linen_club"
WEEK = timedelta(days=7)

# Every rule set, so every check has something to say.
STRICT = PolicyRules(
    version=7,
    auto_approve_ceiling={"usd": 2000},
    two_person_threshold={"usd": 5000},
    refund_window_days=30,
    per_customer_cap=CapRule(usd(10000), WEEK),
    per_shop_cap=CapRule(usd(50000), timedelta(days=30)),
    allowed_reasons=frozenset({"damaged", "late"}),
)
DAMAGED = {"reason": "damaged"}


def subscription(
    status: str = "active",
    *,
    cancel_at_period_end: bool = False,
    period_end: bool = True,
    id: str = SUB,
    exists: bool = True,
) -> SubscriptionFacts:
    return SubscriptionFacts(
        id=id,
        exists=exists,
        status=status,
        customer_id=CUSTOMER,
        currency="usd",
        cancel_at_period_end=cancel_at_period_end,
        current_period_end=NOW + timedelta(days=21) if period_end else None,
        items=(
            SubscriptionItem("si_1", "price_monthly", 1),
            SubscriptionItem("si_2", "price_napkins", 2),
        ),
    )


def discount(
    id: str, *, percent: int | None = None, off: int | None = None, action_id: str | None = None
) -> ProviderDiscount:
    metadata = {} if action_id is None else {ACTION_ID_METADATA_KEY: action_id}
    return ProviderDiscount(
        id,
        "coupon_" + id,
        id.upper(),
        percent,
        off,
        None if off is None else "usd",
        NOW - timedelta(hours=3),
        metadata,
    )


def credit_record(id: str, amount: int, *, action_id: str | None = None) -> ProviderCredit:
    metadata = {} if action_id is None else {ACTION_ID_METADATA_KEY: action_id}
    return ProviderCredit(id, amount, "usd", NOW - timedelta(hours=5), metadata)


# ---------------------------------------------------------------- scenarios

SCENARIOS: dict[str, Callable[[], Verdict]] = {
    # Refunds
    "refund within the ceiling, every rule set, one line": lambda: check(
        propose(REFUND, usd(1500), lines=[("apron-1", 1500)], params=DAMAGED, proposal_id="act_9"),
        payment(refunds=[provider_refund("re_old", 1000)]),
        policy=STRICT,
        in_flight=[in_flight("act_2", usd(500)), in_flight("act_9", usd(1500))],
        history=[past("act_1", usd(1000), kind=CREDIT, target=CUSTOMER)],
        order=aprons(refunded=(1000, 0)),
    ),
    "refund above the ceiling, below two people": lambda: check(
        propose(REFUND, usd(3000), params=DAMAGED), payment(), policy=STRICT, order=aprons()
    ),
    "refund above the two-person threshold": lambda: check(
        propose(REFUND, usd(6000), params=DAMAGED), payment(), policy=STRICT, order=aprons()
    ),
    "refund in a currency without a ceiling": lambda: check(
        propose(REFUND, Money(1000, "eur")), payment(currency="eur")
    ),
    "refund on a read-only shop with the kill switch on": lambda: check(
        propose(REFUND, usd(1000)),
        payment(),
        switches=ShopSwitches(writes_enabled=False, kill_switch=True),
    ),
    "refund of a kind the shop does not allow, by a claimed identity": lambda: check(
        propose(REFUND, usd(1000), identity=IdentityLevel.CLAIM, params={"reason": 7}),
        payment(),
        policy=PolicyRules(enabled_kinds=frozenset({CREDIT})),
    ),
    "refund with no reason, an unlisted reason and odd settings": lambda: check(
        propose(REFUND, usd(1000), params={"note": "x", "speed": "fast"}),
        payment(),
        policy=PolicyRules(allowed_reasons=frozenset()),
    ),
    "refund with a reason the policy does not list": lambda: check(
        propose(REFUND, usd(1000), params={"reason": "bored"}),
        payment(),
        policy=STRICT,
        order=aprons(),
    ),
    "refund without an amount": lambda: check(propose(REFUND, None), payment()),
    "refund of zero": lambda: check(propose(REFUND, usd(0)), payment()),
    "refund of a payment that is not found": lambda: check(
        propose(REFUND, usd(1000)), payment(exists=False), policy=STRICT, order=aprons()
    ),
    "refund checked against another payment's facts": lambda: check(
        propose(REFUND, usd(1000)), payment(id="pi_other")
    ),
    "refund of an uncaptured, disputed payment of another customer": lambda: check(
        propose(REFUND, usd(1000), customer_ref=None),
        payment(captured=0, disputed=True, customer_id="cus_bob"),
    ),
    "refund of a payment with no customer, case without customer": lambda: check(
        propose(REFUND, usd(1000), customer_ref=None, case_customer=None),
        payment(customer_id=None),
        policy=STRICT,
        order=aprons(),
    ),
    "refund naming another customer than the case's": lambda: check(
        propose(REFUND, usd(1000), customer_ref="cus_bob"), payment()
    ),
    "refund in another currency than the payment": lambda: check(
        propose(REFUND, Money(1000, "eur")), payment()
    ),
    "refund above what is left, duplicates at the provider and ours": lambda: check(
        propose(REFUND, usd(3000)),
        payment(
            refunds=[
                provider_refund("re_1", 3000, status=ProviderStatus.PENDING),
                provider_refund("re_2", 3000, status=ProviderStatus.FAILED),
                provider_refund("re_3", 3000, action_id="act_landed"),
            ]
        ),
        in_flight=[
            in_flight("act_landed", usd(3000), status=InFlightStatus.UNKNOWN),
            in_flight("act_queued", usd(3000)),
        ],
        history=[
            past("act_done", usd(3000), ago=timedelta(hours=5)),
            past("act_failed", usd(3000), status=ProviderStatus.FAILED),
            past("act_old", usd(3000), ago=timedelta(days=4)),
        ],
    ),
    "refund whose write already reached the provider": lambda: check(
        propose(REFUND, usd(1000), proposal_id="act_7"),
        payment(refunds=[provider_refund("re_7", 1000, action_id="act_7")]),
    ),
    "refund split by lines that do not fit": lambda: check(
        propose(
            REFUND,
            usd(9000),
            lines=[
                ("apron-1", 4000),
                ("apron-1", 100),
                ("napkin", 100),
                ("apron-2", 0),
                ("apron-2", 4800),
            ],
        ),
        payment(),
        in_flight=[in_flight("act_1", usd(500), lines=[("apron-1", 500)])],
        history=[
            past("act_0", usd(700), lines=[("apron-1", 700)], ago=timedelta(days=1)),
            past("act_x", usd(300), lines=[("apron-2", 300)], status=ProviderStatus.FAILED),
        ],
        order=aprons(refunded=(1000, 0)),
    ),
    "refund split by lines without an order": lambda: check(
        propose(REFUND, usd(1000), lines=[("apron-1", 1000)]), payment()
    ),
    "refund split by lines of an order in another currency": lambda: check(
        propose(REFUND, usd(1000), lines=[("apron-1", 1000)]),
        payment(),
        order=aprons(currency="eur"),
    ),
    "refund of an order paid with another payment": lambda: check(
        propose(REFUND, usd(1000)), payment(), order=aprons(payment_id="pi_other")
    ),
    "refund after the refund window closed": lambda: check(
        propose(REFUND, usd(1000), params=DAMAGED),
        payment(),
        policy=STRICT,
        order=aprons(delivered_ago=None, fulfilled_ago=timedelta(days=40)),
    ),
    "refund of an order not fulfilled yet": lambda: check(
        propose(REFUND, usd(1000), params=DAMAGED),
        payment(),
        policy=STRICT,
        order=aprons(delivered_ago=None, fulfilled_ago=None),
    ),
    "refund above both caps": lambda: check(
        propose(REFUND, usd(4000), params=DAMAGED),
        payment(captured=200000),
        policy=STRICT,
        in_flight=[in_flight("act_a", usd(3000), target="pi_a")],
        history=[
            past("act_b", usd(4000), target="pi_b"),
            past("act_c", usd(45000), target="pi_c", customer_ref="cus_bob"),
        ],
        order=aprons(),
    ),
    "refund in a currency the caps are not set in": lambda: check(
        propose(REFUND, Money(1000, "eur"), params=DAMAGED),
        payment(currency="eur"),
        policy=STRICT,
        order=aprons(currency="eur"),
    ),
    "refund without a case customer under a per-customer cap": lambda: check(
        propose(REFUND, usd(1000), params=DAMAGED, case_customer=None, customer_ref=None),
        payment(),
        policy=STRICT,
        order=aprons(),
    ),
    "refund whose lines add up to another amount": lambda: check(
        propose(REFUND, usd(1500), lines=[("apron-1", 1000)]), payment(), order=aprons()
    ),
    "refund of a payment with no customer on record": lambda: check(
        propose(REFUND, usd(1000)), payment(customer_id=None)
    ),
    "refund written twice at the provider under its id": lambda: check(
        propose(REFUND, usd(1000), proposal_id="act_7"),
        payment(
            refunds=[
                provider_refund("re_7", 1000, action_id="act_7"),
                provider_refund("re_8", 1000, action_id="act_7"),
            ]
        ),
    ),
    "refund without an amount under every rule": lambda: check(
        propose(REFUND, None, params=DAMAGED), payment(), policy=STRICT, order=aprons()
    ),
    "refund of zero under every rule": lambda: check(
        propose(REFUND, usd(0), params=DAMAGED), payment(), policy=STRICT, order=aprons()
    ),
    "refund of one cent under every rule": lambda: check(
        propose(REFUND, usd(1), params=DAMAGED), payment(), policy=STRICT, order=aprons()
    ),
    "refund split over both aprons": lambda: check(
        propose(REFUND, usd(3000), lines=[("apron-1", 1000), ("apron-2", 2000)]),
        payment(),
        order=aprons(),
    ),
    "refund under a refund window with no order found": lambda: check(
        propose(REFUND, usd(1000), params=DAMAGED), payment(), policy=STRICT
    ),
    # Customer credits
    "credit to a live customer, with a credit already there": lambda: check(
        propose(CREDIT, usd(1000), target=CUSTOMER, proposal_id="act_c"),
        customer(credits=[credit_record("txn_1", -1000), credit_record("txn_2", 1000)]),
    ),
    "credit that sets the balance currency": lambda: check(
        propose(CREDIT, Money(1000, "eur"), target=CUSTOMER), customer(balance_currency=None)
    ),
    "credit whose write already reached the provider": lambda: check(
        propose(CREDIT, usd(1000), target=CUSTOMER, proposal_id="act_c"),
        customer(credits=[credit_record("txn_1", -1000, action_id="act_c")]),
    ),
    "credit to a missing customer": lambda: check(
        propose(CREDIT, usd(1000), target=CUSTOMER), customer(exists=False)
    ),
    "credit checked against another customer's facts": lambda: check(
        propose(CREDIT, usd(1000), target=CUSTOMER), customer(id="cus_bob")
    ),
    "credit with no amount": lambda: check(propose(CREDIT, None, target=CUSTOMER), customer()),
    "credit to a customer of another case": lambda: check(
        propose(CREDIT, usd(1000), target="cus_bob", customer_ref=None),
        customer(id="cus_bob"),
    ),
    "credit of zero": lambda: check(propose(CREDIT, usd(0), target=CUSTOMER), customer()),
    # Discounts
    "percent discount, repeating": lambda: check(
        propose(
            DISCOUNT,
            usd(2000),
            target=CUSTOMER,
            params={"percent_off": 20, "duration": "repeating", "duration_in_months": 3},
            proposal_id="act_d",
        ),
        customer(discounts=[discount("promo_20", percent=20), discount("promo_10", percent=10)]),
    ),
    "amount-off discount, once": lambda: check(
        propose(
            DISCOUNT, usd(500), target=CUSTOMER, params={"amount_off": 500, "duration": "once"}
        ),
        customer(discounts=[discount("promo_5", off=500), discount("promo_6", off=600)]),
    ),
    "discount whose write already reached the provider": lambda: check(
        propose(
            DISCOUNT,
            usd(500),
            target=CUSTOMER,
            params={"amount_off": 500, "duration": "forever"},
            proposal_id="act_d",
        ),
        customer(discounts=[discount("promo_d", off=500, action_id="act_d")]),
    ),
    "percent discount without an amount": lambda: check(
        propose(DISCOUNT, None, target=CUSTOMER, params={"percent_off": 10, "duration": "once"}),
        customer(),
    ),
    "amount-off discount without an amount": lambda: check(
        propose(DISCOUNT, None, target=CUSTOMER, params={"amount_off": 700, "duration": "once"}),
        customer(),
    ),
    "discount with every term wrong": lambda: check(
        propose(
            DISCOUNT,
            usd(500),
            target=CUSTOMER,
            params={"percent_off": 0, "amount_off": -5, "duration": 5, "duration_in_months": 2},
        ),
        customer(),
    ),
    "discount above the shop's maximum, amount off not the amount": lambda: check(
        propose(
            DISCOUNT,
            usd(500),
            target=CUSTOMER,
            params={"percent_off": 60, "amount_off": 400, "duration": "repeating"},
        ),
        customer(),
    ),
    "discount with no terms and months on a one-off": lambda: check(
        propose(
            DISCOUNT,
            usd(500),
            target=CUSTOMER,
            params={"duration": "once", "duration_in_months": 1},
        ),
        customer(),
    ),
    "discount of zero to a missing customer": lambda: check(
        propose(DISCOUNT, usd(0), target=CUSTOMER, params={"percent_off": 5, "duration": "once"}),
        customer(exists=False),
    ),
    "101% off under a 100% maximum": lambda: check(
        propose(
            DISCOUNT, usd(500), target=CUSTOMER, params={"percent_off": 101, "duration": "once"}
        ),
        customer(),
        policy=PolicyRules(max_percent_off=100),
    ),
    # Subscriptions
    "cancel at the end of a period without a known end": lambda: check(
        propose(CANCEL, None, target=SUB, params={"at_period_end": True}, proposal_id="act_s"),
        subscription(period_end=False),
    ),
    "cancel a subscription already set to cancel, period end unknown": lambda: check(
        propose(CANCEL, None, target=SUB, params={"at_period_end": True}),
        subscription(cancel_at_period_end=True, period_end=False),
    ),
    "cancel an ended subscription, timing unsaid": lambda: check(
        propose(CANCEL, None, target=SUB), subscription("incomplete_expired")
    ),
    "cancel checked against another subscription's facts": lambda: check(
        propose(CANCEL, None, target=SUB, params={"at_period_end": False}),
        subscription(id="sub_other"),
    ),
    "cancel now under a policy with caps": lambda: check(
        propose(CANCEL, None, target=SUB, params={"at_period_end": False, **DAMAGED}),
        subscription(),
        policy=STRICT,
    ),
    "cancel with a vague timing": lambda: check(
        propose(CANCEL, None, target=SUB, params={"at_period_end": "yes"}), subscription()
    ),
    "change a subscription with no items on record": lambda: check(
        propose(CHANGE, None, target=SUB, params={"items": [("price_yearly", 1)]}),
        replace(subscription(), items=()),
    ),
    "cancel carrying an amount above the two-person threshold": lambda: check(
        propose(CANCEL, usd(6000), target=SUB, params={"at_period_end": True, **DAMAGED}),
        subscription(),
        policy=STRICT,
    ),
    "change items and the toggle": lambda: check(
        propose(
            CHANGE,
            None,
            target=SUB,
            params={
                "items": [("price_yearly", 1), ("price_aprons", 2)],
                "cancel_at_period_end": True,
            },
        ),
        subscription("trialing"),
    ),
    "change to exactly what it is": lambda: check(
        propose(
            CHANGE,
            None,
            target=SUB,
            params={
                "items": [("price_napkins", 2), ("price_monthly", 1)],
                "cancel_at_period_end": False,
            },
        ),
        subscription(),
    ),
    "change of a past-due subscription with bad terms": lambda: check(
        propose(
            CHANGE,
            usd(100),
            target=SUB,
            lines=[("apron-1", 100)],
            params={
                "items": [("price_yearly", 1, 2)],
                "cancel_at_period_end": "soon",
                "note": "x",
            },
        ),
        subscription("past_due"),
    ),
    "change of a missing subscription": lambda: check(
        propose(CHANGE, None, target=SUB, params={"cancel_at_period_end": True}),
        subscription(exists=False),
    ),
}


def _stored(verdict: Verdict) -> dict[str, Any]:
    """The verdict as the API returns it and the records keep it."""
    result: dict[str, Any] = json.loads(json.dumps(verdict.to_dict()))
    return result


def _as_json(verdict: Verdict) -> dict[str, Any]:
    """What a person reads: the stored verdict less the sentences behind its English."""
    result = _stored(verdict)
    del result["approval_said"]
    for result_check in result["checks"]:
        del result_check["said"]
    return result


class Marked:
    """A catalogue that marks every message it translates, to see what went through it."""

    def gettext(self, message: str) -> str:
        return f"⟦{message}⟧"

    def ngettext(self, singular: str, plural: str, n: int) -> str:
        return f"⟦{singular if n == 1 else plural}⟧"


def _through_the_catalogue(stored: dict[str, Any]) -> str:
    return Sentence.from_dict(stored).in_locale(Marked(), "en_US")


def _golden() -> dict[str, Any]:
    if not GOLDEN.exists():
        return {}
    result: dict[str, Any] = json.loads(GOLDEN.read_text())
    return result


def test_every_scenario_has_a_reviewed_verdict() -> None:
    if os.environ.get("CASEWARD_REWRITE_VERDICTS"):
        rewritten = {name: _as_json(build()) for name, build in SCENARIOS.items()}
        GOLDEN.write_text(json.dumps(rewritten, indent=2, ensure_ascii=False) + "\n")
        pytest.fail(f"rewrote {GOLDEN.name}: review its diff, then run again without the flag")
    assert sorted(_golden()) == sorted(SCENARIOS)


@pytest.mark.parametrize("scenario", list(SCENARIOS))
def test_the_verdict_reads_as_reviewed(scenario: str) -> None:
    expected = _golden()[scenario]

    actual = _as_json(SCENARIOS[scenario]())

    assert actual["checks"] == expected["checks"]
    assert actual == expected


@pytest.mark.parametrize("scenario", list(SCENARIOS))
def test_every_reason_is_said_through_the_catalogue_as_its_english(scenario: str) -> None:
    stored = _stored(SCENARIOS[scenario]())

    sentences = [(stored["approval_said"], stored["approval_reason"])]
    sentences += [
        (stored_check["said"], stored_check["reason"]) for stored_check in stored["checks"]
    ]

    for sentence, english in sentences:
        said = _through_the_catalogue(sentence)
        assert said.startswith("⟦") and said.endswith("⟧"), said
        assert said.replace("⟦", "").replace("⟧", "") == english
