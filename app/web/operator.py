"""A plain server-rendered operator page: no token in the page, no script.

Sign in at ``/operator/login`` by pasting a staff token into a form (posted, never put
in an address). That opens a server-side session (:mod:`app.staff.sessions`) behind an
HttpOnly cookie holding only a random id; the page never sees the token again. Every
request re-checks the token the session was opened with and the person's current
membership, so revoking the token or removing the person ends the session.

Approve and reject are CSRF-protected form posts that call the same domain functions
as the API, commit, then enqueue, and send the browser back to the case.
"""

from __future__ import annotations

import uuid

from flask import (
    Blueprint,
    Response,
    abort,
    current_app,
    flash,
    g,
    make_response,
    redirect,
    render_template,
    request,
    url_for,
)
from flask_babel import gettext as _
from redis import Redis
from werkzeug.exceptions import HTTPException
from werkzeug.wrappers import Response as WerkzeugResponse

from app.actors import Surface, staff
from app.approvals.service import approve_proposal, reject_proposal
from app.cases.service import case_audit, list_cases
from app.clock import utcnow
from app.db import request_session
from app.errors import CasewardError
from app.inbox.case_file import case_file
from app.inbox.views import ProposalView
from app.jobs.connection import RedisExtension
from app.shops.models import Shop
from app.shops.service import shop_and_member, staff_member
from app.staff.sessions import (
    SESSION_LIFETIME,
    OperatorSession,
    end_session,
    open_session,
    read_session,
)
from app.staff.tokens import TokenRefused, authenticate_token, live_token
from app.web.admin_text import page_words
from app.web.dispatch import commit_and_enqueue
from app.web.people import people_for
from app.web.security import (
    count_refused_token,
    is_local_request,
    limiter,
    refuse_if_over_token_limit,
)

bp = Blueprint("operator", __name__, url_prefix="/operator")
COOKIE = "caseward_operator"


@bp.get("/login")
def login_form() -> str:
    return render_template("operator/login.html", error=None)


@bp.post("/login")
@limiter.limit(lambda: str(current_app.config["CASEWARD_SIGN_IN_LIMIT"]))
def login() -> WerkzeugResponse:
    refuse_if_over_token_limit()
    session = request_session()
    try:
        token = authenticate_token(session, request.form.get("token", "").strip(), now=utcnow())
    except TokenRefused as refused:
        count_refused_token(shop_id=refused.shop_id)
        return _login_refused(_("That token is not valid."), 401)
    if staff_member(session, token.shop_id, token.user_id) is None:
        return _login_refused(_("That token's person is not staff of its shop."), 403)
    session.commit()  # the token's last use
    session_id = open_session(_redis(), OperatorSession(token.shop_id, token.user_id, token.id))
    response = redirect(url_for("operator.cases"), code=303)
    response.set_cookie(
        COOKIE,
        session_id,
        max_age=int(SESSION_LIFETIME.total_seconds()),
        path="/operator",
        secure=not is_local_request(),
        httponly=True,
        samesite="Strict",
    )
    return response


@bp.post("/logout")
def logout() -> WerkzeugResponse:
    end_session(_redis(), request.cookies.get(COOKIE, ""))
    response = redirect(url_for("operator.login_form"), code=303)
    response.delete_cookie(COOKIE, path="/operator", httponly=True, samesite="Strict")
    return response


@bp.context_processor
def _page_helpers() -> dict[str, object]:
    """The admin's words for the same things: money, times, codes and people."""
    return page_words()


@bp.get("/")
def cases() -> Response:
    shop = _signed_in()
    return make_response(
        render_template(
            "operator/cases.html",
            shop=shop,
            cases=list_cases(request_session(), shop.id),
            person=people_for(request_session(), shop.id).of,
        )
    )


@bp.get("/cases/<uuid:case_id>")
def case(case_id: uuid.UUID) -> Response:
    shop = _signed_in()
    session = request_session()
    file = case_file(session, shop.id, case_id)
    return make_response(
        render_template(
            "operator/case.html",
            shop=shop,
            file=file,
            proposals=[
                (ProposalView.of(proposal), approvals) for proposal, approvals in file.proposals
            ],
            events=case_audit(session, shop.id, case_id),
            person=people_for(session, shop.id).of,
        )
    )


@bp.post("/cases/<uuid:case_id>/proposals/<uuid:proposal_id>/approve")
def approve(case_id: uuid.UUID, proposal_id: uuid.UUID) -> WerkzeugResponse:
    shop = _signed_in()
    try:
        result = approve_proposal(
            request_session(),
            shop=shop,
            proposal_id=proposal_id,
            actor=g.actor,
            digest=request.form.get("digest", ""),
            settings=current_app.config["CASEWARD_SETTINGS"],
            now=utcnow(),
        )
        commit_and_enqueue(result)
    except CasewardError as error:
        _refused(error)
    return redirect(url_for("operator.case", case_id=case_id), code=303)


@bp.post("/cases/<uuid:case_id>/proposals/<uuid:proposal_id>/reject")
def reject(case_id: uuid.UUID, proposal_id: uuid.UUID) -> WerkzeugResponse:
    shop = _signed_in()
    session = request_session()
    try:
        reject_proposal(
            session,
            shop=shop,
            proposal_id=proposal_id,
            actor=g.actor,
            reason=request.form.get("reason", "").strip() or "rejected on the operator page",
            now=utcnow(),
        )
        session.commit()
    except CasewardError as error:
        _refused(error)
    return redirect(url_for("operator.case", case_id=case_id), code=303)


@bp.errorhandler(401)
@bp.errorhandler(403)
def _not_allowed(error: HTTPException) -> tuple[str, int]:
    return render_template("operator/problem.html", message=error.description), error.code or 401


def _signed_in() -> Shop:
    """The signed-in person's shop; ``g`` gets the actor and their membership as of now."""
    opened = read_session(_redis(), request.cookies.get(COOKIE, ""))
    if opened is None:
        abort(401, _("Please sign in."))
    session = request_session()
    token = live_token(session, opened.token_id, now=utcnow())
    if token is None or token.shop_id != opened.shop_id or token.user_id != opened.user_id:
        abort(401, _("Your sign-in has ended. Please sign in again."))
    shop, member = shop_and_member(session, opened.shop_id, opened.user_id)
    if member is None or shop is None:
        abort(403, _("You are no longer staff of this shop."))
    g.shop, g.member, g.token_id = shop, member, opened.token_id
    g.actor = staff(opened.user_id, Surface.OPERATOR_PAGE)
    return shop


def _login_refused(message: str, status: int) -> WerkzeugResponse:
    return make_response(render_template("operator/login.html", error=message), status)


def _refused(error: CasewardError) -> None:
    """Nothing half-written; the person sees why on the case page."""
    request_session().rollback()
    flash(error.message, "error")


def _redis() -> Redis:
    return RedisExtension.connection(current_app)
