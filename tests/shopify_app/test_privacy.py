"""Shopify's privacy topics answered for real: a customer's data exported for the owner,
a customer or a whole shop erased, the money facts and the audit chain left whole."""

from __future__ import annotations

import itertools
import json
import uuid
from datetime import datetime, timedelta
from typing import Any

import pytest
from flask import Flask
from flask.testing import FlaskClient
from index_reads import analyzed, assert_read_by_index, reads_of_table, skip_unless_postgresql
from money_path_harness import WorkerProcess, execution_context, fail_as_rq_does, wait_for
from rq.job import JobStatus
from sent_statements import statements_sent
from shopify_app_support import (
    PRIVACY_JOB,
    answer_queued_privacy_request,
    bearer,
    deliver,
    install_shop,
    session_token,
    take_queued_privacy_request,
)
from sqlalchemy import insert, select
from sqlalchemy.orm import Session

from app.audit import AuditEvent, verify_chain
from app.background import sweep
from app.cases.models import Case, Customer, Order
from app.cases.proposals import Proposal
from app.clock import utcnow
from app.crypto import secret_box
from app.db import Database
from app.execution.models import ProviderEvent
from app.jobs.connection import RedisExtension, connect_redis
from app.jobs.queueing import queue_named
from app.privacy.jobs import PRIVACY_REQUEST, answer_stored_request, unanswered_requests
from app.privacy.models import DataExport
from app.privacy.service import ERASED
from app.settings import Settings
from app.shops.models import Shop, StaffMember, StaffRole

EMAIL = "maya.reyes@example.com"
SUBJECT = "Maya's torn duvet cover"
REQUEST = "Hi, I'm Maya Reyes at 12 Elm Street, the duvet cover tore on first wash."


@pytest.fixture
def linen(session: Session, settings: Settings) -> Shop:
    shop = install_shop(session, settings, "linen").shop
    session.add(StaffMember(shop_id=shop.id, user_id="1001", role=StaffRole.OWNER))
    session.add(StaffMember(shop_id=shop.id, user_id="1002", role=StaffRole.VIEWER))
    maya = Customer(
        shop_id=shop.id,
        email=EMAIL,
        name="Maya Reyes",
        shopify_customer_id="gid://shopify/Customer/7",
    )
    other = Customer(
        shop_id=shop.id,
        email="sam@example.com",
        name="Sam",
        shopify_customer_id="gid://shopify/Customer/8",
    )
    session.add_all([maya, other])
    session.flush()
    now = utcnow()
    session.add(
        Order(
            shop_id=shop.id,
            customer_id=maya.id,
            name="#1001",
            currency="usd",
            total=4800,
            payment_provider="shopify",
            payment_id=None,
            lines=[],
            created_at=now,
        )
    )
    for customer, subject, text in ((maya, SUBJECT, REQUEST), (other, "Sam's mug", "Chipped")):
        case = Case(
            shop_id=shop.id,
            customer_id=customer.id,
            subject=subject,
            request_text=text,
            created_at=now,
            updated_at=now,
        )
        session.add(case)
        session.flush()
        # One proposal with both reasons, one with the rejection's words alone.
        for reason in (f"{subject}: {text}", None):
            session.add(
                Proposal(
                    shop_id=shop.id,
                    case_id=case.id,
                    kind="refund",
                    provider="shopify",
                    target="gid://shopify/Order/1001",
                    amount=4800,
                    currency="usd",
                    params={"notify": False},
                    reason=reason,
                    rejection_reason=f"{subject} was {text.lower()} already",
                    proposed_by="1001",
                    status="rejected",
                    verdict={},
                    policy_version=1,
                    digest="0" * 64,
                )
            )
    session.commit()
    return shop


def _audit_text(session: Session, shop: Shop) -> str:
    rows = session.scalars(select(AuditEvent).where(AuditEvent.shop_id == shop.id))
    return json.dumps([[e.kind, e.actor, e.data] for e in rows])


def test_a_data_request_becomes_an_export_only_the_owner_can_read(
    app: Flask, client: FlaskClient, session: Session, settings: Settings, linen: Shop
) -> None:
    payload = {
        "shop_id": 1,
        "shop_domain": linen.domain,
        "orders_requested": [1001],
        "customer": {"id": 7, "email": EMAIL, "phone": None},
        "data_request": {"id": 9999},
    }
    answer = deliver(client, linen.domain, "customers/data_request", payload)
    assert answer.get_json()["acted"] == "queued"

    done = answer_queued_privacy_request(app, settings)

    assert done.startswith("exported 1 customers")
    owner = bearer(session_token(linen.domain, "1001"))
    [listed] = client.get("/api/privacy/exports", headers=owner).get_json()["exports"]
    export = client.get(f"/api/privacy/exports/{listed['id']}", headers=owner).get_json()
    [person] = export["content"]["customers"]
    assert (person["email"], person["orders"][0]["total"]) == (EMAIL, 4800)
    assert [c["subject"] for c in person["cases"]] == [SUBJECT]
    viewer = bearer(session_token(linen.domain, "1002"))
    assert client.get(f"/api/privacy/exports/{listed['id']}", headers=viewer).status_code == 403
    stored = session.scalars(select(DataExport)).one()
    assert EMAIL.encode() not in stored.encrypted_content
    # The request's own payload named Maya; once answered it keeps only what was done.
    event = session.scalars(
        select(ProviderEvent).where(ProviderEvent.type == "customers/data_request")
    ).one()
    assert EMAIL not in json.dumps(event.payload)


def test_erasing_a_customer_keeps_the_books_and_the_chain_and_nothing_names_them(
    app: Flask, client: FlaskClient, session: Session, settings: Settings, linen: Shop
) -> None:
    deliver(
        client, linen.domain, "orders/updated", {"id": 1001, "email": EMAIL, "customer": {"id": 7}}
    )
    deliver(client, linen.domain, "orders/updated", {"id": 1002, "customer": {"id": 8}})
    redact = {
        "shop_id": 1,
        "shop_domain": linen.domain,
        "customer": {"id": 7, "email": EMAIL},
        "orders_to_redact": [1001],
    }

    deliver(client, linen.domain, "customers/redact", redact)
    done = answer_queued_privacy_request(app, settings)

    assert done == "erased 1 customers"
    session.expire_all()
    maya = session.scalars(
        select(Customer).where(Customer.shopify_customer_id == "gid://shopify/Customer/7")
    ).one()
    assert (maya.email, maya.name) == (None, None)
    cases = {c.customer_id: c for c in session.scalars(select(Case))}
    assert (cases[maya.id].subject, cases[maya.id].request_text) == (ERASED, ERASED)
    assert "Sam's mug" in {c.subject for c in cases.values()}  # others untouched
    # A proposal's reasons may repeat the customer's words: erased with their case, and
    # a reason never given stays empty.
    reasons: dict[uuid.UUID, set[tuple[str | None, str | None]]] = {}
    for proposal in session.scalars(select(Proposal)):
        reasons.setdefault(proposal.case_id, set()).add(
            (proposal.reason, proposal.rejection_reason)
        )
    assert reasons[cases[maya.id].id] == {(ERASED, ERASED), (None, ERASED)}
    [sams] = [reasons[case.id] for case in cases.values() if case.subject == "Sam's mug"]
    assert sams == {
        ("Sam's mug: Chipped", "Sam's mug was chipped already"),
        (None, "Sam's mug was chipped already"),
    }
    order = session.scalars(select(Order)).one()
    assert (order.name, order.total, order.currency) == ("#1001", 4800, "usd")  # the books
    payloads = json.dumps([e.payload for e in session.scalars(select(ProviderEvent))])
    assert EMAIL not in payloads and '"id": 1002' in payloads
    assert verify_chain(session, linen.id).intact
    audit_text = _audit_text(session, linen)
    assert EMAIL not in audit_text and "Maya" not in audit_text and "Elm" not in audit_text


def test_erasing_a_customer_deletes_their_earlier_export(
    app: Flask, client: FlaskClient, session: Session, settings: Settings, linen: Shop
) -> None:
    person = {"id": 7, "email": EMAIL}
    deliver(
        client,
        linen.domain,
        "customers/data_request",
        {"customer": person, "data_request": {"id": 1}},
    )
    answer_queued_privacy_request(app, settings)
    deliver(client, linen.domain, "customers/redact", {"customer": person, "orders_to_redact": []})
    answer_queued_privacy_request(app, settings)

    assert session.scalars(select(DataExport)).all() == []


def test_shop_redact_erases_every_customer_and_payload(
    app: Flask, client: FlaskClient, session: Session, settings: Settings, linen: Shop
) -> None:
    deliver(client, linen.domain, "orders/updated", {"id": 1002, "customer": {"id": 8}})

    deliver(client, linen.domain, "shop/redact", {"shop_id": 1, "shop_domain": linen.domain})
    done = answer_queued_privacy_request(app, settings)

    assert done.startswith("erased 2 customers")
    session.expire_all()
    assert {c.email for c in session.scalars(select(Customer))} == {None}
    assert {c.subject for c in session.scalars(select(Case))} == {ERASED}
    assert all(
        e.payload in ({"erased": True}, {"answered": done})
        for e in session.scalars(select(ProviderEvent))
    )
    assert verify_chain(session, linen.id).intact


def test_answering_the_same_request_twice_does_it_once(
    app: Flask, client: FlaskClient, session: Session, settings: Settings, linen: Shop
) -> None:
    deliver(
        client,
        linen.domain,
        "customers/data_request",
        {"customer": {"id": 7}, "data_request": {"id": 1}},
    )
    shop_id, event_id = take_queued_privacy_request(app)
    factory, box = Database.state(app).session_factory, secret_box(settings)

    first = answer_stored_request(factory, box, shop_id, event_id, now=utcnow())
    second = answer_stored_request(
        factory, box, shop_id, event_id, now=utcnow() + timedelta(minutes=1)
    )

    assert first == second
    assert len(session.scalars(select(DataExport)).all()) == 1


def test_another_shops_owner_cannot_list_or_read_an_export(
    app: Flask, client: FlaskClient, session: Session, settings: Settings, linen: Shop
) -> None:
    pottery = install_shop(session, settings, "pottery").shop
    session.add(StaffMember(shop_id=pottery.id, user_id="2001", role=StaffRole.OWNER))
    session.commit()
    deliver(client, linen.domain, "customers/data_request", {"customer": {"id": 7}})
    answer_queued_privacy_request(app, settings)
    export_id = session.scalars(select(DataExport.id)).one()
    outsider = bearer(session_token(pottery.domain, "2001"))

    listed = client.get("/api/privacy/exports", headers=outsider).get_json()
    read = client.get(f"/api/privacy/exports/{export_id}", headers=outsider)

    assert listed == {"exports": []}
    assert read.status_code == 404 and EMAIL not in read.get_data(as_text=True)


def test_a_request_whose_job_never_reached_the_queue_is_answered_after_the_sweep(
    app: Flask,
    client: FlaskClient,
    session: Session,
    settings: Settings,
    redis_url: str,
    linen: Shop,
) -> None:
    """The web process kept the request and died before queueing its job (or Redis lost
    it): the sweep queues it, once, and a worker answers it."""
    deliver(
        client, linen.domain, "customers/data_request", {"customer": {"id": 7}}, event_id="e-71"
    )
    take_queued_privacy_request(app)  # gone from Redis, as if never queued
    ctx = execution_context(app, settings)
    queue = queue_named(connect_redis(settings), settings.queue_name)

    assert sweep(ctx, queue)["answering_privacy"] == ["e-71"]
    assert sweep(ctx, queue)["answering_privacy"] == []  # its job waits: queued once
    worker = WorkerProcess(settings, redis_url)
    try:
        wait_for(
            lambda: session.scalars(select(DataExport)).all() != [],
            timeout=60,
            what="the data request answered",
        )
    finally:
        worker.kill()
    assert sweep(ctx, queue)["answering_privacy"] == []
    session.expire_all()
    (event,) = session.scalars(select(ProviderEvent).where(ProviderEvent.event_id == "e-71"))
    assert set(event.payload) == {"answered"}


def test_a_failed_request_stays_for_people_until_shopify_sends_it_again(
    app: Flask, client: FlaskClient, settings: Settings, linen: Shop
) -> None:
    """A request whose job failed is not run again at every sweep (every few seconds): it
    stays in RQ's failed jobs, where people see it. The same event stored again (the
    database restored from before it, then Shopify's retry) is queued again."""
    deliver(client, linen.domain, "customers/redact", {"customer": {"id": 7}}, event_id="e-72")
    background = RedisExtension.background_queue(app)
    (job,) = [job for job in background.jobs if job.func_name == PRIVACY_JOB]
    fail_as_rq_does(background, job)
    ctx = execution_context(app, settings)
    queue = queue_named(connect_redis(settings), settings.queue_name)

    assert sweep(ctx, queue)["answering_privacy"] == []
    assert [job.func_name for job in background.jobs] == []
    assert job.get_status(refresh=True) == JobStatus.FAILED

    assert PRIVACY_REQUEST.enqueue(background, linen.id, "e-72")
    assert [job.args for job in background.jobs] == [(str(linen.id), "e-72")]


def test_the_sweep_reads_only_the_requests_still_unanswered(
    app: Flask, session: Session, settings: Settings, database: str, linen: Shop
) -> None:
    """The sweep asks every few seconds: it must not read every webhook every shop was
    sent, answered requests among them."""
    skip_unless_postgresql(database)
    pottery = install_shop(session, settings, "pottery").shop
    now = utcnow()
    sent_before = [
        _stored_event(linen.id, number, now - timedelta(minutes=number), topic, payload)
        for number, (topic, payload) in enumerate(
            itertools.islice(itertools.cycle(EARLIER_EVENTS), 3000), start=100
        )
    ]
    waiting = [
        _stored_event(shop_id, number, now - timedelta(seconds=number), topic, {"customer": {}})
        for number, (shop_id, topic) in enumerate(
            [
                (linen.id, "customers/redact"),
                (pottery.id, "shop/redact"),
                (linen.id, "customers/data_request"),
            ],
            start=1,
        )
    ]
    session.execute(insert(ProviderEvent), sent_before + waiting)
    analyzed(session)

    with statements_sent(Database.state(app).engine) as sent:
        unanswered = unanswered_requests(session)

    assert unanswered == [(row["shop_id"], row["event_id"]) for row in reversed(waiting)]
    (read,) = reads_of_table(sent, "provider_events")
    assert_read_by_index(session, read, "provider_events", rows=len(waiting))


# A shop's stored events: webhooks from Stripe and Shopify, helpdesk calls, and privacy
# requests answered long ago.
EARLIER_EVENTS = (
    ("charge.refund.updated", {"id": "evt_1"}),
    ("orders/updated", {"id": 7}),
    ("ticket-message-created", {"ticket_id": 1}),
    ("customers/redact", {"answered": "erased 1 customer"}),
    ("customers/data_request", {"answered": "exported 1 customer"}),
)


def _stored_event(
    shop_id: uuid.UUID, number: int, received_at: datetime, topic: str, payload: dict[str, Any]
) -> dict[str, Any]:
    provider = {"charge.refund.updated": "stripe", "ticket-message-created": "gorgias"}
    return {
        "shop_id": shop_id,
        "provider": provider.get(topic, "shopify"),
        "event_id": f"event-{number}",
        "type": topic,
        "object_id": None,
        "payload": payload,
        "created": received_at,
        "received_at": received_at,
    }
