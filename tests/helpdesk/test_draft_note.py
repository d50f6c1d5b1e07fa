"""The note an agent reads after "prepare case" says why a drafted proposal is blocked, or
why a person must decide.

The drafter proposed a refund the guard blocked: the note names every failing check's
reason, in check order, and none of the checks that passed; a proposal every check
passed says so.
"""

from __future__ import annotations

from app.approvals.service import ProposalResult
from app.cases.proposals import Proposal
from app.drafting.models import CaseDraftRecord
from app.drafting.service import Drafted
from app.guard import CheckResult, Outcome, Verdict
from app.helpdesk.commands import draft_note
from app.words import said

APPROVE_URL = "https://admin.example/cases/1"


def _note(outcome: Outcome, checks: tuple[CheckResult, ...]) -> str:
    verdict = Verdict(
        outcome=outcome,
        checks=checks,
        approvals_required=1,
        policy_version=1,
        approval_said=said("One person approves."),
    )
    proposal = Proposal(
        kind="refund",
        amount=4800,
        currency="usd",
        status="blocked" if outcome == Outcome.BLOCKED else "awaiting_approval",
        verdict=verdict.to_dict(),
    )
    drafted = Drafted(
        record=CaseDraftRecord(summary="A torn apron."),
        proposal=ProposalResult(proposal),
        reply=None,
        reply_text="We are looking into it.",
    )
    return draft_note(drafted, approve_url=APPROVE_URL)


def test_a_blocked_proposal_names_each_failing_reason() -> None:
    note = _note(
        Outcome.BLOCKED,
        (
            CheckResult("captured", True, said("The payment was captured in full.")),
            CheckResult("within_claim", False, said("The customer claimed one apron, not two.")),
            CheckResult("refund_window", False, said("The order is older than 30 days.")),
        ),
    )

    assert (
        "Proposal: refund of $48.00 (blocked; blocked: The customer claimed one apron, not two.; "
        "The order is older than 30 days.)." in note
    )
    assert "captured in full" not in note


def test_a_proposal_every_check_passed_says_so() -> None:
    note = _note(
        Outcome.NEEDS_APPROVAL,
        (CheckResult("captured", True, said("The payment was captured in full.")),),
    )

    assert "Proposal: refund of $48.00 (awaiting_approval; every check passed)." in note


def test_a_raised_signal_is_named_as_a_persons_decision_not_a_block() -> None:
    note = _note(
        Outcome.NEEDS_APPROVAL,
        (
            CheckResult("captured", True, said("The payment was captured in full.")),
            CheckResult(
                "repeat_claims",
                False,
                said("The customer was refunded 3 times in 90 days."),
                escalates=True,
            ),
        ),
    )

    assert (
        "(awaiting_approval; every check passed; a person must decide: "
        "The customer was refunded 3 times in 90 days.)." in note
    )


def test_a_proposal_in_hand_is_shown_when_the_draft_proposed_nothing_beside_it() -> None:
    """The drafter proposes nothing beside a proposal in hand: the note shows that one,
    and one already approved is followed in Caseward, not decided."""
    verdict = Verdict(
        outcome=Outcome.NEEDS_APPROVAL,
        checks=(CheckResult("captured", True, said("The payment was captured in full.")),),
        approvals_required=1,
        policy_version=1,
        approval_said=said("One person approves."),
    )
    nothing_new = Drafted(
        record=CaseDraftRecord(summary="A proposal for #1001 already waits for a person."),
        proposal=None,
        reply=None,
        reply_text="Your request is with our team.",
    )

    def in_hand(status: str) -> Proposal:
        return Proposal(
            kind="refund", amount=4800, currency="usd", status=status, verdict=verdict.to_dict()
        )

    waiting = draft_note(nothing_new, approve_url=APPROVE_URL, in_hand=in_hand("awaiting_approval"))
    approved = draft_note(nothing_new, approve_url=APPROVE_URL, in_hand=in_hand("approved"))

    assert "Proposal: refund of $48.00 (awaiting_approval; every check passed)." in waiting
    assert f"Approve or reject it in Caseward: {APPROVE_URL}" in waiting
    assert "Proposal: refund of $48.00 (approved; every check passed)." in approved
    assert f"Follow it in Caseward: {APPROVE_URL}" in approved
    assert "Approve or reject" not in approved
