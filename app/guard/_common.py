"""Checks every proposal passes, whatever its kind: switches, policy, identity, shape, caps."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from app.guard._context import (
    Context,
    customer_of,
    describe_period,
    moved_money,
)
from app.guard.policy import MONEY_KINDS, CapRule, ShopSwitches
from app.guard.proposal import CapSpend, ClaimCoverage
from app.guard.verdict import CheckName, CheckResult
from app.money import Money
from app.words import Sentence, Value, joined, one_after_another, said, said_n
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
    ActionKind.REFUND: said("how much, in the payment's currency"),
    ActionKind.CUSTOMER_CREDIT: said("how much, in the customer's balance currency"),
    ActionKind.DISCOUNT: said("the amount off, or for a percent discount the most it can take off"),
}


def shop_checks(ctx: Context, switches: ShopSwitches) -> list[CheckResult]:
    checks = [
        _writes_enabled(switches),
        _kill_switch(switches),
        _kind_enabled(ctx),
        _identity(ctx),
        _reason_allowed(ctx),
        _proposal_shape(ctx),
        _amount(ctx),
    ]
    if ctx.proposal.claim is not None:
        checks.append(within_claim(ctx.proposal.claim))
    return checks


def within_claim(claim: ClaimCoverage) -> CheckResult:
    """A drafted proposal covers no line, and no more items of a line, than the customer's
    own words claim: the drafter may not give back more than was asked for."""
    facts = {
        "claimed": [{"line_id": line, "quantity": n} for line, n in claim.claimed],
        "proposed": [{"line_id": line, "quantity": n} for line, n in claim.proposed],
    }
    beyond = claim.beyond()
    if not beyond:
        return CheckResult(
            CheckName.WITHIN_CLAIM,
            True,
            said("The proposal covers only what the customer's own messages claim."),
            facts,
        )
    return CheckResult(
        CheckName.WITHIN_CLAIM,
        False,
        said(
            "The proposal covers more than the customer's own messages claim: %(beyond)s "
            "beyond the claim of %(claimed)s.",
            beyond=joined([_items(line, n) for line, n in beyond]),
            claimed=joined([_items(line, n) for line, n in claim.claimed])
            if claim.claimed
            else said("nothing"),
        ),
        facts | {"beyond": [{"line_id": line, "quantity": n} for line, n in beyond]},
    )


def _items(line_id: str, quantity: int) -> Sentence:
    return said_n(
        "%(count)s item of line %(line)s",
        "%(count)s items of line %(line)s",
        quantity,
        line=line_id,
    )


def _writes_enabled(switches: ShopSwitches) -> CheckResult:
    facts = {"writes_enabled": switches.writes_enabled}
    if switches.writes_enabled:
        return CheckResult(
            CheckName.WRITES_ENABLED, True, said("Writes are turned on for this shop."), facts
        )
    return CheckResult(
        CheckName.WRITES_ENABLED,
        False,
        said(
            "The shop is read-only (protection mode): a signed-in person must turn writes on "
            "in Settings before Caseward changes anything at the provider."
        ),
        facts,
    )


def _kill_switch(switches: ShopSwitches) -> CheckResult:
    facts = {"kill_switch": switches.kill_switch}
    if switches.kill_switch:
        return CheckResult(
            CheckName.KILL_SWITCH,
            False,
            said(
                "The kill switch is on: Caseward sends no money actions until someone turns it "
                "off in Settings."
            ),
            facts,
        )
    return CheckResult(CheckName.KILL_SWITCH, True, said("The kill switch is off."), facts)


def _kind_enabled(ctx: Context) -> CheckResult:
    kind = ctx.proposal.kind
    facts = {"kind": kind.value, "enabled_kinds": sorted(ctx.policy.enabled_kinds)}
    if kind in ctx.policy.enabled_kinds:
        return CheckResult(
            CheckName.KIND_ENABLED,
            True,
            said("The shop's policy allows %(kinds)s.", kinds=ctx.nouns),
            facts,
        )
    return CheckResult(
        CheckName.KIND_ENABLED,
        False,
        said("The shop's policy does not allow %(kinds)s.", kinds=ctx.nouns),
        facts,
    )


def _identity(ctx: Context) -> CheckResult:
    level = ctx.proposal.identity_level
    minimum = ctx.policy.min_identity[ctx.proposal.kind]
    facts = {"identity_level": level.value, "min_identity": minimum.value}
    if level >= minimum:
        return CheckResult(
            CheckName.IDENTITY,
            True,
            said(
                "The customer's identity is %(level)s (%(meaning)s), which meets the shop's "
                "minimum of %(minimum)s for %(kinds)s.",
                level=level.value,
                meaning=level.description,
                minimum=minimum.value,
                kinds=ctx.nouns,
            ),
            facts,
        )
    return CheckResult(
        CheckName.IDENTITY,
        False,
        said(
            "The customer's identity is only %(level)s (%(meaning)s); %(kinds)s need at least "
            "%(minimum)s (%(minimum_meaning)s).",
            level=level.value,
            meaning=level.description,
            kinds=ctx.nouns,
            minimum=minimum.value,
            minimum_meaning=minimum.description,
        ),
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
            CheckName.REASON_ALLOWED,
            False,
            said("The reason must be text, not %(value)s.", value=repr(reason)),
            facts,
        )
    if allowed is None:
        return CheckResult(
            CheckName.REASON_ALLOWED, True, said("The shop's policy accepts any reason."), facts
        )
    # The reasons are the shop's own labels, shown as the shop wrote them.
    accepted: Value = ", ".join(sorted(allowed)) or said("none")
    if reason is None:
        return CheckResult(
            CheckName.REASON_ALLOWED,
            False,
            said(
                "The proposal gives no reason; the shop's policy accepts: %(accepted)s.",
                accepted=accepted,
            ),
            facts,
        )
    if reason not in allowed:
        return CheckResult(
            CheckName.REASON_ALLOWED,
            False,
            said(
                "The reason '%(reason)s' is not one the shop's policy accepts (%(accepted)s).",
                reason=reason,
                accepted=accepted,
            ),
            facts,
        )
    return CheckResult(
        CheckName.REASON_ALLOWED,
        True,
        said("The reason '%(reason)s' is one the shop's policy accepts.", reason=reason),
        facts,
    )


def _proposal_shape(ctx: Context) -> CheckResult:
    """Parameters nobody checks must not ride along to the provider."""
    proposal = ctx.proposal
    unknown = sorted(set(proposal.params) - ALLOWED_PARAMS[proposal.kind])
    problems: list[Sentence] = []
    if unknown:
        problems.append(
            said(
                "The proposal carries settings Caseward does not use for %(kinds)s: %(settings)s.",
                kinds=ctx.nouns,
                settings=", ".join(unknown),
            )
        )
    if proposal.line_items and proposal.kind is not ActionKind.REFUND:
        problems.append(
            said("Only refunds are split by order line, not %(kinds)s.", kinds=ctx.nouns)
        )
    facts = {"params": sorted(proposal.params), "line_items": len(proposal.line_items)}
    if problems:
        return CheckResult(CheckName.PROPOSAL_SHAPE, False, one_after_another(problems), facts)
    return CheckResult(
        CheckName.PROPOSAL_SHAPE,
        True,
        said("The proposal has the shape of a %(kind)s.", kind=ctx.noun),
        facts,
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
            return CheckResult(
                CheckName.AMOUNT, True, said("A %(kind)s carries no amount.", kind=noun), facts
            )
        return CheckResult(
            CheckName.AMOUNT,
            False,
            said(
                "A %(kind)s carries no amount; remove %(amount)s from the proposal.",
                kind=noun,
                amount=amount,
            ),
            facts,
        )
    if amount is None:
        needed = _AMOUNT_NEEDED[ctx.proposal.kind]
        return CheckResult(
            CheckName.AMOUNT,
            False,
            said("A %(kind)s needs an amount: %(needed)s.", kind=noun, needed=needed),
            facts,
        )
    if amount.amount <= 0:
        return CheckResult(
            CheckName.AMOUNT,
            False,
            said(
                "A %(kind)s must be more than zero; the proposal says %(amount)s.",
                kind=noun,
                amount=amount,
            ),
            facts,
        )
    return CheckResult(
        CheckName.AMOUNT,
        True,
        said("The amount, %(amount)s, is more than zero.", amount=amount),
        facts,
    )


# ---------------------------------------------------------------- about the target


def target_exists(
    ctx: Context,
    noun: Sentence,
    named: Sentence,
    facts_id: str,
    *,
    exists: bool,
    deleted: bool = False,
) -> CheckResult:
    """The provider knows the target, it is live, and the facts are about it and nothing else.

    ``noun`` is what the target is ("payment"), ``named`` the target by it and its id
    ("Payment pi_123"), as a sentence begins.
    """
    target = ctx.proposal.target
    facts = {"target": target, "facts_id": facts_id, "exists": exists, "deleted": deleted}
    provider = ctx.provider_label
    if not exists:
        reason = said("%(named)s was not found at %(provider)s.", named=named, provider=provider)
    elif facts_id != target:
        reason = said(
            "The facts read from %(provider)s are for %(facts_id)s, not for %(target)s, "
            "the %(noun)s this %(kind)s targets.",
            provider=provider,
            facts_id=facts_id,
            target=target,
            noun=noun,
            kind=ctx.noun,
        )
    elif deleted:
        reason = said("%(named)s is deleted at %(provider)s.", named=named, provider=provider)
    else:
        return CheckResult(
            CheckName.TARGET_EXISTS,
            True,
            said("%(named)s exists at %(provider)s.", named=named, provider=provider),
            facts,
        )
    return CheckResult(CheckName.TARGET_EXISTS, False, reason, facts)


def customer_matches(ctx: Context, subject: Sentence, owner: str | None) -> CheckResult:
    """The target belongs to the case's customer: money never reaches anyone else.

    ``subject`` names the target as a sentence begins ("Payment pi_123").

    The customer comes from the case (its customer's identity at the provider), never
    from the proposal; a proposal naming a customer may only narrow. Deny by default:
    a missing link on either side blocks, and the reason says which one.
    """
    case_customer, named = ctx.proposal.case_customer, ctx.proposal.customer_ref
    facts = {"case_customer": case_customer, "customer_ref": named, "owner": owner}
    if case_customer is None:
        reason = said(
            "The case's customer has no %(provider)s customer linked, so nothing ties "
            "%(subject)s to them; link the customer's %(provider)s account to the case "
            "first.",
            provider=ctx.provider_label,
            subject=subject,
        )
    elif named is not None and named != case_customer:
        reason = said(
            "The proposal names customer %(named)s, but the case is about customer "
            "%(customer)s; a proposal cannot reach beyond the case's customer.",
            named=named,
            customer=case_customer,
        )
    elif owner is None:
        reason = said(
            "%(subject)s has no customer on record at %(provider)s, so it cannot be shown "
            "to belong to the case's customer %(customer)s.",
            subject=subject,
            provider=ctx.provider_label,
            customer=case_customer,
        )
    elif owner != case_customer:
        reason = said(
            "%(subject)s belongs to customer %(owner)s, not to the case's customer %(customer)s.",
            subject=subject,
            owner=owner,
            customer=case_customer,
        )
    else:
        return CheckResult(
            CheckName.CUSTOMER_MATCHES,
            True,
            said(
                "%(subject)s belongs to customer %(owner)s, the case's customer.",
                subject=subject,
                owner=owner,
            ),
            facts,
        )
    return CheckResult(CheckName.CUSTOMER_MATCHES, False, reason, facts)


def not_already_at_provider(
    ctx: Context, record_noun: Sentence, records: Iterable[tuple[str, Mapping[str, str]]]
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
                said(
                    "This action already reached %(provider)s: %(record)s %(found)s carries "
                    "its id %(action_id)s. Look up its result instead of sending it again.",
                    provider=provider,
                    record=record_noun,
                    found=", ".join(found),
                    action_id=action_id,
                ),
                facts,
            )
        ]
    return [
        CheckResult(
            CheckName.NOT_ALREADY_AT_PROVIDER,
            True,
            said(
                "No %(provider)s %(record)s carries this action's id (%(action_id)s) yet.",
                provider=provider,
                record=record_noun,
                action_id=action_id,
            ),
            facts,
        )
    ]


def duplicate_check(
    ctx: Context,
    *,
    what: Value,
    subject: Sentence,
    provider_matches: list[Sentence],
    ids_at_provider: Iterable[str],
) -> CheckResult:
    """Same kind, same target, same amount within the duplicate window.

    ``what`` is the amount (or the terms) and ``subject`` where it goes ("on payment
    pi_123"). ``provider_matches`` describes the provider's own records that match (any
    origin). Our in-flight and past actions are added unless the provider already
    holds their write (``ids_at_provider``): then the provider's record decides,
    so a write that failed there is not a duplicate.
    """
    amount = ctx.proposal.amount
    window = ctx.policy.duplicate_window
    matches = list(provider_matches) + _ours_alike(ctx, skip=set(ids_at_provider))
    period = describe_period(window)
    facts = {
        "window_seconds": int(window.total_seconds()),
        "amount": None if amount is None else amount.amount,
        "currency": None if amount is None else amount.currency,
        "matches": [str(match) for match in matches],
    }
    if matches:
        return CheckResult(
            CheckName.NOT_DUPLICATE,
            False,
            said(
                "A %(kind)s of %(what)s %(subject)s already exists within the last %(period)s "
                "(%(matches)s); the same amount again looks like a duplicate.",
                kind=ctx.noun,
                what=what,
                subject=subject,
                period=period,
                matches=joined(matches),
            ),
            facts,
        )
    return CheckResult(
        CheckName.NOT_DUPLICATE,
        True,
        said(
            "No %(kind)s of %(what)s %(subject)s in the last %(period)s.",
            kind=ctx.noun,
            what=what,
            subject=subject,
            period=period,
        ),
        facts,
    )


def _ours_alike(ctx: Context, *, skip: set[str]) -> list[Sentence]:
    """Our actions of the proposal's kind, target and amount: in flight, then past ones that
    moved money within the duplicate window; those in ``skip`` left out."""
    proposal = ctx.proposal
    since = ctx.since(ctx.policy.duplicate_window)
    in_flight = [
        (action.action_id, action.status.value)
        for action in ctx.in_flight
        if action.kind is proposal.kind
        and action.target == proposal.target
        and action.amount == proposal.amount
    ]
    recent = [
        (past.action_id, past.status.value)
        for past in ctx.history
        if past.kind is proposal.kind
        and past.target == proposal.target
        and past.amount == proposal.amount
        and past.created_at >= since
        and moved_money(past.status)
    ]
    return [
        said("Caseward action %(action_id)s, %(status)s", action_id=action_id, status=status)
        for action_id, status in in_flight + recent
        if action_id not in skip
    ]


def currency_check(ctx: Context, amount: Money, subject: Sentence, currency: str) -> CheckResult:
    facts = {"requested_currency": amount.currency, "currency": currency}
    if amount.currency == currency:
        return CheckResult(
            CheckName.CURRENCY_MATCHES,
            True,
            said(
                "The %(kind)s and %(subject)s are both in %(currency)s.",
                kind=ctx.noun,
                subject=subject,
                currency=currency.upper(),
            ),
            facts,
        )
    return CheckResult(
        CheckName.CURRENCY_MATCHES,
        False,
        said(
            "The %(kind)s is in %(requested)s but %(subject)s is in %(currency)s.",
            kind=ctx.noun,
            requested=amount.currency.upper(),
            subject=subject,
            currency=currency.upper(),
        ),
        facts,
    )


# ---------------------------------------------------------------- caps


@dataclass(frozen=True)
class _Cap:
    """One cap as a check: its check name, what its reasons call it, its rule, and the
    customer whose money it counts (``None`` for the shop's cap)."""

    name: CheckName
    label: Sentence
    rule: CapRule
    customer: str | None

    @property
    def per_customer(self) -> bool:
        return self.name is CheckName.CUSTOMER_CAP


def cap_checks(ctx: Context, customer: str | None) -> list[CheckResult]:
    """Caps over a trailing period: our past actions + our in-flight ones + this one."""
    return [
        _cap(
            ctx,
            CheckName.CUSTOMER_CAP,
            said("per-customer cap"),
            ctx.policy.per_customer_cap,
            customer,
        ),
        _cap(ctx, CheckName.SHOP_CAP, said("per-shop cap"), ctx.policy.per_shop_cap, None),
    ]


def kind_ceiling_checks(ctx: Context) -> list[CheckResult]:
    """The most one action of its kind may move, when the policy sets it for the kind in
    the action's currency; otherwise no check runs (a ceiling is a limit the shop chose,
    not a rule every action needs). A discount is held to it by its amount off only: a
    percent discount is held by ``max_percent_off`` (``discount_terms``) instead."""
    proposal = ctx.proposal
    amount = proposal.amount
    if proposal.kind not in MONEY_KINDS or amount is None or amount.amount <= 0:
        return []  # the amount check fails it already
    if proposal.kind is ActionKind.DISCOUNT and proposal.params.get("percent_off") is not None:
        return []
    ceiling = ctx.policy.kind_ceilings.get(proposal.kind, {}).get(amount.currency)
    if ceiling is None:
        return []
    facts = {"amount": amount.amount, "ceiling": ceiling, "currency": amount.currency}
    values: dict[str, Value] = {
        "kind": ctx.noun,
        "amount": amount,
        "ceiling": Money(ceiling, amount.currency),
    }
    if amount.amount > ceiling:
        return [
            CheckResult(
                CheckName.WITHIN_KIND_CEILING,
                False,
                said(
                    "This %(kind)s of %(amount)s is above the shop's ceiling of %(ceiling)s "
                    "for one %(kind)s.",
                    **values,
                ),
                facts,
            )
        ]
    return [
        CheckResult(
            CheckName.WITHIN_KIND_CEILING,
            True,
            said(
                "This %(kind)s of %(amount)s is within the shop's ceiling of %(ceiling)s for "
                "one %(kind)s.",
                **values,
            ),
            facts,
        )
    ]


def _spend(ctx: Context, cap: _Cap) -> CapSpend:
    """What counts against the cap besides this proposal: as the caller added it up, or
    else from our actions."""
    spending = ctx.spending
    given = spending and (spending.customer if cap.per_customer else spending.shop)
    return given or _spend_of(ctx, cap.rule, cap.customer if cap.per_customer else None)


def _spend_of(ctx: Context, cap: CapRule, customer: str | None) -> CapSpend:
    """What our actions handed over count against ``cap``: all of the shop's money
    kinds, or ``customer``'s only (their refunds, and credits and discounts to them)."""

    def counted(kind: ActionKind, target: str, customer_ref: str | None) -> bool:
        return kind in MONEY_KINDS and (
            customer is None or customer_of(kind, target, customer_ref) == customer
        )

    currency, since = cap.limit.currency, ctx.since(cap.period)
    done = sum(
        past.amount.amount
        for past in ctx.history
        if past.created_at >= since
        and moved_money(past.status)
        and past.amount.currency == currency
        and counted(past.kind, past.target, past.customer_ref)
    )
    in_flight = sum(
        action.amount.amount
        for action in ctx.in_flight
        if action.amount is not None
        and action.amount.currency == currency
        and counted(action.kind, action.target, action.customer_ref)
    )
    return CapSpend(done=done, in_flight=in_flight)


def _cap(
    ctx: Context, name: CheckName, label: Sentence, rule: CapRule | None, customer: str | None
) -> CheckResult:
    """Whether the cap applies to this proposal at all; if it does, whether it can be
    measured and the proposal fits in it."""
    if rule is None:
        return CheckResult(
            name, True, said("The shop's policy sets no %(cap)s.", cap=label), {"cap": None}
        )
    facts: dict[str, object] = {
        "cap": rule.limit.amount,
        "currency": rule.limit.currency,
        "period_seconds": int(rule.period.total_seconds()),
    }
    amount = ctx.proposal.amount
    if ctx.proposal.kind not in MONEY_KINDS or amount is None or amount.amount <= 0:
        return CheckResult(
            name,
            True,
            said(
                "The %(cap)s counts money, and this %(kind)s moves none.", cap=label, kind=ctx.noun
            ),
            facts,
        )
    facts["requested"] = amount.amount
    facts["requested_currency"] = amount.currency
    cap = _Cap(name, label, rule, customer)
    unmeasurable = _why_unmeasurable(ctx, cap, amount)
    if unmeasurable is not None:
        return CheckResult(name, False, unmeasurable, facts)
    return _within_cap(ctx, cap, amount, facts)


def _why_unmeasurable(ctx: Context, cap: _Cap, amount: Money) -> Sentence | None:
    """What keeps ``amount`` from being measured against the cap, if anything."""
    limit = cap.rule.limit
    if amount.currency != limit.currency:
        # Amounts in two currencies cannot be added up without a rate we do not have.
        return said(
            "The %(cap)s is set in %(cap_currency)s; a %(currency)s amount cannot be "
            "measured against it.",
            cap=cap.label,
            cap_currency=limit.currency.upper(),
            currency=amount.currency.upper(),
        )
    if cap.per_customer and cap.customer is None:
        return said(
            "The %(cap)s cannot be applied: the case has no customer at %(provider)s.",
            cap=cap.label,
            provider=ctx.provider_label,
        )
    return None


def _within_cap(ctx: Context, cap: _Cap, amount: Money, facts: dict[str, object]) -> CheckResult:
    """``amount``, with what our actions already took or will take, stays within the cap."""
    limit = cap.rule.limit
    spend = _spend(ctx, cap)
    done, in_flight = spend.done, spend.in_flight
    total = done + in_flight + amount.amount
    measured = facts | {
        "customer": cap.customer,
        "done": done,
        "in_flight": in_flight,
        "total": total,
    }
    whom = (
        said("customer %(customer)s", customer=str(cap.customer))
        if cap.per_customer
        else said("the shop")
    )
    period = describe_period(cap.rule.period)
    cur = limit.currency
    breakdown = said(
        "%(done)s done, %(in_flight)s in flight",
        done=Money(done, cur),
        in_flight=Money(in_flight, cur),
    )
    if total > limit.amount:
        return CheckResult(
            cap.name,
            False,
            said(
                "This %(amount)s would bring %(whom)s to %(total)s in the last %(period)s, "
                "above the %(cap)s of %(limit)s (%(breakdown)s).",
                amount=amount,
                whom=whom,
                total=Money(total, cur),
                period=period,
                cap=cap.label,
                limit=limit,
                breakdown=breakdown,
            ),
            measured,
        )
    return CheckResult(
        cap.name,
        True,
        said(
            "This %(amount)s brings %(whom)s to %(total)s of the %(cap)s of %(limit)s over "
            "the last %(period)s (%(breakdown)s).",
            amount=amount,
            whom=whom,
            total=Money(total, cur),
            cap=cap.label,
            limit=limit,
            period=period,
            breakdown=breakdown,
        ),
        measured,
    )
