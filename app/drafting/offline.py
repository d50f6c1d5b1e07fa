"""The offline drafter: rules that draft a case when no Claude key is set.

Deterministic, so the demo and the tests read the same every time. The rules, in order:

1. the customer asks for a person, or the conversation already wants one: a person;
2. the customer is not verified: ask them to verify (no order is in their brief);
3. a refund or credit request (damaged, torn, wrong item, money back, ...): which
   order (exactly picked, else ask which), which lines (a line whose title the customer
   names, with the number they say, "one of", "both"; none named: the whole order),
   then a proposal, unless one already waits for a person;
4. where is my order: the order's shipment, read-only;
5. anything else: a person.
"""

from __future__ import annotations

import re

from app.drafting.brief import CaseBrief, OrderBrief
from app.drafting.proposals import share_paid
from app.drafting.result import CaseDraft, LinePick, NextStep, StepProposal
from app.money import Money
from integrations.provider import ActionKind

_PERSON = re.compile(
    r"\b(?:human|real person|a person|someone real|agent|talk to (?:someone|somebody|a))\b",
    re.IGNORECASE,
)
_REFUND = re.compile(
    r"\b(?:refund|money back|reimburs\w*|return|damaged|broken|torn|ripped|defective|faulty"
    r"|wrong (?:item|size|colou?r)|never (?:arrived|came)|missing)\b",
    re.IGNORECASE,
)
_CREDIT = re.compile(r"\b(?:store credit|credit instead|as credit)\b", re.IGNORECASE)
_WHERE = re.compile(
    r"\b(?:where is|where's|track(?:ing)?|shipp(?:ed|ing)|deliver(?:y|ed)?|when will .* arrive)\b",
    re.IGNORECASE,
)
_NUMBERS = {"one": 1, "a": 1, "an": 1, "two": 2, "both": 0, "three": 3, "four": 4, "five": 5}
_STOP_WORDS = frozenset({"with", "from", "your", "this", "that", "size", "color", "colour"})


class OfflineDrafter:
    name = "offline"

    def draft(self, brief: CaseBrief) -> CaseDraft:
        words = " ".join(brief.customer_texts[-3:])
        if brief.wants_person or _PERSON.search(words):
            return _person(brief, "The customer asked for a person.")
        if not brief.verified:
            return CaseDraft(
                summary="The customer is not verified yet; no order details were shown.",
                step=NextStep.ASK_TO_VERIFY,
                reply=(
                    "I can help with that. To keep your order details private, please verify "
                    "it's you first: enter your order number and the email you used, and we "
                    "will send you a code."
                ),
            )
        if _REFUND.search(words) or _CREDIT.search(words):
            return _money_request(brief, words, credit=bool(_CREDIT.search(words)))
        if _WHERE.search(words):
            return _where_is(brief)
        return _person(brief, "The request is not one the rules recognise.")


def _person(brief: CaseBrief, why: str) -> CaseDraft:
    return CaseDraft(
        summary=why,
        step=NextStep.NEEDS_PERSON,
        reply=(
            f"Thanks for your message. A member of the {brief.shop_name} team will reply "
            "here, usually within one business day."
        ),
        needs_person_reason=why,
    )


def _money_request(brief: CaseBrief, words: str, *, credit: bool) -> CaseDraft:
    order = next((o for o in brief.orders if o.name == brief.picked_order), None)
    if order is None:
        names = ", ".join(o.name for o in brief.orders) or "none on file"
        summary = f"Refund asked for; the order is not clear (orders: {names})."
        if brief.unmatched:
            summary += f" Quoted but matching none: {', '.join(brief.unmatched)}."
        if not brief.orders:
            return _person(brief, "The customer asks for money back but has no order on file.")
        return CaseDraft(
            summary=summary,
            step=NextStep.ASK_WHICH_ORDER,
            reply=f"Which order is this about? I can see {names}.",
        )
    if brief.unmatched:
        return _person(
            brief,
            f"The customer quoted {', '.join(brief.unmatched)}, which matches none of "
            f"their orders; {order.name} is theirs.",
        )
    if brief.proposal_open:
        return CaseDraft(
            summary=f"A proposal for {order.name} already waits for a person.",
            step=NextStep.ANSWER,
            reply="Your request is with our team; I will tell you here as soon as there is news.",
        )
    kind = ActionKind.CUSTOMER_CREDIT if credit else ActionKind.REFUND
    if kind.value not in brief.kinds_allowed:
        return _person(brief, f"The shop does not let the drafter propose a {kind.value}.")
    picks = _picks(order, words)
    amount = _amount(order, picks)
    described = (
        "; ".join(f"{pick.quantity} x {_title(order, pick.line_id)}" for pick in picks)
        or "the whole order"
    )
    what = "store credit" if credit else "a refund"
    return CaseDraft(
        summary=f"The customer asks for {what} for {described} from {order.name}.",
        step=NextStep.PROPOSE,
        proposal=StepProposal(
            kind=kind,
            order=order.name,
            lines=tuple(picks),
            reason=f"Customer asks for {what} for {described} from {order.name}.",
        ),
        reply=(
            f"I'm sorry to hear that. I've prepared {what} of {amount} for {described} "
            f"from order {order.name} for our team to review. I will tell you here as soon "
            "as the payment provider confirms it."
        ),
    )


def _picks(order: OrderBrief, words: str) -> list[LinePick]:
    picks = []
    lowered = words.lower()
    for line in order.lines:
        for word in re.findall(r"[a-z]{4,}", line.title.lower()):
            if word in _STOP_WORDS:
                continue
            found = re.search(
                rf"(?:\b(?P<n>\d+|one|two|three|four|five|both|an?)\s+(?:of\s+(?:the|my)\s+)?"
                rf"(?:\w+\s+){{0,3}})?{word}(?P<plural>s)?\b",
                lowered,
            )
            if found is None:
                continue
            picks.append(LinePick(line.id, _quantity(found, line.quantity)))
            break
    return picks


def _quantity(found: re.Match[str], of: int) -> int:
    said = found.group("n")
    if said is None:
        return of if found.group("plural") else 1
    number = int(said) if said.isdigit() else _NUMBERS[said]
    return of if number == 0 else max(1, min(number, of))


def _title(order: OrderBrief, line_id: str) -> str:
    return next(line.title for line in order.lines if line.id == line_id)


def _amount(order: OrderBrief, picks: list[LinePick]) -> Money:
    lines = {line.id: line for line in order.lines}
    if not picks:
        return order.money(sum(line.paid for line in order.lines))
    return order.money(
        sum(share_paid(lines[p.line_id].paid, lines[p.line_id].quantity, p.quantity) for p in picks)
    )


def _where_is(brief: CaseBrief) -> CaseDraft:
    order = next((o for o in brief.orders if o.name == brief.picked_order), None)
    if order is None:
        names = ", ".join(o.name for o in brief.orders) or "none on file"
        return CaseDraft(
            summary="Asks where an order is; which one is not clear.",
            step=NextStep.ASK_WHICH_ORDER,
            reply=f"Which order would you like me to look up? I can see {names}.",
        )
    return CaseDraft(
        summary=f"Asks where {order.name} is.",
        step=NextStep.ANSWER,
        reply=shipment_words(order),
    )


def shipment_words(order: OrderBrief) -> str:
    """An order's shipment as Shopify's fulfilments report it, in words."""
    shipment = order.shipment
    if order.delivered:
        return f"Order {order.name} was delivered."
    if shipment is None or shipment.status == "unfulfilled":
        return (
            f"Order {order.name} has not shipped yet. We will send tracking details when it does."
        )
    parts = [f"Order {order.name} is on its way"]
    if shipment.carrier:
        parts.append(f" with {shipment.carrier}")
    text = "".join(parts) + "."
    if shipment.tracking_number:
        text += f" Tracking number: {shipment.tracking_number}"
        text += f" ({shipment.tracking_url})." if shipment.tracking_url else "."
    if shipment.estimated_delivery:
        text += f" Expected by {shipment.estimated_delivery}."
    return text
