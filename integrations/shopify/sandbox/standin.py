"""A local stand-in for the Shopify admin around an embedded app, for the demo and browser tests.

Shopify's admin frames an embedded app and hands it session tokens: on the first load as
``id_token`` in the iframe's address, afterwards through App Bridge, which the app loads
from Shopify's CDN and which adds a fresh token to every ``fetch`` the app makes. Neither
the admin nor the CDN is reachable here, so the sandbox serves both parts, signed with the
app secret exactly as Shopify signs them:

- ``GET /admin-standin/store/{name}/apps/{handle}[/{path}]?user=1001``, and the same at
  the admin's own address (``/store/{name}/apps/{handle}/app/cases/{id}``, as links to a
  case inside the admin are written): the admin page, framing the app's ``/{path}``
  (``/app`` by default) with Shopify's query (``embedded``, ``shop``, ``host``,
  ``id_token``) and answering the frame's requests for a fresh token. It looks like the
  admin, drawn with the app's own copy of Polaris' stylesheet: a dark top bar with the
  shop, a left sidebar with the app's pages, whose links open the same admin page at the
  page's path. Without ``user`` (the real admin knows who is signed in) it asks which of
  the shop's staff you are;
- ``GET /admin-standin/app-bridge.js``: what the app loads instead of App Bridge (point
  the app's App Bridge URL here): ``shopify.idToken()`` asks the admin page for a token,
  same-origin ``fetch`` calls carry it as ``Authorization: Bearer``, on the app's
  patch-id-token page (a link or reload inside the frame lands there, without a token)
  it reloads the page named by ``shopify-reload`` with a fresh ``id_token``, and it
  defines ``<ui-nav-menu>``, handing its links to the admin page, which draws them as the
  app's navigation in its left sidebar, as App Bridge does;
- ``GET /admin-standin/polaris.js``: beside App Bridge, where the app loads Polaris' web
  components. They are Shopify's own and not copied here: the script defines nothing, and
  the pages draw those elements with Polaris' stylesheet (``:not(:defined)``);
- ``GET /admin-standin/session-token?shop=...&user=...``: a fresh token, for the page.

Only staff the sandbox knows, of a shop where the app is installed, get a token.
"""

from __future__ import annotations

import base64
import html
import json
import time
from typing import TYPE_CHECKING
from urllib.parse import parse_qs, urlencode, urlsplit

from integrations.sandbox_kit import Response

if TYPE_CHECKING:
    from .sandbox import ShopifySandbox

PREFIX = "/admin-standin/"
# The real admin's own paths to an app, served here too.
ADMIN_PATHS = "/store/"
_MESSAGE = "caseward-standin:id-token"
_NAV_MESSAGE = "caseward-standin:nav-menu"

_BRIDGE = """\
(function () {
  "use strict";
  let counter = 0;
  const waiting = new Map();
  window.addEventListener("message", (event) => {
    const data = event.data || {};
    if (event.source !== window.parent || data.type !== "%(message)s") return;
    const resolve = waiting.get(data.id);
    waiting.delete(data.id);
    if (resolve) resolve(data.token);
  });
  function idToken() {
    return new Promise((resolve) => {
      counter += 1;
      waiting.set(counter, resolve);
      window.parent.postMessage({ type: "%(message)s", id: counter }, "*");
    });
  }
  const send = window.fetch.bind(window);
  window.fetch = async (input, init) => {
    const request = new Request(input, init);
    if (new URL(request.url).origin !== window.location.origin) return send(request);
    const headers = new Headers(request.headers);
    headers.set("Authorization", "Bearer " + (await idToken()));
    return send(new Request(request, { headers }));
  };
  const meta = document.querySelector('meta[name="shopify-api-key"]');
  window.shopify = { idToken, config: { apiKey: meta ? meta.content : null } };
  // The app's patch-id-token page: reload the page it names with a fresh token.
  const reload = new URLSearchParams(window.location.search).get("shopify-reload");
  if (reload !== null) {
    const target = new URL(reload, window.location.href);
    if (target.origin === window.location.origin) {
      idToken().then((token) => {
        target.searchParams.set("id_token", token);
        window.location.replace(target.href);
      });
    }
  }
  // The admin draws the app's navigation from <ui-nav-menu>: its links, with the page
  // the frame shows, go to the admin page once the page's markup is read.
  customElements.define("ui-nav-menu", class extends HTMLElement {
    connectedCallback() {
      const announce = () => window.parent.postMessage({
        type: "%(nav)s",
        current: window.location.pathname,
        links: Array.from(this.querySelectorAll("a"), (link) => ({
          text: link.textContent.trim(), href: link.href, home: link.rel === "home",
        })),
      }, "*");
      if (document.readyState === "loading") {
        document.addEventListener("DOMContentLoaded", announce, { once: true });
      } else {
        announce();
      }
    }
  });
})();
"""

_POLARIS = """\
/* Polaris web components are Shopify's own, served beside App Bridge, and not copied
   here. Offline the pages draw those elements (s-page, s-section, ...) with Polaris'
   stylesheet, which styles them while they are not defined: so nothing is defined. */
"""

_SCRIPTS = {
    "app-bridge.js": _BRIDGE % {"message": _MESSAGE, "nav": _NAV_MESSAGE},
    "polaris.js": _POLARIS,
}

_PAGE = """\
<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><title>Shopify admin (sandbox) · %(shop)s</title>
<link rel="stylesheet" href="%(polaris)s">
<style>
body{display:grid;grid-template:auto 1fr/var(--pg-navigation-width) 1fr;height:100vh;
  background:var(--p-color-bg);color:var(--p-color-text);font-size:var(--p-font-size-325)}
header{grid-column:1/-1;padding:var(--p-space-300) var(--p-space-400);
  background:var(--p-color-bg-inverse);color:var(--p-color-text-inverse)}
header strong{font-weight:var(--p-font-weight-semibold)}
nav{padding:var(--p-space-300) var(--p-space-200);background:var(--p-color-nav-bg)}
nav a{display:block;padding:var(--p-space-150) var(--p-space-300);
  border-radius:var(--p-border-radius-200);color:var(--p-color-text);text-decoration:none}
nav a:hover{background:var(--p-color-nav-bg-surface-hover)}
nav #app-home{font-weight:var(--p-font-weight-semibold)}
nav ul{margin:0;padding:0 0 0 var(--p-space-300);list-style:none}
nav a[aria-current=page]{background:var(--p-color-nav-bg-surface-selected);
  font-weight:var(--p-font-weight-semibold)}
iframe{border:0;width:100%%;height:100%%}
</style></head>
<body>
<header><strong>Shopify admin (sandbox)</strong> · %(shop)s · user %(user)s</header>
<nav aria-labelledby="app-home"><a id="app-home" href="%(home)s">%(handle)s</a><ul></ul></nav>
<iframe id="app" name="app-iframe" title="%(handle)s" src="%(src)s"></iframe>
<script>
const frame = document.getElementById("app");
const app = %(app_url)s;
const admin = %(admin)s;
// A link into the app opens the admin at the same path, which frames it with a fresh token.
function inAdmin(href) {
  if (!href.startsWith(app + "/")) return null;
  return admin.base + "/" + trimmed(href.slice(app.length + 1).split("?")[0]) + admin.query;
}
function trimmed(path) {
  return path.endsWith("/") ? path.slice(0, -1) : path;
}
function drawNavigation(data) {
  const home = document.getElementById("app-home");
  const items = document.querySelector("nav ul");
  const links = data.links.filter((link) => inAdmin(link.href) !== null);
  // The page the frame shows belongs to the link whose path is its longest beginning;
  // the app's first page (one segment, "/app") only to itself, not to every page below it.
  const path = (link) => trimmed(new URL(link.href).pathname);
  const shown = trimmed(data.current);
  const below = (link) => path(link).split("/").length > 2 && shown.startsWith(path(link) + "/");
  const current = links.filter((link) => !link.home && (shown === path(link) || below(link)))
    .sort((a, b) => path(b).length - path(a).length)[0];
  items.replaceChildren(...links.filter((link) => !link.home).map((link) => {
    const item = document.createElement("li");
    const anchor = item.appendChild(document.createElement("a"));
    anchor.href = inAdmin(link.href);
    anchor.textContent = link.text;
    if (link === current) anchor.setAttribute("aria-current", "page");
    return item;
  }));
  const named = links.find((link) => link.home);
  if (named) {
    home.textContent = named.text;
    home.href = inAdmin(named.href);
  }
}
window.addEventListener("message", async (event) => {
  const data = event.data || {};
  if (event.source !== frame.contentWindow) return;
  if (data.type === "%(nav)s") return drawNavigation(data);
  if (data.type !== "%(message)s") return;
  const answer = await fetch(%(token_url)s);
  const body = await answer.json();
  frame.contentWindow.postMessage({ type: "%(message)s", id: data.id, token: body.token }, "*");
});
</script>
</body>
</html>
"""


_WHO = """\
<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><title>Shopify admin (sandbox) · %(shop)s</title></head>
<body><main><h1>Who is signed in to %(shop)s?</h1><ul>%(links)s</ul></main></body>
</html>
"""


class AdminStandIn:
    def __init__(self, sandbox: ShopifySandbox) -> None:
        self._sandbox = sandbox
        # Where the embedded app is served (its origin); set by the demo or the test.
        self.app_url: str | None = None

    def handle(self, method: str, target: str) -> Response:
        parts = urlsplit(target)
        query = {k: v[0] for k, v in parse_qs(parts.query).items()}
        path = parts.path.removeprefix(PREFIX).removeprefix("/")
        if method != "GET":
            return _text(405, "GET only")
        if path in _SCRIPTS:
            return Response(200, _SCRIPTS[path].encode(), {"Content-Type": "text/javascript"})
        if path == "session-token":
            return self._session_token(query.get("shop", ""), query.get("user", ""))
        segments = path.split("/")
        if len(segments) >= 4 and segments[0] == "store" and segments[2] == "apps":
            name, handle, inner = segments[1], segments[3], "/".join(segments[4:]) or "app"
            if "user" not in query:
                return self._who(name, parts.path)
            return self._page(name, handle, query["user"], inner)
        return _text(404, "not found")

    def _session_token(self, shop: str, user: str) -> Response:
        token = self._token(shop, user)
        if token is None:
            return _text(403, "no such staff member of an installed shop")
        return Response(
            200,
            json.dumps({"token": token}).encode(),
            {"Content-Type": "application/json", "Cache-Control": "no-store"},
        )

    def _who(self, name: str, path: str) -> Response:
        """Which of the shop's staff opens the app: the real admin knows; here you say."""
        with self._sandbox.store.lock:
            shop = self._sandbox.store.shops.get(f"{name}.myshopify.com")
            staff = sorted(shop.staff.values(), key=lambda s: s.user_id) if shop else []
        links = "".join(
            f'<li><a href="{html.escape(path)}?{urlencode({"user": person.user_id})}">'
            f"{html.escape(person.first_name)} {html.escape(person.last_name)}</a></li>"
            for person in staff
        )
        page = _WHO % {"shop": html.escape(name), "links": links}
        return Response(200, page.encode(), {"Content-Type": "text/html; charset=utf-8"})

    def _page(self, name: str, handle: str, user: str, inner: str = "app") -> Response:
        shop = f"{name}.myshopify.com"
        token = self._token(shop, user)
        if token is None or self.app_url is None:
            return _text(403, "no such staff member of an installed shop, or no app URL set")
        host = base64.urlsafe_b64encode(f"admin.shopify.com/store/{name}".encode()).decode()
        query = {"embedded": "1", "shop": shop, "host": host.rstrip("="), "id_token": token}
        app_url = self.app_url.rstrip("/")
        # The admin's own address of the app, as its navigation links to the app's pages.
        admin = {
            "base": f"{ADMIN_PATHS}{name}/apps/{handle}",
            "query": f"?{urlencode({'user': user})}",
        }
        page = _PAGE % {
            "shop": html.escape(shop),
            "user": html.escape(user),
            "handle": html.escape(handle),
            "src": html.escape(f"{app_url}/{inner}?{urlencode(query)}"),
            "polaris": html.escape(f"{app_url}/static/polaris.css"),
            "home": html.escape(f"{admin['base']}{admin['query']}"),
            "app_url": _script_value(app_url),
            "admin": _script_value(admin),
            "message": _MESSAGE,
            "nav": _NAV_MESSAGE,
            "token_url": _script_value(
                f"{PREFIX}session-token?{urlencode({'shop': shop, 'user': user})}"
            ),
        }
        return Response(200, page.encode(), {"Content-Type": "text/html; charset=utf-8"})

    def _token(self, shop: str, user: str) -> str | None:
        if not user.isdigit():
            return None
        try:
            # Stamped by the wall clock, as the real admin stamps them.
            return self._sandbox.session_token(shop, user_id=int(user), issued_at=time.time())
        except (KeyError, ValueError):
            return None


def _text(status: int, message: str) -> Response:
    return Response(status, message.encode(), {"Content-Type": "text/plain; charset=utf-8"})


def _script_value(value: object) -> str:
    """A value written into the page's script: JSON that cannot close the script element."""
    return json.dumps(value).replace("<", "\\u003c")
