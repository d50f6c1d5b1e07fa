"""Customer credit and discount checks: the customer, the currency, the terms, duplicates."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from app.guard._common import (
    currency_check,
    customer_matches,
    duplicate_check,
    not_already_at_provider,
    target_exists,
)
from app.guard._context import Context
from app.guard.verdict import CheckName, CheckResult
from app.money import Money
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


@dataclass(frozen=True)
class _Terms:
    """A discount's terms as the proposal's settings give them (``raw_*``: any value), and
    the whole numbers among them."""

    raw_percent: object
    raw_off: object
    raw_months: object
    duration: object

    @classmethod
    def of(cls, params: Mapping[str, object]) -> _Terms:
        return cls(
            raw_percent=params.get("percent_off"),
            raw_off=params.get("amount_off"),
            raw_months=params.get("duration_in_months"),
            duration=params.get("duration"),
        )

    @property
    def percent(self) -> int | None:
        return _as_int(self.raw_percent)

    @property
    def amount_off(self) -> int | None:
        return _as_int(self.raw_off)

    @property
    def months(self) -> int | None:
        return _as_int(self.raw_months)


def _discount_terms(ctx: Context) -> tuple[CheckResult, int | None]:
    """Either a percent (its value at risk stated as ``amount``) or an amount off equal to
    ``amount``, and how long it lasts. Returns the valid percent, for duplicate matching."""
    terms = _Terms.of(ctx.proposal.params)
    amount = ctx.proposal.amount
    maximum = ctx.policy.max_percent_off
    facts: dict[str, object] = {
        "percent_off": terms.percent,
        "amount_off": terms.amount_off,
        "duration": terms.duration if isinstance(terms.duration, str) else None,
        "duration_in_months": terms.months,
        "max_percent_off": maximum,
    }
    problems = [
        problem
        for problem in (
            _not_exactly_one_off(terms),
            _percent_problem(terms, maximum),
            _amount_off_problem(terms, amount),
            _duration_problem(terms),
        )
        if problem is not None
    ]
    if problems:
        failed = CheckResult(CheckName.DISCOUNT_TERMS, False, one_after_another(problems), facts)
        return failed, None
    passed = CheckResult(CheckName.DISCOUNT_TERMS, True, _terms_in_words(terms, amount), facts)
    return passed, terms.percent


def _not_exactly_one_off(terms: _Terms) -> Sentence | None:
    if (terms.raw_percent is None) == (terms.raw_off is None):
        return said("Give either percent_off or amount_off, exactly one of them.")
    return None


def _percent_problem(terms: _Terms, maximum: int) -> Sentence | None:
    if terms.raw_percent is None:
        return None
    percent = terms.percent
    if percent is None or not 1 <= percent <= 100:
        return said(
            "percent_off must be a whole number from 1 to 100, not %(value)s.",
            value=repr(terms.raw_percent),
        )
    if percent > maximum:
        return said(
            "A %(percent)s%% discount is above the shop's maximum of %(maximum)s%% off.",
            percent=percent,
            maximum=maximum,
        )
    return None


def _amount_off_problem(terms: _Terms, amount: Money | None) -> Sentence | None:
    if terms.raw_off is None:
        return None
    amount_off = terms.amount_off
    if amount_off is None or amount_off <= 0:
        return said(
            "amount_off must be a positive whole number of minor units, not %(value)s.",
            value=repr(terms.raw_off),
        )
    if amount is not None and amount_off != amount.amount:
        # Minor units as the proposal writes them: a setting's value, not an amount.
        return said(
            "amount_off (%(amount_off)s) does not match the amount %(amount)s "
            "(%(minor)s in minor units).",
            amount_off=str(amount_off),
            amount=amount,
            minor=str(amount.amount),
        )
    return None


def _duration_problem(terms: _Terms) -> Sentence | None:
    duration, months = terms.duration, terms.months
    if duration not in _DURATIONS:
        return said("Say how long the discount lasts: duration once, repeating or forever.")
    if duration == "repeating" and (months is None or months < 1):
        return said("A repeating discount needs duration_in_months of at least 1.")
    if duration != "repeating" and terms.raw_months is not None:
        return said("duration_in_months only applies to a repeating discount.")
    return None


def _terms_in_words(terms: _Terms, amount: Money | None) -> Sentence:
    """Valid terms said: how much comes off, and for how long."""
    percent, months = terms.percent, terms.months
    # The terms are valid here, so months are given exactly when the discount repeats.
    lasts = (
        _LASTS[str(terms.duration)]
        if months is None
        else said_n("for %(count)s month", "for %(count)s months", months)
    )
    if percent is not None:
        if amount is None:
            return said("%(percent)s%% off, %(lasts)s.", percent=percent, lasts=lasts)
        return said(
            "%(percent)s%% off, %(lasts)s, taking off at most %(amount)s.",
            percent=percent,
            lasts=lasts,
            amount=amount,
        )
    off: Value = (
        said("%(minor)s minor units", minor=str(terms.amount_off)) if amount is None else amount
    )
    return said("%(off)s off, %(lasts)s.", off=off, lasts=lasts)
