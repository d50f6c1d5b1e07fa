"""The offline rules, one by one: who gets asked to verify, which order and lines a refund
claims and proposes (never more than the customer's words name), when the customer is
asked which order or which items, when a person takes over, and what the customer
reads: the rules' own words followed by Caseward's sentences, composed when the draft
is applied to the saved case."""

from __future__ import annotations

import re
from datetime import timedelta
from typing import Any

import pytest
from drafting_support import (
    SHOP_NAME,
    SHOPPER,
    aprons_order,
    basket_order,
    brief_from,
    drafted,
    paid_case,
    stored_case,
)
from sqlalchemy.orm import Session

from app.cases.models import Order
from app.clock import utcnow
from app.conversations.service import receive_message
from app.drafting.drafters import RulesDrafter
from app.drafting.offline import OfflineDrafter
from app.drafting.result import Claim, ClaimedLine, Fact, LinePick, NextStep, StepProposal
from app.drafting.service import brief_for
from app.settings import Settings
from integrations.provider import ActionKind
from integrations.stripe.sandbox import StripeSandbox

TORN = "One of the two aprons arrived torn."
PERSON_REPLIES = (
    f"A member of the {SHOP_NAME} team will reply here, usually within one business day."
)
rules = OfflineDrafter()


def test_an_unverified_customer_is_asked_to_verify_and_told_nothing_of_orders(
    session: Session, settings: Settings
) -> None:
    words = "My order #1001 arrived torn, refund it please."
    draft = rules.draft(brief_from([words], [aprons_order()], verified=False))
    stored = stored_case(session, words, verified=False)

    reply = drafted(session, stored, RulesDrafter(), settings).reply

    assert draft.step == NextStep.ASK_TO_VERIFY
    assert (draft.proposal, draft.claim) == (None, None)
    assert reply is not None and "verify" in reply.body
    assert not re.search(r"#?\d{3,}", reply.body)
    assert "apron" not in reply.body.lower()


def test_one_damaged_item_of_the_only_order_is_claimed_and_proposed_for_refund(
    session: Session, settings: Settings, sandbox: StripeSandbox
) -> None:
    draft = rules.draft(brief_from([TORN], [aprons_order()]))
    paid = paid_case(session, TORN, stripe=sandbox)

    result = drafted(session, paid, RulesDrafter(), settings, adapters=paid.adapters)

    assert draft.step == NextStep.PROPOSE
    assert draft.claim == Claim("#1001", (ClaimedLine("L1", 1, "the customer asks for a refund"),))
    assert draft.proposal == StepProposal(
        kind=ActionKind.REFUND,
        order="#1001",
        lines=(LinePick("L1", 1),),
        reason="Customer asks for a refund for 1 x Linen apron from #1001.",
    )
    assert result.proposal is not None and result.proposal.proposal.amount == 2400
    assert result.reply is not None
    assert "a refund of $24.00 for 1 x Linen apron from order #1001" in result.reply.body
    assert "review" in result.reply.body


@pytest.mark.parametrize(
    ("words", "told"),
    [
        ("Both aprons arrived torn.", "a refund of $48.00 for 2 x Linen apron"),
        ("Two tea towels arrived ripped.", "a refund of $24.00 for 2 x Tea towel"),
        pytest.param(
            "Both aprons and all three tea towels arrived damaged.",
            "a refund of $84.00 for 2 x Linen apron and 3 x Tea towel",
            id="every line named: the whole order",
        ),
    ],
)
def test_the_lines_follow_the_customer_s_words(
    session: Session, settings: Settings, sandbox: StripeSandbox, words: str, told: str
) -> None:
    draft = rules.draft(brief_from([words], [aprons_order()]))
    paid = paid_case(session, words, stripe=sandbox)

    reply = drafted(session, paid, RulesDrafter(), settings, adapters=paid.adapters).reply

    assert draft.claim is not None and draft.proposal is not None
    # The proposal is exactly the claim, line by line.
    assert draft.proposal.lines == tuple(LinePick(c.line_id, c.quantity) for c in draft.claim.lines)
    assert reply is not None and f"{told} from order #1001" in reply.body


def test_a_request_naming_no_item_asks_which_items_and_proposes_nothing(
    session: Session, settings: Settings
) -> None:
    """The whole order is never proposed by default: every line must be named."""
    words = "My order arrived damaged, I want my money back."
    draft = rules.draft(brief_from([words], [aprons_order()]))
    stored = stored_case(session, words)

    result = drafted(session, stored, RulesDrafter(), settings)

    assert draft.step == NextStep.ASK_WHICH_ITEMS
    assert (draft.proposal, draft.claim) == (None, None)
    assert result.proposal is None
    assert result.reply is not None
    assert result.reply.body == (
        "I'm sorry to hear that. Which items from order #1001 are affected, and how many of each?"
    )


def test_a_single_item_order_is_claimed_by_asking_for_a_refund(
    session: Session, settings: Settings, sandbox: StripeSandbox
) -> None:
    words = "My order arrived broken, I want my money back."
    paid = paid_case(session, words, stripe=sandbox, orders=[basket_order()])

    result = drafted(session, paid, RulesDrafter(), settings, adapters=paid.adapters)

    assert result.reply is not None
    assert "a refund of $32.00 for 1 x Bread basket from order #1002" in result.reply.body


def test_store_credit_is_proposed_as_credit(
    session: Session, settings: Settings, sandbox: StripeSandbox
) -> None:
    words = "One apron was torn, I'd take store credit."
    draft = rules.draft(brief_from([words], [aprons_order()]))
    paid = paid_case(session, words, stripe=sandbox)

    reply = drafted(session, paid, RulesDrafter(), settings, adapters=paid.adapters).reply

    assert draft.proposal is not None
    assert draft.proposal.kind == ActionKind.CUSTOMER_CREDIT
    assert reply is not None and "store credit of $24.00 for 1 x Linen apron" in reply.body


def test_several_orders_and_nothing_exact_asks_which_order(
    session: Session, settings: Settings, sandbox: StripeSandbox
) -> None:
    draft = rules.draft(brief_from([TORN], [aprons_order(), basket_order()]))
    paid = paid_case(session, TORN, stripe=sandbox, orders=[aprons_order(), basket_order()])

    result = drafted(session, paid, RulesDrafter(), settings, adapters=paid.adapters)

    assert draft.step == NextStep.ASK_WHICH_ORDER
    assert draft.proposal is None
    assert result.proposal is None
    assert result.reply is not None
    assert result.reply.body == (
        "I'm sorry to hear that. Which order is this about? I can see #1001, #1002."
    )


def test_an_order_named_exactly_is_the_one_proposed(
    session: Session, settings: Settings, sandbox: StripeSandbox
) -> None:
    words = "The bread basket from #1002 arrived broken."
    brief = brief_from([words], [aprons_order(), basket_order()])
    paid = paid_case(session, words, stripe=sandbox, orders=[aprons_order(), basket_order()])

    draft = rules.draft(brief)
    reply = drafted(session, paid, RulesDrafter(), settings, adapters=paid.adapters).reply

    assert brief.picked_order == "#1002"
    assert draft.proposal is not None
    assert (draft.proposal.order, draft.proposal.lines) == ("#1002", (LinePick("L3", 1),))
    assert reply is not None
    assert "a refund of $32.00 for 1 x Bread basket from order #1002" in reply.body


@pytest.mark.parametrize(
    ("orders", "step", "staff_read"),
    [
        pytest.param(
            [aprons_order(), basket_order()],
            NextStep.ASK_WHICH_ORDER,
            "Quoted but matching none: $55.00.",
            id="two orders",
        ),
        pytest.param(
            [aprons_order()],
            NextStep.NEEDS_PERSON,
            "The customer quoted $55.00, which matches none of their orders",
            id="the one order she verified with",
        ),
    ],
)
def test_an_amount_matching_no_order_is_never_proposed_and_staff_are_told(
    session: Session,
    settings: Settings,
    sandbox: StripeSandbox,
    orders: list[Order],
    step: NextStep,
    staff_read: str,
) -> None:
    words = "I paid $55.00 and the apron arrived torn."
    paid = paid_case(session, words, stripe=sandbox, orders=orders)
    brief, _ = brief_for(session, shop=paid.shop, case=paid.case, conversation=paid.conversation)

    draft = rules.draft(brief)
    result = drafted(session, paid, RulesDrafter(), settings, adapters=paid.adapters)

    assert brief.unmatched == ("$55.00",)
    assert draft.step == step
    assert draft.proposal is None
    assert staff_read in draft.summary
    assert result.proposal is None
    assert result.reply is not None and "$55.00" not in result.reply.body


@pytest.mark.parametrize(
    ("words", "verified", "wants_person"),
    [
        pytest.param("I want to talk to a human.", True, False, id="asks"),
        pytest.param(TORN, True, True, id="asked before"),
        pytest.param("Can I talk to someone?", False, False, id="unverified"),
    ],
)
def test_a_customer_who_asks_for_a_person_gets_one(
    session: Session, settings: Settings, words: str, verified: bool, wants_person: bool
) -> None:
    brief = brief_from([words], [aprons_order()], verified=verified, wants_person=wants_person)
    stored = stored_case(session, words, verified=verified)
    stored.conversation.wants_person = wants_person

    draft = rules.draft(brief)
    reply = drafted(session, stored, RulesDrafter(), settings).reply

    assert draft.step == NextStep.NEEDS_PERSON
    assert draft.proposal is None
    assert reply is not None
    assert reply.body == f"Thanks for your message. {PERSON_REPLIES}"


def test_where_is_my_order_asks_caseward_to_tell_the_shipment() -> None:
    draft = rules.draft(brief_from(["Where is my order?"], [aprons_order()]))

    assert draft.step == NextStep.ANSWER
    assert draft.proposal is None
    assert draft.tell == (Fact.SHIPMENT,)


SHIPPED = utcnow() - timedelta(days=2)
IN_TRANSIT: dict[str, Any] = {
    "status": "in_transit",
    "carrier": "UPS",
    "tracking_number": "1Z999AA10123456784",
    "tracking_url": "https://www.ups.com/track?tracknum=1Z999AA10123456784",
    "shipped_at": "2024-05-02T09:30:00+00:00",
    "estimated_delivery": "2024-05-09T18:00:00+00:00",
}


@pytest.mark.parametrize(
    ("shipments", "delivered", "told"),
    [
        pytest.param(
            [IN_TRANSIT],
            False,
            "Order #1001 is on its way with UPS. Tracking number: 1Z999AA10123456784 "
            "(https://www.ups.com/track?tracknum=1Z999AA10123456784). Expected by 2024-05-09.",
            id="in transit",
        ),
        pytest.param(
            [],
            False,
            "Order #1001 has not shipped yet. We will send tracking details when it does.",
            id="unfulfilled",
        ),
        pytest.param([], True, "Order #1001 was delivered.", id="delivered"),
    ],
)
def test_where_is_my_order_is_answered_with_the_shipment(
    session: Session,
    settings: Settings,
    shipments: list[dict[str, Any]],
    delivered: bool,
    told: str,
) -> None:
    order = aprons_order()
    order.shipments = shipments
    order.fulfilled_at = SHIPPED if shipments or delivered else None
    order.delivered_at = utcnow() if delivered else None
    stored = stored_case(session, "Where is my order?", order=order)

    reply = drafted(session, stored, RulesDrafter(), settings).reply

    assert reply is not None and reply.body == f"Happy to help. {told}"


def test_where_is_my_order_with_several_orders_asks_which() -> None:
    draft = rules.draft(brief_from(["Where is my order?"], [aprons_order(), basket_order()]))

    assert draft.step == NextStep.ASK_WHICH_ORDER
    assert draft.tell == ()


def test_a_proposal_already_open_is_answered_with_the_case_status_not_proposed_again(
    session: Session, settings: Settings, sandbox: StripeSandbox
) -> None:
    paid = paid_case(session, TORN, stripe=sandbox)
    first = drafted(session, paid, RulesDrafter(), settings, adapters=paid.adapters)
    assert first.proposal is not None
    receive_message(
        session,
        conversation=paid.conversation,
        body="Any news? The other apron is torn too.",
        actor=SHOPPER,
        now=utcnow(),
    )

    again = drafted(session, paid, RulesDrafter(), settings, adapters=paid.adapters)

    assert again.record.next_step == NextStep.ANSWER
    assert again.proposal is None
    assert again.reply is not None
    assert again.reply.body == (
        "Thanks for your message. Your request is with our team; I will tell you here as "
        "soon as there is news."
    )
    assert rules.draft(brief_from([TORN], [aprons_order()], proposal_open=True)).tell == (
        Fact.CASE_STATUS,
    )


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


def test_a_shipped_order_is_never_said_to_be_unshipped(
    session: Session, settings: Settings
) -> None:
    order = aprons_order()
    order.fulfilled_at = SHIPPED
    stored = stored_case(session, "Where is my order?", order=order)

    reply = drafted(session, stored, RulesDrafter(), settings).reply

    assert reply is not None
    assert reply.body == "Happy to help. Order #1001 is on its way."
