"""Refund checks: what is left on the payment and on each line, disputes, duplicates, windows."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from datetime import timedelta

from app.guard._common import (
    currency_check,
    customer_matches,
    duplicate_check,
    not_already_at_provider,
    target_exists,
)
from app.guard._context import Context, day, fmt, moved_money
from app.guard.proposal import InFlightAction, LineItemRef, PastAction
from app.guard.verdict import CheckName, CheckResult
from app.money import Money
from integrations.provider import (
    ACTION_ID_METADATA_KEY,
    ActionKind,
    OrderFacts,
    PaymentFacts,
    ProviderRefund,
)


@dataclass(frozen=True)
class _Ledger:
    """Our refunds of this money, split by where they show.

    An in-flight action whose write already appears among the provider's refunds
    (matched by our action id in its metadata) is counted once, as the provider's
    refund, with the provider's status. The same money refunded through the other
    provider (a Shopify order paid through Stripe) never shows in this provider's
    refunds: those of ours count as in flight until settled, then as ``elsewhere``.
    """

    at_provider: dict[str, ProviderRefund]  # our action id -> the provider's refund
    unseen: tuple[InFlightAction, ...]  # in flight, not (yet) at the provider
    elsewhere: tuple[PastAction, ...]  # settled through the other provider, money moved

    @classmethod
    def of(cls, ctx: Context, payment: PaymentFacts) -> _Ledger:
        at_provider = {
            refund.metadata[ACTION_ID_METADATA_KEY]: refund
            for refund in payment.refunds
            if ACTION_ID_METADATA_KEY in refund.metadata
        }
        proposal = ctx.proposal

        def same_money(target: str, money_ref: str | None) -> bool:
            return target == payment.id or (
                proposal.money_ref is not None and money_ref == proposal.money_ref
            )

        unseen = tuple(
            action
            for action in ctx.in_flight
            if action.kind is ActionKind.REFUND
            and same_money(action.target, action.money_ref)
            and action.action_id not in at_provider
        )
        elsewhere = tuple(
            past
            for past in ctx.history
            if past.kind is ActionKind.REFUND
            and past.provider != proposal.provider
            and same_money(past.target, past.money_ref)
            and moved_money(past.status)
        )
        return cls(at_provider, unseen, elsewhere)

    def in_flight(self, payment: PaymentFacts) -> int:
        # A refund sent without an amount refunds whatever is left, so it leaves nothing.
        return sum(
            payment.captured if action.amount is None else action.amount.amount
            for action in self.unseen
        )

    def refunded_elsewhere(self) -> int:
        return sum(past.amount.amount for past in self.elsewhere)


def refund_checks(ctx: Context, payment: PaymentFacts) -> list[CheckResult]:
    proposal = ctx.proposal
    results: list[CheckResult] = []
    exists = target_exists(ctx, "payment", payment.id, exists=payment.exists)
    results.append(exists)
    if ctx.order is not None:
        results.append(_order_matches(ctx.order, proposal.target))
    results.append(_refund_window(ctx))
    if not exists.passed:
        # Everything below reads the payment; on a missing one it would only add noise.
        return results
    currency = payment.currency.lower()
    results += [
        _captured(payment),
        customer_matches(ctx, f"Payment {payment.id}", payment.customer_id),
        _not_disputed(payment),
    ]
    ledger = _Ledger.of(ctx, payment)
    amount = proposal.amount
    if amount is not None:
        results.append(currency_check(ctx, amount, f"payment {payment.id}", currency))
    if amount is not None and amount.amount > 0 and amount.currency == currency:
        since = ctx.since(ctx.policy.duplicate_window)
        results.append(_remaining(payment, ledger, amount))
        results.append(
            duplicate_check(
                ctx,
                what=amount.format(),
                subject=f"on payment {payment.id}",
                provider_matches=[
                    f"{ctx.provider_label} refund {refund.id}, {refund.status.value}"
                    for refund in payment.refunds
                    if refund.counts_against_capture
                    and refund.amount == amount.amount
                    and refund.currency.lower() == amount.currency
                    and refund.created >= since
                ],
                ids_at_provider=ledger.at_provider,
            )
        )
    if proposal.line_items:
        results.append(_line_items(ctx, ledger))
    results += not_already_at_provider(
        ctx, "refund", ((refund.id, refund.metadata) for refund in payment.refunds)
    )
    return results


def _captured(payment: PaymentFacts) -> CheckResult:
    facts = {"captured": payment.captured, "currency": payment.currency.lower()}
    if payment.captured > 0:
        captured = fmt(payment.captured, payment.currency)
        return CheckResult(
            CheckName.CAPTURED, True, f"Payment {payment.id} captured {captured}.", facts
        )
    return CheckResult(
        CheckName.CAPTURED,
        False,
        f"Payment {payment.id} has captured nothing yet, so there is nothing to refund.",
        facts,
    )


def _not_disputed(payment: PaymentFacts) -> CheckResult:
    facts = {"disputed": payment.disputed}
    if payment.disputed:
        return CheckResult(
            CheckName.NOT_DISPUTED,
            False,
            f"Payment {payment.id} is disputed; a refund has to wait until the dispute is closed.",
            facts,
        )
    return CheckResult(
        CheckName.NOT_DISPUTED, True, f"Payment {payment.id} is not disputed.", facts
    )


def _remaining(payment: PaymentFacts, ledger: _Ledger, amount: Money) -> CheckResult:
    """Captured minus refunded at the provider (pending and succeeded), minus ours through
    the other provider, minus ours in flight."""
    in_flight = ledger.in_flight(payment)
    refunded = payment.refunded + ledger.refunded_elsewhere()
    remaining = payment.captured - refunded - in_flight
    facts = {
        "currency": amount.currency,
        "captured": payment.captured,
        "refunded": refunded,
        "in_flight": in_flight,
        "remaining": remaining,
        "requested": amount.amount,
        "in_flight_actions": [action.action_id for action in ledger.unseen],
        "ours_at_provider": sorted(ledger.at_provider),
    }
    if ledger.elsewhere:
        facts["refunded_elsewhere"] = [past.action_id for past in ledger.elsewhere]
    cur = amount.currency
    left = (
        f"({fmt(max(remaining, 0), cur)} of {fmt(payment.captured, cur)} captured: "
        f"{fmt(refunded, cur)} refunded, {fmt(in_flight, cur)} in flight)"
    )
    if amount.amount > remaining:
        return CheckResult(
            CheckName.REFUNDABLE_REMAINING,
            False,
            f"Refund of {amount.format()} exceeds what is left to refund {left}.",
            facts,
        )
    return CheckResult(
        CheckName.REFUNDABLE_REMAINING,
        True,
        f"Refund of {amount.format()} fits in what is left to refund {left}.",
        facts,
    )


def _order_matches(order: OrderFacts, target: str) -> CheckResult:
    facts = {"order": order.id, "order_payment": order.payment_id, "target": target}
    if order.id == target:
        # A store's own refund (Shopify) names the order itself.
        return CheckResult(
            CheckName.ORDER_MATCHES, True, f"The refund is of order {order.name} itself.", facts
        )
    if order.payment_id is not None and order.payment_id != target:
        return CheckResult(
            CheckName.ORDER_MATCHES,
            False,
            f"Order {order.name} was paid with {order.payment_id}, not with {target}, "
            "the payment this refund targets.",
            facts,
        )
    return CheckResult(
        CheckName.ORDER_MATCHES, True, f"Order {order.name} goes with payment {target}.", facts
    )


def _line_totals(ctx: Context, ledger: _Ledger) -> tuple[dict[str, int], dict[str, int]]:
    """Per line: what our refunds already took (settled, or known to the provider), and
    what ours in flight will take. Where the provider holds the write, its status wins."""
    recorded: dict[str, int] = defaultdict(int)
    pending: dict[str, int] = defaultdict(int)
    target = ctx.proposal.target

    def add(bucket: dict[str, int], line_items: tuple[LineItemRef, ...]) -> None:
        for ref in line_items:
            bucket[ref.line_id] += ref.amount_minor

    for past in ctx.history:
        if past.kind is ActionKind.REFUND and past.target == target:
            refund = ledger.at_provider.get(past.action_id)
            took = moved_money(past.status) if refund is None else refund.counts_against_capture
            if took:
                add(recorded, past.line_items)
    for action in ctx.in_flight:
        if action.kind is ActionKind.REFUND and action.target == target:
            refund = ledger.at_provider.get(action.action_id)
            if refund is None:
                add(pending, action.line_items)
            elif refund.counts_against_capture:
                add(recorded, action.line_items)
    return recorded, pending


def _line_items(ctx: Context, ledger: _Ledger) -> CheckResult:
    """Each line's part fits in that line's paid - refunded - in flight; the parts add up.

    The store's record of a line's refunds may or may not include refunds made
    directly at the payment provider, so we take the larger of the store's figure
    and our own: never less than either side knows, never the same money twice.
    """
    proposal = ctx.proposal
    order = ctx.order
    if order is None:
        return CheckResult(
            CheckName.LINE_ITEMS,
            False,
            f"Refunds split by line need the store order, and none was found for payment "
            f"{proposal.target}.",
            {"order": None},
        )
    cur = order.currency.lower()
    amount = proposal.amount
    facts: dict[str, object] = {"order": order.id, "currency": cur}
    if amount is not None and amount.currency != cur:
        return CheckResult(
            CheckName.LINE_ITEMS,
            False,
            f"Order {order.name} is in {cur.upper()} but the refund is in "
            f"{amount.currency.upper()}.",
            facts,
        )
    lines = {line.id: line for line in order.lines}
    recorded, pending = _line_totals(ctx, ledger)
    problems: list[str] = []
    fits: list[str] = []
    line_facts: list[dict[str, object]] = []
    seen: set[str] = set()
    for ref in proposal.line_items:
        line = lines.get(ref.line_id)
        if ref.line_id in seen:
            problems.append(f"Line {ref.line_id} appears twice in the proposal.")
            continue
        seen.add(ref.line_id)
        if line is None:
            problems.append(f"Line {ref.line_id} is not on order {order.name}.")
            continue
        label = f"{line.title} (line {line.id})"
        if ref.amount_minor <= 0:
            problems.append(f"The amount for {label} must be more than zero.")
            continue
        refunded = max(line.refunded, recorded[line.id])
        in_flight = pending[line.id]
        left = line.paid - refunded - in_flight
        line_facts.append(
            {
                "line_id": line.id,
                "paid": line.paid,
                "refunded": refunded,
                "in_flight": in_flight,
                "remaining": left,
                "requested": ref.amount_minor,
            }
        )
        if ref.amount_minor > left:
            problems.append(
                f"Refund of {fmt(ref.amount_minor, cur)} for {label} exceeds what is left for "
                f"that line ({fmt(max(left, 0), cur)} of {fmt(line.paid, cur)} paid: "
                f"{fmt(refunded, cur)} refunded, {fmt(in_flight, cur)} in flight)."
            )
        else:
            fits.append(f"{label} {fmt(ref.amount_minor, cur)} of {fmt(left, cur)} left")
    total = sum(ref.amount_minor for ref in proposal.line_items)
    facts.update(lines=line_facts, lines_total=total)
    if amount is not None and total != amount.amount:
        problems.append(
            f"The line amounts add up to {fmt(total, cur)} but the refund is {amount.format()}."
        )
    if problems:
        return CheckResult(CheckName.LINE_ITEMS, False, " ".join(problems), facts)
    return CheckResult(
        CheckName.LINE_ITEMS,
        True,
        f"Each line fits in what is left for it: {'; '.join(fits)}.",
        facts,
    )


def _refund_window(ctx: Context) -> CheckResult:
    days = ctx.policy.refund_window_days
    facts: dict[str, object] = {"refund_window_days": days}
    if days is None:
        return CheckResult(
            CheckName.REFUND_WINDOW, True, "The shop's policy sets no refund window.", facts
        )
    order = ctx.order
    if order is None:
        return CheckResult(
            CheckName.REFUND_WINDOW,
            False,
            f"The shop's policy allows refunds within {days} days of delivery, and no store "
            f"order was found for payment {ctx.proposal.target} to tell when it was delivered.",
            facts,
        )
    event, start = (
        ("delivered", order.delivered_at)
        if order.delivered_at is not None
        else ("fulfilled", order.fulfilled_at)
    )
    facts.update(
        delivered_at=None if order.delivered_at is None else order.delivered_at.isoformat(),
        fulfilled_at=None if order.fulfilled_at is None else order.fulfilled_at.isoformat(),
    )
    if start is None:
        return CheckResult(
            CheckName.REFUND_WINDOW,
            True,
            f"Order {order.name} has not been fulfilled yet, so the {days}-day refund window "
            "has not started.",
            facts,
        )
    closes = start + timedelta(days=days)
    facts["closes_at"] = closes.isoformat()
    if ctx.now > closes:
        return CheckResult(
            CheckName.REFUND_WINDOW,
            False,
            f"Order {order.name} was {event} on {day(start)}; the {days}-day refund window "
            f"closed on {day(closes)}.",
            facts,
        )
    return CheckResult(
        CheckName.REFUND_WINDOW,
        True,
        f"Order {order.name} was {event} on {day(start)}; the {days}-day refund window is "
        f"open until {day(closes)}.",
        facts,
    )
