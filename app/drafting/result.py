"""What a drafter returns, whichever drafter it is, and the one parser that checks it.

A drafter (Claude or the offline rules) reads a case and answers with a
:class:`CaseDraft`: a summary for staff, the next step, and the reply to the customer.
A proposed step names *what* (a kind, one of the case's orders, which of its lines and
how many), never *how much*: Caseward computes the amount from the order's paid lines
(:mod:`app.drafting.proposals`), so no text a customer writes can raise an amount. The
schema below is the forced tool's ``input_schema`` for Claude, and :func:`parse_draft`
holds every answer to it, Claude's or the rules', so a malformed answer is caught the
same way wherever it comes from.
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


@dataclass(frozen=True)
class CaseDraft:
    summary: str
    step: NextStep
    reply: str
    proposal: StepProposal | None = None
    needs_person_reason: str | None = None


class MalformedDraft(ValueError):
    """The answer does not fit the schema; the message says where (never the text)."""


DRAFT_SCHEMA: dict[str, Any] = {
    "type": "object",
    "additionalProperties": False,
    "required": ["summary", "next_step", "reply"],
    "properties": {
        "summary": {
            "type": "string",
            "maxLength": MAX_SUMMARY,
            "description": "For staff: what the customer asks and the facts that bear on it.",
        },
        "next_step": {"type": "string", "enum": [step.value for step in NextStep]},
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
                    "type": "array",
                    "maxItems": MAX_LINES,
                    "description": "Which lines and how many of each; empty for the whole order.",
                    "items": {
                        "type": "object",
                        "additionalProperties": False,
                        "required": ["line_id", "quantity"],
                        "properties": {
                            "line_id": {"type": "string"},
                            "quantity": {"type": "integer", "minimum": 1},
                        },
                    },
                },
                "reason": {"type": "string", "maxLength": MAX_REASON},
            },
        },
        "needs_person_reason": {"type": ["string", "null"], "maxLength": MAX_REASON},
        "reply": {
            "type": "string",
            "maxLength": MAX_REPLY,
            "description": "To the customer. Never say money was refunded, credited or "
            "approved: Caseward adds what the provider reports.",
        },
    },
}


def parse_draft(data: object) -> CaseDraft:
    """``data`` (a tool's input, or the rules' answer) as a :class:`CaseDraft`."""
    body = _object(
        data, "draft", ("summary", "next_step", "reply", "proposal", "needs_person_reason")
    )
    step = _choice(body.get("next_step"), "next_step", [s.value for s in NextStep])
    proposal_data = body.get("proposal")
    proposal = _proposal(proposal_data) if proposal_data is not None else None
    if (step == NextStep.PROPOSE) != (proposal is not None):
        raise MalformedDraft("proposal: given exactly when next_step is 'propose'")
    reason = body.get("needs_person_reason")
    return CaseDraft(
        summary=_text(body.get("summary"), "summary", MAX_SUMMARY),
        step=NextStep(step),
        reply=_text(body.get("reply"), "reply", MAX_REPLY),
        proposal=proposal,
        needs_person_reason=(
            _text(reason, "needs_person_reason", MAX_REASON) if reason is not None else None
        ),
    )


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
    lines_data = body.get("lines")
    if not isinstance(lines_data, list) or len(lines_data) > MAX_LINES:
        raise MalformedDraft(f"proposal.lines: a list of at most {MAX_LINES}")
    lines = []
    for index, item in enumerate(lines_data):
        line = _object(item, f"proposal.lines[{index}]", ("line_id", "quantity"))
        quantity = line.get("quantity")
        if not isinstance(quantity, int) or isinstance(quantity, bool) or quantity < 1:
            raise MalformedDraft(f"proposal.lines[{index}].quantity: a whole number from 1")
        lines.append(
            LinePick(_text(line.get("line_id"), f"proposal.lines[{index}].line_id", 255), quantity)
        )
    return StepProposal(
        kind=ActionKind(kind),
        order=_text(body.get("order"), "proposal.order", 64),
        lines=tuple(lines),
        reason=_text(body.get("reason"), "proposal.reason", MAX_REASON),
    )


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
