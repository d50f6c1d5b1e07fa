"""The helpdesk's doors: a call without the shop's secret is refused with nothing kept or
queued, a call Gorgias repeats is kept once, and a sidebar link opens only while fresh."""

from __future__ import annotations

import uuid
from dataclasses import replace
from datetime import timedelta

import pytest
from flask import Flask
from flask.testing import FlaskClient
from helpdesk_support import connect_gorgias
from rq import Queue
from sqlalchemy import func, select
from sqlalchemy.orm import Session

from app.clock import utcnow
from app.crypto import SecretBox
from app.execution.models import ProviderEvent
from app.helpdesk.connection import SECRET_HEADER, GorgiasConnected
from app.helpdesk.sidebar import LINK_LIFETIME_SECONDS, sidebar_link
from app.jobs.connection import connect_redis
from app.settings import Settings
from app.shops.models import Shop, StaffMember, StaffRole

CALL = {"event": "ticket-message-created", "ticket_id": 4242, "message_id": 9001}


@pytest.fixture
def settings(settings: Settings) -> Settings:
    return replace(
        settings,
        encryption_keys=(SecretBox.generate_key(),),
        background_queue_name=f"caseward-test-{uuid.uuid4().hex[:8]}-background",
    )


@pytest.fixture
def connected(session: Session, settings: Settings) -> GorgiasConnected:
    shop = Shop(domain="linen-doors.myshopify.com", name="Linen & Loom")
    session.add(shop)
    session.flush()
    session.add(StaffMember(shop_id=shop.id, user_id="olivia.owner", role=StaffRole.OWNER))
    saved = connect_gorgias(session, shop, settings, owner="olivia.owner", account="linen-and-loom")
    session.commit()
    return saved


def _url(connected: GorgiasConnected, what: str = "events") -> str:
    return f"/helpdesk/gorgias/{connected.connection.id}/{what}"


def _kept(session: Session) -> int:
    return session.scalar(select(func.count()).select_from(ProviderEvent)) or 0


def _queued(settings: Settings) -> int:
    return Queue(settings.background_queue_name, connection=connect_redis(settings)).count


def test_the_secret_is_made_once_and_kept_encrypted(
    connected: GorgiasConnected, session: Session
) -> None:
    assert connected.new_secret is not None and len(connected.new_secret) >= 40
    stored = connected.connection.encrypted_webhook_secret
    assert stored is not None and connected.new_secret.encode() not in stored
    assert connected.connection.account_id == "linen-and-loom.gorgias.com"


@pytest.mark.parametrize(
    "headers",
    [{}, {SECRET_HEADER: "guessed"}, {SECRET_HEADER: ""}],
    ids=["no secret", "forged", "empty"],
)
def test_a_call_without_the_shops_secret_is_refused_and_nothing_is_kept(
    connected: GorgiasConnected,
    client: FlaskClient,
    session: Session,
    settings: Settings,
    headers: dict[str, str],
) -> None:
    response = client.post(_url(connected), json=CALL, headers=headers)

    assert response.status_code == 401
    assert _kept(session) == 0
    assert _queued(settings) == 0


def test_a_call_gorgias_repeats_is_kept_and_worked_once(
    connected: GorgiasConnected, client: FlaskClient, session: Session, settings: Settings
) -> None:
    secret = {SECRET_HEADER: str(connected.new_secret)}

    first = client.post(_url(connected), json=CALL, headers=secret)
    again = client.post(_url(connected), json=CALL, headers=secret)

    assert (first.status_code, first.get_json()["duplicate"]) == (200, False)
    assert (again.status_code, again.get_json()["duplicate"]) == (200, True)
    assert _kept(session) == 1
    assert _queued(settings) == 1


def test_a_call_whose_job_was_lost_is_queued_again_when_gorgias_sends_it_again(
    connected: GorgiasConnected, client: FlaskClient, session: Session, settings: Settings
) -> None:
    """The call was kept, then the process died (or Redis was away) before its job was
    queued and before Gorgias had an answer: Gorgias sends it again, and that queues the
    job the first delivery lost, once."""
    secret = {SECRET_HEADER: str(connected.new_secret)}
    client.post(_url(connected), json=CALL, headers=secret)
    Queue(settings.background_queue_name, connection=connect_redis(settings)).empty()

    again = client.post(_url(connected), json=CALL, headers=secret)
    once_more = client.post(_url(connected), json=CALL, headers=secret)

    assert again.get_json()["duplicate"] and once_more.get_json()["duplicate"]
    assert _kept(session) == 1
    assert _queued(settings) == 1


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({**CALL, "event": "ticket-deleted"}, "event"),
        ({**CALL, "ticket_id": "12; drop"}, "ticket_id"),
        ({"event": "ticket-message-created", "ticket_id": 1}, "message_id"),
        ({**CALL, "extra": 1}, "extra"),
    ],
)
def test_a_call_gorgias_could_not_have_made_is_refused_naming_the_field(
    connected: GorgiasConnected,
    client: FlaskClient,
    session: Session,
    body: dict[str, object],
    field: str,
) -> None:
    response = client.post(
        _url(connected), json=body, headers={SECRET_HEADER: str(connected.new_secret)}
    )

    assert response.status_code == 400
    assert response.get_json()["error"]["field"] == field
    assert _kept(session) == 0


def test_the_sidebar_answers_only_with_the_secret(
    connected: GorgiasConnected, client: FlaskClient
) -> None:
    url = _url(connected, "sidebar") + "?ticket_id=4242"

    assert client.get(url).status_code == 401
    answer = client.get(url, headers={SECRET_HEADER: str(connected.new_secret)})
    assert answer.status_code == 200
    assert answer.get_json() == {"ticket_id": 4242, "known": False}


def test_a_sidebar_link_opens_while_fresh_and_not_after(
    connected: GorgiasConnected, client: FlaskClient, app: Flask
) -> None:
    asked = client.get(
        _url(connected, "sidebar-link") + "?ticket_id=4242",
        headers={SECRET_HEADER: str(connected.new_secret)},
    )
    fresh = asked.get_json()["url"].split("/helpdesk/", 1)[1]
    stale = sidebar_link(
        app.config["SECRET_KEY"],
        shop_id=connected.connection.shop_id,
        ticket_id=4242,
        now=utcnow() - timedelta(seconds=LINK_LIFETIME_SECONDS + 1),
    )

    page = client.get(f"/helpdesk/{fresh}")
    assert page.status_code == 200 and "ticket 4242" in page.get_data(as_text=True)
    assert "frame-ancestors https:" in page.headers["Content-Security-Policy"]
    assert client.get(f"/helpdesk/sidebar/{stale}").status_code == 401
    assert client.get(f"/helpdesk/{fresh[:-2]}xx").status_code == 401
