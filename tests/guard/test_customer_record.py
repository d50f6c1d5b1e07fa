"""What the abuse signals read of a customer comes from Caseward's own records: their orders,
our refunds and credits to them that moved money or are on their way within 90 days (never
the proposal's own action), the other customers refunded under the same mailbox, and how
many of the shop's actions the provider reported."""

from __future__ import annotations

import uuid
from datetime import timedelta

import pytest
from guard_builders import NOW
from sqlalchemy.orm import Session

from app.cases.models import Case, Customer, Order
from app.cases.proposals import Proposal
from app.execution.evaluation import says_not_received
from app.execution.ledger import customer_record
from app.execution.models import Action
from app.shops.models import Shop

DAY = timedelta(days=1)


@pytest.fixture
def shop(session: Session) -> Shop:
    made = Shop(domain=f"signals-{uuid.uuid4().hex[:8]}.myshopify.com", name="Signals")
    session.add(made)
    session.flush()
    return made


def a_customer(session: Session, shop: Shop, email: str | None) -> Customer:
    customer = Customer(shop_id=shop.id, email=email, name=email)
    session.add(customer)
    session.flush()
    return customer


def an_order(session: Session, customer: Customer, total: int, currency: str, ago: int) -> None:
    session.add(
        Order(
            shop_id=customer.shop_id,
            customer_id=customer.id,
            name=f"#{uuid.uuid4().hex[:6]}",
            currency=currency,
            total=total,
            payment_provider="stripe",
            created_at=NOW - ago * DAY,
        )
    )
    session.flush()


def actions(
    session: Session, customer: Customer, *rows: tuple[str, int, str, str, int]
) -> list[Action]:
    """``rows`` of (kind, amount, currency, status, days ago), on one case of ``customer``."""
    case = Case(shop_id=customer.shop_id, customer_id=customer.id, subject="signals")
    session.add(case)
    session.flush()
    proposal = Proposal(
        shop_id=case.shop_id,
        case_id=case.id,
        kind="refund",
        provider="stripe",
        target="pi_1",
        amount=100,
        currency="usd",
        proposed_by="1001",
        status="approved",
        verdict={},
        policy_version=1,
        digest="0" * 64,
    )
    session.add(proposal)
    session.flush()
    made = []
    for revision, (kind, amount, currency, status, ago) in enumerate(rows, start=1):
        action_id = uuid.uuid4()
        made.append(
            Action(
                id=action_id,
                shop_id=case.shop_id,
                case_id=case.id,
                proposal_id=proposal.id,
                proposal_revision=revision,
                digest=proposal.digest,
                kind=kind,
                provider="stripe",
                target=f"pi_{revision}",
                amount=amount,
                currency=currency,
                idempotency_key=f"caseward-action-{action_id}",
                status=status,
                approval_expires_at=NOW + DAY,
                created_at=NOW - ago * DAY,
            )
        )
    session.add_all(made)
    session.flush()
    return made


def test_the_record_counts_the_customers_orders_and_the_money_they_got_back(
    session: Session, shop: Shop
) -> None:
    ada = a_customer(session, shop, "ada@example.com")
    an_order(session, ada, 9600, "usd", ago=200)
    an_order(session, ada, 4800, "usd", ago=10)
    an_order(session, ada, 3000, "eur", ago=5)
    *_, own = actions(
        session,
        ada,
        ("refund", 4800, "usd", "succeeded", 10),  # counted
        ("customer_credit", 2000, "usd", "queued", 1),  # on its way: counted
        ("refund", 1500, "eur", "pending", 3),  # counted, in euros
        ("refund", 700, "usd", "failed", 2),  # moved nothing
        ("refund", 900, "usd", "halted", 2),  # never sent
        ("refund", 1200, "usd", "succeeded", 91),  # before the 90 days
        ("discount", 500, "usd", "succeeded", 2),  # not money back
        ("refund", 3000, "usd", "queued", 0),  # the proposal's own action
    )
    ben = a_customer(session, shop, "ben@example.com")
    actions(session, ben, ("refund", 100, "usd", "succeeded", 1))

    record = customer_record(session, shop.id, ada, own_action_id=own.id, now=NOW)

    assert (record.orders, record.first_order_at) == (3, NOW - 200 * DAY)
    assert dict(record.spend) == {"usd": 14_400, "eur": 3000}
    assert record.claims == 3
    assert dict(record.refunded) == {"usd": 6800, "eur": 1500}
    # Reported by the provider within 90 days, any customer, failed ones too.
    assert record.shop_actions == 5
    assert record.sharing_email == () and not record.says_not_received


def test_customers_refunded_under_the_same_mailbox_are_named(session: Session, shop: Shop) -> None:
    ada = a_customer(session, shop, "Ada.Lin+shop@gmail.com")
    same = [
        a_customer(session, shop, "adalin@googlemail.com"),
        a_customer(session, shop, "ADA.LIN@gmail.com"),
    ]
    others = [
        a_customer(session, shop, "adalin2@gmail.com"),  # another mailbox
        a_customer(session, shop, "ada.lin@example.com"),  # another domain
    ]
    quiet = a_customer(session, shop, "a.dalin@gmail.com")  # the same, never refunded
    for customer in [*same, *others]:
        actions(session, customer, ("refund", 500, "usd", "succeeded", 3))
    actions(session, quiet, ("refund", 500, "usd", "failed", 3))
    old = a_customer(session, shop, "adalin+old@gmail.com")
    actions(session, old, ("refund", 500, "usd", "succeeded", 100))

    record = customer_record(session, shop.id, ada, own_action_id=None, now=NOW)

    assert record.sharing_email == tuple(sorted(str(customer.id) for customer in same))


def test_a_plus_tag_reaches_the_same_mailbox_on_any_domain(session: Session, shop: Shop) -> None:
    ben = a_customer(session, shop, "ben@linen.example")
    tagged = a_customer(session, shop, "Ben+returns@Linen.Example")
    dotted = a_customer(session, shop, "b.en@linen.example")  # dots count outside Gmail
    for customer in (tagged, dotted):
        actions(session, customer, ("customer_credit", 500, "usd", "succeeded", 3))

    record = customer_record(session, shop.id, ben, own_action_id=None, now=NOW)

    assert record.sharing_email == (str(tagged.id),)


def test_a_customer_without_an_email_shares_none(session: Session, shop: Shop) -> None:
    nobody = a_customer(session, shop, None)
    actions(session, a_customer(session, shop, None), ("refund", 500, "usd", "succeeded", 3))

    assert (
        customer_record(session, shop.id, nobody, own_action_id=None, now=NOW).sharing_email == ()
    )


@pytest.mark.parametrize(
    "request_text",
    [
        "My order #1002 never arrived.",
        "It hasn\u2019t arrived yet and tracking says delivered",
        "I did not receive the parcel",
        "Je n'ai jamais reçu ma commande.",
        "Das Paket ist nie angekommen.",
        "Mi pedido nunca llegó.",
        "Il pacco non è mai arrivato.",
        "Mijn bestelling is niet aangekomen.",
        "注文した商品が届いていないです。",
    ],
)
def test_a_request_saying_an_order_never_arrived_is_read_as_such(request_text: str) -> None:
    assert says_not_received(request_text)


@pytest.mark.parametrize(
    "request_text",
    [
        "One of the two linen aprons from order #1001 arrived with a torn seam.",
        "Where is my order? I would like to know when it arrives.",
        "",
    ],
)
def test_other_requests_are_not(request_text: str) -> None:
    assert not says_not_received(request_text)
