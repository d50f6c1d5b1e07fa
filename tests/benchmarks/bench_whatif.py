"""Benchmark: the policy what-if over a shop's last 90 days of 10,000 past actions.

    make bench   (or: .venv/bin/python tests/benchmarks/bench_whatif.py [--actions 10000])

On a database of its own (PostgreSQL from ``DATABASE_URL``, else SQLite), a shop's past is
seeded over 90 days, as the what-if meets it after months of use: ``--actions`` past
actions, half of them proposals that kept the inputs of their checks (each with a case and
its customer, one in three approved and refunded at the provider), a fifth older proposals
without them (each paying an order of ours), and the rest money moved outside Caseward as
the history check read it, over 2,000 customers. The owner then asks what a stricter
policy (a lower ceiling, a lower two-person threshold, a per-customer cap) would have
done, as the API asks it. It prints, over ``--runs`` runs, the median and slowest time of
the what-if, of its reads and of its replay (timed apart in each run), the SQL statements one
what-if sends (the past is read in a fixed number of them, whatever its size), and the
machine's speed before and after (a loop of 1,000 additions).
"""

from __future__ import annotations

import argparse
import statistics
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime, timedelta
from typing import Any

from bench_money_path import database
from benchmarks.figures import loop_microseconds, record
from sqlalchemy import Engine, event, insert
from sqlalchemy.orm import Session

from app.actors import Surface, staff
from app.clock import utcnow
from app.db import make_engine, make_session_factory
from app.execution.ledger import lookback
from app.guard import GuardInputs, IdentityLevel, ProposedAction
from app.history_audit.models import ScanStatus
from app.migrations import upgrade
from app.models import (
    Action,
    Case,
    Customer,
    HistoryRecord,
    HistoryScan,
    Order,
    Proposal,
    Shop,
    StaffMember,
)
from app.money import Money
from app.shops.models import StaffRole
from app.shops.service import current_policy, save_policy
from app.whatif import WINDOW, what_if
from app.whatif.past import read_past
from app.whatif.read_only import read_only
from app.whatif.replay import replay
from app.whatif.service import candidate_policy
from integrations.provider import ActionKind, PaymentFacts

OWNER = "bench.owner"
CUSTOMERS = 2000
CURRENT = {"auto_approve_ceiling": {"usd": 5000}, "two_person_threshold": {"usd": 20000}}
CANDIDATE = {
    "auto_approve_ceiling": {"usd": 2000},
    "two_person_threshold": {"usd": 10000},
    "per_customer_cap": {"amount": 15000, "currency": "usd", "period_seconds": 30 * 86400},
}
# What a past action is, in turn: 5 of 10 kept their inputs, 2 older ones did not, 3 were
# made outside Caseward.
MIX = ("kept",) * 5 + ("older",) * 2 + ("outside",) * 3


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--actions", type=int, default=10_000, help="past actions seeded")
    parser.add_argument("--runs", type=int, default=5, help="what-ifs timed")
    args = parser.parse_args()
    with database() as url:
        upgrade(url)
        engine = make_engine(url)
        factory = make_session_factory(engine)
        with factory() as session:
            shop_id = seed(session, args.actions, utcnow())
        print(
            f"database: {engine.dialect.name}; {args.actions} past actions over 90 days; "
            f"a loop of 1,000 additions: {loop_microseconds():.0f} µs\n"
        )
        kept = figures(engine, factory(), shop_id, args.runs)
        print(f"a loop of 1,000 additions after: {loop_microseconds():.0f} µs")
        engine.dispose()
    record("whatif", {"database": engine.dialect.name, "past_actions": args.actions} | kept)


def figures(engine: Engine, session: Session, shop_id: uuid.UUID, runs: int) -> dict[str, Any]:
    """The what-if ``runs`` times as :func:`app.whatif.what_if` runs it, its reads and its
    replay timed apart; then once through :func:`what_if` itself, its statements counted."""
    reads, replays = [], []
    for _ in range(runs):
        now = utcnow()
        started = time.perf_counter()
        with read_only(engine) as reading:
            current = current_policy(reading, shop_id)
            candidate = candidate_policy(CANDIDATE, current)
            reach = now - WINDOW - max(lookback(current), lookback(candidate))
            past = read_past(reading, shop_id, since=now - WINDOW, now=now, reach=reach)
        read = time.perf_counter()
        replay(past, current=current, candidate=candidate, since=now - WINDOW, until=now, shown=100)
        reads.append(read - started)
        replays.append(time.perf_counter() - read)
    with counted(engine) as statements:
        owner = staff(OWNER, Surface.STAFF_API)
        result = what_if(session, shop_id=shop_id, actor=owner, rules=CANDIDATE, now=utcnow())
    counts = ", ".join(f"{change.value} {count}" for change, count in result.counts.items())
    print(f"replayed {result.replayed} ({result.reconstructed} reconstructed): {counts}")
    wholes = [read + replayed for read, replayed in zip(reads, replays, strict=True)]
    for name, samples in (("the what-if", wholes), ("  reading", reads), ("  replaying", replays)):
        print(
            f"{name:<12} median {statistics.median(samples):6.2f} s, slowest {max(samples):6.2f} s"
        )
    print(f"SQL statements per what-if: {len(statements)}")
    return {
        "median_seconds": round(statistics.median(wholes), 2),
        "reading_median_seconds": round(statistics.median(reads), 2),
        "replaying_median_seconds": round(statistics.median(replays), 2),
        "statements": len(statements),
    }


@contextmanager
def counted(engine: Engine) -> Iterator[list[str]]:
    """Every statement ``engine`` sends meanwhile."""
    sent: list[str] = []

    def count(*args: Any) -> None:
        sent.append(args[2])

    event.listen(engine, "before_cursor_execute", count)
    try:
        yield sent
    finally:
        event.remove(engine, "before_cursor_execute", count)


def seed(session: Session, actions: int, now: datetime) -> uuid.UUID:
    """The shop, its owner, its policy, and ``actions`` past actions over 90 days."""
    shop = Shop(domain="bench-whatif.myshopify.com", name="Bench", writes_enabled=True)
    session.add(shop)
    session.flush()
    session.add(StaffMember(shop_id=shop.id, user_id=OWNER, role=StaffRole.OWNER))
    session.flush()
    save_policy(session, shop=shop, actor=staff(OWNER, Surface.CONSOLE), rules=CURRENT, now=now)
    customers = [uuid.uuid4() for _ in range(CUSTOMERS)]
    session.execute(
        insert(Customer),
        [
            {"id": c, "shop_id": shop.id, "stripe_customer_id": f"cus_{n}"}
            for n, c in enumerate(customers)
        ],
    )
    scan = HistoryScan(
        shop_id=shop.id,
        provider="stripe",
        status=ScanStatus.DONE,
        window_days=120,
        since=now - timedelta(days=120),
        requested_by=OWNER,
    )
    session.add(scan)
    session.flush()
    rows: dict[type, list[dict[str, Any]]] = {Case: [], Proposal: [], Order: [], Action: []}
    records = []
    for number in range(actions):
        at = now - WINDOW * (number + 0.5) / actions
        customer = number % CUSTOMERS
        amount = 500 + (number * 37) % 24_500
        payment = f"pi_{number}"
        match MIX[number % len(MIX)]:
            case "outside":
                records.append(
                    {
                        "scan_id": scan.id,
                        "shop_id": shop.id,
                        "provider": "stripe",
                        "kind": "refund",
                        "record_id": f"re_{number}",
                        "created": at,
                        "customer": f"cus_{customer}",
                        "amount": amount,
                        "currency": "usd",
                        "payment": payment,
                        "payment_amount": 2 * amount,
                        "status": "succeeded",
                    }
                )
            case kept:
                _proposal(rows, shop.id, customers[customer], customer, number, amount, at, kept)
    for model, values in rows.items():
        session.execute(insert(model), values)
    session.execute(insert(HistoryRecord), records)
    session.commit()
    return shop.id


def _proposal(
    rows: dict[type, list[dict[str, Any]]],
    shop_id: uuid.UUID,
    customer_id: uuid.UUID,
    customer: int,
    number: int,
    amount: int,
    at: datetime,
    kept: str,
) -> None:
    """A refund proposed on a case of the customer: its inputs kept, or (an older one) its
    payment paying an order of ours; one in three approved and refunded."""
    case_id, proposal_id = uuid.uuid4(), uuid.uuid4()
    payment, stripe_customer = f"pi_{number}", f"cus_{customer}"
    rows[Case].append(
        {
            "id": case_id,
            "shop_id": shop_id,
            "customer_id": customer_id,
            "subject": "A refund",
            "identity_level": "strong",
            "status": "resolved",
            "created_at": at,
            "updated_at": at,
        }
    )
    inputs = None
    if kept == "kept":
        inputs = GuardInputs(
            proposal=ProposedAction(
                kind=ActionKind.REFUND,
                target=payment,
                amount=Money(amount, "usd"),
                identity_level=IdentityLevel.STRONG,
                proposed_by="bench",
                customer_ref=stripe_customer,
                case_customer=stripe_customer,
                money_ref=payment,
            ),
            facts=PaymentFacts(
                id=payment,
                exists=True,
                currency="usd",
                amount=2 * amount,
                captured=2 * amount,
                paid=True,
                customer_id=stripe_customer,
            ),
            in_flight=(),
            history=(),
            order=None,
            spending=None,
            now=at,
        ).to_dict()
    else:
        rows[Order].append(
            {
                "shop_id": shop_id,
                "customer_id": customer_id,
                "name": f"#{number}",
                "currency": "usd",
                "total": 2 * amount,
                "payment_provider": "stripe",
                "payment_id": payment,
                "lines": [{"id": "line", "title": "Linen", "quantity": 1, "paid": 2 * amount}],
                "created_at": at - timedelta(days=5),
            }
        )
    rows[Proposal].append(
        {
            "id": proposal_id,
            "shop_id": shop_id,
            "case_id": case_id,
            "kind": "refund",
            "provider": "stripe",
            "target": payment,
            "customer_ref": stripe_customer,
            "amount": amount,
            "currency": "usd",
            "line_items": [],
            "money_ref": payment,
            "params": {},
            "proposed_by": "bench",
            "revision": 1,
            "status": "approved" if number % 3 == 0 else "rejected",
            "verdict": {},
            "approvals_required": 1,
            "policy_version": 2,
            "digest": "0" * 64,
            "guard_inputs": inputs,
            "created_at": at,
            "updated_at": at,
        }
    )
    if number % 3 == 0:
        action_id = uuid.uuid4()
        rows[Action].append(
            {
                "id": action_id,
                "shop_id": shop_id,
                "case_id": case_id,
                "proposal_id": proposal_id,
                "proposal_revision": 1,
                "digest": "0" * 64,
                "kind": "refund",
                "provider": "stripe",
                "target": payment,
                "customer_ref": stripe_customer,
                "amount": amount,
                "currency": "usd",
                "line_items": [],
                "money_ref": payment,
                "params": {},
                "idempotency_key": f"caseward-action-{action_id}",
                "status": "succeeded",
                "approved_by": [OWNER],
                "approval_expires_at": at + timedelta(days=1),
                "created_at": at + timedelta(minutes=5),
            }
        )


if __name__ == "__main__":
    main()
