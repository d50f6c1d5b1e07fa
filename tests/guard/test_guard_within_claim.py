"""A drafted proposal covers no more than the customer claims: the ``within_claim`` check.

The drafter states the customer's claim apart from its proposal, and Caseward grounds the
claim in the customer's own words (``app/drafting/claims.py``). The guard sets the two
side by side: a proposal that covers a line the claim does not name, or more items of a
line, is blocked, and the person who takes the case reads both. A person's own proposal
carries no claim and is not checked against one.
"""

from __future__ import annotations

from dataclasses import replace

from guard_builders import check, payment, propose, usd

from app.guard import CheckName, ClaimCoverage

ONE_APRON = (("L1", 1),)


def test_a_proposal_within_the_claim_passes() -> None:
    drafted = replace(
        propose(amount=usd(2400)), claim=ClaimCoverage(claimed=ONE_APRON, proposed=ONE_APRON)
    )

    verdict = check(drafted, payment())

    result = verdict.check(CheckName.WITHIN_CLAIM)
    assert result.passed
    assert result.facts["claimed"] == [{"line_id": "L1", "quantity": 1}]
    assert verdict.outcome != "blocked"


def test_the_whole_order_for_one_torn_apron_is_blocked_with_both_shown() -> None:
    whole_order = (("L1", 2), ("L2", 3))
    drafted = replace(
        propose(amount=usd(8400)), claim=ClaimCoverage(claimed=ONE_APRON, proposed=whole_order)
    )

    verdict = check(drafted, payment())

    result = verdict.check(CheckName.WITHIN_CLAIM)
    assert not result.passed
    assert verdict.outcome == "blocked"
    assert result.reason == (
        "The proposal covers more than the customer's own messages claim: 1 item of line L1; "
        "3 items of line L2 beyond the claim of 1 item of line L1."
    )
    assert result.facts["proposed"] == [
        {"line_id": "L1", "quantity": 2},
        {"line_id": "L2", "quantity": 3},
    ]
    assert result.facts["beyond"] == [
        {"line_id": "L1", "quantity": 1},
        {"line_id": "L2", "quantity": 3},
    ]


def test_a_claim_the_customers_words_do_not_bear_out_blocks_anything_proposed() -> None:
    drafted = replace(
        propose(amount=usd(2400)), claim=ClaimCoverage(claimed=(), proposed=ONE_APRON)
    )

    result = check(drafted, payment()).check(CheckName.WITHIN_CLAIM)

    assert not result.passed
    assert result.reason.endswith("beyond the claim of nothing.")


def test_a_persons_proposal_is_not_held_to_a_claim() -> None:
    verdict = check(propose(amount=usd(8400)), payment())

    assert CheckName.WITHIN_CLAIM not in [c.name for c in verdict.checks]
