"""What counts against the caps is added up by the database, exactly as the guard would
add up every action: the same verdict, the same figures, from one row instead of all of a
customer's (or a shop's) actions."""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from datetime import timedelta

import pytest
from guard_builders import NOW, WRITABLE, payment, propose, usd
from sqlalchemy.orm import Session
from stored_actions import a_case_with_proposal

from app.execution.ledger import actions_around, cap_spending, lookback
from app.execution.models import Action
from app.guard import (
    CapRule,
    CapSpend,
    CheckName,
    InFlightAction,
    InFlightStatus,
    PastAction,
    PolicyRules,
    evaluate,
)
from app.money import Money
from app.shops.models import Shop
from integrations.provider import ActionKind, ProviderStatus

ADA, BEN = "cus_ada", "cus_ben"
IN_FLIGHT = {"queued": InFlightStatus.QUEUED, "needs_decision": InFlightStatus.UNKNOWN}


@dataclass(frozen=True)
class Seeded:
    kind: ActionKind
    target: str
    customer_ref: str | None
    amount: int | None
    currency: str | None
    status: str
    ago: timedelta


DAY = timedelta(days=1)
# The case's customer is Ada. What each counts for, per-customer cap over 30 days and
# per-shop cap over 7, is said beside it.
SEEDED = [
    Seeded(ActionKind.REFUND, "pi_1", ADA, 1_000, "usd", "succeeded", 2 * DAY),  # both
    Seeded(ActionKind.REFUND, "pi_2", ADA, 2_000, "usd", "succeeded", 20 * DAY),  # Ada's
    Seeded(ActionKind.REFUND, "pi_3", ADA, 4_000, "usd", "succeeded", 40 * DAY),  # too old
    Seeded(ActionKind.REFUND, "pi_4", ADA, 500, "usd", "failed", DAY),  # moved nothing
    Seeded(ActionKind.REFUND, "pi_5", ADA, 700, "usd", "queued", 100 * DAY),  # on its way
    Seeded(ActionKind.REFUND, "pi_9", ADA, 600, "usd", "needs_decision", DAY),  # on its way
    Seeded(ActionKind.REFUND, "pi_10", ADA, 100, "usd", "halted", DAY),  # never sent
    Seeded(ActionKind.CUSTOMER_CREDIT, ADA, None, 300, "usd", "succeeded", DAY),  # both
    Seeded(ActionKind.DISCOUNT, ADA, None, 250, "usd", "pending", 3 * DAY),  # both
    Seeded(ActionKind.REFUND, "pi_6", BEN, 900, "usd", "succeeded", DAY),  # the shop's
    Seeded(ActionKind.CUSTOMER_CREDIT, BEN, None, 50, "usd", "queued", DAY),  # the shop's
    Seeded(ActionKind.REFUND, "pi_7", ADA, 800, "eur", "succeeded", DAY),  # not in usd
    Seeded(ActionKind.SUBSCRIPTION_CANCEL, "sub_1", ADA, None, None, "succeeded", DAY),
]
POLICY = PolicyRules(
    per_customer_cap=CapRule(limit=usd(5_000), period=30 * DAY),
    per_shop_cap=CapRule(limit=usd(6_000), period=7 * DAY),
)


def _seed(session: Session, shop: Shop, rows: list[Seeded]) -> list[Action]:
    case, proposal = a_case_with_proposal(session, shop, subject="caps", target="pi_1")
    actions = []
    for revision, row in enumerate(rows, start=1):
        action_id = uuid.uuid4()
        actions.append(
            Action(
                id=action_id,
                shop_id=shop.id,
                case_id=case.id,
                proposal_id=proposal.id,
                proposal_revision=revision,  # one action per revision of a proposal
                digest=proposal.digest,
                kind=row.kind.value,
                provider="stripe",
                target=row.target,
                customer_ref=row.customer_ref,
                amount=row.amount,
                currency=row.currency,
                money_ref=row.target if row.kind is ActionKind.REFUND else None,
                idempotency_key=f"caseward-action-{action_id}",
                status=row.status,
                approval_expires_at=NOW + DAY,
                created_at=NOW - row.ago,
            )
        )
    session.add_all(actions)
    session.flush()
    return actions


def _seed_another_shop(session: Session) -> None:
    """Another shop's action on the same payment for the same customer: never counted."""
    other = Shop(domain=f"other-{uuid.uuid4().hex[:8]}.myshopify.com", name="Other")
    session.add(other)
    session.flush()
    _seed(session, other, [Seeded(ActionKind.REFUND, "pi_1", ADA, 9_999, "usd", "queued", DAY)])


def _as_the_guard_reads(actions: list[Action]) -> tuple[list[InFlightAction], list[PastAction]]:
    """Every action, one by one, as the guard was handed them before the sums."""
    in_flight, history = [], []
    for action in actions:
        amount = None if action.amount is None else Money(action.amount, str(action.currency))
        if action.status in IN_FLIGHT:
            in_flight.append(
                InFlightAction(
                    str(action.id),
                    ActionKind(action.kind),
                    action.target,
                    action.customer_ref,
                    amount,
                    IN_FLIGHT[action.status],
                )
            )
        elif action.status in ("succeeded", "pending", "failed") and amount is not None:
            history.append(
                PastAction(
                    str(action.id),
                    ActionKind(action.kind),
                    action.target,
                    action.customer_ref,
                    amount,
                    ProviderStatus(action.status),
                    action.created_at,
                )
            )
    return in_flight, history


@pytest.fixture
def shop(session: Session) -> Shop:
    made = Shop(domain=f"caps-{uuid.uuid4().hex[:8]}.myshopify.com", name="Caps")
    session.add(made)
    session.flush()
    return made


def test_the_database_adds_up_each_cap_as_the_guard_does_one_by_one(
    session: Session, shop: Shop
) -> None:
    actions = _seed(session, shop, SEEDED)
    _seed_another_shop(session)
    # The action being checked, still queued: never counted against itself.
    (own,) = _seed(
        session, shop, [Seeded(ActionKind.REFUND, "pi_8", ADA, 1_500, "usd", "queued", DAY)]
    )

    spending = cap_spending(
        session, shop.id, policy=POLICY, customer=ADA, own_action_id=own.id, now=NOW
    )

    assert spending.customer == CapSpend(done=1_000 + 2_000 + 300 + 250, in_flight=700 + 600)
    assert spending.shop == CapSpend(done=1_000 + 300 + 250 + 900, in_flight=700 + 600 + 50)

    proposal = propose(amount=usd(1_500), target="pi_8", proposal_id=str(own.id), money_ref="pi_8")
    facts = payment(9_600, id="pi_8")
    in_flight, history = _as_the_guard_reads(actions)
    one_by_one = evaluate(
        proposal,
        facts,
        policy=POLICY,
        switches=WRITABLE,
        in_flight=in_flight,
        history=history,
        now=NOW,
    )
    around = actions_around(
        session,
        shop.id,
        target="pi_8",
        money_ref="pi_8",
        since=NOW - lookback(POLICY),
        own_action_id=own.id,
    )
    summed = evaluate(
        proposal,
        facts,
        policy=POLICY,
        switches=WRITABLE,
        in_flight=around[0],
        history=around[1],
        spending=spending,
        now=NOW,
    )

    caps = (CheckName.CUSTOMER_CAP, CheckName.SHOP_CAP)
    assert [c for c in one_by_one.checks if c.name in caps] == [
        c for c in summed.checks if c.name in caps
    ]
    # Ada's 3,550 done and 1,300 on its way leave room for 150 of the 1,500 asked.
    assert not {c.name for c in summed.failed} - set(caps)
    assert {c.name for c in summed.failed} == {CheckName.CUSTOMER_CAP}


def test_no_cap_set_or_no_customer_to_count_leaves_nothing_to_add_up(
    session: Session, shop: Shop
) -> None:
    _seed(session, shop, SEEDED)
    assert (
        cap_spending(
            session, shop.id, policy=PolicyRules(), customer=ADA, own_action_id=None, now=NOW
        ).customer
        is None
    )
    only_customer_cap = PolicyRules(per_customer_cap=POLICY.per_customer_cap)
    no_customer = cap_spending(
        session, shop.id, policy=only_customer_cap, customer=None, own_action_id=None, now=NOW
    )
    assert no_customer.customer is None and no_customer.shop is None


def test_the_actions_around_a_payment_are_ours_on_it_or_its_money_never_the_one_checked(
    session: Session, shop: Shop
) -> None:
    actions = _seed(session, shop, SEEDED)
    _seed_another_shop(session)
    by_target = {action.target: action for action in actions}

    def around(
        target: str, money_ref: str | None = None, own: Action | None = None
    ) -> tuple[list[str], list[str]]:
        in_flight, history = actions_around(
            session,
            shop.id,
            target=target,
            money_ref=money_ref,
            since=NOW - 30 * DAY,
            own_action_id=None if own is None else own.id,
        )
        return [a.target for a in in_flight], [a.target for a in history]

    # Reported within the window; not another shop's action on the same payment.
    assert around("pi_1") == ([], ["pi_1"])
    # In flight, however old; reported before the window, or halted unsent: not counted.
    assert around("pi_5") == (["pi_5"], [])
    assert around("pi_3") == ([], [])
    assert around("pi_10") == ([], [])
    # Found by the money it moved as well as by its target.
    assert around("re_elsewhere", money_ref="pi_2") == ([], ["pi_2"])
    assert around("pi_9", money_ref="pi_2") == (["pi_9"], ["pi_2"])
    # Never the action being checked.
    assert around("pi_1", own=by_target["pi_1"]) == ([], [])
    assert around("pi_9", money_ref="pi_2", own=by_target["pi_9"]) == ([], ["pi_2"])
