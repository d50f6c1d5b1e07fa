"""A verdict read back from storage says what it said when it was stored.

Verdicts stored since the guard kept its reasons as catalogue sentences carry both the
English and the sentence; those stored before carry the English only, which then reads
as written.
"""

from __future__ import annotations

from app.guard import Verdict
from app.words import Sentence, said

STORED_BEFORE_SENTENCES = {
    "outcome": "blocked",
    "approvals_required": 1,
    "approval_reason": "Nobody can approve this while 1 of 1 checks fail.",
    "policy_version": 3,
    "checks": [
        {
            "name": "captured",
            "passed": False,
            "reason": "Payment pi_1 has captured nothing yet.",
            "facts": {"captured": 0},
        }
    ],
}


def test_a_verdict_stored_before_sentences_reads_as_its_english() -> None:
    verdict = Verdict.from_dict(STORED_BEFORE_SENTENCES)

    assert verdict.checks[0].said == Sentence("Payment pi_1 has captured nothing yet.")
    assert verdict.checks[0].reason == "Payment pi_1 has captured nothing yet."
    assert verdict.approval_said == Sentence("Nobody can approve this while 1 of 1 checks fail.")
    assert verdict.to_dict()["checks"][0]["reason"] == "Payment pi_1 has captured nothing yet."


def test_a_stored_sentence_is_read_back_as_the_sentence_not_its_english() -> None:
    check = said("Payment %(payment)s has captured nothing yet.", payment="pi_1")
    approval = said("Nobody can approve this while %(failing)s checks fail.", failing="1")
    stored = {
        **STORED_BEFORE_SENTENCES,
        "approval_said": approval.to_dict(),
        "checks": [{**STORED_BEFORE_SENTENCES["checks"][0], "said": check.to_dict()}],
    }

    verdict = Verdict.from_dict(stored)

    assert verdict.checks[0].said == check
    assert verdict.approval_said == approval
    assert Verdict.from_dict(verdict.to_dict()) == verdict
