"""The offline rules, one by one: who gets asked to verify, which order and lines a refund
names, when the customer is asked which order, when a person takes over, and what the
customer is told about a shipment."""

from __future__ import annotations

import re
from datetime import timedelta

import pytest
from drafting_support import (
    SHOP_NAME,
    aprons_order,
    basket_order,
    brief_from,
    stored_case,
)
from sqlalchemy.orm import Session

from app.cases.models import Order
from app.clock import utcnow
from app.drafting.brief import CaseBrief, ShipmentBrief
from app.drafting.drafters import RulesDrafter
from app.drafting.offline import OfflineDrafter
from app.drafting.result import LinePick, NextStep, StepProposal
from app.drafting.service import brief_for
from integrations.provider import ActionKind

TORN = "One of the two aprons arrived torn."
rules = OfflineDrafter()


def test_an_unverified_customer_is_asked_to_verify_and_told_nothing_of_orders() -> None:
    brief = brief_from(
        ["My order #1001 arrived torn, refund it please."], [aprons_order()], verified=False
    )

    draft = rules.draft(brief)

    assert draft.step == NextStep.ASK_TO_VERIFY
    assert draft.proposal is None
    assert "verify" in draft.reply
    assert not re.search(r"#?\d{3,}", draft.reply)
    assert "apron" not in draft.reply.lower()


def test_one_damaged_item_of_the_only_order_is_proposed_for_refund() -> None:
    draft = rules.draft(brief_from([TORN], [aprons_order()]))

    assert draft.step == NextStep.PROPOSE
    assert draft.proposal == StepProposal(
        kind=ActionKind.REFUND,
        order="#1001",
        lines=(LinePick("L1", 1),),
        reason="Customer asks for a refund for 1 x Linen apron from #1001.",
    )
    assert "a refund of $24.00 for 1 x Linen apron from order #1001" in draft.reply
    assert "review" in draft.reply


@pytest.mark.parametrize(
    ("words", "lines", "amount"),
    [
        ("Both aprons arrived torn.", (LinePick("L1", 2),), "$48.00"),
        ("Two tea towels arrived ripped.", (LinePick("L2", 2),), "$24.00"),
        ("My order arrived damaged, I want my money back.", (), "$84.00"),
    ],
)
def test_the_lines_follow_the_customer_s_words(
    words: str, lines: tuple[LinePick, ...], amount: str
) -> None:
    draft = rules.draft(brief_from([words], [aprons_order()]))

    assert draft.proposal is not None
    assert draft.proposal.lines == lines
    assert f"a refund of {amount}" in draft.reply


def test_store_credit_is_proposed_as_credit() -> None:
    draft = rules.draft(
        brief_from(["One apron was torn, I'd take store credit."], [aprons_order()])
    )

    assert draft.proposal is not None
    assert draft.proposal.kind == ActionKind.CUSTOMER_CREDIT
    assert "store credit of $24.00" in draft.reply


def test_several_orders_and_nothing_exact_asks_which_order() -> None:
    draft = rules.draft(brief_from([TORN], [aprons_order(), basket_order()]))

    assert draft.step == NextStep.ASK_WHICH_ORDER
    assert draft.proposal is None
    assert draft.reply == "Which order is this about? I can see #1001, #1002."


def test_an_order_named_exactly_is_the_one_proposed() -> None:
    brief = brief_from(
        ["The bread basket from #1002 arrived broken."], [aprons_order(), basket_order()]
    )

    draft = rules.draft(brief)

    assert brief.picked_order == "#1002"
    assert draft.proposal is not None
    assert (draft.proposal.order, draft.proposal.lines) == ("#1002", (LinePick("L3", 1),))
    assert "a refund of $32.00" in draft.reply


@pytest.mark.parametrize(
    "orders",
    [
        pytest.param([aprons_order(), basket_order()], id="two orders"),
        pytest.param([aprons_order()], id="one order"),
    ],
)
def test_an_amount_matching_no_order_asks_which_order_and_tells_staff(orders: list[Order]) -> None:
    brief = brief_from(["I paid $55.00 and the apron arrived torn."], orders)

    draft = rules.draft(brief)

    assert brief.unmatched == ("$55.00",)
    assert draft.step == NextStep.ASK_WHICH_ORDER
    assert "Quoted but matching none: $55.00." in draft.summary
    assert "$55.00" not in draft.reply


@pytest.mark.parametrize(
    "brief",
    [
        pytest.param(brief_from(["I want to talk to a human."], [aprons_order()]), id="asks"),
        pytest.param(brief_from([TORN], [aprons_order()], wants_person=True), id="asked before"),
        pytest.param(
            brief_from(["Can I talk to someone?"], [aprons_order()], verified=False),
            id="unverified",
        ),
    ],
)
def test_a_customer_who_asks_for_a_person_gets_one(brief: CaseBrief) -> None:
    draft = rules.draft(brief)

    assert draft.step == NextStep.NEEDS_PERSON
    assert draft.proposal is None
    assert draft.reply.startswith(f"Thanks for your message. A member of the {SHOP_NAME} team")


@pytest.mark.parametrize(
    ("shipment", "delivered", "reply"),
    [
        pytest.param(
            ShipmentBrief(
                "in_transit",
                carrier="UPS",
                tracking_number="1Z999AA10123456784",
                tracking_url="https://www.ups.com/track?tracknum=1Z999AA10123456784",
                estimated_delivery="2024-05-09",
            ),
            False,
            "Order #1001 is on its way with UPS. Tracking number: 1Z999AA10123456784 "
            "(https://www.ups.com/track?tracknum=1Z999AA10123456784). Expected by 2024-05-09.",
            id="in transit",
        ),
        pytest.param(
            None,
            False,
            "Order #1001 has not shipped yet. We will send tracking details when it does.",
            id="unfulfilled",
        ),
        pytest.param(None, True, "Order #1001 was delivered.", id="delivered"),
    ],
)
def test_where_is_my_order_is_answered_with_the_shipment(
    shipment: ShipmentBrief | None, delivered: bool, reply: str
) -> None:
    order = aprons_order()
    order.delivered_at = utcnow() if delivered else None
    brief = brief_from(
        ["Where is my order?"], [order], shipments={"#1001": shipment} if shipment else None
    )

    draft = rules.draft(brief)

    assert draft.step == NextStep.ANSWER
    assert draft.proposal is None
    assert draft.reply == reply


def test_where_is_my_order_with_several_orders_asks_which() -> None:
    draft = rules.draft(brief_from(["Where is my order?"], [aprons_order(), basket_order()]))

    assert draft.step == NextStep.ASK_WHICH_ORDER
    assert "#1001, #1002" in draft.reply


def test_a_proposal_already_open_is_answered_not_proposed_again() -> None:
    draft = rules.draft(brief_from([TORN], [aprons_order()], proposal_open=True))

    assert draft.step == NextStep.ANSWER
    assert draft.proposal is None
    assert "with our team" in draft.reply
    assert "$" not in draft.reply


def test_a_request_the_rules_do_not_know_goes_to_a_person() -> None:
    draft = rules.draft(brief_from(["Do you sell gift cards?"], [aprons_order()]))

    assert draft.step == NextStep.NEEDS_PERSON


@pytest.mark.parametrize(
    "words", [TORN, "Where is my order?", "I want to talk to a human.", "Do you sell gift cards?"]
)
def test_the_rules_draft_passes_the_parser_claude_s_draft_passes(words: str) -> None:
    brief = brief_from([words], [aprons_order()])

    run = RulesDrafter().run(brief)

    assert run.draft == rules.draft(brief)
    assert (run.drafter, run.failure, run.usage) == ("offline", None, None)


def test_a_shipped_order_is_never_said_to_be_unshipped(session: Session) -> None:
    order = aprons_order()
    order.fulfilled_at = utcnow() - timedelta(days=2)
    stored = stored_case(session, "Where is my order?", order=order)
    brief, _ = brief_for(
        session, shop=stored.shop, case=stored.case, conversation=stored.conversation
    )

    draft = rules.draft(brief)

    assert draft.step == NextStep.ANSWER
    assert "not shipped" not in draft.reply
