"""A plain server-rendered operator page over the staff API.

Sign in at ``/operator/login`` by pasting a staff token (``flask issue-token``). It is
posted, never put in an address, so no access log holds it, and kept in an HttpOnly
cookie. Buttons call the JSON API with the token as a bearer header, so the API never
trusts cookies.
"""

from __future__ import annotations

import uuid

from flask import Blueprint, Response, abort, make_response, redirect, render_template, request
from werkzeug.wrappers import Response as WerkzeugResponse

from app.cases.service import case_audit, case_file, list_cases
from app.db import request_session
from app.errors import Unauthenticated
from app.money import Money
from app.shops.models import Shop
from app.web.auth import StaffIdentity, shop_of, staff_token

bp = Blueprint("operator", __name__, url_prefix="/operator")
COOKIE = "caseward_operator"


@bp.get("/login")
def login_form() -> str:
    return render_template("operator/login.html", error=None)


@bp.post("/login")
def login() -> WerkzeugResponse:
    token = request.form.get("token", "").strip()
    if staff_token().verify(token) is None:
        page = render_template("operator/login.html", error="That token is not valid.")
        return make_response(page, 401)
    response = redirect("/operator/", code=303)
    response.set_cookie(COOKIE, token, httponly=True, samesite="Strict", max_age=3600)
    return response


@bp.get("/")
def cases() -> Response:
    identity, shop, token = _signed_in()
    return make_response(
        render_template(
            "operator/cases.html",
            shop=shop,
            identity=identity,
            token=token,
            cases=list_cases(request_session(), shop.id),
        )
    )


@bp.get("/cases/<uuid:case_id>")
def case(case_id: uuid.UUID) -> Response:
    identity, shop, token = _signed_in()
    session = request_session()
    return make_response(
        render_template(
            "operator/case.html",
            shop=shop,
            identity=identity,
            token=token,
            file=case_file(session, shop.id, case_id),
            events=case_audit(session, shop.id, case_id),
            money=_money,
        )
    )


def _money(amount: int | None, currency: str | None) -> str:
    return Money(amount, currency).format() if amount is not None and currency else "-"


def _signed_in() -> tuple[StaffIdentity, Shop, str]:
    token = request.cookies.get(COOKIE, "")
    identity = staff_token().verify(token) if token else None
    if identity is None:
        abort(401)
    try:
        return identity, shop_of(identity), token
    except Unauthenticated:
        abort(401)
