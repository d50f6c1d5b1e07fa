"""Whether a person may approve a proposal now, decided by one function from plain values.

A fit approver (an approver with a limit that covers the amount) approving a proposal
awaiting approval in a shop with writes on, under the policy it was checked under, is
refused nothing. Each change below breaks one rule alone and must give exactly that
reason, with the words and the error the API has always answered with; all of them at
once give every reason, in the order the service refuses by. Approvals that no longer
count (expired, voided, used, of an older digest) do not make the person one who
approved already.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from app.approvals.may_approve import (
    Approver,
    Reason,
    Refusal,
    why_not_approvable,
    why_not_approver,
)
from app.cases.digest import digest_of
from app.cases.proposals import ProposalStatus
from app.errors import Conflict, Forbidden
from app.shops.models import StaffRole
from app.shops.switches import WriteStop, writes_stopped
from app.web.errors import status_of

NOW = datetime(2026, 12, 6, 12, 0, tzinfo=UTC)
POLICY_VERSION = 2
PROPOSER = "2001"
APPROVER = "1002"
SHOP = uuid.UUID("7d7c1b8e-4a55-4f1e-9c33-0e0e2b8d6a11")
FIT_APPROVER = Approver(APPROVER, StaffRole.APPROVER, {"usd": 10000})


@dataclass(frozen=True)
class Shop:
    uninstalled_at: datetime | None = None
    kill_switch: bool = False
    writes_enabled: bool = True


@dataclass(frozen=True)
class Proposal:
    shop_id: uuid.UUID = SHOP
    provider: str = "stripe"
    kind: str = "refund"
    target: str = "pi_3Apron"
    customer_ref: str | None = "cus_Maya"
    amount: int | None = 4800
    currency: str | None = "usd"
    line_items: list[dict[str, Any]] = field(default_factory=list)
    params: dict[str, Any] = field(default_factory=dict)
    status: str = ProposalStatus.AWAITING_APPROVAL
    revision: int = 1
    policy_version: int = POLICY_VERSION
    digest: str = ""
    approvals_required: int = 1
    proposed_by: str = PROPOSER

    def __post_init__(self) -> None:
        # Stored as _apply stores it: the digest under the version it was checked under.
        if not self.digest:
            object.__setattr__(self, "digest", digest_of(self, self.policy_version))


@dataclass(frozen=True)
class Given:
    approver: str
    digest: str
    expires_at: datetime = NOW + timedelta(minutes=10)
    voided_at: datetime | None = None
    consumed_by_action: uuid.UUID | None = None


@dataclass(frozen=True)
class Situation:
    shop: Shop = Shop()
    approver: Approver = FIT_APPROVER
    proposal: Proposal = field(default_factory=Proposal)
    approvals: tuple[Given, ...] = ()
    reviewed_digest: str | None = None

    def refusals(self) -> list[Refusal]:
        return why_not_approvable(
            shop=self.shop,
            approver=self.approver,
            proposal=self.proposal,
            approvals=self.approvals,
            policy_version=POLICY_VERSION,
            now=NOW,
            reviewed_digest=self.reviewed_digest,
        )


FIT = Situation()


def _mine(s: Situation, **changes: Any) -> tuple[Given, ...]:
    return (Given(APPROVER, s.proposal.digest, **changes),)


# Each breaks one rule and nothing else, with the reason, the API's code, its status and
# a piece of the words the API says.
BROKEN: dict[str, tuple[Callable[[Situation], Situation], Reason, str, int, str]] = {
    "an agent": (
        lambda s: replace(s, approver=replace(s.approver, ref="agent:7", role=None)),
        Reason.NO_ROLE,
        "no_role",
        403,
        "agent:7 has no role in this shop and may not approve actions",
    ),
    "a proposer": (
        lambda s: replace(s, approver=replace(s.approver, role=StaffRole.PROPOSER)),
        Reason.ROLE_NOT_ALLOWED,
        "role_not_allowed",
        403,
        "1002 is a proposer and may not approve actions",
    ),
    "another digest reviewed": (
        lambda s: replace(s, reviewed_digest="0" * 64),
        Reason.NOT_AS_REVIEWED,
        "stale_digest",
        409,
        "changed since it was reviewed",
    ),
    "checked under an older policy": (
        lambda s: replace(s, proposal=Proposal(policy_version=POLICY_VERSION - 1)),
        Reason.POLICY_CHANGED,
        "stale_digest",
        409,
        "(now version 2) changed since it was reviewed",
    ),
    "blocked": (
        lambda s: replace(s, proposal=replace(s.proposal, status=ProposalStatus.BLOCKED)),
        Reason.NOT_AWAITING_APPROVAL,
        "proposal_blocked",
        409,
        "the proposal is blocked, not awaiting approval; edit it so that its failing checks",
    ),
    "uninstalled": (
        lambda s: replace(s, shop=replace(s.shop, uninstalled_at=NOW)),
        Reason.SHOP_UNINSTALLED,
        "shop_uninstalled",
        409,
        "the shop has uninstalled Caseward",
    ),
    "kill switch on": (
        lambda s: replace(s, shop=replace(s.shop, kill_switch=True)),
        Reason.KILL_SWITCH,
        "kill_switch",
        409,
        "the kill switch is on: nothing can be approved",
    ),
    "protection mode": (
        lambda s: replace(s, shop=replace(s.shop, writes_enabled=False)),
        Reason.PROTECTION_MODE,
        "protection_mode",
        409,
        "the shop is in protection mode (read-only)",
    ),
    "over the limit": (
        lambda s: replace(s, proposal=replace(s.proposal, amount=10001)),
        Reason.OVER_LIMIT,
        "over_approval_limit",
        403,
        "1002 may approve up to $100.00, not $100.01",
    ),
    "no limit in the currency": (
        lambda s: replace(s, proposal=Proposal(currency="eur")),
        Reason.OVER_LIMIT,
        "over_approval_limit",
        403,
        "1002 may approve up to €0.00, not €48.00",
    ),
    "the proposer of a two-person amount": (
        lambda s: replace(
            s,
            approver=replace(s.approver, ref=PROPOSER),
            proposal=replace(s.proposal, approvals_required=2),
        ),
        Reason.PROPOSER,
        "two_person_rule",
        403,
        "the proposer cannot approve it",
    ),
    "approved already": (
        lambda s: replace(s, approvals=_mine(s)),
        Reason.ALREADY_APPROVED,
        "already_approved",
        409,
        "1002 has already approved this proposal; it needs another approver",
    ),
}


def test_a_fit_approver_is_refused_nothing() -> None:
    assert FIT.refusals() == []


@pytest.mark.parametrize("as_reviewed", ["not sent", "sent"])
def test_an_owner_within_limit_reviewing_the_current_digest_is_refused_nothing(
    as_reviewed: str,
) -> None:
    owner = Approver("1001", StaffRole.OWNER, {"usd": 4800})  # the amount exactly
    reviewed = FIT.proposal.digest if as_reviewed == "sent" else None

    assert replace(FIT, approver=owner, reviewed_digest=reviewed).refusals() == []


@pytest.mark.parametrize("broken", BROKEN, ids=list(BROKEN))
def test_each_rule_broken_alone_is_the_one_reason_given(broken: str) -> None:
    change, reason, code, status, words = BROKEN[broken]

    [refusal] = change(FIT).refusals()

    assert refusal.reason is reason
    assert refusal.code == code
    assert words in str(refusal.sentence)
    error = refusal.error()
    assert status_of(error) == status
    assert isinstance(error, Forbidden if status == 403 else Conflict)
    assert (error.code, error.message) == (code, str(refusal.sentence))


def test_every_rule_broken_at_once_gives_every_reason_in_the_order_refused() -> None:
    everything = Situation(
        shop=Shop(uninstalled_at=NOW, kill_switch=True, writes_enabled=False),
        approver=Approver(PROPOSER, StaffRole.VIEWER, {}),
        proposal=Proposal(
            status=ProposalStatus.REJECTED,
            policy_version=POLICY_VERSION - 1,
            approvals_required=2,
        ),
        reviewed_digest="0" * 64,
    )
    everything = replace(everything, approvals=(Given(PROPOSER, everything.proposal.digest),))

    assert [refusal.reason for refusal in everything.refusals()] == [
        Reason.ROLE_NOT_ALLOWED,
        Reason.NOT_AS_REVIEWED,
        Reason.POLICY_CHANGED,
        Reason.NOT_AWAITING_APPROVAL,
        Reason.SHOP_UNINSTALLED,
        Reason.KILL_SWITCH,
        Reason.PROTECTION_MODE,
        Reason.OVER_LIMIT,
        Reason.PROPOSER,
        Reason.ALREADY_APPROVED,
    ]


def test_a_page_without_a_reviewed_digest_is_told_of_the_policy_once() -> None:
    older = replace(FIT, proposal=Proposal(policy_version=POLICY_VERSION - 1))

    assert [r.reason for r in older.refusals()] == [Reason.POLICY_CHANGED]
    assert [r.reason for r in replace(older, reviewed_digest=older.proposal.digest).refusals()] == [
        Reason.NOT_AS_REVIEWED,
        Reason.POLICY_CHANGED,
    ]


@pytest.mark.parametrize(
    "no_longer_counts",
    [
        {"expires_at": NOW},
        {"voided_at": NOW - timedelta(minutes=1)},
        {"consumed_by_action": uuid.UUID("0b0e7f5c-93a2-4b8e-8d0b-5a3f0c9d2e44")},
        {"digest": "f" * 64},
    ],
    ids=["expired", "voided", "used by an action", "of an older digest"],
)
def test_an_approval_that_no_longer_counts_lets_its_approver_approve_again(
    no_longer_counts: dict[str, Any],
) -> None:
    given = replace(_mine(FIT)[0], **no_longer_counts)

    assert replace(FIT, approvals=(given,)).refusals() == []


def test_someone_elses_approval_leaves_the_second_approver_free() -> None:
    two = replace(FIT, proposal=replace(FIT.proposal, approvals_required=2))

    assert replace(two, approvals=(Given("1001", two.proposal.digest),)).refusals() == []


def test_an_amountless_proposal_needs_no_limit() -> None:
    credit = replace(FIT, approver=replace(FIT.approver, approval_limits={}))

    assert replace(credit, proposal=Proposal(amount=None, currency=None)).refusals() == []


@pytest.mark.parametrize("role", [StaffRole.VIEWER, StaffRole.PROPOSER, None])
def test_only_approvers_and_owners_may_approve_anything(role: str | None) -> None:
    assert [r.reason for r in why_not_approver(replace(FIT.approver, role=role))] == [
        Reason.NO_ROLE if role is None else Reason.ROLE_NOT_ALLOWED
    ]
    for allowed in StaffRole.CAN_APPROVE:
        assert why_not_approver(replace(FIT.approver, role=allowed)) == []


def test_the_switches_stop_writes_in_one_order() -> None:
    assert writes_stopped(Shop()) == []
    assert writes_stopped(Shop(uninstalled_at=NOW, kill_switch=True, writes_enabled=False)) == [
        WriteStop.UNINSTALLED,
        WriteStop.KILL_SWITCH,
        WriteStop.PROTECTION_MODE,
    ]
