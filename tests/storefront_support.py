"""A shopper on the storefront chat, as the app sees them through Shopify's app proxy.

Each request carries the query Shopify adds (shop, logged-in customer, path prefix,
timestamp) signed with the app's secret, exactly as the proxy forwards it, and the
storefront's locale when the shopper's storefront has one, as the widget sends it.
"""

from __future__ import annotations

import time
from typing import Any

from flask.testing import FlaskClient
from shopify_support import signed_proxy_query

from integrations.mail import Outbox

APP_SECRET = "shpss_storefront-test-secret-0123456789"
CLIENT_ID = "caseward-storefront-test"


class Shopper:
    def __init__(
        self,
        client: FlaskClient,
        shop_domain: str,
        *,
        logged_in_customer_id: str = "",
        secret: str = APP_SECRET,
        locale: str = "",
    ) -> None:
        self._client = client
        self._secret = secret
        self.shop = shop_domain.removesuffix(".myshopify.com")
        self.logged_in_customer_id = logged_in_customer_id
        self.locale = locale
        self.token: str | None = None

    def _query(self, extra: dict[str, str] | None = None) -> str:
        params = {
            "shop": self.shop,
            "logged_in_customer_id": self.logged_in_customer_id,
            "path_prefix": "/apps/caseward",
            "timestamp": str(int(time.time())),
            **({"locale": self.locale} if self.locale else {}),
            **(extra or {}),
        }
        return signed_proxy_query(params, self._secret)

    def get(self) -> Any:
        extra = {"conversation": self.token} if self.token else None
        return self._client.get(f"/proxy/chat?{self._query(extra)}")

    def state(self) -> Any:
        response = self.get()
        assert response.status_code == 200, response.get_json()
        return response.get_json()

    def post(self, path: str, body: dict[str, Any]) -> Any:
        return self._client.post(
            f"/proxy{path}?{self._query()}", json={"conversation": self.token, **body}
        )

    def say(self, text: str) -> Any:
        response = self.post("/chat/messages", {"text": text})
        assert response.status_code == 201, response.get_json()
        state = response.get_json()
        self.token = state["conversation"] or self.token
        return state


def newest_code(outbox: Outbox, to: str) -> str:
    """The code in the newest mail to ``to``."""
    body = outbox.messages(to)[-1].get_content()
    return next(word.rstrip(".") for word in body.split() if word.rstrip(".").isdigit())
