"""Refund checks: what is left on the payment and on each line, disputes, duplicates, windows."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from datetime import datetime, timedelta

from app.guard._common import (
    currency_check,
    customer_matches,
    duplicate_check,
    not_already_at_provider,
    target_exists,
)
from app.guard._context import Context, day, moved_money
from app.guard.proposal import InFlightAction, LineItemRef, PastAction
from app.guard.verdict import CheckName, CheckResult
from app.money import Money
from app.words import Sentence, joined, one_after_another, said, said_n
from integrations.provider import (
    ACTION_ID_METADATA_KEY,
    ActionKind,
    OrderFacts,
    OrderLine,
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
    exists = target_exists(
        ctx,
        said("payment"),
        said("Payment %(id)s", id=proposal.target),
        payment.id,
        exists=payment.exists,
    )
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
        customer_matches(ctx, said("Payment %(id)s", id=payment.id), payment.customer_id),
        _not_disputed(payment),
    ]
    ledger = _Ledger.of(ctx, payment)
    amount = proposal.amount
    if amount is not None:
        results.append(currency_check(ctx, amount, said("payment %(id)s", id=payment.id), currency))
    if amount is not None and amount.amount > 0 and amount.currency == currency:
        since = ctx.since(ctx.policy.duplicate_window)
        results.append(_remaining(payment, ledger, amount))
        results.append(
            duplicate_check(
                ctx,
                what=amount,
                subject=said("on payment %(id)s", id=payment.id),
                provider_matches=[
                    said(
                        "%(provider)s refund %(refund)s, %(status)s",
                        provider=ctx.provider_label,
                        refund=refund.id,
                        status=refund.status.value,
                    )
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
        ctx, said("refund"), ((refund.id, refund.metadata) for refund in payment.refunds)
    )
    return results


def _captured(payment: PaymentFacts) -> CheckResult:
    facts = {"captured": payment.captured, "currency": payment.currency.lower()}
    if payment.captured > 0:
        captured = Money(payment.captured, payment.currency)
        return CheckResult(
            CheckName.CAPTURED,
            True,
            said("Payment %(id)s captured %(captured)s.", id=payment.id, captured=captured),
            facts,
        )
    return CheckResult(
        CheckName.CAPTURED,
        False,
        said(
            "Payment %(id)s has captured nothing yet, so there is nothing to refund.",
            id=payment.id,
        ),
        facts,
    )


def _not_disputed(payment: PaymentFacts) -> CheckResult:
    facts = {"disputed": payment.disputed}
    if payment.disputed:
        return CheckResult(
            CheckName.NOT_DISPUTED,
            False,
            said(
                "Payment %(id)s is disputed; a refund has to wait until the dispute is closed.",
                id=payment.id,
            ),
            facts,
        )
    return CheckResult(
        CheckName.NOT_DISPUTED, True, said("Payment %(id)s is not disputed.", id=payment.id), facts
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
    left = said(
        "(%(left)s of %(captured)s captured: %(refunded)s refunded, %(in_flight)s in flight)",
        left=Money(max(remaining, 0), cur),
        captured=Money(payment.captured, cur),
        refunded=Money(refunded, cur),
        in_flight=Money(in_flight, cur),
    )
    if amount.amount > remaining:
        return CheckResult(
            CheckName.REFUNDABLE_REMAINING,
            False,
            said(
                "Refund of %(amount)s exceeds what is left to refund %(left)s.",
                amount=amount,
                left=left,
            ),
            facts,
        )
    return CheckResult(
        CheckName.REFUNDABLE_REMAINING,
        True,
        said(
            "Refund of %(amount)s fits in what is left to refund %(left)s.",
            amount=amount,
            left=left,
        ),
        facts,
    )


def _order_matches(order: OrderFacts, target: str) -> CheckResult:
    facts = {"order": order.id, "order_payment": order.payment_id, "target": target}
    if order.id == target:
        # A store's own refund (Shopify) names the order itself.
        return CheckResult(
            CheckName.ORDER_MATCHES,
            True,
            said("The refund is of order %(order)s itself.", order=order.name),
            facts,
        )
    if order.payment_id is not None and order.payment_id != target:
        return CheckResult(
            CheckName.ORDER_MATCHES,
            False,
            said(
                "Order %(order)s was paid with %(paid_with)s, not with %(target)s, the payment "
                "this refund targets.",
                order=order.name,
                paid_with=order.payment_id,
                target=target,
            ),
            facts,
        )
    return CheckResult(
        CheckName.ORDER_MATCHES,
        True,
        said("Order %(order)s goes with payment %(target)s.", order=order.name, target=target),
        facts,
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


@dataclass(frozen=True)
class _LinePart:
    """One line's part of the refund, gone through: whether it fits, the sentence that says
    so or says what is wrong, and the line's figures where it could be measured."""

    fits: bool
    said: Sentence
    facts: dict[str, object] | None = None


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
            said(
                "Refunds split by line need the store order, and none was found for payment "
                "%(target)s.",
                target=proposal.target,
            ),
            {"order": None},
        )
    cur = order.currency.lower()
    amount = proposal.amount
    facts: dict[str, object] = {"order": order.id, "currency": cur}
    if amount is not None and amount.currency != cur:
        return CheckResult(
            CheckName.LINE_ITEMS,
            False,
            said(
                "Order %(order)s is in %(order_currency)s but the refund is in %(currency)s.",
                order=order.name,
                order_currency=cur.upper(),
                currency=amount.currency.upper(),
            ),
            facts,
        )
    parts = _line_parts(ctx, order, ledger)
    total = sum(ref.amount_minor for ref in proposal.line_items)
    facts.update(lines=[part.facts for part in parts if part.facts is not None], lines_total=total)
    problems = [part.said for part in parts if not part.fits]
    if amount is not None and total != amount.amount:
        problems.append(
            said(
                "The line amounts add up to %(total)s but the refund is %(amount)s.",
                total=Money(total, cur),
                amount=amount,
            )
        )
    if problems:
        return CheckResult(CheckName.LINE_ITEMS, False, one_after_another(problems), facts)
    fits = [part.said for part in parts if part.fits]
    return CheckResult(
        CheckName.LINE_ITEMS,
        True,
        said("Each line fits in what is left for it: %(fits)s.", fits=joined(fits)),
        facts,
    )


def _line_parts(ctx: Context, order: OrderFacts, ledger: _Ledger) -> list[_LinePart]:
    """The proposal's line parts in turn: a line given twice, a line not on ``order`` and a
    part of nothing are wrong; any other is measured against what is left on its line."""
    lines = {line.id: line for line in order.lines}
    recorded, pending = _line_totals(ctx, ledger)
    currency = order.currency.lower()
    parts: list[_LinePart] = []
    seen: set[str] = set()
    for ref in ctx.proposal.line_items:
        line = lines.get(ref.line_id)
        if ref.line_id in seen:
            problem = said("Line %(line)s appears twice in the proposal.", line=ref.line_id)
            part = _LinePart(False, problem)
        elif line is None:
            problem = said(
                "Line %(line)s is not on order %(order)s.", line=ref.line_id, order=order.name
            )
            part = _LinePart(False, problem)
        elif ref.amount_minor <= 0:
            problem = said(
                "The amount for %(line)s must be more than zero.", line=_line_label(line)
            )
            part = _LinePart(False, problem)
        else:
            part = _measure_line(
                line,
                currency,
                requested=ref.amount_minor,
                refunded=max(line.refunded, recorded[line.id]),
                in_flight=pending[line.id],
            )
        parts.append(part)
        seen.add(ref.line_id)
    return parts


def _line_label(line: OrderLine) -> Sentence:
    return said("%(title)s (line %(line)s)", title=line.title, line=line.id)


def _measure_line(
    line: OrderLine, currency: str, *, requested: int, refunded: int, in_flight: int
) -> _LinePart:
    """``requested`` of ``line`` against what is left on it: paid - refunded - in flight."""
    left = line.paid - refunded - in_flight
    facts: dict[str, object] = {
        "line_id": line.id,
        "paid": line.paid,
        "refunded": refunded,
        "in_flight": in_flight,
        "remaining": left,
        "requested": requested,
    }
    if requested > left:
        exceeds = said(
            "Refund of %(amount)s for %(line)s exceeds what is left for that line "
            "(%(left)s of %(paid)s paid: %(refunded)s refunded, %(in_flight)s in flight).",
            amount=Money(requested, currency),
            line=_line_label(line),
            left=Money(max(left, 0), currency),
            paid=Money(line.paid, currency),
            refunded=Money(refunded, currency),
            in_flight=Money(in_flight, currency),
        )
        return _LinePart(False, exceeds, facts)
    fits = said(
        "%(line)s %(amount)s of %(left)s left",
        line=_line_label(line),
        amount=Money(requested, currency),
        left=Money(left, currency),
    )
    return _LinePart(True, fits, facts)


def _refund_window(ctx: Context) -> CheckResult:
    days = ctx.policy.refund_window_days
    facts: dict[str, object] = {"refund_window_days": days}
    if days is None:
        return CheckResult(
            CheckName.REFUND_WINDOW, True, said("The shop's policy sets no refund window."), facts
        )
    if ctx.order is None:
        return CheckResult(
            CheckName.REFUND_WINDOW,
            False,
            said_n(
                "The shop's policy allows refunds within %(count)s day of delivery, and no "
                "store order was found for payment %(target)s to tell when it was delivered.",
                "The shop's policy allows refunds within %(count)s days of delivery, and no "
                "store order was found for payment %(target)s to tell when it was delivered.",
                days,
                target=ctx.proposal.target,
            ),
            facts,
        )
    return _order_in_window(ctx.order, days, ctx.now)


def _order_in_window(order: OrderFacts, days: int, now: datetime) -> CheckResult:
    """The window of ``days`` runs from delivery, or from fulfilment where the store does not
    know of a delivery; an order not yet fulfilled has not started it."""
    event, start = (
        (said("delivered"), order.delivered_at)
        if order.delivered_at is not None
        else (said("fulfilled"), order.fulfilled_at)
    )
    facts: dict[str, object] = {
        "refund_window_days": days,
        "delivered_at": None if order.delivered_at is None else order.delivered_at.isoformat(),
        "fulfilled_at": None if order.fulfilled_at is None else order.fulfilled_at.isoformat(),
    }
    if start is None:
        return CheckResult(
            CheckName.REFUND_WINDOW,
            True,
            said(
                "Order %(order)s has not been fulfilled yet, so the %(days)s-day refund window "
                "has not started.",
                order=order.name,
                days=days,
            ),
            facts,
        )
    closes = start + timedelta(days=days)
    facts["closes_at"] = closes.isoformat()
    if now > closes:
        return CheckResult(
            CheckName.REFUND_WINDOW,
            False,
            said(
                "Order %(order)s was %(event)s on %(start)s; the %(days)s-day refund window "
                "closed on %(closes)s.",
                order=order.name,
                event=event,
                start=day(start),
                days=days,
                closes=day(closes),
            ),
            facts,
        )
    return CheckResult(
        CheckName.REFUND_WINDOW,
        True,
        said(
            "Order %(order)s was %(event)s on %(start)s; the %(days)s-day refund window is "
            "open until %(closes)s.",
            order=order.name,
            event=event,
            start=day(start),
            days=days,
            closes=day(closes),
        ),
        facts,
    )
