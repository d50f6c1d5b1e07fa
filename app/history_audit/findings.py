"""What Caseward's checks would have stopped or questioned in a shop's past money actions.

``compute_findings(session, scan, policy, now)`` runs every rule over the records a scan
kept (:class:`~app.history_audit.models.HistoryRecord`) and writes what each finds as a
:class:`~app.history_audit.models.HistoryFinding`, in the caller's transaction (the
scan marks itself done in the same one; nothing here commits):

1. Each rule reads the scan's records as one ordered query, streamed page by page
   (``yield_per``), never as a list: the rules that compare records with one another
   (duplicates, the per-customer cap) order them by what they compare, so only the
   records of one payment or customer within one window are held at a time.
2. What a rule finds is written in batches with ``ON CONFLICT DO NOTHING`` on the
   finding's key (scan, rule, records' key): computed twice, each finding is kept once.

The rules are the guard's own notions applied to what already happened, with the shop's
policy as it stands (the draft policy of a read-only shop):

* :attr:`Rule.DUPLICATE`: two or more refunds of one payment, or credits to one
  customer, of the same amount, each within the policy's duplicate window of the one
  before (the guard's duplicate check); at risk: all but the first.
* :attr:`Rule.DISPUTED_REFUND`: a refund on a payment that is disputed (as read during
  the scan); at risk: the refund.
* :attr:`Rule.ABOVE_THRESHOLD`: a refund above the two-person threshold for its
  currency, more than the policy lets one person approve; at risk: what is above it.
* :attr:`Rule.LARGE_DISCOUNT`: a percent discount above the policy's maximum percent
  off, or an amount off above the two-person threshold. At risk: the amount off; a
  percent discount takes its share of every order it is used on, with no ceiling, and
  its record says nothing of what it took, so it counts 0 and its reason names the
  percent.
* :attr:`Rule.OVER_CUSTOMER_CAP`: a refund, credit or amount off that took its customer
  above the per-customer cap over the cap's trailing period (the guard's cap: amounts
  in the cap's currency, the window sliding with each record); at risk: the part of it
  above the cap, so a customer's findings add up to what went over.
* :attr:`Rule.UNGUARDED`: every record, whatever its status, that carries no Caseward
  action id, or one that names no action of this shop: no case or approval in Caseward
  stands behind it. At risk: its amount (0 for a subscription change without one, and
  for a failed or canceled record). One finding per record.

Failed and canceled records moved no money (the guard's ``moved_money``): every other rule
leaves them out. Amounts are in the record's currency; a finding about a record without
one (a percent discount, a subscription change) puts no money at risk and is in the scan's
most common currency, or none when nothing in the scan or the policy names one.
"""

from __future__ import annotations

import hashlib
import uuid
from collections import deque
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum
from typing import Any, TypeAlias

from sqlalchemy import ColumnElement, Row, Select, and_, case, func, or_, select
from sqlalchemy.orm import Session

from app.db import insert_unless_present
from app.execution.models import Action
from app.guard import MONEY_KINDS, PolicyRules, describe_period, moved_money
from app.history_audit.models import HistoryFinding, HistoryRecord, HistoryScan
from app.money import Money
from app.words import N_, Code, Sentence, said, said_n
from integrations.provider import ActionKind, ProviderStatus

# Rows read per round trip, and findings written per statement.
BATCH = 500


class Rule(StrEnum):
    DUPLICATE = "duplicate"
    DISPUTED_REFUND = "disputed_refund"
    ABOVE_THRESHOLD = "above_two_person_threshold"
    LARGE_DISCOUNT = "large_discount"
    OVER_CUSTOMER_CAP = "over_customer_cap"
    UNGUARDED = "unguarded"


# What each rule is called on the report, in the catalogue.
RULE_WORDS: dict[Rule, str] = {
    Rule.DUPLICATE: N_("Duplicate refunds or credits"),
    Rule.DISPUTED_REFUND: N_("Refunds on disputed payments"),
    Rule.ABOVE_THRESHOLD: N_("Refunds above the two-person threshold"),
    Rule.LARGE_DISCOUNT: N_("Unusually large discounts"),
    Rule.OVER_CUSTOMER_CAP: N_("Over the per-customer cap"),
    Rule.UNGUARDED: N_("No case or approval in Caseward"),
}

# Statuses in which a provider's write gave nothing, as the guard counts them.
NOTHING_MOVED = tuple(sorted(status.value for status in ProviderStatus if not moved_money(status)))


@dataclass(frozen=True)
class Found:
    """One finding before it is stored: ``records`` are provider ids, oldest first."""

    rule: Rule
    records: tuple[str, ...]
    occurred_at: datetime
    customer: str | None
    money_at_risk: int
    # None only for a finding with no money at risk, in a scan where nothing names one.
    currency: str | None
    reason: Sentence


def records_key(records: Iterable[str]) -> str:
    """SHA-256 hex of the sorted record ids joined by newlines: one finding per rule and
    set of records."""
    return hashlib.sha256("\n".join(sorted(records)).encode()).hexdigest()


def compute_findings(
    session: Session, scan: HistoryScan, policy: PolicyRules, now: datetime
) -> int:
    """Write ``scan``'s findings under ``policy``; returns how many the rules found (each
    counted once, whether written now or by an earlier call). Does not commit.

    ``now`` is when they are computed; the rules compare records with one another, never
    with the clock, so computing a scan again finds exactly the same.
    """
    if now.utcoffset() is None:
        raise ValueError("now must be timezone-aware")
    currency = _scan_currency(session, scan, policy)
    rules: tuple[Callable[[], Iterator[Found]], ...] = (
        lambda: _duplicates(session, scan, policy),
        lambda: _disputed_refunds(session, scan),
        lambda: _above_threshold(session, scan, policy),
        lambda: _large_discounts(session, scan, policy, currency),
        lambda: _over_customer_cap(session, scan, policy),
        lambda: _unguarded(session, scan, currency),
    )
    return sum(_write(session, scan, rule()) for rule in rules)


# ---------------------------------------------------------------- reading


_R = HistoryRecord
_Columns: TypeAlias = Select[*tuple[Any, ...]]


def _in_scan(scan: HistoryScan) -> ColumnElement[bool]:
    return and_(_R.scan_id == scan.id, _R.shop_id == scan.shop_id)


def _of_scan(scan: HistoryScan) -> ColumnElement[bool]:
    """The scan's records that moved money (or may have: a status we do not know)."""
    return and_(_in_scan(scan), _moved())


def _moved() -> ColumnElement[bool]:
    return or_(_R.status.is_(None), _R.status.not_in(NOTHING_MOVED))


def _stream(session: Session, statement: _Columns) -> Iterator[Row[Any]]:
    """The rows of ``statement`` a page at a time (a server-side cursor on PostgreSQL)."""
    yield from session.execute(statement.execution_options(yield_per=BATCH))


def _scan_currency(session: Session, scan: HistoryScan, policy: PolicyRules) -> str | None:
    """The currency most of the scan's records are in; else the policy's; else none (no
    record with money, no money rule: whatever is found puts no money at risk)."""
    most = session.execute(
        select(_R.currency)
        .where(_of_scan(scan), _R.currency.is_not(None))
        .group_by(_R.currency)
        .order_by(func.count().desc(), _R.currency)
        .limit(1)
    ).scalar()
    if most:
        return most.lower()
    caps = [cap.limit.currency for cap in (policy.per_customer_cap, policy.per_shop_cap) if cap]
    named = [*caps, *sorted(policy.two_person_threshold), *sorted(policy.auto_approve_ceiling)]
    return named[0] if named else None


def _ids(records: Sequence[str]) -> str:
    return ", ".join(records)


# ---------------------------------------------------------------- the rules


def _duplicates(session: Session, scan: HistoryScan, policy: PolicyRules) -> Iterator[Found]:
    window = policy.duplicate_window
    # What a duplicate repeats: a refund's payment, a credit's customer.
    party = case((_R.kind == ActionKind.REFUND, _R.payment), else_=_R.customer).label("party")
    statement = (
        select(_R.kind, party, _R.currency, _R.amount, _R.created, _R.record_id, _R.customer)
        .where(
            _of_scan(scan),
            _R.kind.in_((ActionKind.REFUND, ActionKind.CUSTOMER_CREDIT)),
            _R.amount > 0,
            _R.currency.is_not(None),
            party.is_not(None),
        )
        .order_by(_R.kind, party, _R.currency, _R.amount, _R.created, _R.record_id)
    )
    run: list[Row[Any]] = []
    for row in _stream(session, statement):
        last = run[-1] if run else None
        if (
            last is not None
            and (last.kind, last.party, last.currency, last.amount)
            == (row.kind, row.party, row.currency, row.amount)
            and row.created - last.created <= window
        ):
            run.append(row)
            continue
        if len(run) > 1:
            yield _duplicate(run, describe_period(window))
        run = [row]
    if len(run) > 1:
        yield _duplicate(run, describe_period(window))


def _duplicate(run: Sequence[Row[Any]], period: Sentence) -> Found:
    first = run[0]
    records = tuple(row.record_id for row in run)
    amount = Money(first.amount, first.currency)
    at_risk = first.amount * (len(run) - 1)
    if first.kind == ActionKind.REFUND:
        reason = said_n(
            "%(count)s refund of %(amount)s on payment %(payment)s, each within %(period)s "
            "of the one before (%(records)s): all but the first look like duplicates.",
            "%(count)s refunds of %(amount)s on payment %(payment)s, each within %(period)s "
            "of the one before (%(records)s): all but the first look like duplicates.",
            len(run),
            amount=amount,
            payment=first.party,
            period=period,
            records=_ids(records),
        )
    else:
        reason = said_n(
            "%(count)s credit of %(amount)s to customer %(customer)s, each within "
            "%(period)s of the one before (%(records)s): all but the first look like "
            "duplicates.",
            "%(count)s credits of %(amount)s to customer %(customer)s, each within "
            "%(period)s of the one before (%(records)s): all but the first look like "
            "duplicates.",
            len(run),
            amount=amount,
            customer=first.party,
            period=period,
            records=_ids(records),
        )
    return Found(
        rule=Rule.DUPLICATE,
        records=records,
        occurred_at=run[-1].created,
        customer=first.customer,
        money_at_risk=at_risk,
        currency=first.currency,
        reason=reason,
    )


def _disputed_refunds(session: Session, scan: HistoryScan) -> Iterator[Found]:
    statement = (
        select(_R.record_id, _R.created, _R.customer, _R.amount, _R.currency, _R.payment)
        .where(
            _of_scan(scan),
            _R.kind == ActionKind.REFUND,
            _R.payment_disputed.is_(True),
            _R.payment.is_not(None),
            _R.amount > 0,
            # A provider names an amount with its currency.
            _R.currency.is_not(None),
        )
        .order_by(_R.created, _R.record_id)
    )
    for row in _stream(session, statement):
        yield Found(
            rule=Rule.DISPUTED_REFUND,
            records=(row.record_id,),
            occurred_at=row.created,
            customer=row.customer,
            money_at_risk=row.amount,
            currency=row.currency,
            reason=said(
                "Refund %(refund)s of %(amount)s went back on payment %(payment)s, which is "
                "disputed: a refund has to wait until the dispute is closed, or the customer "
                "may be paid twice.",
                refund=row.record_id,
                amount=Money(row.amount, row.currency),
                payment=row.payment,
            ),
        )


def _above_threshold_in(kind: ActionKind, policy: PolicyRules) -> ColumnElement[bool] | None:
    """Records of ``kind`` whose amount is above the threshold of their currency, as the
    guard asks two people for (``amount > threshold``); None when no currency has one."""
    limits = [
        and_(_R.currency == currency, _R.amount > threshold)
        for currency, threshold in sorted(policy.two_person_threshold.items())
    ]
    if not limits:
        return None
    return and_(_R.kind == kind, or_(*limits))


def _above_threshold(session: Session, scan: HistoryScan, policy: PolicyRules) -> Iterator[Found]:
    above = _above_threshold_in(ActionKind.REFUND, policy)
    if above is None:
        return
    statement = (
        select(_R.record_id, _R.created, _R.customer, _R.amount, _R.currency)
        .where(_of_scan(scan), above)
        .order_by(_R.created, _R.record_id)
    )
    for row in _stream(session, statement):
        threshold = policy.two_person_threshold[row.currency]
        yield Found(
            rule=Rule.ABOVE_THRESHOLD,
            records=(row.record_id,),
            occurred_at=row.created,
            customer=row.customer,
            money_at_risk=row.amount - threshold,
            currency=row.currency,
            reason=said(
                "Refund %(refund)s of %(amount)s is %(over)s above the draft policy's "
                "two-person threshold of %(threshold)s: one person could not have approved "
                "it alone.",
                refund=row.record_id,
                amount=Money(row.amount, row.currency),
                threshold=Money(threshold, row.currency),
                over=Money(row.amount - threshold, row.currency),
            ),
        )


def _large_discounts(
    session: Session, scan: HistoryScan, policy: PolicyRules, currency: str | None
) -> Iterator[Found]:
    maximum = policy.max_percent_off
    # The guard refuses a percent above the maximum (``percent > maximum``).
    large = [and_(_R.kind == ActionKind.DISCOUNT, _R.percent_off > maximum)]
    amount_off = _above_threshold_in(ActionKind.DISCOUNT, policy)
    if amount_off is not None:
        large.append(and_(amount_off, _R.percent_off.is_(None)))
    statement = (
        select(
            _R.record_id,
            _R.created,
            _R.customer,
            _R.amount,
            _R.currency,
            _R.percent_off,
            _R.detail,
        )
        .where(_of_scan(scan), or_(*large))
        .order_by(_R.created, _R.record_id)
    )
    for row in _stream(session, statement):
        code = (row.detail or {}).get("code")
        discount = f"{code} ({row.record_id})" if code else row.record_id
        if row.percent_off is not None:
            yield Found(
                rule=Rule.LARGE_DISCOUNT,
                records=(row.record_id,),
                occurred_at=row.created,
                customer=row.customer,
                money_at_risk=0,
                currency=row.currency or currency,
                reason=said(
                    "Discount %(discount)s takes %(percent)s%% off, above the draft policy's "
                    "maximum of %(maximum)s%% off; a percent discount has no ceiling per "
                    "use, so no amount is counted for it.",
                    discount=discount,
                    percent=row.percent_off,
                    maximum=maximum,
                ),
            )
            continue
        threshold = policy.two_person_threshold[row.currency]
        yield Found(
            rule=Rule.LARGE_DISCOUNT,
            records=(row.record_id,),
            occurred_at=row.created,
            customer=row.customer,
            money_at_risk=row.amount,
            currency=row.currency,
            reason=said(
                "Discount %(discount)s takes %(amount)s off, above the draft policy's "
                "two-person threshold of %(threshold)s: one person could not have approved "
                "it alone.",
                discount=discount,
                amount=Money(row.amount, row.currency),
                threshold=Money(threshold, row.currency),
            ),
        )


def _over_customer_cap(session: Session, scan: HistoryScan, policy: PolicyRules) -> Iterator[Found]:
    cap = policy.per_customer_cap
    if cap is None:
        return
    limit, period = cap.limit, cap.period
    # The guard's cap counts money kinds in the cap's currency (other currencies cannot
    # be added up without a rate), and only a customer's own.
    statement = (
        select(_R.kind, _R.record_id, _R.created, _R.customer, _R.amount)
        .where(
            _of_scan(scan),
            _R.kind.in_(sorted(MONEY_KINDS)),
            _R.amount > 0,
            _R.currency == limit.currency,
            _R.customer.is_not(None),
        )
        .order_by(_R.customer, _R.created, _R.record_id)
    )
    described = describe_period(period)
    trailing: deque[Row[Any]] = deque()
    total = 0
    for row in _stream(session, statement):
        if trailing and trailing[0].customer != row.customer:
            trailing.clear()
            total = 0
        # The guard counts what was done at or after ``now - period``.
        while trailing and trailing[0].created < row.created - period:
            total -= trailing.popleft().amount
        total += row.amount
        trailing.append(row)
        if total <= limit.amount:
            continue
        over = min(row.amount, total - limit.amount)
        yield Found(
            rule=Rule.OVER_CUSTOMER_CAP,
            records=tuple(record.record_id for record in trailing),
            occurred_at=row.created,
            customer=row.customer,
            money_at_risk=over,
            currency=limit.currency,
            reason=said(
                "The %(kind)s %(record)s of %(amount)s brought customer %(customer)s to "
                "%(total)s within %(period)s, above the draft policy's per-customer cap of "
                "%(limit)s: %(over)s of it went over the cap.",
                kind=Code("kind", row.kind),
                record=row.record_id,
                amount=Money(row.amount, limit.currency),
                customer=row.customer,
                total=Money(total, limit.currency),
                period=described,
                limit=limit,
                over=Money(over, limit.currency),
            ),
        )


def _unguarded(session: Session, scan: HistoryScan, currency: str | None) -> Iterator[Found]:
    statement = (
        select(
            _R.kind,
            _R.record_id,
            _R.created,
            _R.customer,
            _R.amount,
            _R.currency,
            _R.caseward_action_id,
            _moved().label("moved"),
            _R.status,
        )
        .where(_in_scan(scan))
        .order_by(_R.created, _R.record_id)
    )
    page: list[Row[Any]] = []
    for row in _stream(session, statement):
        page.append(row)
        if len(page) == BATCH:
            yield from _unguarded_in(session, scan, page, currency)
            page.clear()
    yield from _unguarded_in(session, scan, page, currency)


def _unguarded_in(
    session: Session, scan: HistoryScan, page: Sequence[Row[Any]], currency: str | None
) -> Iterator[Found]:
    """The records of ``page`` that no action of the shop stands behind: one query for
    the whole page's action ids."""
    named = {row.record_id: _action_id(row.caseward_action_id) for row in page}
    wanted = {action_id for action_id in named.values() if action_id is not None}
    ours = (
        set(
            session.scalars(
                select(Action.id).where(Action.shop_id == scan.shop_id, Action.id.in_(wanted))
            )
        )
        if wanted
        else set()
    )
    for row in page:
        if named[row.record_id] in ours:
            continue
        spent = row.currency or currency
        yield Found(
            rule=Rule.UNGUARDED,
            records=(row.record_id,),
            occurred_at=row.created,
            customer=row.customer,
            money_at_risk=(row.amount or 0) if row.moved else 0,
            currency=spent,
            reason=_unguarded_reason(row),
        )


def _action_id(value: str | None) -> uuid.UUID | None:
    if not value:
        return None
    try:
        return uuid.UUID(value)
    except ValueError:
        return None  # not an id Caseward wrote, so no action of ours


def _unguarded_reason(row: Row[Any]) -> Sentence:
    kind = Code("kind", row.kind)
    if not row.moved:
        return said(
            "The %(kind)s %(record)s was tried outside Caseward and the provider reports it "
            "%(status)s, so no money moved; no case or approval in Caseward stood behind it.",
            kind=kind,
            record=row.record_id,
            status=Code("action", row.status),
        )
    if row.caseward_action_id:
        return said(
            "The %(kind)s %(record)s carries Caseward action id %(action_id)s, but this shop "
            "has no such action: no case or approval in Caseward stands behind it.",
            kind=kind,
            record=row.record_id,
            action_id=row.caseward_action_id,
        )
    if row.amount is None or row.currency is None:
        return said(
            "The %(kind)s %(record)s was made outside Caseward: no case or approval in "
            "Caseward stands behind it.",
            kind=kind,
            record=row.record_id,
        )
    return said(
        "The %(kind)s %(record)s of %(amount)s was made outside Caseward: no case or "
        "approval in Caseward stands behind it.",
        kind=kind,
        record=row.record_id,
        amount=Money(row.amount, row.currency),
    )


# ---------------------------------------------------------------- writing


def _write(session: Session, scan: HistoryScan, found: Iterable[Found]) -> int:
    """Insert ``found`` in batches, each finding once; returns how many there were."""
    count = 0
    batch: list[dict[str, Any]] = []
    for finding in found:
        count += 1
        batch.append(
            {
                "id": uuid.uuid4(),
                "scan_id": scan.id,
                "shop_id": scan.shop_id,
                "rule": finding.rule.value,
                "records": list(finding.records),
                "records_key": records_key(finding.records),
                "occurred_at": finding.occurred_at,
                "customer": finding.customer,
                "money_at_risk": finding.money_at_risk,
                "currency": finding.currency.lower() if finding.currency else None,
                "reason": finding.reason.to_dict(),
            }
        )
        if len(batch) == BATCH:
            _insert(session, batch)
            batch = []
    if batch:
        _insert(session, batch)
    return count


def _insert(session: Session, rows: list[dict[str, Any]]) -> None:
    unique = ["scan_id", "rule", "records_key"]
    session.execute(insert_unless_present(session, HistoryFinding, unique), rows)
