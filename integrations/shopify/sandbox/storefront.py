"""A shop's storefront as Shopify serves it on ``{name}.myshopify.com``: the pages that
carry the app's chat embed, a customer login, and the app proxy to the app.

The storefront chat runs on the shop's own pages and reaches the app only through
Shopify's app proxy, which signs what it forwards. Neither is reachable here, so the
sandbox serves both for a shop host (``Host: {name}.myshopify.com``):

- ``GET /`` and ``GET /pages/help``: a small page with the app embed rendered as
  ``widget/extension/blocks/chat.liquid`` renders it (the root element with the embed's
  settings and the storefront's locale as data attributes, then the stylesheet and the
  module). The settings are kept per shop (:meth:`Storefront.configure_embed`, or the
  control route); the locale is English, or the one a page's path starts with, as a
  storefront serves its other languages (``/fr/``, ``/pt-BR/pages/help``);
- ``GET /cdn/caseward-chat.js`` and ``.css``: the theme app extension's assets, read from
  ``widget/extension/assets`` in this repository (Shopify's CDN serves them);
- ``GET /account/login?customer=<numeric id>``: signs that customer in with a storefront
  session cookie, a test's shortcut for Shopify's login form; ``GET /account/logout``;
- ``/apps/caseward/<rest>``: the app proxy (``[app_proxy]`` in shopify.app.toml).

The sequence of a proxied request: find the signed-in customer from the session cookie;
drop from the query the parameters Shopify sets itself (a shopper cannot choose them);
add ``shop``, ``logged_in_customer_id`` (empty when nobody is signed in), ``path_prefix``
and ``timestamp`` (sandbox clock); sign them all (:func:`proxy_signature`); send the
method, body, ``Content-Type`` and ``Accept`` headers, never the cookie, to
``{app_proxy_url}/<rest>``; relay the app's status, body, ``Content-Type`` and
``Retry-After``. No app proxy URL configured answers 404; an app that cannot be reached
or does not answer within :data:`FORWARD_TIMEOUT` answers 502.
"""

from __future__ import annotations

import hashlib
import hmac
import html
import re
import secrets
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, replace
from http.cookies import CookieError, SimpleCookie
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qsl, urlencode, urlsplit

from integrations.sandbox_kit import Response

if TYPE_CHECKING:
    from .sandbox import ShopifySandbox

PROXY_PREFIX = "/apps/caseward"
PAGES = ("/", "/pages/help")
# A page of the storefront in another of its languages: ``/fr``, ``/fr/pages/help``, ``/pt-BR/``.
_IN_LANGUAGE = re.compile(r"/(?P<locale>[a-z]{2}(?:-[A-Z]{2})?)(?P<page>/.*)?")
ASSET_PREFIX = "/cdn/"
ASSETS = Path(__file__).resolve().parents[3] / "widget" / "extension" / "assets"
ASSET_TYPES = {
    "caseward-chat.js": "text/javascript; charset=utf-8",
    "caseward-chat.css": "text/css; charset=utf-8",
}
SESSION_COOKIE = "storefront_session"
# What Shopify adds to a proxied query; the shopper's own values for them are dropped.
PROXY_PARAMETERS = frozenset(
    {"shop", "logged_in_customer_id", "path_prefix", "timestamp", "signature"}
)
FORWARDED_HEADERS = ("Content-Type", "Accept")
RELAYED_HEADERS = ("Content-Type", "Retry-After")
FORWARD_TIMEOUT = 10.0
POSITIONS = ("bottom-right", "bottom-left")
_COLOUR = re.compile(r"#[0-9a-fA-F]{6}")
# Environment proxies must not stand between the storefront and the app.
_OPENER = urllib.request.build_opener(urllib.request.ProxyHandler({}))


@dataclass(frozen=True)
class EmbedSettings:
    """The app embed block's settings for one shop, as the theme editor saves them
    (the defaults are the schema's in ``blocks/chat.liquid``)."""

    accent: str = "#1a5c45"
    accent_text: str = "#ffffff"
    position: str = "bottom-right"
    greeting: str = ""

    def __post_init__(self) -> None:
        for colour in (self.accent, self.accent_text):
            if not _COLOUR.fullmatch(colour):
                raise ValueError(f"{colour!r} is not a colour like #1a5c45")
        if self.position not in POSITIONS:
            raise ValueError(f"position must be one of {POSITIONS}")
        if not isinstance(self.greeting, str):
            raise ValueError("the greeting is text")

    def to_json(self) -> dict[str, str]:
        return asdict(self)


def proxy_signature(params: Sequence[tuple[str, str]], secret: str) -> str:
    """The app proxy's ``signature``: hex HMAC-SHA256 with the app secret over the
    parameters sorted by key, each ``key=value`` with repeated keys' values joined by
    commas, concatenated with no separator."""
    values: dict[str, list[str]] = {}
    for key, value in params:
        values.setdefault(key, []).append(value)
    message = "".join(f"{key}={','.join(values[key])}" for key in sorted(values))
    return hmac.new(secret.encode(), message.encode(), hashlib.sha256).hexdigest()


class Storefront:
    """The storefront of every sandbox shop, and the app proxy in front of the app."""

    def __init__(
        self, sandbox: ShopifySandbox, wall_clock: Callable[[], float] = time.time
    ) -> None:
        self._sandbox = sandbox
        # The app checks the proxy's timestamp against the wall clock, as Shopify's does, so
        # it is signed with the wall clock even when a test holds the sandbox's clock still.
        self._wall = wall_clock
        self._app_proxy_url: str | None = None
        self._embeds: dict[str, EmbedSettings] = {}
        # session cookie value -> (shop domain, customer number)
        self._sessions: dict[str, tuple[str, int]] = {}
        self._lock = threading.Lock()

    @property
    def app_proxy_url(self) -> str | None:
        """Where the app answers its proxy (``[app_proxy] url``); set by the demo or a test."""
        return self._app_proxy_url

    @app_proxy_url.setter
    def app_proxy_url(self, url: str | None) -> None:
        if url is not None and urlsplit(url).scheme not in ("http", "https"):
            raise ValueError(f"{url!r} is not an http(s) address")
        self._app_proxy_url = url

    @staticmethod
    def serves(path: str) -> bool:
        """Whether ``path`` on a shop host is the storefront's (never an Admin API path)."""
        return (
            _page_and_locale(path) is not None
            or path.startswith((ASSET_PREFIX, "/account/", f"{PROXY_PREFIX}/"))
            or path == PROXY_PREFIX
        )

    def configure_embed(self, shop_domain: str, **settings: Any) -> EmbedSettings:
        """Change the shop's app embed settings (``accent``, ``accent_text``,
        ``position``, ``greeting``); unknown names or bad values raise ValueError."""
        unknown = set(settings) - set(EmbedSettings.__dataclass_fields__)
        if unknown:
            raise ValueError(f"unknown embed settings: {sorted(unknown)}")
        with self._sandbox.store.lock:
            self._sandbox.store.shop(shop_domain)
        with self._lock:
            embed = replace(self._embeds.get(shop_domain, EmbedSettings()), **settings)
            self._embeds[shop_domain] = embed
        return embed

    def embed(self, shop_domain: str) -> EmbedSettings:
        """The shop's app embed settings."""
        with self._lock:
            return self._embeds.get(shop_domain, EmbedSettings())

    def handle(
        self, shop_domain: str, method: str, target: str, headers: Mapping[str, str], body: bytes
    ) -> Response:
        """Serve one storefront request for ``shop_domain``."""
        parts = urlsplit(target)
        path = parts.path
        if path == PROXY_PREFIX or path.startswith(f"{PROXY_PREFIX}/"):
            return self._forward(shop_domain, method, parts.path, parts.query, headers, body)
        if method != "GET":
            return _html(405, "Method not allowed", "<p>Method not allowed.</p>")
        if (page := _page_and_locale(path)) is not None:
            return self._page(shop_domain, *page, headers)
        if path.startswith(ASSET_PREFIX):
            return _asset(path.removeprefix(ASSET_PREFIX))
        if path == "/account/login":
            return self._login(shop_domain, dict(parse_qsl(parts.query)).get("customer", ""))
        return self._logout(headers) if path == "/account/logout" else _not_found()

    # -- pages -----------------------------------------------------------------------------

    def _page(
        self, shop_domain: str, path: str, locale: str, headers: Mapping[str, str]
    ) -> Response:
        with self._sandbox.store.lock:
            shop_name = self._sandbox.store.shop(shop_domain).name
        customer = self._customer(shop_domain, headers)
        account = (
            f'Signed in as customer {customer} · <a href="/account/logout">Sign out</a>'
            if customer is not None
            else "Not signed in"
        )
        title = "Help" if path == "/pages/help" else shop_name
        content = (
            f"<header><strong>{html.escape(shop_name)}</strong> · "
            f'<a href="/">Home</a> · <a href="/pages/help">Help</a> · {account}</header>'
            f"<main><h1>{html.escape(title)}</h1>"
            "<p>Questions about an order? Chat with us.</p></main>"
            f"{_embed_html(self.embed(shop_domain), locale)}"
        )
        return _html(200, f"{title} · {shop_name}", content, lang=locale)

    def _login(self, shop_domain: str, customer: str) -> Response:
        with self._sandbox.store.lock:
            shop = self._sandbox.store.shop(shop_domain)
            known = customer.isdigit() and int(customer) in shop.customers
        if not known:
            return _html(404, "No such customer", "<p>No such customer in this shop.</p>")
        session = secrets.token_urlsafe(24)
        with self._lock:
            self._sessions[session] = (shop_domain, int(customer))
        response = _html(200, "Signed in", '<p>Signed in. <a href="/">Back to the shop</a></p>')
        response.headers["Set-Cookie"] = (
            f"{SESSION_COOKIE}={session}; Path=/; HttpOnly; SameSite=Lax"
        )
        return response

    def _logout(self, headers: Mapping[str, str]) -> Response:
        session = _cookie(headers, SESSION_COOKIE)
        with self._lock:
            self._sessions.pop(session or "", None)
        response = _html(200, "Signed out", '<p>Signed out. <a href="/">Back to the shop</a></p>')
        response.headers["Set-Cookie"] = f"{SESSION_COOKIE}=; Path=/; Max-Age=0"
        return response

    def _customer(self, shop_domain: str, headers: Mapping[str, str]) -> int | None:
        """The customer signed in to this shop's storefront, if any."""
        session = _cookie(headers, SESSION_COOKIE)
        with self._lock:
            signed_in = self._sessions.get(session or "")
        if signed_in is None or signed_in[0] != shop_domain:
            return None
        return signed_in[1]

    # -- the app proxy ---------------------------------------------------------------------

    def _forward(
        self,
        shop_domain: str,
        method: str,
        path: str,
        query: str,
        headers: Mapping[str, str],
        body: bytes,
    ) -> Response:
        if self._app_proxy_url is None:
            return _not_found()
        customer = self._customer(shop_domain, headers)
        params = [
            (key, value)
            for key, value in parse_qsl(query, keep_blank_values=True)
            if key not in PROXY_PARAMETERS
        ]
        params += [
            ("shop", shop_domain),
            ("logged_in_customer_id", "" if customer is None else str(customer)),
            ("path_prefix", PROXY_PREFIX),
            ("timestamp", str(int(self._wall()))),
        ]
        params.append(("signature", proxy_signature(params, self._sandbox.api_secret)))
        url = f"{self._app_proxy_url.rstrip('/')}{path.removeprefix(PROXY_PREFIX)}"
        request = urllib.request.Request(  # noqa: S310 - the app proxy URL is http(s) by validation
            f"{url}?{urlencode(params)}",
            data=body or None,
            method=method,
            headers={name: headers[name] for name in FORWARDED_HEADERS if name in headers},
        )
        try:
            with _OPENER.open(request, timeout=FORWARD_TIMEOUT) as answer:
                status, payload, answered = answer.status, answer.read(), answer.headers
        except urllib.error.HTTPError as error:
            status, payload, answered = error.code, error.read(), error.headers
        except OSError:
            return _html(502, "Bad gateway", "<p>The app did not answer.</p>")
        relayed = {name: answered[name] for name in RELAYED_HEADERS if answered[name] is not None}
        return Response(status, payload, relayed)


def _page_and_locale(path: str) -> tuple[str, str] | None:
    """The storefront page ``path`` shows and its locale; None when it is no page."""
    if path in PAGES:
        return path, "en"
    found = _IN_LANGUAGE.fullmatch(path)
    if found is None or (found["page"] or "/") not in PAGES:
        return None
    return found["page"] or "/", found["locale"]


def _embed_html(embed: EmbedSettings, locale: str) -> str:
    """The app embed as ``blocks/chat.liquid`` renders it on a page in ``locale``, with the
    sandbox's asset URLs."""
    attributes = " ".join(
        f'data-{name}="{html.escape(value)}"'
        for name, value in (
            ("accent", embed.accent),
            ("accent-text", embed.accent_text),
            ("position", embed.position),
            ("greeting", embed.greeting),
            ("locale", locale),
        )
    )
    return (
        f'<div class="caseward-chat" data-caseward-chat {attributes}></div>'
        f'<link href="{ASSET_PREFIX}caseward-chat.css" rel="stylesheet" type="text/css" '
        'media="all" />'
        f'<script type="module" src="{ASSET_PREFIX}caseward-chat.js"></script>'
    )


def _asset(name: str) -> Response:
    content_type = ASSET_TYPES.get(name)
    if content_type is None or not (ASSETS / name).is_file():
        return _not_found()
    return Response(200, (ASSETS / name).read_bytes(), {"Content-Type": content_type})


def _not_found() -> Response:
    return _html(404, "Not found", "<p>This page does not exist.</p>")


def _cookie(headers: Mapping[str, str], name: str) -> str | None:
    try:
        jar = SimpleCookie(headers.get("Cookie") or "")
    except CookieError:
        return None
    morsel = jar.get(name)
    return morsel.value if morsel is not None else None


def _html(status: int, title: str, content: str, lang: str = "en") -> Response:
    page = (
        f'<!doctype html><html lang="{html.escape(lang)}"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>{html.escape(title)}</title>"
        "<style>body{margin:0;font:16px/1.5 system-ui,sans-serif;color:#1f2328}"
        "header,main{padding:1rem}header{border-bottom:1px solid #ccc}</style>"
        f"</head><body>{content}</body></html>"
    )
    return Response(status, page.encode(), {"Content-Type": "text/html; charset=utf-8"})
