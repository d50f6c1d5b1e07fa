"""The storefront chat's door: Shopify's signed app proxy. What is refused, what a shopper
sees, and what one shopper can never see of another."""

from __future__ import annotations

import time
import uuid

import pytest
from flask import Flask
from flask.testing import FlaskClient
from shopify_support import signed_proxy_query
from sqlalchemy import func, select
from sqlalchemy.orm import Session
from storefront_support import APP_SECRET, Shopper

from app.actors import Surface, staff
from app.cases.models import Case
from app.clock import utcnow
from app.conversations.models import Conversation
from app.shops.models import Shop, StaffMember, StaffRole
from app.shops.service import save_policy

DOMAIN = "linen-proxy.myshopify.com"


@pytest.fixture
def shop(session: Session) -> Shop:
    shop = Shop(domain=DOMAIN, name="Linen & Loom")
    session.add(shop)
    session.flush()
    session.add(StaffMember(shop_id=shop.id, user_id="olivia.owner", role=StaffRole.OWNER))
    session.commit()
    return shop


def _shopper(client: FlaskClient, **kwargs: str) -> Shopper:
    return Shopper(client, DOMAIN, secret=APP_SECRET, **kwargs)


def _conversations(session: Session) -> int:
    return session.scalar(select(func.count()).select_from(Conversation)) or 0


@pytest.mark.parametrize(
    "params",
    [
        {"timestamp": str(int(time.time()))},  # no signature
        {"timestamp": str(int(time.time()) - 600), "signed": "1"},  # stale
        {"timestamp": str(int(time.time())), "signed": "other-secret"},
    ],
    ids=["unsigned", "stale", "wrong-secret"],
)
def test_a_request_shopify_did_not_sign_is_refused_and_nothing_is_kept(
    shop: Shop, client: FlaskClient, session: Session, params: dict[str, str]
) -> None:
    query = {
        "shop": DOMAIN.removesuffix(".myshopify.com"),
        "logged_in_customer_id": "",
        "path_prefix": "/apps/caseward",
        "timestamp": params["timestamp"],
    }
    signed = params.get("signed")
    target = (
        signed_proxy_query(query, APP_SECRET if signed == "1" else "shpss_somebody_else")
        if signed
        else "&".join(f"{k}={v}" for k, v in query.items())
    )

    response = client.post(f"/proxy/chat/messages?{target}", json={"text": "refund me"})

    assert response.status_code == 401
    assert _conversations(session) == 0


def test_a_shop_without_caseward_is_not_found(client: FlaskClient, session: Session) -> None:
    response = Shopper(client, "elsewhere.myshopify.com", secret=APP_SECRET).post(
        "/chat/messages", {"text": "hello"}
    )

    assert response.status_code == 404
    assert _conversations(session) == 0


def test_a_new_shopper_gets_a_token_that_is_never_stored(
    shop: Shop, client: FlaskClient, session: Session
) -> None:
    shopper = _shopper(client)

    state = shopper.say("Hello, my parcel is late")

    token = state["conversation"]
    assert isinstance(token, str) and len(token) >= 40
    assert shopper.state()["conversation"] == token  # every answer gives it back
    stored = session.scalars(select(Conversation.channel_ref)).one()
    assert stored != token and token not in stored
    assert [m["from"] for m in state["messages"]] == ["customer"]
    assert set(state) == {
        "conversation",
        "greeting",
        "labels",
        "identity",
        "verification",
        "messages",
        "case",
        "choices",
        "can_ask_for_person",
        "poll_after",
    }
    assert set(state["case"]) == {"reference", "status", "status_text", "updates"}


def test_a_logged_in_customer_is_verified_by_shopifys_word(shop: Shop, client: FlaskClient) -> None:
    state = _shopper(client, logged_in_customer_id="7391").say("Hi")

    assert state["identity"]["verified"] is True
    assert state["identity"]["how"] == "logged_in"


def test_a_conversation_verified_by_one_login_is_not_shown_to_another(
    shop: Shop, client: FlaskClient
) -> None:
    maya = _shopper(client, logged_in_customer_id="7391")
    maya.say("My order number is #1001, the apron is torn")

    for other_login in ("", "8888"):
        someone = _shopper(client, logged_in_customer_id=other_login)
        someone.token = maya.token
        seen = someone.state()
        assert seen["conversation"] is None and seen["messages"] == []


def test_a_token_nobody_was_given_shows_nothing(shop: Shop, client: FlaskClient) -> None:
    guesser = _shopper(client)
    guesser.token = uuid.uuid4().hex

    assert guesser.state()["messages"] == []


def test_too_long_a_message_is_refused_with_its_field(
    shop: Shop, client: FlaskClient, session: Session
) -> None:
    response = _shopper(client).post("/chat/messages", {"text": "x" * 2001})

    assert response.status_code == 400
    assert response.get_json()["error"]["field"] == "text"
    assert _conversations(session) == 0


def test_a_shopper_asking_too_often_is_told_when_to_come_back(
    app: Flask, shop: Shop, client: FlaskClient
) -> None:
    app.config["CASEWARD_PROXY_PER_SHOPPER"] = "3/minute"
    shopper = _shopper(client, logged_in_customer_id="7391")
    shopper.say("one")

    answers = [shopper.get().status_code for _ in range(3)]

    assert answers == [200, 200, 429]
    assert int(shopper.get().headers["Retry-After"]) > 0
    # Another shopper of the same shop is not held back.
    assert _shopper(client, logged_in_customer_id="8888").get().status_code == 200


def test_a_shop_is_limited_as_a_whole(app: Flask, shop: Shop, client: FlaskClient) -> None:
    app.config["CASEWARD_PROXY_PER_SHOP"] = "2/minute"

    answers = [_shopper(client, logged_in_customer_id=str(n)).get().status_code for n in range(3)]

    assert answers == [200, 200, 429]


def test_asking_for_a_person_puts_the_case_in_front_of_a_named_owner(
    shop: Shop, client: FlaskClient, session: Session
) -> None:
    shopper = _shopper(client)
    shopper.say("This is the third time I write, nobody answers")

    state = shopper.post("/chat/person", {}).get_json()

    assert state["can_ask_for_person"] is False
    assert "usually within one business day" in state["messages"][-1]["text"]
    assert state["case"]["status"] == "with_person"
    case = session.scalars(select(Case)).one()
    assert (case.status, case.owner) == ("needs_attention", "olivia.owner")


def test_a_case_handed_over_goes_to_the_owner_the_policy_names(
    shop: Shop, client: FlaskClient, session: Session
) -> None:
    save_policy(
        session,
        shop=shop,
        actor=staff("olivia.owner", Surface.CONSOLE),
        rules={"handover_owner": "sam.approver"},
        now=utcnow(),
    )
    session.commit()
    shopper = _shopper(client)
    shopper.say("I need help with something unusual")

    shopper.post("/chat/person", {})

    case = session.scalars(select(Case)).one()
    assert (case.status, case.owner) == ("needs_attention", "sam.approver")


def test_asking_for_a_code_answers_the_same_for_an_order_that_does_not_exist(
    shop: Shop, client: FlaskClient
) -> None:
    shopper = _shopper(client)
    shopper.say("refund please")

    answer = shopper.post("/chat/verification", {"order": "#4242", "email": "jo@example.com"})

    assert answer.status_code == 200
    assert answer.get_json() == {"sent": True, "to": "j•••@example.com"}
