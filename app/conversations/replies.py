"""The check on a reply a person or an outside agent writes to a customer.

:func:`check_reply` refuses any text typed by staff or drafted by an agent (the MCP
``draft_reply`` tool) that claims a state the provider has not reported, or names an
amount other than one under review or approved for this case. Claims are recognised by
phrase, in English: a person's words are theirs, and this catches the slips. Caseward's
own drafter is held tighter: it states no fact at all in words
(:mod:`app.conversations.to_customer` says them, :mod:`app.conversations.free_text`
checks what it may say).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from app.conversations.amounts import mentions
from app.execution.models import ActionStatus
from app.money import Money
from app.words import Sentence, said


@dataclass(frozen=True)
class ActionBrief:
    """One action of the case, as a reply may speak of it."""

    kind: str
    amount: Money | None
    status: str  # as the provider reported it, or ours before it spoke


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
