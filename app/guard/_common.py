"""Checks every proposal passes, whatever its kind: switches, policy, identity, shape, caps."""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from app.guard._context import (
    MONEY_KINDS,
    Context,
    customer_of,
    describe_period,
    fmt,
    moved_money,
)
from app.guard.policy import CapRule, ShopSwitches
from app.guard.verdict import CheckName, CheckResult
from app.money import Money
from integrations.provider import ACTION_ID_METADATA_KEY, ActionKind

# The parameters each kind may carry to the provider; anything else is refused.
ALLOWED_PARAMS = {
    # shipping and notify: Shopify's (see integrations.shopify.adapter.TARGETS).
    ActionKind.REFUND: frozenset({"reason", "shipping", "notify"}),
    ActionKind.CUSTOMER_CREDIT: frozenset({"reason", "description", "notify"}),
    ActionKind.DISCOUNT: frozenset(
        {"reason", "percent_off", "amount_off", "duration", "duration_in_months"}
    ),
    ActionKind.SUBSCRIPTION_CANCEL: frozenset({"reason", "at_period_end"}),
    ActionKind.SUBSCRIPTION_CHANGE: frozenset(
        {"reason", "items", "cancel_at_period_end", "proration_behavior"}
    ),
}

_AMOUNT_NEEDED = {
    ActionKind.REFUND: "how much, in the payment's currency",
    ActionKind.CUSTOMER_CREDIT: "how much, in the customer's balance currency",
    ActionKind.DISCOUNT: "the amount off, or for a percent discount the most it can take off",
}


def shop_checks(ctx: Context, switches: ShopSwitches) -> list[CheckResult]:
    return [
        _writes_enabled(switches),
        _kill_switch(switches),
        _kind_enabled(ctx),
        _identity(ctx),
        _reason_allowed(ctx),
        _proposal_shape(ctx),
        _amount(ctx),
    ]


def _writes_enabled(switches: ShopSwitches) -> CheckResult:
    facts = {"writes_enabled": switches.writes_enabled}
    if switches.writes_enabled:
        return CheckResult(
            CheckName.WRITES_ENABLED, True, "Writes are turned on for this shop.", facts
        )
    return CheckResult(
        CheckName.WRITES_ENABLED,
        False,
        "The shop is read-only (protection mode): a signed-in person must turn writes on "
        "in Settings before Caseward changes anything at the provider.",
        facts,
    )


def _kill_switch(switches: ShopSwitches) -> CheckResult:
    facts = {"kill_switch": switches.kill_switch}
    if switches.kill_switch:
        return CheckResult(
            CheckName.KILL_SWITCH,
            False,
            "The kill switch is on: Caseward sends no money actions until someone turns it "
            "off in Settings.",
            facts,
        )
    return CheckResult(CheckName.KILL_SWITCH, True, "The kill switch is off.", facts)


def _kind_enabled(ctx: Context) -> CheckResult:
    kind = ctx.proposal.kind
    facts = {"kind": kind.value, "enabled_kinds": sorted(ctx.policy.enabled_kinds)}
    if kind in ctx.policy.enabled_kinds:
        return CheckResult(
            CheckName.KIND_ENABLED, True, f"The shop's policy allows {ctx.noun}s.", facts
        )
    return CheckResult(
        CheckName.KIND_ENABLED, False, f"The shop's policy does not allow {ctx.noun}s.", facts
    )


def _identity(ctx: Context) -> CheckResult:
    level = ctx.proposal.identity_level
    minimum = ctx.policy.min_identity[ctx.proposal.kind]
    facts = {"identity_level": level.value, "min_identity": minimum.value}
    if level >= minimum:
        return CheckResult(
            CheckName.IDENTITY,
            True,
            f"The customer's identity is {level.value} ({level.description}), which meets the "
            f"shop's minimum of {minimum.value} for {ctx.noun}s.",
            facts,
        )
    return CheckResult(
        CheckName.IDENTITY,
        False,
        f"The customer's identity is only {level.value} ({level.description}); {ctx.noun}s "
        f"need at least {minimum.value} ({minimum.description}).",
        facts,
    )


def _reason_allowed(ctx: Context) -> CheckResult:
    reason = ctx.proposal.params.get("reason")
    allowed = ctx.policy.allowed_reasons
    facts = {
        "reason": reason if isinstance(reason, str) else None,
        "allowed_reasons": None if allowed is None else sorted(allowed),
    }
    if reason is not None and not isinstance(reason, str):
        return CheckResult(
            CheckName.REASON_ALLOWED, False, f"The reason must be text, not {reason!r}.", facts
        )
    if allowed is None:
        return CheckResult(
            CheckName.REASON_ALLOWED, True, "The shop's policy accepts any reason.", facts
        )
    listed = ", ".join(sorted(allowed)) or "none"
    if reason is None:
        return CheckResult(
            CheckName.REASON_ALLOWED,
            False,
            f"The proposal gives no reason; the shop's policy accepts: {listed}.",
            facts,
        )
    if reason not in allowed:
        return CheckResult(
            CheckName.REASON_ALLOWED,
            False,
            f"The reason '{reason}' is not one the shop's policy accepts ({listed}).",
            facts,
        )
    return CheckResult(
        CheckName.REASON_ALLOWED,
        True,
        f"The reason '{reason}' is one the shop's policy accepts.",
        facts,
    )


def _proposal_shape(ctx: Context) -> CheckResult:
    """Parameters nobody checks must not ride along to the provider."""
    proposal = ctx.proposal
    unknown = sorted(set(proposal.params) - ALLOWED_PARAMS[proposal.kind])
    problems = []
    if unknown:
        problems.append(
            f"The proposal carries settings Caseward does not use for {ctx.noun}s: "
            f"{', '.join(unknown)}."
        )
    if proposal.line_items and proposal.kind is not ActionKind.REFUND:
        problems.append(f"Only refunds are split by order line, not {ctx.noun}s.")
    facts = {"params": sorted(proposal.params), "line_items": len(proposal.line_items)}
    if problems:
        return CheckResult(CheckName.PROPOSAL_SHAPE, False, " ".join(problems), facts)
    return CheckResult(
        CheckName.PROPOSAL_SHAPE, True, f"The proposal has the shape of a {ctx.noun}.", facts
    )


def _amount(ctx: Context) -> CheckResult:
    amount = ctx.proposal.amount
    facts: dict[str, object] = {
        "amount": None if amount is None else amount.amount,
        "currency": None if amount is None else amount.currency,
    }
    noun = ctx.noun
    if ctx.proposal.kind not in MONEY_KINDS:
        if amount is None:
            return CheckResult(CheckName.AMOUNT, True, f"A {noun} carries no amount.", facts)
        return CheckResult(
            CheckName.AMOUNT,
            False,
            f"A {noun} carries no amount; remove {amount.format()} from the proposal.",
            facts,
        )
    if amount is None:
        needed = _AMOUNT_NEEDED[ctx.proposal.kind]
        return CheckResult(CheckName.AMOUNT, False, f"A {noun} needs an amount: {needed}.", facts)
    if amount.amount <= 0:
        return CheckResult(
            CheckName.AMOUNT,
            False,
            f"A {noun} must be more than zero; the proposal says {amount.format()}.",
            facts,
        )
    return CheckResult(
        CheckName.AMOUNT, True, f"The amount, {amount.format()}, is more than zero.", facts
    )


# ---------------------------------------------------------------- about the target


def target_exists(
    ctx: Context, noun: str, facts_id: str, *, exists: bool, deleted: bool = False
) -> CheckResult:
    """The provider knows the target, it is live, and the facts are about it and nothing else."""
    target = ctx.proposal.target
    facts = {"target": target, "facts_id": facts_id, "exists": exists, "deleted": deleted}
    provider = ctx.provider_label
    if not exists:
        reason = f"{noun.capitalize()} {target} was not found at {provider}."
    elif facts_id != target:
        reason = (
            f"The facts read from {provider} are for {facts_id}, not for {target}, "
            f"the {noun} this {ctx.noun} targets."
        )
    elif deleted:
        reason = f"{noun.capitalize()} {target} is deleted at {provider}."
    else:
        return CheckResult(
            CheckName.TARGET_EXISTS,
            True,
            f"{noun.capitalize()} {target} exists at {provider}.",
            facts,
        )
    return CheckResult(CheckName.TARGET_EXISTS, False, reason, facts)


def customer_matches(ctx: Context, subject: str, owner: str | None) -> CheckResult:
    """The target belongs to the case's customer: money never reaches anyone else.

    The customer comes from the case (its customer's identity at the provider), never
    from the proposal; a proposal naming a customer may only narrow. Deny by default:
    a missing link on either side blocks, and the reason says which one.
    """
    case_customer, named = ctx.proposal.case_customer, ctx.proposal.customer_ref
    provider = ctx.provider_label
    facts = {"case_customer": case_customer, "customer_ref": named, "owner": owner}
    if case_customer is None:
        return CheckResult(
            CheckName.CUSTOMER_MATCHES,
            False,
            f"The case's customer has no {provider} customer linked, so nothing ties "
            f"{subject} to them; link the customer's {provider} account to the case first.",
            facts,
        )
    if named is not None and named != case_customer:
        return CheckResult(
            CheckName.CUSTOMER_MATCHES,
            False,
            f"The proposal names customer {named}, but the case is about customer "
            f"{case_customer}; a proposal cannot reach beyond the case's customer.",
            facts,
        )
    if owner is None:
        return CheckResult(
            CheckName.CUSTOMER_MATCHES,
            False,
            f"{subject} has no customer on record at {provider}, so it cannot be shown to "
            f"belong to the case's customer {case_customer}.",
            facts,
        )
    if owner != case_customer:
        return CheckResult(
            CheckName.CUSTOMER_MATCHES,
            False,
            f"{subject} belongs to customer {owner}, not to the case's customer {case_customer}.",
            facts,
        )
    return CheckResult(
        CheckName.CUSTOMER_MATCHES,
        True,
        f"{subject} belongs to customer {owner}, the case's customer.",
        facts,
    )


def not_already_at_provider(
    ctx: Context, record_noun: str, records: Iterable[tuple[str, Mapping[str, str]]]
) -> list[CheckResult]:
    """Re-checking a queued action: has its write already landed? Then find it, never resend.

    Only runs when the proposal carries its action id (``proposal_id``).
    """
    action_id = ctx.proposal.proposal_id
    if action_id is None:
        return []
    found = [ref for ref, metadata in records if metadata.get(ACTION_ID_METADATA_KEY) == action_id]
    facts = {"action_id": action_id, "found": found}
    provider = ctx.provider_label
    if found:
        return [
            CheckResult(
                CheckName.NOT_ALREADY_AT_PROVIDER,
                False,
                f"This action already reached {provider}: {record_noun} {', '.join(found)} "
                f"carries its id {action_id}. Look up its result instead of sending it again.",
                facts,
            )
        ]
    return [
        CheckResult(
            CheckName.NOT_ALREADY_AT_PROVIDER,
            True,
            f"No {provider} {record_noun} carries this action's id ({action_id}) yet.",
            facts,
        )
    ]


def duplicate_check(
    ctx: Context,
    *,
    what: str,
    subject: str,
    provider_matches: list[str],
    ids_at_provider: Iterable[str],
) -> CheckResult:
    """Same kind, same target, same amount within the duplicate window.

    ``provider_matches`` describes the provider's own records that match (any
    origin). Our in-flight and past actions are added unless the provider already
    holds their write (``ids_at_provider``): then the provider's record decides,
    so a write that failed there is not a duplicate.
    """
    proposal = ctx.proposal
    amount = proposal.amount
    window = ctx.policy.duplicate_window
    since = ctx.since(window)
    skip = set(ids_at_provider)
    matches = list(provider_matches)
    matches += [
        f"Caseward action {action.action_id}, {action.status.value}"
        for action in ctx.in_flight
        if action.kind is proposal.kind
        and action.target == proposal.target
        and action.amount == amount
        and action.action_id not in skip
    ]
    matches += [
        f"Caseward action {past.action_id}, {past.status.value}"
        for past in ctx.history
        if past.kind is proposal.kind
        and past.target == proposal.target
        and past.amount == amount
        and past.created_at >= since
        and moved_money(past.status)
        and past.action_id not in skip
    ]
    period = describe_period(window)
    facts = {
        "window_seconds": int(window.total_seconds()),
        "amount": None if amount is None else amount.amount,
        "currency": None if amount is None else amount.currency,
        "matches": matches,
    }
    if matches:
        return CheckResult(
            CheckName.NOT_DUPLICATE,
            False,
            f"A {ctx.noun} of {what} {subject} already exists within the last {period} "
            f"({'; '.join(matches)}); the same amount again looks like a duplicate.",
            facts,
        )
    return CheckResult(
        CheckName.NOT_DUPLICATE,
        True,
        f"No {ctx.noun} of {what} {subject} in the last {period}.",
        facts,
    )


def currency_check(ctx: Context, amount: Money, subject: str, currency: str) -> CheckResult:
    facts = {"requested_currency": amount.currency, "currency": currency}
    if amount.currency == currency:
        return CheckResult(
            CheckName.CURRENCY_MATCHES,
            True,
            f"The {ctx.noun} and {subject} are both in {currency.upper()}.",
            facts,
        )
    return CheckResult(
        CheckName.CURRENCY_MATCHES,
        False,
        f"The {ctx.noun} is in {amount.currency.upper()} but {subject} is in {currency.upper()}.",
        facts,
    )


# ---------------------------------------------------------------- caps


def cap_checks(ctx: Context, customer: str | None) -> list[CheckResult]:
    """Caps over a trailing period: our past actions + our in-flight ones + this one."""
    return [
        _cap(ctx, CheckName.CUSTOMER_CAP, "per-customer", ctx.policy.per_customer_cap, customer),
        _cap(ctx, CheckName.SHOP_CAP, "per-shop", ctx.policy.per_shop_cap, None),
    ]


def _cap(
    ctx: Context, name: CheckName, label: str, cap: CapRule | None, customer: str | None
) -> CheckResult:
    per_customer = name is CheckName.CUSTOMER_CAP
    amount = ctx.proposal.amount
    if cap is None:
        return CheckResult(name, True, f"The shop's policy sets no {label} cap.", {"cap": None})
    limit = cap.limit
    facts: dict[str, object] = {
        "cap": limit.amount,
        "currency": limit.currency,
        "period_seconds": int(cap.period.total_seconds()),
    }
    if ctx.proposal.kind not in MONEY_KINDS or amount is None or amount.amount <= 0:
        return CheckResult(
            name, True, f"The {label} cap counts money, and this {ctx.noun} moves none.", facts
        )
    facts["requested"] = amount.amount
    facts["requested_currency"] = amount.currency
    if amount.currency != limit.currency:
        # Amounts in two currencies cannot be added up without a rate we do not have.
        return CheckResult(
            name,
            False,
            f"The {label} cap is set in {limit.currency.upper()}; a "
            f"{amount.currency.upper()} amount cannot be measured against it.",
            facts,
        )
    if per_customer and customer is None:
        return CheckResult(
            name,
            False,
            f"The {label} cap cannot be applied: the case has no customer at {ctx.provider_label}.",
            facts,
        )
    facts["customer"] = customer

    def counted(kind: ActionKind, target: str, customer_ref: str | None) -> bool:
        return kind in MONEY_KINDS and (
            not per_customer or customer_of(kind, target, customer_ref) == customer
        )

    since = ctx.since(cap.period)
    done = sum(
        past.amount.amount
        for past in ctx.history
        if past.created_at >= since
        and moved_money(past.status)
        and past.amount.currency == limit.currency
        and counted(past.kind, past.target, past.customer_ref)
    )
    in_flight = sum(
        action.amount.amount
        for action in ctx.in_flight
        if action.amount is not None
        and action.amount.currency == limit.currency
        and counted(action.kind, action.target, action.customer_ref)
    )
    total = done + in_flight + amount.amount
    facts.update(done=done, in_flight=in_flight, total=total)
    whom = f"customer {customer}" if per_customer else "the shop"
    period = describe_period(cap.period)
    cur = limit.currency
    breakdown = f"{fmt(done, cur)} done, {fmt(in_flight, cur)} in flight"
    if total > limit.amount:
        return CheckResult(
            name,
            False,
            f"This {amount.format()} would bring {whom} to {fmt(total, cur)} in the last "
            f"{period}, above the {label} cap of {limit.format()} ({breakdown}).",
            facts,
        )
    return CheckResult(
        name,
        True,
        f"This {amount.format()} brings {whom} to {fmt(total, cur)} of the {label} cap of "
        f"{limit.format()} over the last {period} ({breakdown}).",
        facts,
    )
