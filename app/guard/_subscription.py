"""Subscription checks: state, explicit cancel timing, and that a change changes something."""

from __future__ import annotations

from app.guard._common import customer_matches, target_exists
from app.guard._context import Context, day
from app.guard.verdict import CheckName, CheckResult
from integrations.provider import SubscriptionFacts

_ENDED = frozenset({"canceled", "incomplete_expired"})
_CHANGEABLE = frozenset({"active", "trialing"})

Items = tuple[tuple[str, int], ...]


def _subscription(ctx: Context, subscription: SubscriptionFacts) -> list[CheckResult]:
    return [
        target_exists(ctx, "subscription", subscription.id, exists=subscription.exists),
        customer_matches(ctx, f"Subscription {subscription.id}", subscription.customer_id),
    ]


def _period_end(subscription: SubscriptionFacts) -> str:
    end = subscription.current_period_end
    return "the end of the period" if end is None else f"the end of the period ({day(end)})"


def cancel_checks(ctx: Context, subscription: SubscriptionFacts) -> list[CheckResult]:
    results = _subscription(ctx, subscription)
    if not results[0].passed:
        return results
    sub = subscription.id
    facts = {"status": subscription.status}
    if subscription.status in _ENDED:
        results.append(
            CheckResult(
                CheckName.NOT_CANCELED,
                False,
                f"Subscription {sub} has already ended ({subscription.status}).",
                facts,
            )
        )
    else:
        results.append(
            CheckResult(
                CheckName.NOT_CANCELED, True, f"Subscription {sub} is {subscription.status}.", facts
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
        given = "" if at_period_end is None else f" (the proposal says {at_period_end!r})"
        return CheckResult(
            CheckName.CANCEL_TIMING,
            False,
            "Say whether to cancel now or at the end of the period (at_period_end true or "
            f"false){given}; cancelling now is immediate and final.",
            facts,
        )
    if at_period_end and subscription.cancel_at_period_end:
        return CheckResult(
            CheckName.CANCEL_TIMING,
            False,
            f"Subscription {sub} is already set to cancel at {_period_end(subscription)}; "
            "there is nothing to change.",
            facts,
        )
    if at_period_end:
        reason = f"Subscription {sub} will cancel at {_period_end(subscription)}."
    else:
        reason = f"Subscription {sub} will be canceled now; this is immediate and final."
    return CheckResult(CheckName.CANCEL_TIMING, True, reason, facts)


def change_checks(ctx: Context, subscription: SubscriptionFacts) -> list[CheckResult]:
    results = _subscription(ctx, subscription)
    if not results[0].passed:
        return results
    status = subscription.status
    facts = {"status": status}
    if status in _CHANGEABLE:
        results.append(
            CheckResult(
                CheckName.SUBSCRIPTION_ACTIVE,
                True,
                f"Subscription {subscription.id} is {status}.",
                facts,
            )
        )
    else:
        results.append(
            CheckResult(
                CheckName.SUBSCRIPTION_ACTIVE,
                False,
                f"Subscription {subscription.id} is {status}; only active or trialing "
                "subscriptions can be changed.",
                facts,
            )
        )
    terms, items, cancel_at_period_end = _change_terms(ctx)
    results.append(terms)
    if terms.passed:
        results.append(_change_differs(subscription, items, cancel_at_period_end))
    return results


def _describe(items: Items) -> str:
    return ", ".join(f"{price} x {quantity}" for price, quantity in items) or "no items"


def _change_terms(ctx: Context) -> tuple[CheckResult, Items | None, bool | None]:
    """``items`` is the whole set wanted afterwards; ``cancel_at_period_end`` a toggle."""
    params = ctx.proposal.params
    raw_items = params.get("items")
    toggle = params.get("cancel_at_period_end")
    problems: list[str] = []
    items: list[tuple[str, int]] = []
    if raw_items is None and toggle is None:
        problems.append("Say what to change: items (price and quantity) or cancel_at_period_end.")
    if toggle is not None and not isinstance(toggle, bool):
        problems.append(f"cancel_at_period_end must be true or false, not {toggle!r}.")
    if raw_items is not None:
        problems += _parse_items(raw_items, items)
    facts = {
        "items": [list(item) for item in items],
        "cancel_at_period_end": toggle if isinstance(toggle, bool) else None,
    }
    if problems:
        return CheckResult(CheckName.CHANGE_TERMS, False, " ".join(problems), facts), None, None
    wanted = tuple(sorted(items)) if raw_items is not None else None
    parts = [] if wanted is None else [f"items {_describe(wanted)}"]
    if isinstance(toggle, bool):
        parts.append(f"cancel_at_period_end {str(toggle).lower()}")
    reason = f"The change asks for {' and '.join(parts)}."
    return (
        CheckResult(CheckName.CHANGE_TERMS, True, reason, facts),
        wanted,
        toggle if isinstance(toggle, bool) else None,
    )


def _parse_items(raw: object, into: list[tuple[str, int]]) -> list[str]:
    """Fill ``into`` with (price_id, quantity) pairs; return what is wrong with ``raw``."""
    shape = "items must be a list of (price_id, quantity) pairs with a quantity of at least 1."
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
            return [f"Price {price} appears twice in items."]
        prices.add(price)
        into.append((price, quantity))
    return []


def _change_differs(
    subscription: SubscriptionFacts, items: Items | None, cancel_at_period_end: bool | None
) -> CheckResult:
    current = tuple(sorted((item.price_id, item.quantity) for item in subscription.items))
    changes: list[str] = []
    same: list[str] = []
    if items is not None:
        described = f"items {_describe(current)}"
        if items != current:
            changes.append(f"{described} → {_describe(items)}")
        else:
            same.append(described)
    if cancel_at_period_end is not None:
        now = str(subscription.cancel_at_period_end).lower()
        if cancel_at_period_end != subscription.cancel_at_period_end:
            changes.append(f"cancel_at_period_end {now} → {str(cancel_at_period_end).lower()}")
        else:
            same.append(f"cancel_at_period_end {now}")
    facts = {
        "current_items": [list(item) for item in current],
        "current_cancel_at_period_end": subscription.cancel_at_period_end,
        "changes": changes,
    }
    sub = subscription.id
    if changes:
        return CheckResult(
            CheckName.CHANGE_DIFFERS,
            True,
            f"The change differs from subscription {sub} as it is: {'; '.join(changes)}.",
            facts,
        )
    return CheckResult(
        CheckName.CHANGE_DIFFERS,
        False,
        f"The change matches subscription {sub} as it is ({'; '.join(same)}); "
        "there is nothing to change.",
        facts,
    )
