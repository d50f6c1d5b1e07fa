"""What a drafter returns, whichever drafter it is, and the one parser that checks it.

A drafter (Claude or the offline rules) reads a case and answers with a
:class:`CaseDraft`, in which every fact is a field and no fact is prose:

- a summary for staff and the next step;
- the customer's claim (which order, which lines, how many of each, and why), apart from
  - the proposal (what to give back: a kind, the order, lines and quantities), never
    *how much*: Caseward computes the amount from the claimed lines' paid share
    (:mod:`app.drafting.proposals`, :mod:`app.drafting.claims`);
- which of Caseward's facts the customer should be told (``tell``: the order's shipment,
  the case's status), which Caseward words itself (:mod:`app.conversations.to_customer`);
- ``free_text``: the drafter's own words, which may only acknowledge, ask, apologise or
  explain a non-money matter, and which reach the customer only if the deny-by-default
  check passes them (:mod:`app.conversations.free_text`).

The schema below is the forced tool's ``input_schema`` for Claude, and
:func:`parse_draft` holds every answer to it, Claude's or the rules', so a malformed
answer is caught the same way wherever it comes from.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from integrations.provider import ActionKind


class NextStep(StrEnum):
    PROPOSE = "propose"  # a money action for a person (or the shop's policy) to approve
    ANSWER = "answer"  # the reply is the whole answer (an order's status, a question)
    ASK_WHICH_ORDER = "ask_which_order"  # the customer's orders leave it open
    ASK_WHICH_ITEMS = "ask_which_items"  # the order is clear, the items are not
    ASK_TO_VERIFY = "ask_to_verify"  # nothing about orders until the customer is verified
    NEEDS_PERSON = "needs_person"  # a person takes it from here


# Kinds a drafter may propose from a conversation; subscriptions are staff's to change.
DRAFTABLE_KINDS = (ActionKind.REFUND, ActionKind.CUSTOMER_CREDIT)
MAX_SUMMARY = 1000
MAX_REASON = 500
MAX_REPLY = 2000
MAX_LINES = 50


@dataclass(frozen=True)
class LinePick:
    line_id: str
    quantity: int


@dataclass(frozen=True)
class StepProposal:
    kind: ActionKind
    order: str  # the order's name, as the case file lists it ("#1001")
    lines: tuple[LinePick, ...]  # empty: every line still refundable
    reason: str


class Fact(StrEnum):
    """A fact of Caseward's the drafter may ask to be told to the customer, in
    Caseward's words."""

    SHIPMENT = "shipment"  # the picked order's shipment, as Shopify's fulfilments report it
    CASE_STATUS = "case_status"  # the case's actions as the provider reported them


@dataclass(frozen=True)
class ClaimedLine:
    line_id: str
    quantity: int
    why: str  # in the customer's terms: "torn", "wrong size"


@dataclass(frozen=True)
class Claim:
    """What the customer says is wrong, line by line: what a proposal may cover at most."""

    order: str
    lines: tuple[ClaimedLine, ...]


@dataclass(frozen=True)
class CaseDraft:
    summary: str
    step: NextStep
    free_text: str
    claim: Claim | None = None
    proposal: StepProposal | None = None
    needs_person_reason: str | None = None
    tell: tuple[Fact, ...] = ()


class MalformedDraft(ValueError):
    """The answer does not fit the schema; the message says where (never the text)."""


_LINES: dict[str, Any] = {
    "type": "array",
    "maxItems": MAX_LINES,
    "items": {
        "type": "object",
        "additionalProperties": False,
        "required": ["line_id", "quantity"],
        "properties": {
            "line_id": {"type": "string"},
            "quantity": {"type": "integer", "minimum": 1},
        },
    },
}

DRAFT_SCHEMA: dict[str, Any] = {
    "type": "object",
    "additionalProperties": False,
    "required": ["summary", "next_step", "free_text"],
    "properties": {
        "summary": {
            "type": "string",
            "maxLength": MAX_SUMMARY,
            "description": "For staff: what the customer asks and the facts that bear on it.",
        },
        "next_step": {"type": "string", "enum": [step.value for step in NextStep]},
        "claim": {
            "type": ["object", "null"],
            "description": "What the customer says is wrong, in their own messages: the "
            "order, and each line they name with how many items and why. Required with "
            "next_step 'propose'.",
            "additionalProperties": False,
            "required": ["order", "lines"],
            "properties": {
                "order": {"type": "string", "description": "An order name from the case file."},
                "lines": {
                    **_LINES,
                    "minItems": 1,
                    "items": {
                        **_LINES["items"],
                        "required": ["line_id", "quantity", "why"],
                        "properties": {
                            **_LINES["items"]["properties"],
                            "why": {"type": "string", "maxLength": MAX_REASON},
                        },
                    },
                },
            },
        },
        "proposal": {
            "type": ["object", "null"],
            "description": "Only with next_step 'propose'. Caseward computes the amount "
            "from the order's paid lines.",
            "additionalProperties": False,
            "required": ["kind", "order", "lines", "reason"],
            "properties": {
                "kind": {"type": "string", "enum": [kind.value for kind in DRAFTABLE_KINDS]},
                "order": {"type": "string", "description": "An order name from the case file."},
                "lines": {
                    **_LINES,
                    "description": "Which lines and how many of each; empty for the whole order.",
                },
                "reason": {"type": "string", "maxLength": MAX_REASON},
            },
        },
        "needs_person_reason": {"type": ["string", "null"], "maxLength": MAX_REASON},
        "tell": {
            "type": "array",
            "maxItems": len(Fact),
            "description": "Facts Caseward should tell the customer in its own words.",
            "items": {"type": "string", "enum": [fact.value for fact in Fact]},
        },
        "free_text": {
            "type": "string",
            "maxLength": MAX_REPLY,
            "description": "Your own words to the customer: only acknowledge, apologise, ask "
            "or explain a non-money matter. No amount, date, card, order status or next "
            "step: Caseward adds those.",
        },
    },
}


def parse_draft(data: object) -> CaseDraft:
    """``data`` (a tool's input, or the rules' answer) as a :class:`CaseDraft`."""
    body = _object(
        data,
        "draft",
        ("summary", "next_step", "claim", "proposal", "needs_person_reason", "tell", "free_text"),
    )
    step = _choice(body.get("next_step"), "next_step", [s.value for s in NextStep])
    proposal_data = body.get("proposal")
    proposal = _proposal(proposal_data) if proposal_data is not None else None
    if (step == NextStep.PROPOSE) != (proposal is not None):
        raise MalformedDraft("proposal: given exactly when next_step is 'propose'")
    claim_data = body.get("claim")
    claim = _claim(claim_data) if claim_data is not None else None
    if proposal is not None and claim is None:
        raise MalformedDraft("claim: given with every proposal")
    reason = body.get("needs_person_reason")
    tell = body.get("tell", [])
    if not isinstance(tell, list) or len(tell) > len(Fact):
        raise MalformedDraft(f"tell: a list of at most {len(Fact)}")
    return CaseDraft(
        summary=_text(body.get("summary"), "summary", MAX_SUMMARY),
        step=NextStep(step),
        free_text=_text(body.get("free_text"), "free_text", MAX_REPLY),
        claim=claim,
        proposal=proposal,
        needs_person_reason=(
            _text(reason, "needs_person_reason", MAX_REASON) if reason is not None else None
        ),
        tell=tuple(
            dict.fromkeys(Fact(_choice(fact, "tell[]", [f.value for f in Fact])) for fact in tell)
        ),
    )


def draft_dict(draft: CaseDraft) -> dict[str, object]:
    """``draft`` in the tool's shape (what :func:`parse_draft` reads back), so one parser
    checks both drafters."""
    return {
        "summary": draft.summary,
        "next_step": draft.step.value,
        "claim": claim_dict(draft.claim) if draft.claim else None,
        "proposal": step_dict(draft.proposal) if draft.proposal else None,
        "needs_person_reason": draft.needs_person_reason,
        "tell": [fact.value for fact in draft.tell],
        "free_text": draft.free_text,
    }


def claim_dict(claim: Claim) -> dict[str, Any]:
    return {
        "order": claim.order,
        "lines": [
            {"line_id": line.line_id, "quantity": line.quantity, "why": line.why}
            for line in claim.lines
        ],
    }


def step_dict(step: StepProposal) -> dict[str, Any]:
    """``step`` in the tool's shape (what :func:`parse_step` reads back)."""
    return {
        "kind": step.kind.value,
        "order": step.order,
        "lines": [{"line_id": pick.line_id, "quantity": pick.quantity} for pick in step.lines],
        "reason": step.reason,
    }


def parse_step(data: object) -> StepProposal:
    return _proposal(data)


def _proposal(data: object) -> StepProposal:
    body = _object(data, "proposal", ("kind", "order", "lines", "reason"))
    kind = _choice(body.get("kind"), "proposal.kind", [k.value for k in DRAFTABLE_KINDS])
    lines = [pick for _, pick in _picks(body.get("lines"), "proposal", ("line_id", "quantity"))]
    return StepProposal(
        kind=ActionKind(kind),
        order=_text(body.get("order"), "proposal.order", 64),
        lines=tuple(lines),
        reason=_text(body.get("reason"), "proposal.reason", MAX_REASON),
    )


def _claim(data: object) -> Claim:
    body = _object(data, "claim", ("order", "lines"))
    lines = [
        ClaimedLine(
            pick.line_id, pick.quantity, _text(item.get("why"), f"claim.lines[{i}].why", MAX_REASON)
        )
        for i, (item, pick) in enumerate(
            _picks(body.get("lines"), "claim", ("line_id", "quantity", "why"))
        )
    ]
    if not lines:
        raise MalformedDraft("claim.lines: at least one line")
    return Claim(order=_text(body.get("order"), "claim.order", 64), lines=tuple(lines))


def _picks(
    data: object, where: str, keys: tuple[str, ...]
) -> list[tuple[Mapping[str, Any], LinePick]]:
    """Each item of a list of lines with its line id and quantity, checked."""
    if not isinstance(data, list) or len(data) > MAX_LINES:
        raise MalformedDraft(f"{where}.lines: a list of at most {MAX_LINES}")
    picks = []
    for index, item in enumerate(data):
        line = _object(item, f"{where}.lines[{index}]", keys)
        quantity = line.get("quantity")
        if not isinstance(quantity, int) or isinstance(quantity, bool) or quantity < 1:
            raise MalformedDraft(f"{where}.lines[{index}].quantity: a whole number from 1")
        line_id = _text(line.get("line_id"), f"{where}.lines[{index}].line_id", 255)
        picks.append((line, LinePick(line_id, quantity)))
    return picks


def _object(data: object, where: str, keys: tuple[str, ...]) -> Mapping[str, Any]:
    if not isinstance(data, Mapping):
        raise MalformedDraft(f"{where}: an object")
    unknown = sorted(set(data) - set(keys))
    if unknown:
        raise MalformedDraft(f"{where}: unexpected {', '.join(map(str, unknown))}")
    return data


def _text(value: object, where: str, max_length: int) -> str:
    if not isinstance(value, str) or len(value) > max_length:
        raise MalformedDraft(f"{where}: text of at most {max_length} characters")
    return value.strip()


def _choice(value: object, where: str, choices: list[str]) -> str:
    if value not in choices:
        raise MalformedDraft(f"{where}: one of {', '.join(choices)}")
    return str(value)
