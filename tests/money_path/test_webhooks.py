"""Stripe webhooks delivered twice and out of order, to two shops, and forged.

The sandbox signs and POSTs the events to the served app; the app keeps each event id
once per shop and queues a refresh that a worker process runs against the provider. A
card refund that "succeeded" and then failed must end failed, whatever order the events
arrive in, with its case back in front of a named person. Two shops on one Stripe
account each keep and act on their own copy of an event. A request that is not a
fresh, signed Stripe event for the endpoint stores nothing and queues nothing; a
signed body of an odd shape is a 400, never a 500 (Stripe retries those for days).
"""

from __future__ import annotations

import hashlib
import hmac
import json
import time
import uuid
from collections import Counter
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from fault_support import (
    ACTION_ID_KEY,
    add_order,
    approve,
    assert_money_invariants,
    case_json,
    paid_payment,
    propose_refund,
    refunds_of_action,
    reset_sandbox_switches,
    wait_for_status,
)
from flask.testing import FlaskClient
from money_path_harness import Account, Staff, WorkerProcess, wait_for
from rq import Queue
from sqlalchemy import func, select
from sqlalchemy.orm import Session

from app.connections.models import Connection
from app.crypto import secret_box
from app.demo import APPROVER, LinenShop, seed_linen_shop
from app.execution.executor import ExecutionContext
from app.execution.models import ProviderEvent
from app.settings import Settings
from integrations.stripe.sandbox import StripeSandbox
from integrations.stripe.webhooks import TOLERANCE_SECONDS


@pytest.fixture(autouse=True)
def _clean_sandbox(sandbox: StripeSandbox) -> Iterator[None]:
    reset_sandbox_switches(sandbox)
    yield
    reset_sandbox_switches(sandbox)


def _held_events(sandbox: StripeSandbox, account: Account, refund_id: str) -> dict[str, str]:
    """Held deliveries about ``refund_id``, as event type -> event id (oldest first)."""
    held: dict[str, str] = {}
    for delivery in sandbox.pending_webhooks():
        if delivery["account"] != account.id:
            continue
        event = account.stripe.v1.events.retrieve(delivery["event"]).to_dict()
        if event["data"]["object"]["id"] == refund_id:
            held.setdefault(event["type"], event["id"])
    return held


def _deliver(sandbox: StripeSandbox, event_id: str) -> list[dict[str, Any]]:
    attempts = sandbox.deliver_event(event_id)
    assert attempts, f"no endpoint took {event_id}"
    assert all(a.get("status") == 200 for a in attempts), attempts
    return attempts


def _refreshed(queue: Queue, action_id: str, event_ids: list[str]) -> bool:
    """Every refresh the app queued for these events has run in the worker."""
    for event_id in event_ids:
        job = queue.fetch_job(f"refresh-{action_id}-{event_id}")
        if job is None or job.get_status(refresh=True) != "finished":
            return False
    return True


def test_a_refund_that_fails_later_ends_failed_whatever_the_webhook_order(
    linen: LinenShop,
    approver: Staff,
    proposer: Staff,
    account: Account,
    sandbox: StripeSandbox,
    settings: Settings,
    worker: WorkerProcess,
    ctx: ExecutionContext,
    queue: Queue,
) -> None:
    # A second order of the same customer, paid with the card whose refunds fail later.
    payment = paid_payment(
        account, settings, customer_id=linen.customer_id, payment_method="pm_card_refundFail"
    )
    add_order(
        ctx.session_factory,
        shop_id=linen.shop_id,
        stripe_customer_id=linen.customer_id,
        payment_intent_id=payment.payment_intent_id,
        name="#1002",
    )
    sandbox.pause_webhooks()
    action_id = approve(
        approver, propose_refund(proposer, linen.case_id, payment.payment_intent_id, 3000)
    )
    succeeded = wait_for_status(approver, action_id, ["succeeded"])
    refund_id = succeeded["provider_ref"]
    assert case_json(approver, linen.case_id)["status"] == "resolved"

    # Days later the card refund fails at Stripe (refund.updated + refund.failed, held).
    sandbox.advance_clock(3601)
    assert account.stripe.v1.refunds.retrieve(refund_id).status == "failed"
    held = _held_events(sandbox, account, refund_id)
    assert {"refund.created", "refund.updated", "refund.failed"} <= set(held), held

    # The failure news first, each delivered twice.
    news = [held["refund.failed"], held["refund.updated"]]
    for event_id in news + news:
        _deliver(sandbox, event_id)
    failed = wait_for_status(approver, action_id, ["failed"])
    assert failed["failure_reason"] == "expired_or_canceled_card"
    assert failed["provider_ref"] == refund_id

    # Then the older "succeeded" news (refund.created), twice, and the failure once more.
    stale = [held["refund.created"], held["refund.failed"], held["refund.created"]]
    for event_id in stale:
        _deliver(sandbox, event_id)
    distinct = list(dict.fromkeys(news + stale))
    wait_for(lambda: _refreshed(queue, action_id, distinct), what="the refresh jobs to run")

    still = approver.get(f"/api/actions/{action_id}").get_json()
    assert (still["status"], still["failure_reason"]) == ("failed", "expired_or_canceled_card")
    case = case_json(approver, linen.case_id)
    assert case["status"] == "needs_attention"
    assert case["owner"] == APPROVER

    # The provider's status never went backwards in our record.
    events = approver.get(f"/api/cases/{linen.case_id}/audit").get_json()["events"]
    reported = [
        e["data"]["status"]
        for e in events
        if e["kind"] == "action.provider_status" and e["action_id"] == action_id
    ]
    assert reported == ["succeeded", "failed"]
    with ctx.session_factory() as session:
        stored = Counter(
            session.scalars(
                select(ProviderEvent.event_id).where(ProviderEvent.shop_id == linen.shop_id)
            )
        )
    assert {event_id: stored[event_id] for event_id in distinct} == dict.fromkeys(distinct, 1)
    assert max(stored.values()) == 1

    at_provider = refunds_of_action(account, action_id)
    assert [(r["id"], r["status"]) for r in at_provider] == [(refund_id, "failed")]
    assert at_provider[0]["metadata"][ACTION_ID_KEY] == action_id
    assert_money_invariants(account, ctx.session_factory, linen.shop_id)


# ---------------------------------------------------------------- two shops, one account


def test_two_shops_on_one_stripe_account_each_keep_their_own_copy_of_an_event(
    linen: LinenShop,
    account: Account,
    sandbox: StripeSandbox,
    settings: Settings,
    session: Session,
    web_url: str,
) -> None:
    other = seed_linen_shop(
        session,
        settings=settings,
        box=secret_box(settings),
        secret_key=account.secret_key,
        restricted_key=account.restricted_key,
        webhook_base_url=web_url,
        shop_domain="second-linen.myshopify.com",
    )
    session.commit()
    assert other.connection_id != linen.connection_id

    refund = account.stripe.v1.refunds.create(
        params={"payment_intent": linen.payment_intent_id, "amount": 500}
    )

    def copies() -> dict[uuid.UUID, str]:
        session.expire_all()
        rows = session.execute(
            select(ProviderEvent.shop_id, ProviderEvent.event_id).where(
                ProviderEvent.type == "refund.created", ProviderEvent.object_id == refund.id
            )
        ).all()
        return {shop_id: event_id for shop_id, event_id in rows if shop_id is not None}

    both = wait_for(lambda: len(copies()) == 2 and copies(), what="both shops' copies")
    assert set(both) == {linen.shop_id, other.shop_id}
    [event_id] = set(both.values())

    # Delivered again to both endpoints: each shop still keeps exactly one copy.
    attempts = sandbox.deliver_event(event_id)
    assert sorted(a.get("status") for a in attempts) == [200, 200], attempts
    session.expire_all()
    stored = Counter(
        session.scalars(select(ProviderEvent.shop_id).where(ProviderEvent.event_id == event_id))
    )
    assert stored == Counter({linen.shop_id: 1, other.shop_id: 1})


# ---------------------------------------------------------------- refused requests


@pytest.fixture
def endpoint(linen: LinenShop, settings: Settings, session: Session) -> tuple[str, str]:
    """The linen shop's webhook path and the signing secret Stripe holds for it."""
    connection = session.get(Connection, linen.connection_id)
    assert connection is not None and connection.encrypted_webhook_secret is not None
    secret = secret_box(settings).decrypt(connection.encrypted_webhook_secret)
    return f"/webhooks/stripe/{linen.connection_id}", secret


@pytest.fixture
def action_id(linen: LinenShop, approver: Staff) -> str:
    """An action events could be about: accepting one would queue its refresh."""
    proposal = approver.get(f"/api/cases/{linen.case_id}").get_json()["proposals"][0]
    return approve(approver, proposal)


def _event(action_id: str, **changes: Any) -> dict[str, Any]:
    event = {
        "id": f"evt_{uuid.uuid4().hex}",
        "object": "event",
        "type": "refund.updated",
        "created": int(time.time()),
        "livemode": False,
        "data": {
            "object": {
                "id": f"re_{uuid.uuid4().hex[:24]}",
                "object": "refund",
                "metadata": {ACTION_ID_KEY: action_id},
            }
        },
    }
    return {**event, **changes}


def _signed(payload: bytes, secret: str, at: float | None = None) -> dict[str, str]:
    """Headers signing ``payload`` the way Stripe does (HMAC-SHA256 of ``t.payload``)."""
    timestamp = int(time.time() if at is None else at)
    signed = f"{timestamp}.".encode() + payload
    digest = hmac.new(secret.encode(), signed, hashlib.sha256).hexdigest()
    return {"Stripe-Signature": f"t={timestamp},v1={digest}", "Content-Type": "application/json"}


class _Nothing:
    """Asserts that a request stored no event and queued no job."""

    def __init__(self, session: Session, queue: Queue) -> None:
        self._session, self._queue = session, queue
        self._events = self._count()
        self._jobs = set(queue.job_ids)

    def _count(self) -> int:
        self._session.expire_all()
        return int(self._session.scalar(select(func.count()).select_from(ProviderEvent)) or 0)

    def happened(self) -> bool:
        return self._count() == self._events and set(self._queue.job_ids) == self._jobs


def _post(client: FlaskClient, path: str, payload: bytes, headers: dict[str, str]) -> Any:
    return client.post(path, data=payload, headers=headers)


def _body(event: object) -> bytes:
    return json.dumps(event).encode()


def test_a_genuine_event_is_kept_and_queues_a_refresh(
    client: FlaskClient,
    endpoint: tuple[str, str],
    action_id: str,
    session: Session,
    queue: Queue,
) -> None:
    """The control for the refusals below: the same request, rightly signed, is taken."""
    path, secret = endpoint
    event = _event(action_id)
    payload = _body(event)

    response = _post(client, path, payload, _signed(payload, secret))

    assert response.status_code == 200, response.get_json()
    assert response.get_json()["actions"] == [action_id]
    assert f"refresh-{action_id}-{event['id']}" in queue.job_ids
    assert session.scalar(
        select(func.count()).select_from(ProviderEvent).where(ProviderEvent.event_id == event["id"])
    )


REFUSED: dict[str, Callable[[bytes, str], tuple[bytes, dict[str, str]]]] = {
    "unsigned": lambda payload, secret: (payload, {"Content-Type": "application/json"}),
    "signed with another secret": lambda payload, secret: (
        payload,
        _signed(payload, "whsec_someone_else"),
    ),
    "tampered after signing": lambda payload, secret: (
        payload.replace(b"refund.updated", b"refund.created"),
        _signed(payload, secret),
    ),
    # A whole tolerance beyond the window on either side: a slow machine may take seconds
    # between signing and checking, which would carry a timestamp just past the future edge
    # back inside the window.
    "expired": lambda payload, secret: (
        payload,
        _signed(payload, secret, time.time() - 2 * TOLERANCE_SECONDS),
    ),
    "from the future": lambda payload, secret: (
        payload,
        _signed(payload, secret, time.time() + 2 * TOLERANCE_SECONDS),
    ),
    "a garbled signature header": lambda payload, secret: (
        payload,
        {"Stripe-Signature": "t=soon,v1=\u0000", "Content-Type": "application/json"},
    ),
}


@pytest.mark.parametrize("case_name", list(REFUSED))
def test_a_request_that_is_not_a_fresh_signed_event_is_refused_and_changes_nothing(
    client: FlaskClient,
    endpoint: tuple[str, str],
    action_id: str,
    session: Session,
    queue: Queue,
    case_name: str,
) -> None:
    path, secret = endpoint
    nothing = _Nothing(session, queue)
    payload, headers = REFUSED[case_name](_body(_event(action_id)), secret)

    response = _post(client, path, payload, headers)

    assert response.status_code == 401, response.get_json()
    assert response.get_json()["error"]["code"] == "unauthenticated"
    assert nothing.happened()


def test_an_event_for_an_unknown_endpoint_is_refused_and_changes_nothing(
    client: FlaskClient,
    endpoint: tuple[str, str],
    action_id: str,
    session: Session,
    queue: Queue,
) -> None:
    _, secret = endpoint
    nothing = _Nothing(session, queue)
    payload = _body(_event(action_id))

    response = _post(client, f"/webhooks/stripe/{uuid.uuid4()}", payload, _signed(payload, secret))

    assert response.status_code == 404
    assert nothing.happened()


ODD_SHAPES: dict[str, Callable[[str], object | bytes]] = {
    "a list": lambda action_id: [_event(action_id)],
    "a string": lambda action_id: "evt_123",
    "null": lambda action_id: None,
    "not JSON": lambda action_id: b"{'id': 'evt_1'",
    "not UTF-8": lambda action_id: b'{"id": "evt_\xff\xfe", "object": "event"}',
    "nested past the parser": lambda action_id: b"[" * 50_000,
    "no id": lambda action_id: {k: v for k, v in _event(action_id).items() if k != "id"},
    "no type": lambda action_id: {k: v for k, v in _event(action_id).items() if k != "type"},
    "no data": lambda action_id: {k: v for k, v in _event(action_id).items() if k != "data"},
    "no data.object": lambda action_id: _event(action_id, data={}),
    "data.object a list": lambda action_id: _event(action_id, data={"object": []}),
    "an id that is a number": lambda action_id: _event(action_id, id=42),
    "a huge id": lambda action_id: _event(action_id, id="evt_" + "x" * 10_000),
    "a huge type": lambda action_id: _event(action_id, type="refund." + "x" * 500),
    "created as text": lambda action_id: _event(action_id, created="yesterday"),
    "created past any clock": lambda action_id: _event(action_id, created=10**20),
    "an object id that is an object": lambda action_id: _event(
        action_id, data={"object": {"id": {"x": 1}, "object": "refund"}}
    ),
    "a huge object id": lambda action_id: _event(
        action_id, data={"object": {"id": "re_" + "x" * 1000, "object": "refund"}}
    ),
}


@pytest.mark.parametrize("case_name", list(ODD_SHAPES))
def test_a_signed_event_of_an_odd_shape_is_a_400_and_changes_nothing(
    client: FlaskClient,
    endpoint: tuple[str, str],
    action_id: str,
    session: Session,
    queue: Queue,
    case_name: str,
) -> None:
    path, secret = endpoint
    nothing = _Nothing(session, queue)
    shape = ODD_SHAPES[case_name](action_id)
    payload = shape if isinstance(shape, bytes) else _body(shape)

    response = _post(client, path, payload, _signed(payload, secret))

    assert response.status_code == 400, (response.status_code, response.get_data()[:300])
    assert response.get_json()["error"]["field"] == "body"
    assert nothing.happened()


def test_metadata_that_is_not_ours_is_ignored_not_a_500(
    client: FlaskClient, endpoint: tuple[str, str], action_id: str, queue: Queue
) -> None:
    path, secret = endpoint
    jobs = set(queue.job_ids)
    event = _event(action_id)
    event["data"]["object"]["metadata"] = {ACTION_ID_KEY: 12345}
    payload = _body(event)

    response = _post(client, path, payload, _signed(payload, secret))

    assert response.status_code == 200
    assert response.get_json()["actions"] == []
    assert set(queue.job_ids) == jobs
