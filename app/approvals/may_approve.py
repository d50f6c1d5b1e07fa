"""Whether a person may approve a proposal now: every rule of it, in one pure function.

:func:`why_not_approvable` reads plain values (the shop's switches, the person's role and
limits, the proposal, the approvals given so far, the shop's current policy version,
the time) and returns every :class:`Refusal` that applies, in this order:

1. the role: approvers and owners approve; anyone else never, an agent or a customer
   included (:func:`why_not_approver`, also asked alone before the proposal is read);
2. the digest the person reviewed is not the proposal's under today's policy, or its
   checks ran under an older policy version than today's;
3. the proposal is not awaiting approval;
4. the shop is uninstalled, its kill switch is on, or it is in protection mode
   (:func:`app.shops.switches.writes_stopped`): what they approved could not be sent;
5. the amount is above the person's limit in its currency (no limit there: none);
6. the two-person rule: the proposer approves nothing that needs two people;
7. the person has already approved this digest; one that expired, was voided or was
   used by an action does not count.

:func:`app.approvals.service.approve_proposal` (the API, the operator page and the
helpdesk's macros) refuses with the first, as the error it has always been
(:meth:`Refusal.error`); the admin's case page lists them all in its own words.
The executor keeps its own stops for an approval already given (the switches, through
the same :func:`~app.shops.switches.writes_stopped`, the approval's expiry, the digest):
they hold for an action about to be sent, not for a person deciding.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum
from typing import Protocol

from app.cases.digest import Reviewable, digest_of
from app.cases.proposals import ProposalStatus
from app.errors import CasewardError, Conflict, Forbidden
from app.money import Money
from app.shops.models import StaffRole
from app.shops.service import role_refused
from app.shops.switches import Switched, WriteStop, writes_stopped
from app.words import Code, Sentence, said

# What a person can do next when a proposal is not in the state a request needs.
NEXT_STEP = {
    ProposalStatus.BLOCKED: said("edit it so that its failing checks pass, or reject it"),
    ProposalStatus.AWAITING_APPROVAL: said("approve or reject it"),
    ProposalStatus.APPROVED: said("its action is under way: follow the action's status"),
    ProposalStatus.REJECTED: said("propose a new action instead"),
}


class Reason(StrEnum):
    NO_ROLE = "no_role"
    ROLE_NOT_ALLOWED = "role_not_allowed"
    NOT_AS_REVIEWED = "not_as_reviewed"
    POLICY_CHANGED = "policy_changed"
    NOT_AWAITING_APPROVAL = "not_awaiting_approval"
    SHOP_UNINSTALLED = "shop_uninstalled"
    KILL_SWITCH = "kill_switch"
    PROTECTION_MODE = "protection_mode"
    OVER_LIMIT = "over_approval_limit"
    PROPOSER = "two_person_rule"
    ALREADY_APPROVED = "already_approved"


# Who the person is (their role, their limit, having proposed it): 403. Everything
# else is a state that does not hold now: 409.
_FORBIDDEN = frozenset(
    {Reason.NO_ROLE, Reason.ROLE_NOT_ALLOWED, Reason.OVER_LIMIT, Reason.PROPOSER}
)


@dataclass(frozen=True)
class Refusal:
    """One reason an approval is refused: its kind, what Caseward says of it, and the
    error code the API answers with."""

    reason: Reason
    sentence: Sentence
    code: str

    def error(self) -> CasewardError:
        kind = Forbidden if self.reason in _FORBIDDEN else Conflict
        return kind(self.sentence, code=self.code)


@dataclass(frozen=True)
class Approver:
    """The person asking: their ``Actor.ref``, their role in the shop (None: none, as
    anyone but staff) and their limits (currency -> minor units)."""

    ref: str
    role: str | None
    approval_limits: Mapping[str, int]

    def limit_in(self, currency: str) -> int:
        """The most they may approve in ``currency``; a currency they have no limit in: 0."""
        return int(self.approval_limits.get(currency, 0))


class Approvable(Reviewable, Protocol):
    """What the rules read of a proposal."""

    status: str
    revision: int
    policy_version: int
    digest: str
    approvals_required: int
    proposed_by: str


class Given(Protocol):
    """What the rules read of an approval given before."""

    approver: str
    digest: str
    expires_at: datetime
    voided_at: datetime | None
    consumed_by_action: uuid.UUID | None


def why_not_approver(approver: Approver) -> list[Refusal]:
    """Why ``approver`` may approve nothing at all, whatever the proposal."""
    refused = role_refused(approver.ref, approver.role, StaffRole.CAN_APPROVE, _APPROVING)
    if refused is None:
        return []
    reason = Reason.NO_ROLE if approver.role is None else Reason.ROLE_NOT_ALLOWED
    return [Refusal(reason, refused.sentence, refused.code)]


def why_not_approvable(
    *,
    shop: Switched,
    approver: Approver,
    proposal: Approvable,
    approvals: Iterable[Given],
    policy_version: int,
    now: datetime,
    reviewed_digest: str | None = None,
) -> list[Refusal]:
    """Every reason ``approver``'s approval of ``proposal`` would be refused at ``now``,
    in the order of this module's list; empty when it would count.

    ``approvals`` are those given of the proposal so far (any: the ones that no longer
    count are left out here); ``reviewed_digest`` is the digest the person approves,
    None for a page deciding what to offer before anyone has sent one.
    """
    refusals = why_not_approver(approver)
    stale = _stale(proposal, policy_version)
    if reviewed_digest is not None and reviewed_digest != digest_of(proposal, policy_version):
        refusals.append(Refusal(Reason.NOT_AS_REVIEWED, stale, "stale_digest"))
    if proposal.policy_version != policy_version:
        refusals.append(Refusal(Reason.POLICY_CHANGED, stale, "stale_digest"))
    if proposal.status != ProposalStatus.AWAITING_APPROVAL:
        refusals.append(_not_awaiting(proposal.status))
    refusals.extend(_WRITES_STOPPED[stop] for stop in writes_stopped(shop))
    if proposal.amount is not None and proposal.currency is not None:
        limit = approver.limit_in(proposal.currency)
        if proposal.amount > limit:
            refusals.append(_over_limit(approver, limit, proposal.amount, proposal.currency))
    if proposal.approvals_required > 1 and approver.ref == proposal.proposed_by:
        refusals.append(_PROPOSER)
    if any(approval.approver == approver.ref for approval in _counting(proposal, approvals, now)):
        refusals.append(
            Refusal(
                Reason.ALREADY_APPROVED,
                said(
                    "%(approver)s has already approved this proposal; it needs another approver",
                    approver=approver.ref,
                ),
                "already_approved",
            )
        )
    return refusals


def _counting(proposal: Approvable, approvals: Iterable[Given], now: datetime) -> list[Given]:
    """The approvals that count towards ``proposal`` at ``now``: of its current digest,
    not voided, not used by an action, not expired."""
    return [
        approval
        for approval in approvals
        if approval.digest == proposal.digest
        and approval.voided_at is None
        and approval.consumed_by_action is None
        and approval.expires_at > now
    ]


_APPROVING = said("approve actions")

_WRITES_STOPPED = {
    # The executor's own words for an uninstalled shop: no other sentence says it.
    WriteStop.UNINSTALLED: Refusal(
        Reason.SHOP_UNINSTALLED, said("the shop has uninstalled Caseward"), "shop_uninstalled"
    ),
    WriteStop.KILL_SWITCH: Refusal(
        Reason.KILL_SWITCH,
        said(
            "the kill switch is on: nothing can be approved until an owner turns it off in Settings"
        ),
        "kill_switch",
    ),
    WriteStop.PROTECTION_MODE: Refusal(
        Reason.PROTECTION_MODE,
        said(
            "the shop is in protection mode (read-only): an owner must turn writes on in "
            "Settings before anything can be approved"
        ),
        "protection_mode",
    ),
}

_PROPOSER = Refusal(
    Reason.PROPOSER,
    said("this amount needs two people other than the proposer; the proposer cannot approve it"),
    "two_person_rule",
)


def _stale(proposal: Approvable, policy_version: int) -> Sentence:
    return said(
        "the proposal (now revision %(revision)s) or the shop's policy (now version "
        "%(version)s) changed since it was reviewed; reload it, review it again and "
        "approve its current digest",
        revision=str(proposal.revision),
        version=str(policy_version),
    )


def _not_awaiting(status: str) -> Refusal:
    return Refusal(
        Reason.NOT_AWAITING_APPROVAL,
        said(
            "the proposal is %(status)s, not awaiting approval; %(next_step)s",
            status=Code("proposal", status),
            next_step=NEXT_STEP[ProposalStatus(status)],
        ),
        f"proposal_{status}",
    )


def _over_limit(approver: Approver, limit: int, amount: int, currency: str) -> Refusal:
    return Refusal(
        Reason.OVER_LIMIT,
        said(
            "%(approver)s may approve up to %(limit)s, not %(amount)s",
            approver=approver.ref,
            limit=Money(limit, currency),
            amount=Money(amount, currency),
        ),
        "over_approval_limit",
    )
