"""The helpdesk's doors: Gorgias' HTTP integration calls, its sidebar, and a signed page.

Every request naming a connection carries the shop's integration secret in
:data:`~app.helpdesk.connection.SECRET_HEADER`, compared in constant time before
anything is read: a wrong or missing one is 401 with nothing stored. Calls are kept once
and answered at once, the work queued after the commit (Gorgias turns an integration off
after 100 failures in a row); a call sent again queues its job if Redis holds none (the
first delivery's was lost before Gorgias had an answer). The HTML sidebar opens only with
a short-lived signed link that a request with the secret asked for, and may be framed by
any https helpdesk.
"""

from __future__ import annotations

import uuid

from flask import Blueprint, Response, current_app, jsonify, render_template, request
from sqlalchemy.orm import Session

from app.actors import Surface, system_actor
from app.cases.models import case_reference
from app.clock import utcnow
from app.connections.models import Connection
from app.db import request_session
from app.errors import NotFound, Unauthenticated
from app.helpdesk.connection import GORGIAS, SECRET_HEADER, secret_matches
from app.helpdesk.events import keep_once, parse_call
from app.helpdesk.jobs import HELPDESK_CALL
from app.helpdesk.sidebar import sidebar_link, sidebar_view, ticket_of_link
from app.jobs.connection import RedisExtension
from app.shops.models import Shop
from app.validation import integer
from app.web.admin_text import page_words
from app.web.api.parsing import json_body
from app.web.people import people_for
from app.words import said

bp = Blueprint("helpdesk", __name__, url_prefix="/helpdesk")
GORGIAS_CALLS = system_actor("gorgias", Surface.HELPDESK)


@bp.post("/gorgias/<uuid:connection_id>/events")
def gorgias_call(connection_id: uuid.UUID) -> tuple[Response, int]:
    session = request_session()
    connection = _verified(session, connection_id)
    call = parse_call(json_body())
    kept = keep_once(
        session, shop_id=connection.shop_id, call=call, actor=GORGIAS_CALLS, now=utcnow()
    )
    background = RedisExtension.background_queue(current_app)
    if not kept:
        session.rollback()
        # Gorgias sends a call again when it got no answer: the first delivery may have
        # been kept and its job lost (the process died, Redis was away) before answering.
        HELPDESK_CALL.requeue(background, connection.shop_id, call.key)
        return jsonify({"received": True, "duplicate": True}), 200
    session.commit()
    HELPDESK_CALL.enqueue(background, connection.shop_id, call.key)
    return jsonify({"received": True, "duplicate": False}), 200


@bp.get("/gorgias/<uuid:connection_id>/sidebar")
def gorgias_sidebar(connection_id: uuid.UUID) -> Response:
    session = request_session()
    connection = _verified(session, connection_id)
    shop = session.get(Shop, connection.shop_id)
    assert shop is not None
    view = sidebar_view(
        session,
        shop=shop,
        ticket_id=_ticket_id(),
        admin_origin=current_app.config["CASEWARD_SETTINGS"].shopify_admin_origin,
    )
    return jsonify(view)


@bp.get("/gorgias/<uuid:connection_id>/sidebar-link")
def gorgias_sidebar_link(connection_id: uuid.UUID) -> Response:
    connection = _verified(request_session(), connection_id)
    token = sidebar_link(
        current_app.config["SECRET_KEY"],
        shop_id=connection.shop_id,
        ticket_id=_ticket_id(),
        now=utcnow(),
    )
    return jsonify({"url": f"{request.host_url.rstrip('/')}/helpdesk/sidebar/{token}"})


@bp.get("/sidebar/<token>")
def sidebar_page(token: str) -> Response:
    opened = ticket_of_link(current_app.config["SECRET_KEY"], token, now=utcnow())
    if opened is None:
        raise Unauthenticated(said("this sidebar link has expired or was not made by Caseward"))
    shop_id, ticket_id = opened
    session = request_session()
    shop = session.get(Shop, shop_id)
    if shop is None:
        raise NotFound(said("this shop does not use Caseward"))
    view = sidebar_view(
        session,
        shop=shop,
        ticket_id=ticket_id,
        admin_origin=current_app.config["CASEWARD_SETTINGS"].shopify_admin_origin,
    )
    people = people_for(session, shop.id)
    page = render_template(
        "helpdesk/sidebar.html",
        view=view,
        person=people.of,
        case_number=lambda case_id: case_reference(uuid.UUID(case_id)),
        **page_words(),
    )
    return Response(page, mimetype="text/html")


def _verified(session: Session, connection_id: uuid.UUID) -> Connection:
    connection = session.get(Connection, connection_id)
    if connection is None or connection.provider != GORGIAS:
        raise NotFound(said("no such helpdesk connection"))
    box = current_app.extensions["caseward.secret_box"]
    if not secret_matches(connection, box, request.headers.get(SECRET_HEADER)):
        raise Unauthenticated(said("the helpdesk's secret is missing or wrong"))
    return connection


def _ticket_id() -> int:
    raw = request.args.get("ticket_id", "")
    value: object = int(raw) if raw.isascii() and raw.isdigit() and len(raw) <= 16 else raw
    return integer(value, "ticket_id", minimum=1, maximum=2**53)
