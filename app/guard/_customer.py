"""Customer credit and discount checks: the customer, the currency, the terms, duplicates."""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from app.guard._common import (
    currency_check,
    customer_matches,
    duplicate_check,
    not_already_at_provider,
    target_exists,
)
from app.guard._context import Context
from app.guard.verdict import CheckName, CheckResult
from app.words import Sentence, Value, one_after_another, said, said_n
from integrations.provider import ACTION_ID_METADATA_KEY, CustomerFacts

_DURATIONS = ("once", "repeating", "forever")
# How long a discount that is not repeating lasts, in words.
_LASTS = {"once": said("once"), "forever": said("forever")}


def _customer(ctx: Context, customer: CustomerFacts) -> list[CheckResult]:
    return [
        target_exists(
            ctx,
            said("customer"),
            said("Customer %(id)s", id=ctx.proposal.target),
            customer.id,
            exists=customer.exists,
            deleted=customer.deleted,
        ),
        customer_matches(ctx, said("Customer %(id)s", id=customer.id), customer.id),
    ]


def credit_checks(ctx: Context, customer: CustomerFacts) -> list[CheckResult]:
    results = _customer(ctx, customer)
    if not results[0].passed:
        return results
    amount = ctx.proposal.amount
    if amount is None or amount.amount <= 0:
        return results
    balance_currency = (customer.balance_currency or "").lower()
    if balance_currency:
        results.append(
            currency_check(
                ctx,
                amount,
                said("customer %(id)s's balance", id=customer.id),
                balance_currency,
            )
        )
    else:
        # Stripe sets the balance currency with the first balance transaction.
        results.append(
            CheckResult(
                CheckName.CURRENCY_MATCHES,
                True,
                said(
                    "Customer %(id)s has no balance currency yet; this credit sets it to "
                    "%(currency)s.",
                    id=customer.id,
                    currency=amount.currency.upper(),
                ),
                {"requested_currency": amount.currency, "currency": None},
            )
        )
    since = ctx.since(ctx.policy.duplicate_window)
    results.append(
        duplicate_check(
            ctx,
            what=amount,
            subject=said("to customer %(id)s", id=customer.id),
            # A credit is a negative balance transaction: money owed to the customer.
            provider_matches=[
                said(
                    "%(provider)s balance transaction %(credit)s",
                    provider=ctx.provider_label,
                    credit=credit.id,
                )
                for credit in customer.credits
                if credit.amount == -amount.amount
                and credit.currency.lower() == amount.currency
                and credit.created >= since
            ],
            ids_at_provider=_our_ids(credit.metadata for credit in customer.credits),
        )
    )
    results += not_already_at_provider(
        ctx,
        said("balance transaction"),
        ((credit.id, credit.metadata) for credit in customer.credits),
    )
    return results


def discount_checks(ctx: Context, customer: CustomerFacts) -> list[CheckResult]:
    results = _customer(ctx, customer)
    terms, percent = _discount_terms(ctx)
    results.append(terms)
    amount = ctx.proposal.amount
    if not results[0].passed or not terms.passed or amount is None or amount.amount <= 0:
        return results
    since = ctx.since(ctx.policy.duplicate_window)
    # Provider coupons state no value at risk: a percent discount matches on its percent.
    matches = [
        said(
            "%(provider)s promotion code %(code)s (%(discount)s)",
            provider=ctx.provider_label,
            code=discount.code,
            discount=discount.id,
        )
        for discount in customer.discounts
        if discount.created >= since
        and (
            discount.percent_off == percent
            if percent is not None
            else discount.amount_off == amount.amount
            and (discount.currency or "").lower() == amount.currency
        )
    ]
    what: Value = (
        amount
        if percent is None
        else said("%(percent)s%% off (at most %(amount)s)", percent=percent, amount=amount)
    )
    results.append(
        duplicate_check(
            ctx,
            what=what,
            subject=said("for customer %(id)s", id=customer.id),
            provider_matches=matches,
            ids_at_provider=_our_ids(discount.metadata for discount in customer.discounts),
        )
    )
    results += not_already_at_provider(
        ctx,
        said("promotion code"),
        ((discount.id, discount.metadata) for discount in customer.discounts),
    )
    return results


def _our_ids(metadatas: Iterable[Mapping[str, str]]) -> set[str]:
    return {
        metadata[ACTION_ID_METADATA_KEY]
        for metadata in metadatas
        if ACTION_ID_METADATA_KEY in metadata
    }


def _as_int(value: object) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _discount_terms(ctx: Context) -> tuple[CheckResult, int | None]:
    """Either a percent (its value at risk stated as ``amount``) or an amount off equal to
    ``amount``, and how long it lasts. Returns the valid percent, for duplicate matching."""
    params = ctx.proposal.params
    amount = ctx.proposal.amount
    raw_percent, raw_off = params.get("percent_off"), params.get("amount_off")
    raw_months, duration = params.get("duration_in_months"), params.get("duration")
    percent, amount_off, months = _as_int(raw_percent), _as_int(raw_off), _as_int(raw_months)
    maximum = ctx.policy.max_percent_off
    facts: dict[str, object] = {
        "percent_off": percent,
        "amount_off": amount_off,
        "duration": duration if isinstance(duration, str) else None,
        "duration_in_months": months,
        "max_percent_off": maximum,
    }
    problems: list[Sentence] = []
    if (raw_percent is None) == (raw_off is None):
        problems.append(said("Give either percent_off or amount_off, exactly one of them."))
    if raw_percent is not None:
        if percent is None or not 1 <= percent <= 100:
            problems.append(
                said(
                    "percent_off must be a whole number from 1 to 100, not %(value)s.",
                    value=repr(raw_percent),
                )
            )
        elif percent > maximum:
            problems.append(
                said(
                    "A %(percent)s%% discount is above the shop's maximum of %(maximum)s%% off.",
                    percent=percent,
                    maximum=maximum,
                )
            )
    if raw_off is not None:
        if amount_off is None or amount_off <= 0:
            problems.append(
                said(
                    "amount_off must be a positive whole number of minor units, not %(value)s.",
                    value=repr(raw_off),
                )
            )
        elif amount is not None and amount_off != amount.amount:
            # Minor units as the proposal writes them: a setting's value, not an amount.
            problems.append(
                said(
                    "amount_off (%(amount_off)s) does not match the amount %(amount)s "
                    "(%(minor)s in minor units).",
                    amount_off=str(amount_off),
                    amount=amount,
                    minor=str(amount.amount),
                )
            )
    if duration not in _DURATIONS:
        problems.append(
            said("Say how long the discount lasts: duration once, repeating or forever.")
        )
    elif duration == "repeating" and (months is None or months < 1):
        problems.append(said("A repeating discount needs duration_in_months of at least 1."))
    elif duration != "repeating" and raw_months is not None:
        problems.append(said("duration_in_months only applies to a repeating discount."))
    if problems:
        return CheckResult(
            CheckName.DISCOUNT_TERMS, False, one_after_another(problems), facts
        ), None
    # The terms are valid here, so months are given exactly when the discount repeats.
    lasts = (
        _LASTS[str(duration)]
        if months is None
        else said_n("for %(count)s month", "for %(count)s months", months)
    )
    if percent is not None:
        terms = (
            said("%(percent)s%% off, %(lasts)s.", percent=percent, lasts=lasts)
            if amount is None
            else said(
                "%(percent)s%% off, %(lasts)s, taking off at most %(amount)s.",
                percent=percent,
                lasts=lasts,
                amount=amount,
            )
        )
        return CheckResult(CheckName.DISCOUNT_TERMS, True, terms, facts), percent
    off: Value = said("%(minor)s minor units", minor=str(amount_off)) if amount is None else amount
    return CheckResult(
        CheckName.DISCOUNT_TERMS, True, said("%(off)s off, %(lasts)s.", off=off, lasts=lasts), facts
    ), None
