"""Subscription checks: state, explicit cancel timing, and that a change changes something."""

from __future__ import annotations

from app.guard._common import customer_matches, target_exists
from app.guard._context import Context, day
from app.guard.verdict import CheckName, CheckResult
from app.words import Sentence, Value, joined, joined_by_and, one_after_another, said
from integrations.provider import SubscriptionFacts, SubscriptionStatus

Items = tuple[tuple[str, int], ...]


def _subscription(ctx: Context, subscription: SubscriptionFacts) -> list[CheckResult]:
    return [
        target_exists(
            ctx,
            said("subscription"),
            said("Subscription %(id)s", id=ctx.proposal.target),
            subscription.id,
            exists=subscription.exists,
        ),
        customer_matches(
            ctx, said("Subscription %(id)s", id=subscription.id), subscription.customer_id
        ),
    ]


def _period_end(subscription: SubscriptionFacts) -> Sentence:
    end = subscription.current_period_end
    return (
        said("the end of the period")
        if end is None
        else said("the end of the period (%(day)s)", day=day(end))
    )


def cancel_checks(ctx: Context, subscription: SubscriptionFacts) -> list[CheckResult]:
    results = _subscription(ctx, subscription)
    if not results[0].passed:
        return results
    sub = subscription.id
    facts = {"status": subscription.status}
    if subscription.status in SubscriptionStatus.ENDED:
        results.append(
            CheckResult(
                CheckName.NOT_CANCELED,
                False,
                said(
                    "Subscription %(id)s has already ended (%(status)s).",
                    id=sub,
                    status=subscription.status,
                ),
                facts,
            )
        )
    else:
        results.append(
            CheckResult(
                CheckName.NOT_CANCELED,
                True,
                said("Subscription %(id)s is %(status)s.", id=sub, status=subscription.status),
                facts,
            )
        )
    results.append(_cancel_timing(ctx, subscription))
    return results


def _cancel_timing(ctx: Context, subscription: SubscriptionFacts) -> CheckResult:
    """Cancel-now is immediate and final, so it must be asked for, never assumed."""
    at_period_end = ctx.proposal.params.get("at_period_end")
    facts = {
        "at_period_end": at_period_end if isinstance(at_period_end, bool) else None,
        "cancel_at_period_end": subscription.cancel_at_period_end,
    }
    sub = subscription.id
    if not isinstance(at_period_end, bool):
        ask = (
            said(
                "Say whether to cancel now or at the end of the period (at_period_end true or "
                "false); cancelling now is immediate and final."
            )
            if at_period_end is None
            else said(
                "Say whether to cancel now or at the end of the period (at_period_end true or "
                "false) (the proposal says %(value)s); cancelling now is immediate and final.",
                value=repr(at_period_end),
            )
        )
        return CheckResult(CheckName.CANCEL_TIMING, False, ask, facts)
    if at_period_end and subscription.cancel_at_period_end:
        return CheckResult(
            CheckName.CANCEL_TIMING,
            False,
            said(
                "Subscription %(id)s is already set to cancel at %(end)s; there is nothing to "
                "change.",
                id=sub,
                end=_period_end(subscription),
            ),
            facts,
        )
    if at_period_end:
        reason = said(
            "Subscription %(id)s will cancel at %(end)s.", id=sub, end=_period_end(subscription)
        )
    else:
        reason = said(
            "Subscription %(id)s will be canceled now; this is immediate and final.", id=sub
        )
    return CheckResult(CheckName.CANCEL_TIMING, True, reason, facts)


def change_checks(ctx: Context, subscription: SubscriptionFacts) -> list[CheckResult]:
    results = _subscription(ctx, subscription)
    if not results[0].passed:
        return results
    status = subscription.status
    facts = {"status": status}
    if status in SubscriptionStatus.CHANGEABLE:
        results.append(
            CheckResult(
                CheckName.SUBSCRIPTION_ACTIVE,
                True,
                said("Subscription %(id)s is %(status)s.", id=subscription.id, status=status),
                facts,
            )
        )
    else:
        results.append(
            CheckResult(
                CheckName.SUBSCRIPTION_ACTIVE,
                False,
                said(
                    "Subscription %(id)s is %(status)s; only active or trialing subscriptions "
                    "can be changed.",
                    id=subscription.id,
                    status=status,
                ),
                facts,
            )
        )
    terms, items, cancel_at_period_end = _change_terms(ctx)
    results.append(terms)
    if terms.passed:
        results.append(_change_differs(subscription, items, cancel_at_period_end))
    return results


def _describe(items: Items) -> Value:
    """Price ids and quantities, as the provider names them; or that there are none."""
    return ", ".join(f"{price} x {quantity}" for price, quantity in items) or said("no items")


def _change_terms(ctx: Context) -> tuple[CheckResult, Items | None, bool | None]:
    """``items`` is the whole set wanted afterwards; ``cancel_at_period_end`` a toggle."""
    params = ctx.proposal.params
    raw_items = params.get("items")
    toggle = params.get("cancel_at_period_end")
    problems: list[Sentence] = []
    items: list[tuple[str, int]] = []
    if raw_items is None and toggle is None:
        problems.append(
            said("Say what to change: items (price and quantity) or cancel_at_period_end.")
        )
    if toggle is not None and not isinstance(toggle, bool):
        problems.append(
            said("cancel_at_period_end must be true or false, not %(value)s.", value=repr(toggle))
        )
    if raw_items is not None:
        problems += _parse_items(raw_items, items)
    facts = {
        "items": [list(item) for item in items],
        "cancel_at_period_end": toggle if isinstance(toggle, bool) else None,
    }
    if problems:
        return (
            CheckResult(CheckName.CHANGE_TERMS, False, one_after_another(problems), facts),
            None,
            None,
        )
    wanted = tuple(sorted(items)) if raw_items is not None else None
    parts = [] if wanted is None else [said("items %(items)s", items=_describe(wanted))]
    if isinstance(toggle, bool):
        parts.append(said("cancel_at_period_end %(value)s", value=str(toggle).lower()))
    reason = said("The change asks for %(parts)s.", parts=joined_by_and(parts))
    return (
        CheckResult(CheckName.CHANGE_TERMS, True, reason, facts),
        wanted,
        toggle if isinstance(toggle, bool) else None,
    )


def _parse_items(raw: object, into: list[tuple[str, int]]) -> list[Sentence]:
    """Fill ``into`` with (price_id, quantity) pairs; return what is wrong with ``raw``."""
    shape = said(
        "items must be a list of (price_id, quantity) pairs with a quantity of at least 1."
    )
    if not isinstance(raw, tuple) or not raw:
        return [shape]
    prices: set[str] = set()
    for pair in raw:
        if not isinstance(pair, tuple) or len(pair) != 2:
            return [shape]
        price, quantity = pair
        if not isinstance(price, str) or not price or isinstance(quantity, bool):
            return [shape]
        if not isinstance(quantity, int) or quantity < 1:
            return [shape]
        if price in prices:
            return [said("Price %(price)s appears twice in items.", price=price)]
        prices.add(price)
        into.append((price, quantity))
    return []


def _change_differs(
    subscription: SubscriptionFacts, items: Items | None, cancel_at_period_end: bool | None
) -> CheckResult:
    current = tuple(sorted((item.price_id, item.quantity) for item in subscription.items))
    changes: list[Sentence] = []
    same: list[Sentence] = []
    if items is not None:
        described = _describe(current)
        if items != current:
            changes.append(
                said("items %(items)s → %(wanted)s", items=described, wanted=_describe(items))
            )
        else:
            same.append(said("items %(items)s", items=described))
    if cancel_at_period_end is not None:
        now = str(subscription.cancel_at_period_end).lower()
        if cancel_at_period_end != subscription.cancel_at_period_end:
            changes.append(
                said(
                    "cancel_at_period_end %(value)s → %(wanted)s",
                    value=now,
                    wanted=str(cancel_at_period_end).lower(),
                )
            )
        else:
            same.append(said("cancel_at_period_end %(value)s", value=now))
    facts = {
        "current_items": [list(item) for item in current],
        "current_cancel_at_period_end": subscription.cancel_at_period_end,
        "changes": [str(change) for change in changes],
    }
    sub = subscription.id
    if changes:
        return CheckResult(
            CheckName.CHANGE_DIFFERS,
            True,
            said(
                "The change differs from subscription %(id)s as it is: %(changes)s.",
                id=sub,
                changes=joined(changes),
            ),
            facts,
        )
    return CheckResult(
        CheckName.CHANGE_DIFFERS,
        False,
        said(
            "The change matches subscription %(id)s as it is (%(same)s); there is nothing to "
            "change.",
            id=sub,
            same=joined(same),
        ),
        facts,
    )
