"""Where requests for ``https://{shop}.myshopify.com/...`` go: Shopify, or the sandbox.

Every Shopify call (token exchange and refresh in ``shopifyapp``, the Admin GraphQL
client) names the shop's own host. Pointing the app at the local sandbox must be a
configuration change, not a code change, so the one :class:`httpx.Client` those calls
share is built here from a base URL:

* ``api_base=None``: a plain client; requests go to the shop's real host over TLS.
* ``api_base="http://127.0.0.1:12112"``: :class:`SandboxRouting` sends each request to
  that base instead, keeping the path, query and body byte for byte and the
  ``Host: {shop}.myshopify.com`` header, which is how the sandbox tells shops apart. A
  request for any other host is refused before a byte leaves, so a sandboxed app can
  never reach a real shop by mistake.

``shopifyapp`` has no base-URL setting (it builds ``https://{shop}.myshopify.com`` URLs
itself) but takes an injected ``http_client``, so the routing is written here, as an
httpx transport, once for every caller.
"""

from __future__ import annotations

import re

import httpx

SHOP_DOMAIN = re.compile(r"^[a-z0-9][a-z0-9-]*\.myshopify\.com$")


def is_shop_domain(value: str) -> bool:
    """True for a shop's permanent domain, ``{name}.myshopify.com`` (lower case)."""
    return SHOP_DOMAIN.fullmatch(value) is not None


class SandboxRouting(httpx.BaseTransport):
    """Rewrites the target of shop requests to ``api_base``; headers stay as they were."""

    def __init__(self, api_base: str, inner: httpx.BaseTransport | None = None) -> None:
        base = httpx.URL(api_base)
        if base.scheme not in ("http", "https") or not base.host:
            raise ValueError(f"api_base must be an http(s) URL, got {api_base!r}")
        self._base = base
        self._prefix = base.raw_path.split(b"?", 1)[0].rstrip(b"/")
        self._inner = inner if inner is not None else httpx.HTTPTransport()

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        if not is_shop_domain(request.url.host):
            # ConnectError: nothing was sent, which is exactly what happened.
            raise httpx.ConnectError(
                f"{request.url.host} is not a shop domain; only *.myshopify.com goes to the "
                "sandbox",
                request=request,
            )
        # The Host header was set from the original URL when the request was built; the
        # connection now goes to the sandbox while that header still names the shop.
        request.url = self._base.copy_with(raw_path=self._prefix + request.url.raw_path)
        return self._inner.handle_request(request)

    def close(self) -> None:
        self._inner.close()


def shopify_http_client(api_base: str | None, timeout: float) -> httpx.Client:
    """The client to pass as ``http_client=`` to ``shopifyapp`` calls and the Admin client.

    The caller owns it (close it at shutdown); redirects are never followed, so an answer
    is always the one Shopify (or the sandbox) gave for the URL that was asked.
    """
    if api_base is None:
        return httpx.Client(timeout=timeout, follow_redirects=False)
    return httpx.Client(timeout=timeout, follow_redirects=False, transport=SandboxRouting(api_base))
