"""The embedded admin: a Shopify session token in, a Caseward staff actor out.

Merchants meet Caseward inside the Shopify admin, which frames ``/app`` and hands the page
a session token (``id_token`` on the first load; App Bridge adds it as a bearer header to
every fetch). For every such request:

1. Verify the token (:meth:`integrations.shopify.auth.ShopifyAuth.verify_admin_request`:
   signature with the app secret, audience, ``iss``/``dest`` of one shop, ``exp``/``nbf``
   with ~10 s of skew). A refused fetch gets 401 with
   ``X-Shopify-Retry-Invalid-Session-Request: 1``; a refused page load gets Shopify's own
   answer (the patch-id-token page, which fetches a fresh token and comes back).
2. A shop without a live install is installed (or reinstalled) here: the session token is
   exchanged for the shop's offline token (:mod:`app.shopify.install`).
3. The person (``sub``) is admitted on their first request: an online token exchange says
   whether they are the store's account owner (owner) or not (viewer, until an owner
   says otherwise). The install and the admission are committed before the request's
   own work, so a refusal later in the request does not undo them.
4. The request continues as :class:`app.actors.Actor` ``staff:{sub}`` through
   ``shopify_admin``; roles and limits are read from ``staff_members`` on every request.

Nothing about a session lives between requests: each request carries its own token and
the verification result lives on the request.
"""

from __future__ import annotations

import functools
import logging
import uuid
from collections.abc import Callable
from datetime import datetime
from typing import Any, Concatenate, ParamSpec

import httpx
from flask import (
    Blueprint,
    Flask,
    Request,
    Response,
    current_app,
    g,
    render_template,
    request,
    url_for,
)
from flask_babel import gettext as _
from sqlalchemy.orm import Session

from app.actors import Surface, staff, system_actor
from app.clock import utcnow
from app.connections.setup import SetupSteps, setup_steps
from app.crypto import SecretBox
from app.db import request_session
from app.errors import SessionTokenRefused
from app.history_audit.models import HistoryScan
from app.history_audit.scan import start_scan
from app.inbox.today import CustomerCapUse, Today, today
from app.settings import Settings
from app.shopify.install import (
    admit_staff_member,
    installed_shop,
    name_staff_member,
    record_install,
    shop_currency,
)
from app.shops.models import Shop, StaffMember, StaffRole
from app.shops.service import current_policy, staff_member
from app.staff.tokens import TOKEN_PREFIX
from app.web.admin_text import (
    current_locale,
    day_label,
    duration_text,
    money_text,
    page_words,
    policy_sentences,
)
from app.web.auth import StaffIdentity, bearer_token
from app.web.charts import Bar, Chart, bar_chart
from app.web.dispatch import queue_scan
from app.web.people import people_for
from integrations.shopify.auth import AdminVerified, Refusal, ShopifyAuth
from integrations.shopify.errors import HttpAnswer, ShopifyTokenError
from integrations.stripe.adapter import REQUIRED_PERMISSIONS

logger = logging.getLogger(__name__)
P = ParamSpec("P")
bp = Blueprint("shopify_admin", __name__, url_prefix="/app")
PATCH_ID_TOKEN_PATH = "/app/patch-id-token"  # noqa: S105  (a path, not a secret)
_EXTENSION = "caseward.shopify"
# Caseward starting the audit itself: whoever installs may not be an owner.
AUDIT_ON_INSTALL = system_actor("install", Surface.SHOPIFY_ADMIN)


def init_shopify(app: Flask, settings: Settings) -> None:
    """Make the app's Shopify credentials and HTTP client once, if Shopify is configured."""
    if not (settings.shopify_api_key and settings.shopify_api_secret):
        app.extensions[_EXTENSION] = None
        return
    app.extensions[_EXTENSION] = ShopifyAuth(
        settings.shopify_api_key,
        settings.shopify_api_secret,
        old_client_secret=settings.shopify_old_api_secret or None,
        api_base=settings.shopify_api_base or None,
        timeout=settings.provider_timeout_seconds,
    )


def shopify_auth(app: Flask) -> ShopifyAuth | None:
    auth: ShopifyAuth | None = app.extensions.get(_EXTENSION)
    return auth


class ShopifySessionTokens:
    """``Authorization: Bearer <session token>`` from App Bridge, on the JSON API."""

    def authenticate(self, req: Request) -> StaffIdentity | None:
        token = bearer_token(req)
        auth = shopify_auth(current_app)
        if token is None or token.startswith(TOKEN_PREFIX) or auth is None:
            return None
        verified = _verify(auth, req, fetch=True)
        shop, _member = admit(auth, verified)
        return StaffIdentity(shop.id, verified.user_id, None, Surface.SHOPIFY_ADMIN)


def admit(auth: ShopifyAuth, verified: AdminVerified) -> tuple[Shop, StaffMember]:
    """Steps 2 and 3: the shop installed, the person a member; committed."""
    session = request_session()
    box: SecretBox = current_app.extensions["caseward.secret_box"]
    now = utcnow()
    who = staff(verified.user_id, Surface.SHOPIFY_ADMIN)
    changed = False
    scan: HistoryScan | None = None
    try:
        found = installed_shop(session, verified.shop)
        if found is None:
            changed = True
            user = auth.exchange_online_user(verified)
            token = auth.exchange_offline_token(verified)
            shop = record_install(
                session,
                domain=verified.shop,
                token=token,
                currency=shop_currency(verified.shop, token, auth.http_client),
                installer=who,
                installer_is_account_owner=user.account_owner,
                installer_email=user.email or None,
                installer_name=user.name,
                box=box,
                now=now,
            )
            # The read-only audit of the store's past money actions starts with the install.
            scan = start_scan(
                session, shop=shop, provider="shopify", actor=AUDIT_ON_INSTALL, now=now
            )
        else:
            shop = found[0]
        member = staff_member(session, shop.id, verified.user_id)
        if member is None:
            changed = True
            user = auth.exchange_online_user(verified)
            member = admit_staff_member(
                session,
                shop,
                who,
                is_account_owner=user.account_owner,
                email=user.email or None,
                name=user.name,
                now=now,
            )
        elif member.name is None:
            changed = learn_name(auth, verified, session, member, now=now)
    except ShopifyTokenError as refused:
        session.rollback()
        raise _refusal(refused.answer) from refused
    if changed:
        session.commit()
    if scan is not None:
        queue_scan(current_app, scan)
    return shop, member


def learn_name(
    auth: ShopifyAuth,
    verified: AdminVerified,
    session: Session,
    member: StaffMember,
    *,
    now: datetime,
) -> bool:
    """A member admitted before Caseward kept names is named by Shopify's online token
    exchange on their next visit. Shopify not answering leaves them as they were: their
    email still names them, and the visit goes on."""
    try:
        user = auth.exchange_online_user(verified)
    except (ShopifyTokenError, httpx.HTTPError):
        logger.warning(
            "no name for staff member %s: the online token exchange failed", member.user_id
        )
        return False
    name_staff_member(session, member, name=user.name, now=now)
    return True


def _verify(auth: ShopifyAuth, req: Request, *, fetch: bool) -> AdminVerified:
    verification = auth.verify_admin_request(
        req.method,
        req.url,
        dict(req.headers),
        req.get_data(cache=True),
        patch_id_token_path=PATCH_ID_TOKEN_PATH,
        fetch=fetch,
    )
    if isinstance(verification, Refusal):
        raise _refusal(verification.answer)
    return verification


def _refusal(answer: HttpAnswer) -> SessionTokenRefused:
    """Our JSON 401, carrying whatever retry headers Shopify's answer asked for."""
    refused = SessionTokenRefused("a valid Shopify session token is required")
    refused.headers.update(
        (k, v) for k, v in answer.headers.items() if k.lower().startswith("x-shopify")
    )
    return refused


# ------------------------------------------------------------------ pages


def embedded_page(
    view: Callable[Concatenate[Shop, StaffMember, P], str],
) -> Callable[P, Response]:
    """Verify the page load (steps 1-4), then render ``view`` framed by the shop's admin;
    the values of the page's URL follow the shop and the person."""

    @functools.wraps(view)
    def page(*args: P.args, **kwargs: P.kwargs) -> Response:
        auth = shopify_auth(current_app)
        if auth is None:
            return Response("Shopify is not configured for this Caseward.", 404)
        verification = auth.verify_admin_request(
            request.method,
            request.url,
            dict(request.headers),
            request.get_data(cache=True),
            patch_id_token_path=PATCH_ID_TOKEN_PATH,
        )
        if isinstance(verification, Refusal):
            return _send(verification.answer)
        try:
            shop, member = admit(auth, verification)
        except SessionTokenRefused:
            return _send(verification.invalid_token_answer)
        g.shop, g.member = shop, member
        g.actor = staff(verification.user_id, Surface.SHOPIFY_ADMIN)
        admin = current_app.config["CASEWARD_SETTINGS"].shopify_admin_origin
        g.frame_ancestors = f"https://{shop.domain} {admin}"
        g.shopify_api_key = auth.client_id
        response = Response(view(shop, member, *args, **kwargs), 200, mimetype="text/html")
        for name, value in verification.headers.items():
            if name.lower() != "content-security-policy":  # ours says the same, and more
                response.headers[name] = value
        return response

    return page


@bp.get("")
@bp.get("/")
@embedded_page
def home(shop: Shop, member: StaffMember) -> str:
    """The shop's day (:func:`app.inbox.today.today`); a shop not set up yet lands on the
    setup page instead. A tripped brake comes first, with its Resume button for those who
    may resume (:func:`app.execution.brakes.resume`: owners and approvers)."""
    session = request_session()
    steps = setup_steps(session, shop)
    if steps.remaining:
        return _setup_html(shop, member, steps)
    overview = today(session, shop.id, current_policy(session, shop.id), utcnow())
    locale = current_locale()
    return render_template(
        "admin/home.html",
        shop=shop,
        member=member,
        today=overview,
        may_resume=member.role in StaffRole.CAN_APPROVE,
        charts=_day_charts(overview, locale),
        person=people_for(session, shop.id).of,
        duration=lambda span: duration_text(span, locale),
    )


def _day_charts(overview: Today, locale: str) -> list[Chart]:
    """Cases resolved per day, and refunds confirmed per day in each currency refunded."""
    days = overview.days
    charts = [
        bar_chart(
            [Bar(day_label(day.day, locale), day.resolved, str(day.resolved)) for day in days],
            title=_("Cases resolved per day"),
        )
    ]
    for currency in sorted({currency for day in days for currency in day.refunded}):
        charts.append(
            bar_chart(
                [
                    Bar(
                        day_label(day.day, locale),
                        day.refunded.get(currency, 0),
                        money_text(day.refunded.get(currency, 0), currency, locale),
                    )
                    for day in days
                ],
                title=_("Refunds the provider confirmed per day (%(currency)s)")
                % {"currency": currency.upper()},
            )
        )
    if overview.customer_cap is not None:
        charts.append(_customer_cap_chart(overview.customer_cap, locale))
    return charts


def _customer_cap_chart(use: CustomerCapUse, locale: str) -> Chart:
    """The customers who spent most against the per-customer cap, the cap drawn across."""
    limit = use.rule.limit
    return bar_chart(
        [Bar(name, spent.amount, spent.format(locale)) for name, spent in use.customers],
        title=_("The customers nearest the per-customer cap (%(days)s days)")
        % {"days": use.rule.period.days},
        limit=Bar(_("the cap"), limit.amount, limit.format(locale)),
    )


@bp.get("/setup")
@embedded_page
def setup(shop: Shop, member: StaffMember) -> str:
    """Connect Stripe (tested first), read the policy, see that nothing moves yet, and
    turn writes on. Owners act; everyone else sees where the shop stands."""
    return _setup_html(shop, member, setup_steps(request_session(), shop))


def _setup_html(shop: Shop, member: StaffMember, steps: SetupSteps) -> str:
    session = request_session()
    return render_template(
        "admin/setup.html",
        shop=shop,
        member=member,
        steps=steps,
        policy=policy_sentences(current_policy(session, shop.id), current_locale()),
        permissions=REQUIRED_PERMISSIONS,
        is_owner=member.role in StaffRole.OWNER_ONLY,
    )


# Shopify's own query on every admin page: which shop, the admin's host and language.
# Links between pages carry it on, so a reload fetches a fresh session token for the
# same shop and the next page reads in the same language.
_CONTEXT_PARAMETERS = ("embedded", "shop", "host", "locale")


def admin_url(endpoint: str, **values: Any) -> str:
    """The URL of another admin page, carrying Shopify's query (never the token)."""
    carried: dict[str, Any] = {
        name: request.args[name] for name in _CONTEXT_PARAMETERS if name in request.args
    }
    return url_for(endpoint, **carried, **values)


def case_links() -> Callable[[uuid.UUID], str]:
    """Links to case pages, as :func:`admin_url` makes them: one is built, the others are
    made from it (a queue of 200 cases spent a fifth of its time in the URL map)."""
    any_case = uuid.UUID(int=0)
    link = admin_url("shopify_admin.case", case_id=any_case)
    return lambda case_id: link.replace(str(any_case), str(case_id), 1)


@bp.context_processor
def _page_helpers() -> dict[str, object]:
    """What every admin template uses: App Bridge's key and address, links, the locale's
    money and dates, the catalogue's words for stored codes."""
    return {
        "api_key": g.get("shopify_api_key"),
        "app_bridge_url": current_app.config["CASEWARD_SETTINGS"].shopify_app_bridge_url,
        "admin_url": admin_url,
        "case_link": case_links(),
        **page_words(),
    }


# What Shopify's package writes into the patch-id-token page; the settings may name
# another App Bridge and admin (the Shopify sandbox's stand-in, in the demo and tests).
_SHOPIFY_APP_BRIDGE = "https://cdn.shopify.com/shopifycloud/app-bridge.js"
_SHOPIFY_ADMIN = "https://admin.shopify.com"


@bp.get("/patch-id-token")
def patch_id_token() -> Response:
    """Shopify's page that fetches a fresh session token and reloads the request, with
    the App Bridge and the admin the settings name (Shopify's own unless configured)."""
    auth = shopify_auth(current_app)
    if auth is None:
        return Response("Shopify is not configured for this Caseward.", 404)
    answer = auth.patch_id_token_response(
        request.method, request.url, dict(request.headers), request.get_data(cache=True)
    )
    if answer.status != 200:
        return _send(answer)
    settings: Settings = current_app.config["CASEWARD_SETTINGS"]
    headers = dict(answer.headers)
    headers["Content-Security-Policy"] = headers["Content-Security-Policy"].replace(
        _SHOPIFY_ADMIN, settings.shopify_admin_origin
    )
    body = answer.body.replace(_SHOPIFY_APP_BRIDGE, settings.shopify_app_bridge_url)
    return _send(HttpAnswer(answer.status, body, headers))


def _send(answer: HttpAnswer) -> Response:
    response = Response(answer.body, answer.status)
    for name, value in answer.headers.items():
        response.headers[name] = value
    return response
