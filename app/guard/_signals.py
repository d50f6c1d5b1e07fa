"""Abuse signals: checks that ask a person to decide, and never block or refuse.

Each signal is a check with its facts that ``escalates``: raised, it makes the verdict
``needs_approval`` whatever the auto-approve ceiling (:func:`app.guard.checks._decide`);
it never blocks, so a person may still approve. Signals run on refunds and customer
credits, the kinds that give money back. Their thresholds are the policy's ``signals``
(:class:`~app.guard.policy.SignalRules`); a threshold left unset turns its signal off, and
no check runs for it.

- ``repeat_claims``: the customer's earlier refunds and credits within 90 days, by count or
  as a share of what they spent;
- ``old_delivery``: the order was delivered long before the claim;
- ``delivered_but_not_received``: the customer says an order never arrived, and its
  shipment is marked delivered;
- ``new_customer_high_value``: a new customer asks for much;
- ``shared_email``: other customers refunded within 90 days use the customer's email.

Where a shop has little history, the signals that read its past (``repeat_claims``,
``new_customer_high_value``, ``shared_email``) pass, saying so, until the provider has
reported ``history_needed`` of the shop's actions within 90 days: Caseward's records begin
when the shop starts using it, and before they fill every customer looks new and none has a
past. The two on the order at hand read no past. The caller reads the records
(:class:`~app.guard.proposal.CustomerRecord`); without them, no signal runs.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from app.guard._context import Context, day, describe_period
from app.guard.policy import SignalRules
from app.guard.proposal import CustomerRecord
from app.guard.verdict import CheckName, CheckResult
from app.money import Money
from app.words import Sentence, Value, one_after_another, said, said_n
from integrations.provider import ActionKind, OrderFacts

# How far back the signals look, as the product's rule says: "in 90 days".
SIGNAL_WINDOW = timedelta(days=90)
# The kinds that give money back: the only ones a claim is made for.
SIGNAL_KINDS = frozenset({ActionKind.REFUND, ActionKind.CUSTOMER_CREDIT})
_WINDOW_DAYS = SIGNAL_WINDOW.days
# A shipment the store reports as arrived.
_DELIVERED = "delivered"


def signal_checks(ctx: Context, record: CustomerRecord | None) -> list[CheckResult]:
    """Every signal the policy turns on, for a refund or a credit with a usable amount."""
    proposal = ctx.proposal
    amount = proposal.amount
    if record is None or proposal.kind not in SIGNAL_KINDS or amount is None or amount.amount <= 0:
        return []
    rules = ctx.policy.signals
    results: list[CheckResult] = []
    if rules.repeat_claims is not None or rules.repeat_claims_percent is not None:
        results.append(
            _not_yet(CheckName.REPEAT_CLAIMS, rules, record)
            or _repeat_claims(rules, record, amount.currency)
        )
    order = ctx.order
    delivered = None if order is None else delivered_at(order)
    if rules.old_delivery_days is not None and order is not None and delivered is not None:
        results.append(_old_delivery(order, delivered, rules.old_delivery_days, ctx.now))
    if rules.delivered_but_not_received and order is not None:
        results.append(_delivered_but_not_received(order, delivered, record.says_not_received))
    threshold = rules.new_customer_amount.get(amount.currency)
    if threshold is not None:
        results.append(
            _not_yet(CheckName.NEW_CUSTOMER_HIGH_VALUE, rules, record)
            or _new_customer(rules, record, Money(threshold, amount.currency), amount, ctx.now)
        )
    if rules.shared_email_customers is not None:
        results.append(
            _not_yet(CheckName.SHARED_EMAIL, rules, record)
            or _shared_email(rules.shared_email_customers, record)
        )
    return results


def delivered_at(order: OrderFacts) -> datetime | None:
    """When the order was delivered: as the store says of the order, else its latest
    shipment the carrier marked delivered."""
    if order.delivered_at is not None:
        return order.delivered_at
    marked = [
        shipment.delivered_at
        for shipment in order.shipments
        if shipment.status == _DELIVERED and shipment.delivered_at is not None
    ]
    return max(marked, default=None)


def _signal(
    name: CheckName, raised: bool, sentence: Sentence, facts: dict[str, object]
) -> CheckResult:
    return CheckResult(name, not raised, sentence, facts, escalates=True)


def _not_yet(name: CheckName, rules: SignalRules, record: CustomerRecord) -> CheckResult | None:
    """The signal's pass while the shop has too little history for it; None once it has
    enough."""
    if record.shop_actions >= rules.history_needed:
        return None
    return _signal(
        name,
        False,
        said_n(
            "Not enough history yet: the provider has reported %(count)s of the shop's "
            "actions in the last %(period)s, and this signal starts at %(needed)s.",
            "Not enough history yet: the provider has reported %(count)s of the shop's "
            "actions in the last %(period)s, and this signal starts at %(needed)s.",
            record.shop_actions,
            period=describe_period(SIGNAL_WINDOW),
            needed=rules.history_needed,
        ),
        {
            "shop_actions": record.shop_actions,
            "history_needed": rules.history_needed,
            "window_days": _WINDOW_DAYS,
        },
    )


def _repeat_claims(rules: SignalRules, record: CustomerRecord, currency: str) -> CheckResult:
    refunded, spend = record.refunded.get(currency, 0), record.spend.get(currency, 0)
    # Rounded up: a share shown as 50% is never one above the shop's 50%.
    percent = -(-refunded * 100 // spend) if spend else None
    facts: dict[str, object] = {
        "claims": record.claims,
        "refunded": refunded,
        "spend": spend,
        "percent": percent,
        "currency": currency,
        "window_days": _WINDOW_DAYS,
        "repeat_claims": rules.repeat_claims,
        "repeat_claims_percent": rules.repeat_claims_percent,
    }
    period = describe_period(SIGNAL_WINDOW)
    raised: list[Sentence] = []
    if rules.repeat_claims is not None and record.claims >= rules.repeat_claims:
        raised.append(
            said_n(
                "This customer already had %(count)s refund or credit in the last %(period)s; "
                "from %(threshold)s, a person decides.",
                "This customer already had %(count)s refunds or credits in the last "
                "%(period)s; from %(threshold)s, a person decides.",
                record.claims,
                period=period,
                threshold=rules.repeat_claims,
            )
        )
    share = rules.repeat_claims_percent
    if share is not None and percent is not None and refunded * 100 > share * spend:
        raised.append(
            said(
                "Refunds and credits to this customer in the last %(period)s come to "
                "%(refunded)s, %(percent)s%% of the %(spend)s they spent; above %(share)s%%, "
                "a person decides.",
                period=period,
                refunded=Money(refunded, currency),
                percent=percent,
                spend=Money(spend, currency),
                share=share,
            )
        )
    if raised:
        return _signal(CheckName.REPEAT_CLAIMS, True, one_after_another(raised), facts)
    if spend:
        sentence = said_n(
            "This customer had %(count)s refund or credit in the last %(period)s, "
            "%(refunded)s of the %(spend)s they spent.",
            "This customer had %(count)s refunds or credits in the last %(period)s, "
            "%(refunded)s of the %(spend)s they spent.",
            record.claims,
            period=period,
            refunded=Money(refunded, currency),
            spend=Money(spend, currency),
        )
    else:
        sentence = said_n(
            "This customer had %(count)s refund or credit in the last %(period)s.",
            "This customer had %(count)s refunds or credits in the last %(period)s.",
            record.claims,
            period=period,
        )
    return _signal(CheckName.REPEAT_CLAIMS, False, sentence, facts)


def _old_delivery(order: OrderFacts, delivered: datetime, days: int, now: datetime) -> CheckResult:
    facts: dict[str, object] = {
        "order": order.name,
        "delivered_at": delivered.isoformat(),
        "days_since_delivery": (now - delivered).days,
        "old_delivery_days": days,
    }
    if now - delivered > timedelta(days=days):
        sentence = said_n(
            "Order %(order)s was delivered on %(delivered)s, more than %(count)s day before "
            "this claim.",
            "Order %(order)s was delivered on %(delivered)s, more than %(count)s days before "
            "this claim.",
            days,
            order=order.name,
            delivered=day(delivered),
        )
        return _signal(CheckName.OLD_DELIVERY, True, sentence, facts)
    sentence = said_n(
        "Order %(order)s was delivered on %(delivered)s, within %(count)s day of this claim.",
        "Order %(order)s was delivered on %(delivered)s, within %(count)s days of this claim.",
        days,
        order=order.name,
        delivered=day(delivered),
    )
    return _signal(CheckName.OLD_DELIVERY, False, sentence, facts)


def _delivered_but_not_received(
    order: OrderFacts, delivered: datetime | None, says_not_received: bool
) -> CheckResult:
    facts: dict[str, object] = {
        "order": order.name,
        "says_not_received": says_not_received,
        "delivered_at": None if delivered is None else delivered.isoformat(),
    }
    name = CheckName.DELIVERED_BUT_NOT_RECEIVED
    if not says_not_received:
        return _signal(
            name, False, said("The customer's request does not say an order never arrived."), facts
        )
    if delivered is None:
        return _signal(
            name,
            False,
            said(
                "The customer says an order never arrived, and no shipment of order %(order)s "
                "is marked delivered.",
                order=order.name,
            ),
            facts,
        )
    return _signal(
        name,
        True,
        said(
            "The customer says an order never arrived, but the shipment of order %(order)s "
            "was marked delivered on %(delivered)s.",
            order=order.name,
            delivered=day(delivered),
        ),
        facts,
    )


def _new_customer(
    rules: SignalRules, record: CustomerRecord, threshold: Money, amount: Money, now: datetime
) -> CheckResult:
    days = rules.new_customer_days
    first = record.first_order_at
    young = days is not None and first is not None and now - first < timedelta(days=days)
    facts: dict[str, object] = {
        "orders": record.orders,
        "first_order_at": None if first is None else first.isoformat(),
        "new_customer_days": days,
        "amount": amount.amount,
        "threshold": threshold.amount,
        "currency": amount.currency,
    }
    name = CheckName.NEW_CUSTOMER_HIGH_VALUE
    if record.orders <= 1 or first is None:
        who = said_n(
            "This customer has %(count)s order on record",
            "This customer has %(count)s orders on record",
            record.orders,
        )
    elif young:
        assert days is not None
        who = said_n(
            "This customer's first order on record is from %(first)s, less than %(count)s day ago",
            "This customer's first order on record is from %(first)s, less than %(count)s days ago",
            days,
            first=day(first),
        )
    else:
        who = said_n(
            "This customer has %(count)s order on record, the first from %(first)s: not a new "
            "customer.",
            "This customer has %(count)s orders on record, the first from %(first)s: not a new "
            "customer.",
            record.orders,
            first=day(first),
        )
        return _signal(name, False, who, facts)
    values: dict[str, Value] = {"who": who, "amount": amount, "threshold": threshold}
    if amount.amount > threshold.amount:
        return _signal(
            name,
            True,
            said(
                "%(who)s, and asks for %(amount)s: above %(threshold)s, a new customer's claim "
                "goes to a person.",
                **values,
            ),
            facts,
        )
    return _signal(
        name,
        False,
        said(
            "%(who)s, and asks for %(amount)s, within the %(threshold)s a new customer's "
            "claim may come to.",
            **values,
        ),
        facts,
    )


def _shared_email(threshold: int, record: CustomerRecord) -> CheckResult:
    others = len(record.sharing_email)
    facts: dict[str, object] = {
        "other_customers": list(record.sharing_email),
        "window_days": _WINDOW_DAYS,
        "shared_email_customers": threshold,
    }
    period = describe_period(SIGNAL_WINDOW)
    name = CheckName.SHARED_EMAIL
    if others >= threshold:
        return _signal(
            name,
            True,
            said_n(
                "%(count)s other customer refunded in the last %(period)s uses this customer's "
                "email address.",
                "%(count)s other customers refunded in the last %(period)s use this customer's "
                "email address.",
                others,
                period=period,
            ),
            facts,
        )
    if not others:
        return _signal(
            name,
            False,
            said(
                "No other customer refunded in the last %(period)s uses this customer's email "
                "address.",
                period=period,
            ),
            facts,
        )
    return _signal(
        name,
        False,
        said_n(
            "%(count)s other customer refunded in the last %(period)s uses this customer's "
            "email address, fewer than the %(threshold)s from which a person decides.",
            "%(count)s other customers refunded in the last %(period)s use this customer's "
            "email address, fewer than the %(threshold)s from which a person decides.",
            others,
            period=period,
            threshold=threshold,
        ),
        facts,
    )
