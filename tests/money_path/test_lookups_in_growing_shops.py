"""The lookups a growing shop runs all day read about the rows they need, found by index,
not every row the shop (or every shop) has: the sweep's search for calls left unfinished,
the admin queue's page of cases, the cases and actions APIs' pages, and the caps' sums.
With a few rows every lookup is fast; without the indexes it reads by, each one reads a
shop's whole history (the sweep, every shop's), which a shop of 30,000 cases waits on at
every sweep, page and check (``migrations/versions/0021_indexes_for_growing_shops.py``).

Each test seeds one shop with a few thousand rows spread over a year (and a few rows in
a second shop), runs the real code, and has PostgreSQL run the statement it sent again
under ``EXPLAIN ANALYZE`` (:mod:`index_reads`) to say which rows it read."""

from __future__ import annotations

import random
import uuid
from datetime import datetime, timedelta
from typing import Any

import pytest
from flask import Flask
from flask.testing import FlaskClient
from index_reads import analyzed, assert_read_by_index, reads_of_table, skip_unless_postgresql
from money_path_harness import Staff
from sent_statements import statements_sent
from sqlalchemy import Engine, insert
from sqlalchemy.orm import Session

from app.cases.models import Case, CaseStatus
from app.cases.proposals import Proposal, ProposalStatus
from app.cases.service import list_cases
from app.clock import utcnow
from app.db import Database
from app.execution.ledger import cap_spending
from app.execution.models import Action, ActionAttempt, ActionStatus
from app.execution.sweep import _close_interrupted_attempts
from app.guard import CapRule, CapSpend, PolicyRules
from app.inbox.queue import QUEUE_LENGTH, QueueFilter, case_queue
from app.money import Money
from app.shops.models import Shop, StaffMember, StaffRole
from app.validation import PAGE_DEFAULT

Row = dict[str, Any]

# One shop's history: enough rows that reading all of them shows in the plan, few
# enough that each test seeds them in a few seconds.
HISTORY = 3000
CASES_API_PAGE = 200  # list_cases' page
OTHER_SHOP_HISTORY = 20
DAY = timedelta(days=1)
YEAR = timedelta(days=365)
CAP = Money(100_000, "usd")
CAP_PERIOD = timedelta(days=30)

CASE_STATUSES = {
    CaseStatus.RESOLVED: 90,
    CaseStatus.OPEN: 4,
    CaseStatus.AWAITING_APPROVAL: 2,
    CaseStatus.NEEDS_ATTENTION: 2,
    CaseStatus.EXECUTING: 2,
}
# Nothing is left ``submitting``: the sweep moves a submission nobody recorded on.
ACTION_STATUSES = {
    ActionStatus.SUCCEEDED: 82,
    ActionStatus.PENDING: 3,
    ActionStatus.REQUIRES_ACTION: 1,
    ActionStatus.FAILED: 3,
    ActionStatus.CANCELED: 1,
    ActionStatus.REJECTED: 2,
    ActionStatus.HALTED: 2,
    ActionStatus.EXPIRED: 1,
    ActionStatus.CANNOT_RUN: 1,
    ActionStatus.QUEUED: 1,
    ActionStatus.UNKNOWN: 2,
    ActionStatus.NEEDS_DECISION: 1,
}
# Never called the provider: not yet, or stopped before the call.
NEVER_SENT = (
    ActionStatus.QUEUED,
    ActionStatus.HALTED,
    ActionStatus.EXPIRED,
    ActionStatus.CANNOT_RUN,
)
# All of them money, counted against the caps.
ACTION_KINDS = {"refund": 75, "customer_credit": 15, "discount": 10}


@pytest.fixture(autouse=True)
def _postgresql(database: str) -> None:
    skip_unless_postgresql(database)


@pytest.fixture
def picker() -> random.Random:
    """The seeds' spreads, the same on every run."""
    return random.Random(20_261_204)


@pytest.fixture
def engine(app: Flask) -> Engine:
    return Database.state(app).engine


def test_the_sweep_reads_only_the_calls_left_unfinished(
    session: Session, engine: Engine, picker: random.Random
) -> None:
    now = utcnow()
    stuck_before = now - timedelta(seconds=120)
    busy, quiet = _shop(session, "busy.myshopify.com"), _shop(session, "quiet.myshopify.com")
    _answered_calls(session, _actions(session, busy.id, HISTORY, picker, now))
    _answered_calls(session, _actions(session, quiet.id, OTHER_SHOP_HISTORY, picker, now))
    # Lookups of unclear outcomes whose worker died mid-call, two in this shop and one in
    # the other, and a first call still under way, too recent to be called off.
    unclear = [
        *_actions(session, busy.id, 2, picker, now, over=DAY, status=ActionStatus.UNKNOWN),
        *_actions(session, quiet.id, 1, picker, now, over=DAY, status=ActionStatus.UNKNOWN),
    ]
    _answered_calls(session, unclear)
    cut_off = [
        _unfinished_call(session, action, 2, "find", now - timedelta(minutes=10))
        for action in unclear
    ]
    (under_way,) = _actions(
        session, busy.id, 1, picker, now, over=timedelta(minutes=1), status=ActionStatus.SUBMITTING
    )
    _unfinished_call(session, under_way, 1, "submit", now - timedelta(seconds=5))
    analyzed(session)

    with statements_sent(engine) as sent:
        closed = _close_interrupted_attempts(session, stuck_before, now)

    assert sorted(closed) == sorted(cut_off)
    (read,) = reads_of_table(sent, "action_attempts")
    assert_read_by_index(session, read, "action_attempts", rows=len(cut_off))


def test_the_queue_pages_the_latest_cases_and_reads_only_the_proposals_awaiting_approval(
    session: Session, engine: Engine, picker: random.Random
) -> None:
    now = utcnow()
    busy, quiet = _shop(session, "busy.myshopify.com"), _shop(session, "quiet.myshopify.com")
    cases = _cases(session, busy.id, HISTORY, picker, now)
    _proposals(session, cases, [_proposal_status(case, picker) for case in cases])
    others = _cases(session, quiet.id, OTHER_SHOP_HISTORY, picker, now)
    _proposals(session, others, [ProposalStatus.AWAITING_APPROVAL] * len(others))
    analyzed(session)

    with statements_sent(engine) as sent:
        queue = case_queue(session, busy.id)

    awaiting = {case["id"] for case in cases if case["status"] == CaseStatus.AWAITING_APPROVAL}
    latest = [case["id"] for case in _latest(cases, "updated_at")[:QUEUE_LENGTH]]
    assert [row.case.id for row in queue.rows] == latest
    assert {row.case.id for row in queue.rows if QueueFilter.NEEDS_APPROVAL in row.matches} == (
        awaiting & set(latest)
    )
    assert (queue.total, queue.counts[QueueFilter.NEEDS_APPROVAL]) == (HISTORY, len(awaiting))
    # The counts read every case of the shop by design; the page must not.
    (page,) = [read for read in reads_of_table(sent, "cases") if "LIMIT" in read.statement]
    # The page's sort by id within a moment reads one case past the page.
    assert_read_by_index(session, page, "cases", rows=QUEUE_LENGTH, beyond=1)
    assert_read_by_index(session, page, "proposals", rows=len(awaiting))


# Any status; the commonest, whose page PostgreSQL may read off the newest cases, passing
# the few in other statuses among them; and one a few cases are in, whose page, without an
# index of its own, is read through the shop's whole history to fill.
@pytest.mark.parametrize(
    ("status", "discarded"),
    [(None, 0), (CaseStatus.RESOLVED, CASES_API_PAGE // 5), (CaseStatus.NEEDS_ATTENTION, 0)],
    ids=["any", "resolved", "needs_attention"],
)
def test_the_cases_api_reads_the_latest_cases_not_the_shops_history(
    session: Session,
    engine: Engine,
    picker: random.Random,
    status: str | None,
    discarded: int,
) -> None:
    now = utcnow()
    busy, quiet = _shop(session, "busy.myshopify.com"), _shop(session, "quiet.myshopify.com")
    cases = _cases(session, busy.id, HISTORY, picker, now)
    _cases(session, quiet.id, OTHER_SHOP_HISTORY, picker, now)
    analyzed(session)

    with statements_sent(engine) as sent:
        listed = [case.id for case in list_cases(session, busy.id, status)]

    wanted = [case for case in cases if status is None or case["status"] == status]
    page = [case["id"] for case in _latest(wanted, "updated_at")[:CASES_API_PAGE]]
    assert listed == page and len(page) >= 40
    (read,) = reads_of_table(sent, "cases")
    assert_read_by_index(session, read, "cases", rows=len(page), discarded=discarded)


def test_the_actions_api_reads_the_newest_actions_not_the_shops_history(
    session: Session, engine: Engine, picker: random.Random, app: Flask, client: FlaskClient
) -> None:
    now = utcnow()
    busy, quiet = _shop(session, "busy.myshopify.com"), _shop(session, "quiet.myshopify.com")
    actions = _actions(session, busy.id, HISTORY, picker, now)
    _actions(session, quiet.id, OTHER_SHOP_HISTORY, picker, now)
    session.add(StaffMember(shop_id=busy.id, user_id="vera.viewer", role=StaffRole.VIEWER))
    analyzed(session)
    token = Staff.issue_token(app, busy.domain, "vera.viewer")

    with statements_sent(engine) as sent:
        response = client.get("/api/actions", headers={"Authorization": f"Bearer {token}"})

    assert response.status_code == 200, response.get_json()
    listed = [action["id"] for action in response.get_json()["actions"]]
    assert listed == [str(action["id"]) for action in _latest(actions, "created_at")[:PAGE_DEFAULT]]
    (read,) = reads_of_table(sent, "actions")
    # The page's sort by id within a moment reads one action past the page.
    assert_read_by_index(session, read, "actions", rows=PAGE_DEFAULT, beyond=1)


@pytest.mark.parametrize("cap", ["per_shop_cap", "per_customer_cap"])
def test_the_caps_sums_read_the_periods_actions_not_the_shops_history(
    session: Session, engine: Engine, picker: random.Random, cap: str
) -> None:
    now = utcnow()
    busy, quiet = _shop(session, "busy.myshopify.com"), _shop(session, "quiet.myshopify.com")
    # A year of actions, most of them older than the cap's period: the sums need none of
    # those, only the ones the provider reported within it and the ones on their way.
    history = _actions(session, busy.id, HISTORY, picker, now)
    other = _actions(session, quiet.id, OTHER_SHOP_HISTORY, picker, now)
    # A returning customer: refunds the provider reported within the period, one whose
    # outcome is unclear, and the refund being checked, queued: never counted against
    # itself.
    returning: dict[str, Any] = {"over": CAP_PERIOD, "customer": "cus_returning"}
    moved = _actions(session, busy.id, 3, picker, now, status=ActionStatus.SUCCEEDED, **returning)
    unclear = _actions(session, busy.id, 1, picker, now, status=ActionStatus.UNKNOWN, **returning)
    (own,) = _actions(session, busy.id, 1, picker, now, status=ActionStatus.QUEUED, **returning)
    actions = [*history, *moved, *unclear, own]
    analyzed(session)
    policy = PolicyRules(**{cap: CapRule(CAP, CAP_PERIOD)})

    with statements_sent(engine) as sent:
        spending = cap_spending(
            session,
            busy.id,
            policy=policy,
            customer=own["customer_ref"],
            own_action_id=own["id"],
            now=now,
        )

    since = now - CAP_PERIOD
    counted = [
        action
        for action in actions
        if action["id"] != own["id"]
        and (
            action["status"] in ActionStatus.IN_FLIGHT
            or (action["status"] in ActionStatus.PROVIDER_OPEN and action["created_at"] >= since)
        )
    ]
    whose = [
        action
        for action in counted
        if action["currency"] == CAP.currency
        and (cap == "per_shop_cap" or action["customer_ref"] == own["customer_ref"])
    ]
    expected = CapSpend(
        done=sum(a["amount"] for a in whose if a["status"] in ActionStatus.PROVIDER_OPEN),
        in_flight=sum(a["amount"] for a in whose if a["status"] in ActionStatus.IN_FLIGHT),
    )
    assert expected.done and expected.in_flight  # sums of something, or they prove nothing
    assert (spending.shop if cap == "per_shop_cap" else spending.customer) == expected
    # Read besides those counted, at most: the shop's other actions within the period
    # (the planner may find them by date alone) and every shop's on their way (or by
    # status alone, in every shop). Never the year before the period.
    readable = _with_status([*actions, *other], *ActionStatus.IN_FLIGHT) + [
        action
        for action in actions
        if action["created_at"] >= since and action["status"] not in ActionStatus.IN_FLIGHT
    ]
    (read,) = reads_of_table(sent, "actions")
    assert_read_by_index(
        session, read, "actions", rows=len(counted), discarded=len(readable) - len(counted)
    )


# ---------------------------------------------------------------- seeds


def _shop(session: Session, domain: str) -> Shop:
    shop = Shop(domain=domain, name=domain.split(".", maxsplit=1)[0].title())
    session.add(shop)
    session.flush()
    return shop


def _pick(picker: random.Random, weights: dict[Any, int]) -> Any:
    return picker.choices(list(weights), list(weights.values()))[0]


def _cases(
    session: Session,
    shop_id: uuid.UUID,
    count: int,
    picker: random.Random,
    now: datetime,
    *,
    over: timedelta = YEAR,
) -> list[Row]:
    """``count`` cases opened ``over`` the past year (or as given), each last moved within
    days of opening; most resolved."""
    rows = []
    for number in range(count):
        opened = now - picker.random() * over
        rows.append(
            {
                "id": uuid.uuid4(),
                "shop_id": shop_id,
                "subject": f"Refund for order #{1000 + number}",
                "request_text": "The parcel arrived damaged, please refund it.",
                "identity_level": picker.choices(["strong", "medium", "none"], [85, 10, 5])[0],
                "status": _pick(picker, CASE_STATUSES),
                "created_at": opened,
                "updated_at": opened + picker.random() * min(timedelta(days=3), now - opened),
            }
        )
    session.execute(insert(Case), rows)
    return rows


def _proposals(session: Session, cases: list[Row], statuses: list[str]) -> list[Row]:
    """A $48 refund proposed on each case, in the status given for it."""
    rows = [
        {
            "id": uuid.uuid4(),
            "shop_id": case["shop_id"],
            "case_id": case["id"],
            "kind": "refund",
            "provider": "stripe",
            "target": f"pi_{case['id'].hex}",
            "amount": 4800,
            "currency": "usd",
            "proposed_by": "1001",
            "status": status,
            "verdict": {},
            "policy_version": 1,
            "digest": "0" * 64,
            "created_at": case["created_at"],
            "updated_at": case["updated_at"],
        }
        for case, status in zip(cases, statuses, strict=True)
    ]
    session.execute(insert(Proposal), rows)
    return rows


def _actions(
    session: Session,
    shop_id: uuid.UUID,
    count: int,
    picker: random.Random,
    now: datetime,
    *,
    over: timedelta = YEAR,
    customer: str | None = None,
    status: str | None = None,
) -> list[Row]:
    """``count`` approved refunds, credits and discounts ``over`` the past year, each on
    its own case and proposal, approved within hours; customers come back about eight
    times, one in twenty pays in euros; most succeeded. Or all for ``customer``, or all
    in ``status``, as given."""
    cases = _cases(session, shop_id, count, picker, now, over=over)
    proposals = _proposals(session, cases, [ProposalStatus.APPROVED] * count)
    rows = []
    for proposal in proposals:
        action_id = uuid.uuid4()
        kind = _pick(picker, ACTION_KINDS)
        number = picker.randrange(max(count // 8, 1))
        customer_ref = customer or f"cus_{number}"
        target = f"pi_{action_id.hex}" if kind == "refund" else customer_ref
        opened = proposal["created_at"]
        approved = opened + picker.random() * min(timedelta(hours=10), now - opened)
        rows.append(
            {
                "id": action_id,
                "shop_id": shop_id,
                "case_id": proposal["case_id"],
                "proposal_id": proposal["id"],
                "proposal_revision": 1,
                "digest": proposal["digest"],
                "kind": kind,
                "provider": "stripe",
                "target": target,
                "customer_ref": customer_ref,
                "money_ref": target if kind == "refund" else None,
                "amount": picker.randrange(500, 20_000),
                "currency": "eur" if customer is None and number % 20 == 0 else "usd",
                "idempotency_key": f"caseward-action-{action_id}",
                "status": status or _pick(picker, ACTION_STATUSES),
                "approved_by": ["staff:bob"],
                "approval_expires_at": approved + timedelta(days=1),
                "created_at": approved,
                "updated_at": approved,
            }
        )
    session.execute(insert(Action), rows)
    return rows


def _answered_calls(session: Session, actions: list[Row]) -> None:
    """Each sent action's call to the provider, answered (or timed out) within a second."""
    sent = [a for a in actions if a["status"] not in NEVER_SENT]
    session.execute(
        insert(ActionAttempt),
        [
            {
                "action_id": action["id"],
                "number": 1,
                "purpose": "submit",
                "idempotency_key": action["idempotency_key"],
                "started_at": action["created_at"],
                "finished_at": action["created_at"] + timedelta(seconds=1),
                "outcome": "unknown" if action["status"] in ActionStatus.IN_FLIGHT else "answered",
            }
            for action in sent
        ],
    )


def _unfinished_call(
    session: Session, action: Row, number: int, purpose: str, started_at: datetime
) -> str:
    """Call ``number`` for ``action`` with no outcome recorded; as the sweep names it."""
    session.add(
        ActionAttempt(
            action_id=action["id"],
            number=number,
            purpose=purpose,
            idempotency_key=action["idempotency_key"],
            started_at=started_at,
        )
    )
    return f"{action['id']}#{number}"


def _proposal_status(case: Row, picker: random.Random) -> str:
    """A proposal awaits approval where its case does; most others were approved."""
    if case["status"] == CaseStatus.AWAITING_APPROVAL:
        return ProposalStatus.AWAITING_APPROVAL
    return _pick(
        picker,
        {ProposalStatus.APPROVED: 90, ProposalStatus.REJECTED: 6, ProposalStatus.BLOCKED: 4},
    )


def _latest(rows: list[Row], moved: str) -> list[Row]:
    """``rows`` as a page lists them: the latest ``moved`` first (no two seeded rows moved
    at the same moment, so the pages' order among equals does not arise)."""
    return sorted(rows, key=lambda row: (row[moved], row["id"]), reverse=True)


def _with_status(actions: list[Row], *statuses: str) -> list[Row]:
    return [action for action in actions if action["status"] in statuses]
