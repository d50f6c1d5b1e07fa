"""Small builders for guard tests: the linen shop's $96 order of two $48 aprons, and friends."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from datetime import UTC, datetime, timedelta

from app.guard import (
    IdentityLevel,
    InFlightAction,
    InFlightStatus,
    LineItemRef,
    PastAction,
    PolicyRules,
    ProposedAction,
    ShopSwitches,
    Verdict,
    evaluate,
)
from app.money import Money
from integrations.provider import (
    ACTION_ID_METADATA_KEY,
    ActionKind,
    CustomerFacts,
    OrderFacts,
    OrderLine,
    PaymentFacts,
    ProviderCredit,
    ProviderDiscount,
    ProviderRefund,
    ProviderStatus,
    TargetFacts,
)

NOW = datetime(2026, 3, 10, 12, 0, tzinfo=UTC)
WRITABLE = ShopSwitches(writes_enabled=True)
PAYMENT = "pi_linen"
CUSTOMER = "cus_ada"


def usd(minor: int) -> Money:
    return Money(minor, "usd")


def payment(
    captured: int = 9600,
    *,
    currency: str = "usd",
    refunds: Iterable[ProviderRefund] = (),
    disputed: bool = False,
    customer_id: str | None = CUSTOMER,
    exists: bool = True,
    id: str = PAYMENT,
) -> PaymentFacts:
    return PaymentFacts(
        id=id,
        exists=exists,
        currency=currency,
        amount=captured,
        captured=captured,
        paid=captured > 0,
        disputed=disputed,
        customer_id=customer_id,
        created=NOW - timedelta(days=10),
        refunds=tuple(refunds),
    )


def provider_refund(
    id: str,
    amount: int,
    *,
    status: ProviderStatus = ProviderStatus.SUCCEEDED,
    ago: timedelta = timedelta(hours=1),
    action_id: str | None = None,
    currency: str = "usd",
) -> ProviderRefund:
    metadata = {} if action_id is None else {ACTION_ID_METADATA_KEY: action_id}
    return ProviderRefund(id, amount, currency, status, NOW - ago, metadata)


def aprons(
    refunded: tuple[int, int] = (0, 0),
    *,
    currency: str = "usd",
    delivered_ago: timedelta | None = timedelta(days=3),
    fulfilled_ago: timedelta | None = timedelta(days=5),
    payment_id: str | None = PAYMENT,
) -> OrderFacts:
    return OrderFacts(
        id="gid://shopify/Order/1001",
        name="#1001",
        currency=currency,
        payment_id=payment_id,
        lines=(
            OrderLine("apron-1", "Linen apron", 1, 4800, refunded[0]),
            OrderLine("apron-2", "Linen apron", 1, 4800, refunded[1]),
        ),
        fulfilled_at=None if fulfilled_ago is None else NOW - fulfilled_ago,
        delivered_at=None if delivered_ago is None else NOW - delivered_ago,
    )


def customer(
    *,
    id: str = CUSTOMER,
    exists: bool = True,
    deleted: bool = False,
    balance_currency: str | None = "usd",
    credits: Iterable[ProviderCredit] = (),
    discounts: Iterable[ProviderDiscount] = (),
) -> CustomerFacts:
    return CustomerFacts(
        id=id,
        exists=exists,
        deleted=deleted,
        email="ada@example.com",
        balance_currency=balance_currency,
        credits=tuple(credits),
        discounts=tuple(discounts),
    )


def propose(
    kind: ActionKind = ActionKind.REFUND,
    amount: Money | None = None,
    *,
    target: str = PAYMENT,
    lines: Iterable[tuple[str, int]] = (),
    params: Mapping[str, object] | None = None,
    identity: IdentityLevel = IdentityLevel.STRONG,
    customer_ref: str | None = CUSTOMER,
    case_customer: str | None = CUSTOMER,
    proposal_id: str | None = None,
    provider: str = "stripe",
    money_ref: str | None = None,
) -> ProposedAction:
    return ProposedAction(
        kind=kind,
        target=target,
        amount=amount,
        identity_level=identity,
        proposed_by="agent:claude",
        customer_ref=customer_ref,
        case_customer=case_customer,
        line_items=tuple(LineItemRef(line, minor) for line, minor in lines),
        params=params or {},
        proposal_id=proposal_id,
        provider=provider,
        money_ref=money_ref,
    )


def in_flight(
    action_id: str,
    amount: Money | None,
    *,
    kind: ActionKind = ActionKind.REFUND,
    target: str = PAYMENT,
    customer_ref: str | None = CUSTOMER,
    status: InFlightStatus = InFlightStatus.QUEUED,
    lines: Iterable[tuple[str, int]] = (),
    provider: str = "stripe",
    money_ref: str | None = None,
) -> InFlightAction:
    return InFlightAction(
        action_id=action_id,
        kind=kind,
        target=target,
        customer_ref=customer_ref,
        amount=amount,
        status=status,
        line_items=tuple(LineItemRef(line, minor) for line, minor in lines),
        provider=provider,
        money_ref=money_ref,
    )


def past(
    action_id: str,
    amount: Money,
    *,
    kind: ActionKind = ActionKind.REFUND,
    target: str = PAYMENT,
    customer_ref: str | None = CUSTOMER,
    status: ProviderStatus = ProviderStatus.SUCCEEDED,
    ago: timedelta = timedelta(hours=2),
    lines: Iterable[tuple[str, int]] = (),
    provider: str = "stripe",
    money_ref: str | None = None,
) -> PastAction:
    return PastAction(
        action_id=action_id,
        kind=kind,
        target=target,
        customer_ref=customer_ref,
        amount=amount,
        status=status,
        created_at=NOW - ago,
        line_items=tuple(LineItemRef(line, minor) for line, minor in lines),
        provider=provider,
        money_ref=money_ref,
    )


def check(
    proposal: ProposedAction,
    facts: TargetFacts,
    *,
    policy: PolicyRules | None = None,
    switches: ShopSwitches = WRITABLE,
    in_flight: Iterable[InFlightAction] = (),
    history: Iterable[PastAction] = (),
    order: OrderFacts | None = None,
    now: datetime = NOW,
) -> Verdict:
    return evaluate(
        proposal,
        facts,
        policy=policy or PolicyRules(),
        switches=switches,
        in_flight=in_flight,
        history=history,
        order=order,
        now=now,
    )


def failed_names(verdict: Verdict) -> list[str]:
    return [str(check.name) for check in verdict.failed]
