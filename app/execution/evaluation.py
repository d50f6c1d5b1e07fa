"""Gather everything the guard needs for one proposed action, then ask it.

Used when a proposal is made or edited, when it is approved, and by the worker
right before the provider call. Order matters: our own actions are read before
the provider's facts, so an action of ours that finishes in between is either
still in our snapshot (counted once, matched by metadata against the provider's
list) or already visible in the facts read after it. A refund's money (the payment
behind it) selects our actions to count, so it must be known before they are read:

- a new or edited proposal reads the order first of all (from the provider itself when
  the provider is the store) to learn it, then our actions, then the facts;
- an approved action was stored with its money (and the executor holds the lock on
  it), so our actions are read first and the facts after; a store (Shopify) gives the
  order and the payment in that one read (``PaymentFacts.order``). Should the fresh
  order name other money than the action's, the proposal's sequence runs instead.

An order's per-line figures are never taken as lower than our own record of refunded
lines.
"""

from __future__ import annotations

import re
import uuid
from collections.abc import Mapping
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Any

from sqlalchemy import Row, Uuid, bindparam, select
from sqlalchemy.orm import Session

from app.cases.models import Case, Customer, Order
from app.execution.ledger import actions_around, cap_spending, customer_record, lookback
from app.execution.models import Action, ActionStatus
from app.guard import (
    SIGNAL_KINDS,
    ClaimCoverage,
    CustomerRecord,
    GuardInputs,
    IdentityLevel,
    LineItemRef,
    PolicyRules,
    ProposedAction,
    Verdict,
    evaluate,
)
from app.money import Money
from app.shops.models import Shop
from app.shops.service import shop_switches
from integrations.provider import (
    ActionKind,
    OrderFacts,
    OrderLine,
    OrderSource,
    PaymentFacts,
    ProviderAdapter,
    TargetFacts,
)


@dataclass(frozen=True)
class Draft:
    """The reviewable content of a proposal or action."""

    kind: ActionKind
    provider: str
    target: str
    customer_ref: str | None
    amount: int | None
    currency: str | None
    line_items: tuple[LineItemRef, ...]
    params: dict[str, object]
    reason: str | None
    # A drafter's proposal: the customer's claim beside what it covers (within_claim).
    claim: ClaimCoverage | None = None


@dataclass(frozen=True)
class Evaluation:
    verdict: Verdict
    facts: TargetFacts
    # The case's customer at the provider, which the checks bound the action to.
    case_customer: str | None
    # What the checks were asked with, kept with the proposal to replay them later.
    inputs: GuardInputs
    # The money a refund gives back (see ProposedAction.money_ref); None for other kinds.
    money_ref: str | None = None


def evaluate_draft(
    session: Session,
    *,
    shop: Shop,
    case: Case,
    draft: Draft,
    proposed_by: str,
    policy: PolicyRules,
    adapter: ProviderAdapter,
    now: datetime,
    own_action_id: uuid.UUID | None = None,
    approved_money: str | None = None,
    with_signals: bool = True,
) -> Evaluation:
    """``own_action_id``: when re-checking an approved action, so it is not counted
    against itself, and so its own write, if it already landed, is recognised.
    ``approved_money``: that action's stored ``money_ref``, so its order need not be read
    before our actions (see the module docstring). ``with_signals``: False where only
    blocking checks matter (the executor's re-check: a signal asks for a person, who has
    already decided), which spares the reads of the customer's record.

    The customer is the case's, read afresh here: whoever the proposal names, the
    checks compare the target's owner with the case's customer at the provider."""
    case_customer = case_customer_at(session, case, draft.provider)
    if approved_money is None or draft.kind != ActionKind.REFUND:
        order = _order_for(session, shop.id, draft, adapter)
        money_ref = money_of(draft, order)
    else:
        money_ref = approved_money
    in_flight, history = actions_around(
        session,
        shop.id,
        target=draft.target,
        money_ref=money_ref,
        since=now - lookback(policy),
        own_action_id=own_action_id,
    )
    spending = cap_spending(
        session,
        shop.id,
        policy=policy,
        customer=case_customer,
        own_action_id=own_action_id,
        now=now,
    )
    record = (
        _record_for_signals(session, shop.id, case, draft.kind, own_action_id, now)
        if with_signals
        else None
    )
    facts = adapter.facts(draft.kind, draft.target)
    if approved_money is not None and draft.kind == ActionKind.REFUND:
        order = _order_for(session, shop.id, draft, adapter, read_with=facts)
        if money_of(draft, order) != approved_money:
            return evaluate_draft(
                session,
                shop=shop,
                case=case,
                draft=draft,
                proposed_by=proposed_by,
                policy=policy,
                adapter=adapter,
                now=now,
                own_action_id=own_action_id,
                with_signals=with_signals,
            )
    proposal = ProposedAction(
        kind=draft.kind,
        provider=draft.provider,
        target=draft.target,
        customer_ref=draft.customer_ref,
        amount=Money(draft.amount, draft.currency)
        if draft.amount is not None and draft.currency
        else None,
        case_customer=case_customer,
        line_items=draft.line_items,
        params=draft.params,
        identity_level=IdentityLevel(case.identity_level),
        proposed_by=proposed_by,
        proposal_id=str(own_action_id) if own_action_id else None,
        money_ref=money_ref,
        claim=draft.claim,
    )
    verdict = evaluate(
        proposal,
        facts,
        policy=policy,
        switches=shop_switches(shop),
        in_flight=in_flight,
        history=history,
        order=order,
        spending=spending,
        record=record,
        now=now,
    )
    inputs = GuardInputs(
        proposal=proposal,
        facts=facts,
        in_flight=tuple(in_flight),
        history=tuple(history),
        order=order,
        spending=spending,
        now=now,
        record=record,
    )
    return Evaluation(
        verdict=verdict,
        facts=facts,
        case_customer=case_customer,
        inputs=inputs,
        money_ref=money_ref,
    )


def money_of(draft: Draft, order: OrderFacts | None) -> str | None:
    """The money a refund gives back: the Stripe payment behind the order when there is
    one, else the refund's own target. Not a refund: None."""
    if draft.kind != ActionKind.REFUND:
        return None
    if order is not None and order.payment_id:
        return order.payment_id
    return draft.target


def _record_for_signals(
    session: Session,
    shop_id: uuid.UUID,
    case: Case,
    kind: ActionKind,
    own_action_id: uuid.UUID | None,
    now: datetime,
) -> CustomerRecord | None:
    """What the abuse signals read of the case's customer, and whether the case's request
    says an order never arrived; None where no signal runs (not a refund or a credit, or
    no customer on the case)."""
    customer = (
        session.get(Customer, case.customer_id)
        if kind in SIGNAL_KINDS and case.customer_id is not None
        else None
    )
    if customer is None:
        return None
    record = customer_record(session, shop_id, customer, own_action_id=own_action_id, now=now)
    return replace(record, says_not_received=says_not_received(case.request_text))


# What a customer writes of an order that never came, in the chat's languages. Read from
# the case's request, whoever proposes: a signal only asks a person to look, so words
# that merely look like it cost a look, never a refusal.
_NOT_RECEIVED = re.compile(
    r"\b(?:never (?:arrived|came|showed up|turned up|got (?:it|them|my)|received|reached)"
    r"|(?:did ?n['\u2019]?t|did not|has ?n['\u2019]?t|has not|have ?n['\u2019]?t|have not"
    r"|still not|not yet) "
    r"(?:arrived?|c[oa]me|received?|got(?:ten)?|get|been delivered|shown up|show(?:ed)? up)"
    r"|not (?:been )?(?:received|delivered)|lost in (?:the )?(?:post|mail|transit)"
    r"|jamais (?:re[çc]u|arriv[ée]e?s?|été livr[ée]e?s?)|pas (?:re[çc]u|arriv[ée]e?s?|été livr)"
    r"|nie (?:angekommen|erhalten|bekommen|geliefert)"
    r"|nicht (?:angekommen|erhalten|bekommen|geliefert)"
    r"|nunca (?:lleg[óo]|recib[íi]|ha llegado)"
    r"|no (?:me )?(?:ha llegado|lleg[óo]|he recibido|recib[íi])"
    r"|mai (?:arrivat|ricevut)\w*|non (?:(?:è|e|sono) )?(?:mai )?(?:arrivat|ricevut)\w*"
    r"|non ho (?:mai )?ricevut\w*"
    r"|nooit (?:aangekomen|ontvangen|gekregen|bezorgd)"
    r"|niet (?:aangekomen|ontvangen|gekregen|bezorgd))\b"
    r"|届いていない|届いてない|届かない|届きません|受け取っていない|受け取ってない",
    re.IGNORECASE,
)


def says_not_received(request: str) -> bool:
    """Whether the customer's request says an order never arrived."""
    return _NOT_RECEIVED.search(request) is not None


def case_customer_at(session: Session, case: Case, provider: str) -> str | None:
    """The case's customer as ``provider`` knows them, or None when there is no link."""
    if case.customer_id is None:
        return None
    customer = session.get(Customer, case.customer_id)
    return customer.identity_at(provider) if customer is not None else None


# The order our copy says the payment paid. One payment should pay one order; where our
# records say otherwise (the case file shows it as a conflict), the oldest order bounds the
# lines. Built once, at import, as the checks run it on every refund; the shop's parameter
# is typed by hand (see ``executor._LOCKED_ACTION``).
_ORDER_PAID_BY = (
    select(Order)
    .where(
        Order.shop_id == bindparam("shop_id", type_=Uuid),
        Order.payment_id == bindparam("payment_id"),
    )
    .order_by(Order.created_at, Order.id)
    .limit(1)
)


def _order_for(
    session: Session,
    shop_id: uuid.UUID,
    draft: Draft,
    adapter: ProviderAdapter,
    read_with: TargetFacts | None = None,
) -> OrderFacts | None:
    """The store order behind a refunded payment, with what each line already got back:
    read fresh from a provider that is the store (Shopify), or taken from facts it
    ``read_with`` the order, else from our copy of the order paid by the target payment,
    with our refunds of each line."""
    if draft.kind != ActionKind.REFUND:
        return None
    if isinstance(read_with, PaymentFacts) and read_with.order is not None:
        return read_with.order
    if isinstance(adapter, OrderSource):
        if isinstance(read_with, PaymentFacts) and not read_with.exists:
            return None
        return adapter.order(draft.target)
    order = session.scalars(
        _ORDER_PAID_BY, {"shop_id": shop_id, "payment_id": draft.target}
    ).first()
    if order is None:
        return None
    refunded_by_line: dict[str, int] = {}
    # Only a line-item refund is bounded per line; every other refund skips this read.
    done = (
        session.scalars(
            select(Action).where(
                Action.shop_id == shop_id,
                Action.target == draft.target,
                Action.status.in_(ActionStatus.PROVIDER_OPEN),
            )
        )
        if draft.line_items
        else ()
    )
    for action in done:
        for item in action.line_items:
            line_id = str(item["line_id"])
            refunded_by_line[line_id] = refunded_by_line.get(line_id, 0) + int(item["amount"])
    return stored_order_facts(order, refunded_by_line)


def stored_order_facts(order: Order | Row[Any], refunded_by_line: Mapping[str, int]) -> OrderFacts:
    """Our copy of an order (its row, or a read of its columns) as the guard reads it, each
    line less what ``refunded_by_line`` says our refunds gave back of it."""
    return OrderFacts(
        id=str(order.id),
        name=order.name,
        currency=order.currency,
        payment_id=order.payment_id,
        lines=tuple(
            OrderLine(
                id=str(line["id"]),
                title=str(line["title"]),
                quantity=int(line["quantity"]),
                paid=int(line["paid"]),
                refunded=refunded_by_line.get(str(line["id"]), 0),
            )
            for line in order.lines
        ),
        fulfilled_at=order.fulfilled_at,
        delivered_at=order.delivered_at,
        total=order.total,
    )


def line_item_rows(items: tuple[LineItemRef, ...]) -> list[dict[str, object]]:
    """Line items as stored on a proposal or action; the quantity only where it is given."""
    return [
        {"line_id": item.line_id, "amount": item.amount_minor}
        | ({} if item.quantity is None else {"quantity": item.quantity})
        for item in items
    ]
