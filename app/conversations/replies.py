"""What the customer is told: composed from what the provider reported, and checked.

Two halves. :func:`status_update` composes the message for an action's status as the
provider reported it, with wording per status (submitted and how long it usually takes;
refunded to the original payment method; failed, what happens next and who will be in
touch). :func:`check_reply` refuses any text, drafted or typed by staff, that claims a
state the provider has not reported, or names an amount other than one under review or
approved for this case. Claims are recognised by phrase, in English; a reply the check
refuses is not sent (the drafter's falls back to a neutral one, staff are told why).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from app.conversations.amounts import mentions
from app.drafting.brief import ActionBrief
from app.execution.models import ActionStatus
from app.money import Money
from app.words import Sentence, said
from integrations.provider import ActionKind

# How long money usually takes to show once the provider has it, per kind, in words.
_USUALLY = {
    ActionKind.REFUND: said("Refunds usually show on your statement within 5 to 10 business days."),
}


def status_update(
    kind: str, status: str, amount: Money | None, *, shop_name: str, owner: Sentence
) -> Sentence | None:
    """The customer's message for an action now at ``status``; None for statuses the
    customer is not told about (ours, before the provider has spoken)."""
    what = action_words(kind, amount)
    if status == ActionStatus.PENDING:
        usually = _USUALLY.get(ActionKind(kind)) if kind in set(ActionKind) else None
        return said(
            "Your %(what)s has been submitted to the payment provider. %(usually)s",
            what=what,
            usually=usually or said("We will let you know here when it is complete."),
        )
    if status == ActionStatus.SUCCEEDED:
        if kind == ActionKind.REFUND:
            return said(
                "Your refund of %(amount)s has been made to your original payment method. "
                "Depending on your bank it can take 5 to 10 business days to show.",
                amount=amount or said("the agreed amount"),
            )
        if kind == ActionKind.CUSTOMER_CREDIT:
            return said(
                "Store credit of %(amount)s has been added to your account at %(shop)s.",
                amount=amount or said("the agreed amount"),
                shop=shop_name,
            )
        return said("Your %(what)s is complete.", what=what)
    if status in (ActionStatus.FAILED, ActionStatus.CANCELED):
        return said(
            "Your %(what)s could not be completed by the payment provider. Nothing has been "
            "taken from you. %(who)s will contact you here about what happens next.",
            what=what,
            who=owner,
        )
    return None


def action_words(kind: str, amount: Money | None) -> Sentence:
    """ "refund of $48.00", "store credit of $20.00", "discount": the action, for the customer."""
    if kind == ActionKind.REFUND:
        return said("refund of %(amount)s", amount=amount) if amount else said("refund")
    if kind == ActionKind.CUSTOMER_CREDIT:
        return said("store credit of %(amount)s", amount=amount) if amount else said("store credit")
    if kind == ActionKind.DISCOUNT:
        return said("discount")
    return said("subscription change")


@dataclass(frozen=True)
class ReplyProblem:
    claim: str  # the words in the reply
    reason: Sentence


# Phrases that say money moved or was decided, each with the provider statuses (of an
# action of the case) that make it true. Negations ("not been refunded") are allowed.
_CLAIMS: tuple[tuple[re.Pattern[str], frozenset[str]], ...] = (
    (
        re.compile(
            r"\b(?:(?:has|have|was|were|been|is)\s+(?:now\s+|already\s+|fully\s+)?"
            r"(?:refunded|reimbursed|credited|returned to you|issued|processed|completed|paid back)"
            r"|we\s+(?:have\s+|'ve\s+)?(?:refunded|reimbursed|credited)"
            r"|refund(?:ed)?\s+(?:is\s+|has\s+been\s+)?(?:complete|done|finished|on its way)"
            r"|money\s+(?:is|has been)\s+(?:sent|returned|on its way)"
            r"|(?:was|were|is|has been)\s+successful|went through|(?:is|was|been)\s+confirmed)",
            re.IGNORECASE,
        ),
        frozenset({ActionStatus.SUCCEEDED}),
    ),
    (
        re.compile(
            r"\b(?:submitted|initiated|being processed|in progress|on its way|processing|sent)\b",
            re.IGNORECASE,
        ),
        frozenset({ActionStatus.PENDING, ActionStatus.REQUIRES_ACTION, ActionStatus.SUCCEEDED}),
    ),
    (
        re.compile(
            r"\b(?:approved|authori[sz]ed|granted|we\s+will\s+refund|we'll\s+refund"
            r"|you\s+will\s+(?:get|receive)\s+(?:a\s+|your\s+)?(?:refund|credit|money)"
            r"|will\s+be\s+(?:refunded|credited|reimbursed))\b",
            re.IGNORECASE,
        ),
        frozenset(
            {
                ActionStatus.QUEUED,
                ActionStatus.SUBMITTING,
                ActionStatus.UNKNOWN,
                ActionStatus.PENDING,
                ActionStatus.REQUIRES_ACTION,
                ActionStatus.SUCCEEDED,
            }
        ),
    ),
)
# A claim counts in a sentence about money; "your parcel is on its way" claims nothing.
_MONEY_WORDS = re.compile(
    r"refund|credit|money|reimburs|payment|paid back|amount|[$€£¥]|\b(?:usd|eur|gbp)\b",
    re.IGNORECASE,
)
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+|\n+")
_NEGATED = re.compile(r"(?:\bnot|n't|\bnever|\bno)\b(?:\s+\w+){0,3}\s*$", re.IGNORECASE)


def check_reply(
    text: str, *, actions: Sequence[ActionBrief], proposed: Sequence[Money] = ()
) -> list[ReplyProblem]:
    """What in ``text`` goes beyond the facts: a claimed state no action of the case is
    in (as the provider reported it), or an amount that is neither an action's nor one
    ``proposed`` for review."""
    problems = []
    statuses = {action.status for action in actions}
    about_money = [s for s in _SENTENCE_END.split(text) if _MONEY_WORDS.search(s)]
    for sentence, (pattern, true_when) in (
        (sentence, claim) for sentence in about_money for claim in _CLAIMS
    ):
        for match in pattern.finditer(sentence):
            if _NEGATED.search(sentence[: match.start()]):
                continue
            if not statuses & true_when:
                problems.append(
                    ReplyProblem(
                        match.group(0),
                        said(
                            "the reply says %(claim)s, which the payment provider has not reported",
                            claim=match.group(0),
                        ),
                    )
                )
    allowed = [action.amount for action in actions if action.amount is not None] + list(proposed)
    for mention in mentions(text):
        if not any(mention.minor_units_in(money.currency) == money.amount for money in allowed):
            problems.append(
                ReplyProblem(
                    mention.text,
                    said(
                        "the reply names %(amount)s, which is not the amount under review or "
                        "approved",
                        amount=mention.text,
                    ),
                )
            )
    return problems


def refused_reply(problems: Sequence[ReplyProblem]) -> Sentence:
    """Why a typed reply may not be sent, for the person who typed it."""
    return said(
        "This reply would tell the customer more than the provider reported: %(problems)s",
        problems="; ".join(str(problem.reason) for problem in problems),
    )
