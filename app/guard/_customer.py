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
from integrations.provider import ACTION_ID_METADATA_KEY, CustomerFacts

_DURATIONS = ("once", "repeating", "forever")


def _customer(ctx: Context, customer: CustomerFacts) -> list[CheckResult]:
    return [
        target_exists(
            ctx, "customer", customer.id, exists=customer.exists, deleted=customer.deleted
        ),
        customer_matches(ctx, f"Customer {customer.id}", customer.id),
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
            currency_check(ctx, amount, f"customer {customer.id}'s balance", balance_currency)
        )
    else:
        # Stripe sets the balance currency with the first balance transaction.
        results.append(
            CheckResult(
                CheckName.CURRENCY_MATCHES,
                True,
                f"Customer {customer.id} has no balance currency yet; this credit sets it to "
                f"{amount.currency.upper()}.",
                {"requested_currency": amount.currency, "currency": None},
            )
        )
    since = ctx.since(ctx.policy.duplicate_window)
    results.append(
        duplicate_check(
            ctx,
            what=amount.format(),
            subject=f"to customer {customer.id}",
            # A credit is a negative balance transaction: money owed to the customer.
            provider_matches=[
                f"{ctx.provider_label} balance transaction {credit.id}"
                for credit in customer.credits
                if credit.amount == -amount.amount
                and credit.currency.lower() == amount.currency
                and credit.created >= since
            ],
            ids_at_provider=_our_ids(credit.metadata for credit in customer.credits),
        )
    )
    results += not_already_at_provider(
        ctx, "balance transaction", ((credit.id, credit.metadata) for credit in customer.credits)
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
        f"{ctx.provider_label} promotion code {discount.code} ({discount.id})"
        for discount in customer.discounts
        if discount.created >= since
        and (
            discount.percent_off == percent
            if percent is not None
            else discount.amount_off == amount.amount
            and (discount.currency or "").lower() == amount.currency
        )
    ]
    what = amount.format() if percent is None else f"{percent}% off (at most {amount.format()})"
    results.append(
        duplicate_check(
            ctx,
            what=what,
            subject=f"for customer {customer.id}",
            provider_matches=matches,
            ids_at_provider=_our_ids(discount.metadata for discount in customer.discounts),
        )
    )
    results += not_already_at_provider(
        ctx, "promotion code", ((discount.id, discount.metadata) for discount in customer.discounts)
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
    problems: list[str] = []
    if (raw_percent is None) == (raw_off is None):
        problems.append("Give either percent_off or amount_off, exactly one of them.")
    if raw_percent is not None:
        if percent is None or not 1 <= percent <= 100:
            problems.append(
                f"percent_off must be a whole number from 1 to 100, not {raw_percent!r}."
            )
        elif percent > maximum:
            problems.append(f"A {percent}% discount is above the shop's maximum of {maximum}% off.")
    if raw_off is not None:
        if amount_off is None or amount_off <= 0:
            problems.append(
                f"amount_off must be a positive whole number of minor units, not {raw_off!r}."
            )
        elif amount is not None and amount_off != amount.amount:
            problems.append(
                f"amount_off ({amount_off}) does not match the amount {amount.format()} "
                f"({amount.amount} in minor units)."
            )
    if duration not in _DURATIONS:
        problems.append("Say how long the discount lasts: duration once, repeating or forever.")
    elif duration == "repeating" and (months is None or months < 1):
        problems.append("A repeating discount needs duration_in_months of at least 1.")
    elif duration != "repeating" and raw_months is not None:
        problems.append("duration_in_months only applies to a repeating discount.")
    if problems:
        return CheckResult(CheckName.DISCOUNT_TERMS, False, " ".join(problems), facts), None
    lasts = f"for {months} months" if duration == "repeating" else str(duration)
    if percent is not None:
        at_risk = "" if amount is None else f", taking off at most {amount.format()}"
        return CheckResult(
            CheckName.DISCOUNT_TERMS, True, f"{percent}% off, {lasts}{at_risk}.", facts
        ), percent
    off = f"{amount_off} minor units" if amount is None else amount.format()
    return CheckResult(CheckName.DISCOUNT_TERMS, True, f"{off} off, {lasts}.", facts), None
