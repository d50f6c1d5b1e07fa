"""What the customer may be told: ``check_reply`` refuses claims the provider has not
reported and amounts nobody proposed; ``status_update`` words each reported status."""

from __future__ import annotations

import pytest

from app.conversations.replies import ActionBrief, check_reply
from app.conversations.to_customer import status_update
from app.execution.models import ActionStatus
from app.money import Money
from app.words import said
from integrations.provider import ActionKind

USD_48 = Money(4800, "usd")
SHOP = "Linen & Loom"
OWNER = said("A member of the %(shop)s team", shop=SHOP)


def refund(status: str, amount: Money | None = USD_48) -> ActionBrief:
    return ActionBrief(kind=ActionKind.REFUND, amount=amount, status=status)


@pytest.mark.parametrize(
    ("reply", "actions", "refused"),
    [
        ("Your refund has been processed.", [], True),
        ("Your refund has been processed.", [refund(ActionStatus.PENDING)], True),
        ("Your refund has been processed.", [refund(ActionStatus.FAILED)], True),
        ("Your refund has been processed.", [refund(ActionStatus.SUCCEEDED)], False),
        ("We have refunded you.", [], True),
        ("Your refund is complete.", [], True),
        ("Your refund has been submitted.", [], True),
        ("Your refund has been submitted.", [refund(ActionStatus.PENDING)], False),
        ("Your refund was approved.", [], True),
        ("Your refund was approved.", [refund(ActionStatus.QUEUED)], False),
        ("You will receive a refund shortly.", [], True),
        ("Your order has not been refunded yet.", [], False),
        pytest.param(
            "Your order hasn't been refunded yet.",
            [],
            False,
        ),
        ("I've prepared a refund request for our team to review.", [], False),
        # Words that claim nothing about money.
        ("Your parcel is on its way and was shipped on Monday.", [], False),
    ],
)
def test_a_claim_needs_an_action_the_provider_reported_in_that_state(
    reply: str, actions: list[ActionBrief], refused: bool
) -> None:
    assert bool(check_reply(reply, actions=actions)) is refused


@pytest.mark.parametrize(
    ("reply", "proposed", "actions", "refused"),
    [
        ("I've prepared a refund of $48.00 for review.", [USD_48], [], False),
        (
            "I've prepared a refund of $48.00 for review.",
            [],
            [refund(ActionStatus.PENDING)],
            False,
        ),
        ("I've prepared a refund of $48.00 for review.", [], [], True),
        ("I've prepared a refund of $48.00 for review.", [Money(4700, "usd")], [], True),
        ("I've prepared a refund of $48 for review.", [USD_48], [], False),
        ("I've prepared a refund of 48.00 USD for review.", [USD_48], [], False),
        ("I've prepared a refund of 48.00 EUR for review.", [USD_48], [], True),
        ("I've prepared a refund of $1,500.00 for review.", [Money(150000, "usd")], [], False),
        ("I've prepared a refund of $48.00 and $12.00 for review.", [USD_48], [], True),
        # Zero-decimal: 480 yen is 480 minor units.
        ("I've prepared a refund of ¥480 for review.", [Money(480, "jpy")], [], False),
        ("I've prepared a refund of 480 JPY for review.", [Money(480, "jpy")], [], False),
        ("I've prepared a refund of ¥4.80 for review.", [Money(480, "jpy")], [], True),
        ("I've prepared a refund of ¥48 for review.", [Money(480, "jpy")], [], True),
    ],
)
def test_an_amount_must_be_one_under_review_or_approved(
    reply: str, proposed: list[Money], actions: list[ActionBrief], refused: bool
) -> None:
    assert bool(check_reply(reply, actions=actions, proposed=proposed)) is refused


def test_a_refused_reply_names_each_claim() -> None:
    problems = check_reply(
        "Your refund of $500 has been processed and approved.", actions=[], proposed=[USD_48]
    )

    assert [problem.claim for problem in problems] == ["been processed", "approved", "$500"]
    assert str(problems[-1].reason) == (
        "the reply names $500, which is not the amount under review or approved"
    )


@pytest.mark.parametrize(
    ("reply", "proposed", "refused"),
    [
        pytest.param(
            "I've prepared a refund of $48.00 for review.",
            [Money(4800, "eur")],
            True,
            id="dollars for a euro proposal",
        ),
        pytest.param(
            "I've prepared a refund of $4800.00 for review.",
            [Money(48000, "usd")],
            True,
            id="four digits read as three",
        ),
        pytest.param(
            "I've prepared a refund of $1500.00 for review.",
            [Money(150000, "usd")],
            False,
            id="four digits without a comma",
        ),
        pytest.param(
            "I've prepared a refund of BHD 1.500 for review.",
            [],
            True,
            id="three decimals",
        ),
        pytest.param(
            "I've prepared a refund of 500 dollars for review.",
            [USD_48],
            True,
            id="in words",
        ),
        pytest.param(
            "I've prepared a refund of USD 500 for review.",
            [USD_48],
            True,
            id="code first",
        ),
    ],
)
def test_amounts_are_read_however_they_are_written(
    reply: str, proposed: list[Money], refused: bool
) -> None:
    assert bool(check_reply(reply, actions=[], proposed=proposed)) is refused


@pytest.mark.parametrize(
    "reply", ["Your refund was successful.", "The refund went through this morning."]
)
def test_other_words_for_done_are_refused_too(reply: str) -> None:
    assert check_reply(reply, actions=[]) != []


def test_pending_says_submitted_and_how_long_refunds_take() -> None:
    update = status_update(
        ActionKind.REFUND, ActionStatus.PENDING, USD_48, shop_name=SHOP, owner=OWNER
    )

    assert str(update) == (
        "Your refund of $48.00 has been submitted to the payment provider. "
        "Refunds usually show on your statement within 5 to 10 business days."
    )


def test_succeeded_names_the_original_payment_method() -> None:
    update = status_update(
        ActionKind.REFUND, ActionStatus.SUCCEEDED, USD_48, shop_name=SHOP, owner=OWNER
    )

    assert "Your refund of $48.00 has been made to your original payment method." in str(update)


def test_succeeded_store_credit_names_the_shop() -> None:
    update = status_update(
        ActionKind.CUSTOMER_CREDIT, ActionStatus.SUCCEEDED, USD_48, shop_name=SHOP, owner=OWNER
    )

    assert str(update) == "Store credit of $48.00 has been added to your account at Linen & Loom."


@pytest.mark.parametrize("status", [ActionStatus.FAILED, ActionStatus.CANCELED])
def test_failed_says_nothing_was_taken_and_who_will_be_in_touch(status: str) -> None:
    update = status_update(ActionKind.REFUND, status, USD_48, shop_name=SHOP, owner=OWNER)

    assert str(update) == (
        "Your refund of $48.00 could not be completed by the payment provider. Nothing has "
        "been taken from you. A member of the Linen & Loom team will contact you here about "
        "what happens next."
    )


@pytest.mark.parametrize(
    "status", [ActionStatus.QUEUED, ActionStatus.SUBMITTING, ActionStatus.UNKNOWN]
)
def test_the_customer_is_not_told_of_our_own_statuses(status: str) -> None:
    assert status_update(ActionKind.REFUND, status, USD_48, shop_name=SHOP, owner=OWNER) is None


@pytest.mark.parametrize(
    "status", [ActionStatus.PENDING, ActionStatus.SUCCEEDED, ActionStatus.FAILED]
)
def test_caseward_s_own_update_passes_its_own_check(status: str) -> None:
    update = status_update(ActionKind.REFUND, status, USD_48, shop_name=SHOP, owner=OWNER)

    assert check_reply(str(update), actions=[refund(status)]) == []
