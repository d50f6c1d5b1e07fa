"""One reading of a proposal and of an action, for every surface that shows them (the staff
API, the admin pages, the agents' MCP tools, the helpdesk sidebar): the money as
:class:`~app.money.Money`, the status as its enum, a proposal's stored verdict as a
:class:`~app.guard.Verdict`. Each surface still chooses its own shape from these.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

from app.cases.proposals import Proposal, ProposalStatus
from app.execution.models import Action, ActionStatus
from app.guard import CheckResult, Verdict, stored_verdict
from app.money import Money


@dataclass(frozen=True)
class ProposalView:
    """A proposal as read: its row, its money (None when it moves none) and its status."""

    proposal: Proposal
    money: Money | None
    status: ProposalStatus

    @classmethod
    def of(cls, proposal: Proposal) -> ProposalView:
        return cls(
            proposal=proposal,
            money=_money(proposal.amount, proposal.currency),
            status=ProposalStatus(proposal.status),
        )

    @cached_property
    def verdict(self) -> Verdict | None:
        """The stored verdict, None when the proposal holds none. Read on first use only:
        the API hands the stored JSON on as it is."""
        return stored_verdict(self.proposal.verdict)

    @property
    def checks(self) -> tuple[CheckResult, ...]:
        return self.verdict.checks if self.verdict else ()

    @property
    def failed(self) -> tuple[CheckResult, ...]:
        return self.verdict.failed if self.verdict else ()

    @property
    def signals(self) -> tuple[CheckResult, ...]:
        return self.verdict.signals if self.verdict else ()


@dataclass(frozen=True)
class ActionView:
    """An action as read: its row, its money (None when it moves none) and its status."""

    action: Action
    money: Money | None
    status: ActionStatus

    @classmethod
    def of(cls, action: Action) -> ActionView:
        return cls(
            action=action,
            money=_money(action.amount, action.currency),
            status=ActionStatus(action.status),
        )


def _money(amount: int | None, currency: str | None) -> Money | None:
    if amount is None or not currency:
        return None
    return Money(amount, currency)
