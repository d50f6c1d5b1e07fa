"""What every response and every form keeps true: headers, CSRF, rate limits.

- Every response says ``nosniff``; HTML pages carry a CSP that allows only this origin
  (inline styles only with the request's nonce, no inline script) and no framing;
  pages and API answers that show shop data are never cached; HTTPS requests get HSTS.
- Every form is CSRF-protected (Flask-WTF). The JSON API (bearer header only, never a
  cookie) and provider webhooks (signed by the provider) are exempt.
- Sign-in attempts are limited per client (Flask-Limiter). Refused tokens, on the
  sign-in form and as bearer headers, are limited per client and per shop; over a
  limit the answer is 429 with ``Retry-After``: to anything from that client, and to
  that shop's refused tokens from anywhere (never to its live ones). Counters live in
  the app's Redis.
"""

from __future__ import annotations

import math
import secrets
import time
import uuid
from urllib.parse import urlsplit

from flask import Blueprint, Flask, Response, current_app, g, jsonify, render_template, request
from flask.sessions import SecureCookieSessionInterface
from flask_limiter import Limiter, RateLimitExceeded
from flask_limiter.util import get_remote_address
from flask_wtf.csrf import CSRFError, CSRFProtect
from limits import RateLimitItem, parse
from werkzeug.exceptions import TooManyRequests

from app.settings import Settings

LOCAL_HOSTS = frozenset({"localhost", "127.0.0.1", "[::1]"})
# Limits, overridable in the app's config (tests set small ones to reach them at once).
LIMIT_DEFAULTS = {
    "CASEWARD_SIGN_IN_LIMIT": "10/minute",
    "CASEWARD_REFUSED_TOKENS_PER_CLIENT": "20/minute",
    "CASEWARD_REFUSED_TOKENS_PER_SHOP": "60/minute",
}

csrf = CSRFProtect()


def client_key() -> str:
    """The client a limit counts, within this app: every limit's default key. Flask-Limiter
    keeps the key prefix of the first app a process builds, so the app's own prefix goes
    into the key (a process that builds many apps, as the tests do, must not count one
    app's requests against another)."""
    return f"{current_app.config['RATELIMIT_KEY_PREFIX']}:{get_remote_address()}"


limiter = Limiter(key_func=client_key, strategy="fixed-window")


class TooManyAttempts(TooManyRequests):
    def __init__(self, retry_after: int) -> None:
        super().__init__("too many refused attempts; try again later", retry_after=retry_after)


class LocalAwareSessionInterface(SecureCookieSessionInterface):
    """Flask's signed cookie, which holds only the form CSRF secret and flash messages,
    marked Secure for every host but a local one (where the demo runs over plain HTTP)."""

    def get_cookie_secure(self, app: Flask) -> bool:
        return not is_local_request()


def init_security(app: Flask, settings: Settings, *, exempt: list[Blueprint]) -> None:
    for name, value in LIMIT_DEFAULTS.items():
        app.config.setdefault(name, value)
    app.config.update(
        SESSION_COOKIE_NAME="caseward_form",
        SESSION_COOKIE_SAMESITE="Lax",
        RATELIMIT_STORAGE_URI=limiter_storage_uri(settings),
        # Test runs share one Redis between many apps; each app counts on its own.
        RATELIMIT_KEY_PREFIX=f"caseward-test-{uuid.uuid4().hex[:8]}"
        if settings.testing
        else "caseward",
        # Retry-After is set by the 429 handler below, for the limiter's limits and ours.
        RATELIMIT_HEADERS_ENABLED=False,
    )
    app.session_interface = LocalAwareSessionInterface()
    csrf.init_app(app)
    for blueprint in exempt:
        csrf.exempt(blueprint)
    limiter.init_app(app)
    app.add_template_global(csp_nonce)
    app.after_request(_security_headers)
    app.register_error_handler(TooManyRequests, _too_many_requests)
    app.register_error_handler(CSRFError, _csrf_refused)


def limiter_storage_uri(settings: Settings) -> str:
    """The app's Redis in the form ``limits`` reads (``redis+unix://`` for a socket).

    Without ``REDIS_URL`` the embedded Redis starts inside the process on first use, so
    its socket is unknown at start-up; such a run is a single process on a laptop, where
    counting in memory counts the same.
    """
    url = settings.redis_url
    if not url:
        return "memory://"
    if url.startswith("unix://"):
        return "redis+unix://" + url.removeprefix("unix://")
    return url


def is_local_request() -> bool:
    host = request.host
    name = host[: host.index("]") + 1] if host.startswith("[") else host.split(":")[0]
    return name in LOCAL_HOSTS


def csp_nonce() -> str:
    if "csp_nonce" not in g:
        g.csp_nonce = secrets.token_urlsafe(16)
    nonce: str = g.csp_nonce
    return nonce


# ------------------------------------------------------------------ refused tokens
#
# Flask-Limiter counts a request before its view runs, keyed by what the request shows.
# Only failures should count here, and the shop a refused token belongs to is known only
# after looking the token up, so these two use the limiter's own strategy and storage
# (the ``limits`` library underneath) directly: the caller's limit is tested before the
# token is read and hit on refusal; the shop's is hit on refusal, which it refuses past
# its limit.


def refuse_if_over_token_limit() -> None:
    """Before a token is read: the caller's limit, one read a request."""
    item, keys = _refused_token_limit(None)
    if not limiter.limiter.test(item, *keys):
        raise TooManyAttempts(_seconds_until_reset(item, keys))


def count_refused_token(*, shop_id: uuid.UUID | None) -> None:
    """A refusal counts against the caller and, when the token named one, its shop. Past
    the shop's limit its refused tokens are answered 429 from anywhere: they are being
    tried from many places. The shop's live tokens are never refused for it, or anyone
    replaying a revoked one could keep the shop's staff out."""
    item, keys = _refused_token_limit(None)
    limiter.limiter.hit(item, *keys)
    if shop_id is not None:
        item, keys = _refused_token_limit(shop_id)
        if not limiter.limiter.hit(item, *keys):
            raise TooManyAttempts(_seconds_until_reset(item, keys))


def _refused_token_limit(shop_id: uuid.UUID | None) -> tuple[RateLimitItem, tuple[str, ...]]:
    """The limit and its keys: the calling client's, or ``shop_id``'s."""
    prefix = str(current_app.config["RATELIMIT_KEY_PREFIX"])
    if shop_id is None:
        per_client = parse(current_app.config["CASEWARD_REFUSED_TOKENS_PER_CLIENT"])
        return per_client, (prefix, "refused-token", "client", get_remote_address())
    per_shop = parse(current_app.config["CASEWARD_REFUSED_TOKENS_PER_SHOP"])
    return per_shop, (prefix, "refused-token", "shop", str(shop_id))


def _seconds_until_reset(item: RateLimitItem, keys: tuple[str, ...]) -> int:
    reset_at = limiter.limiter.get_window_stats(item, *keys).reset_time
    return max(1, math.ceil(reset_at - time.time()))


# ------------------------------------------------------------------ responses


def _security_headers(response: Response) -> Response:
    headers = response.headers
    headers["X-Content-Type-Options"] = "nosniff"
    headers["Referrer-Policy"] = "same-origin"
    if request.blueprint == "shopify_admin":
        _embedded_page_policy(response)
    elif response.mimetype == "text/html":
        # The helpdesk sidebar is framed by whichever helpdesk the shop uses; its link is
        # signed and short-lived, and it shows nothing that acts.
        framed_by = "https:" if request.blueprint == "helpdesk" else "'none'"
        headers["Content-Security-Policy"] = (
            f"default-src 'self'; style-src 'self' 'nonce-{csp_nonce()}'; "
            "script-src 'self'; object-src 'none'; base-uri 'none'; "
            f"form-action 'self'; frame-ancestors {framed_by}"
        )
    else:
        headers["Content-Security-Policy"] = "default-src 'none'; frame-ancestors 'none'"
    if request.blueprint in ("operator", "api", "shopify_admin", "helpdesk", "proxy"):
        headers["Cache-Control"] = "no-store"
    if request.is_secure:
        headers["Strict-Transport-Security"] = "max-age=31536000; includeSubDomains"
    return response


def _embedded_page_policy(response: Response) -> None:
    """Pages inside the Shopify admin may be framed by that shop's admin only, and load
    App Bridge from where the settings say. An answer Shopify's package made (the
    patch-id-token page) keeps the policy it came with."""
    ancestors = g.get("frame_ancestors")
    if ancestors is None:
        response.headers.setdefault(
            "Content-Security-Policy", "default-src 'none'; frame-ancestors 'none'"
        )
        return
    bridge = current_app.config["CASEWARD_SETTINGS"].shopify_app_bridge_url
    response.headers["Content-Security-Policy"] = (
        f"default-src 'self'; style-src 'self' 'nonce-{csp_nonce()}'; "
        f"script-src 'self' {_origin(bridge)}; connect-src 'self' {_origin(bridge)}; "
        f"object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors {ancestors}"
    )


def _origin(url: str) -> str:
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}"


def _too_many_requests(error: TooManyRequests) -> tuple[Response | str, int, dict[str, str]]:
    retry_after = _retry_after(error)
    headers = {"Retry-After": str(retry_after)}
    message = f"Too many attempts. Try again in {retry_after} seconds."
    if request.blueprint == "operator":
        return render_template("operator/problem.html", message=message), 429, headers
    body = {"error": {"code": "rate_limited", "message": message}}
    return jsonify(body), 429, headers


def _retry_after(error: TooManyRequests) -> int:
    if isinstance(error.retry_after, int):
        return error.retry_after
    # Flask-Limiter's own breach: the window of the limit this request hit.
    current = limiter.current_limit
    if isinstance(error, RateLimitExceeded) and current is not None:
        return max(1, current.reset_at - int(time.time()))
    return 60


def _csrf_refused(error: CSRFError) -> tuple[Response | str, int]:
    message = "This form expired or did not come from Caseward. Reload the page and try again."
    if request.blueprint == "operator":
        return render_template("operator/problem.html", message=message), 400
    return jsonify({"error": {"code": "csrf_failed", "message": error.description}}), 400
