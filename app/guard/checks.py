"""The entry point: run every check that applies and decide the outcome."""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime
from typing import TypeVar

from app.guard._common import cap_checks, kind_ceiling_checks, shop_checks
from app.guard._context import Context
from app.guard._customer import credit_checks, discount_checks
from app.guard._refund import refund_checks
from app.guard._signals import signal_checks
from app.guard._subscription import cancel_checks, change_checks
from app.guard.policy import MONEY_KINDS, PolicyRules, ShopSwitches
from app.guard.proposal import (
    CapSpending,
    CustomerRecord,
    InFlightAction,
    PastAction,
    ProposedAction,
)
from app.guard.verdict import CheckResult, Outcome, Verdict
from app.money import Money
from app.words import Sentence, one_after_another, said, said_n
from integrations.provider import (
    ActionKind,
    CustomerFacts,
    OrderFacts,
    PaymentFacts,
    SubscriptionFacts,
    TargetFacts,
)

_Facts = TypeVar("_Facts", PaymentFacts, CustomerFacts, SubscriptionFacts)


def evaluate(
    proposal: ProposedAction,
    facts: TargetFacts,
    *,
    policy: PolicyRules,
    switches: ShopSwitches,
    in_flight: Iterable[InFlightAction],
    history: Iterable[PastAction],
    order: OrderFacts | None = None,
    spending: CapSpending | None = None,
    record: CustomerRecord | None = None,
    now: datetime,
) -> Verdict:
    """Check ``proposal`` against fresh provider ``facts`` and the shop's rules.

    ``facts`` is the target's: :class:`PaymentFacts` for a refund,
    :class:`CustomerFacts` for a credit or discount, :class:`SubscriptionFacts`
    for a subscription action (anything else is a caller bug: ``TypeError``).
    ``in_flight`` is our approved/queued/submitted/unknown actions for the shop
    (the proposal's own, matched by ``proposal_id``, is left out); ``history`` our
    executed actions over at least the longest cap period and the duplicate
    window. ``order`` is the store order behind a refund, needed for line items
    and the refund window. ``spending`` is what counts against each cap when the caller
    added it up (then ``in_flight`` and ``history`` need only hold our actions on the
    same target or money). ``record`` is Caseward's record of the case's customer, which
    the abuse signals read; without it no signal runs. ``now`` must be timezone-aware.

    Every applicable check runs; checks that read a target the provider does not
    have are skipped, the verdict being blocked anyway.
    """
    if now.utcoffset() is None:
        raise ValueError("now must be timezone-aware")
    ctx = Context(
        proposal=proposal,
        policy=policy,
        in_flight=tuple(a for a in in_flight if a.action_id != proposal.proposal_id),
        history=tuple(history),
        order=order,
        now=now,
        spending=spending,
    )
    results = shop_checks(ctx, switches)
    # Caps count per the case's customer: the only one this action may reach.
    customer = proposal.case_customer
    match proposal.kind:
        case ActionKind.REFUND:
            results += refund_checks(ctx, _expect(facts, PaymentFacts, proposal.kind))
        case ActionKind.CUSTOMER_CREDIT:
            results += credit_checks(ctx, _expect(facts, CustomerFacts, proposal.kind))
        case ActionKind.DISCOUNT:
            results += discount_checks(ctx, _expect(facts, CustomerFacts, proposal.kind))
        case ActionKind.SUBSCRIPTION_CANCEL:
            results += cancel_checks(ctx, _expect(facts, SubscriptionFacts, proposal.kind))
        case ActionKind.SUBSCRIPTION_CHANGE:
            results += change_checks(ctx, _expect(facts, SubscriptionFacts, proposal.kind))
    results += cap_checks(ctx, customer)
    results += kind_ceiling_checks(ctx)
    results += signal_checks(ctx, record)
    return _decide(ctx, tuple(results))


def _expect(facts: TargetFacts, expected: type[_Facts], kind: ActionKind) -> _Facts:
    if not isinstance(facts, expected):
        raise TypeError(f"a {kind.value} is checked against {expected.__name__}, not {facts!r}")
    return facts


def _decide(ctx: Context, checks: tuple[CheckResult, ...]) -> Verdict:
    """Blocked if a check failed; else two people above the threshold; else a person when a
    signal was raised; else allowed by policy only when the ceiling for the currency
    explicitly covers the amount.

    A raised signal never blocks and never lets the policy approve: it asks for one person,
    and for two only where the amount is above the two-person threshold anyway (the rule
    without signals): a signal is a reason to look, which one person can do."""
    policy = ctx.policy
    amount = ctx.proposal.amount if ctx.proposal.kind in MONEY_KINDS else None
    threshold = None if amount is None else policy.two_person_threshold.get(amount.currency)
    ceiling = None if amount is None else policy.auto_approve_ceiling.get(amount.currency)
    two_people = amount is not None and threshold is not None and amount.amount > threshold
    approvals = 2 if two_people else 1

    outcome = Outcome.NEEDS_APPROVAL
    failed = sum(1 for check in checks if not check.passed and not check.escalates)
    signals = sum(1 for check in checks if not check.passed and check.escalates)
    if failed:
        outcome = Outcome.BLOCKED
        why = said_n(
            "Nobody can approve this while %(count)s of %(total)s checks fail.",
            "Nobody can approve this while %(count)s of %(total)s checks fail.",
            failed,
            total=len(checks),
        )
    elif amount is None:
        why = said(
            "One person must approve: a %(kind)s is never approved automatically.", kind=ctx.noun
        )
    elif two_people:
        assert threshold is not None
        why = said(
            "Two people must approve: %(amount)s is above the two-person threshold of "
            "%(threshold)s.",
            amount=amount,
            threshold=Money(threshold, amount.currency),
        )
        if signals:
            why = one_after_another([why, _signals_raised(signals)])
    elif signals:
        why = said("One person must approve: %(why)s", why=_signals_raised(signals))
    elif ceiling is None:
        why = said(
            "One person must approve: the shop's policy sets no auto-approve ceiling for "
            "%(currency)s.",
            currency=amount.currency.upper(),
        )
    elif amount.amount > ceiling:
        why = said(
            "One person must approve: %(amount)s is above the auto-approve ceiling of %(ceiling)s.",
            amount=amount,
            ceiling=Money(ceiling, amount.currency),
        )
    else:
        outcome, approvals = Outcome.ALLOWED_BY_POLICY, 0
        why = said(
            "Allowed by the shop's policy: %(amount)s is within the auto-approve ceiling of "
            "%(ceiling)s.",
            amount=amount,
            ceiling=Money(ceiling, amount.currency),
        )
    return Verdict(
        outcome=outcome,
        checks=checks,
        approvals_required=approvals,
        policy_version=policy.version,
        approval_said=why,
    )


def _signals_raised(count: int) -> Sentence:
    return said_n(
        "%(count)s signal asks for a person's judgement, whatever the auto-approve ceiling.",
        "%(count)s signals ask for a person's judgement, whatever the auto-approve ceiling.",
        count,
    )
